#!/usr/bin/env python3
"""Appends a driver inside a model's top-level module.

    append_driver.py model.mlir driver.mlir -o out.mlir

The model is a file with one `module { ... }` (as other producers write
them, possibly followed by comments); the driver holds functions and the
closing brace of the module. Used to run real models from ../shared
without copying them into the project.
"""

import argparse
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("driver")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    lines = open(a.model).read().splitlines()
    closing = max((i for i, line in enumerate(lines) if line.rstrip() == "}"),
                  default=None)
    if closing is None:
        sys.exit(f"append_driver: no closing brace of a module in {a.model}")
    text = "\n".join(lines[:closing]) + "\n" + open(a.driver).read()
    with open(a.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
