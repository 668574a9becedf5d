#!/usr/bin/env python3
"""Compares two printed outputs number by number with a relative tolerance.

    compare_outputs.py expected.txt actual.txt [--rtol 1e-4]

Lines that mention a memref base address are ignored. Exits 1 and names the
first difference when they disagree.
"""

import argparse
import math
import re
import sys

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")


def numbers(path):
    values = []
    for line in open(path):
        if "base@" in line:
            continue
        values += [float(v) for v in NUMBER.findall(line)]
    return values


def main():
    p = argparse.ArgumentParser()
    p.add_argument("expected")
    p.add_argument("actual")
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args()
    expected, actual = numbers(a.expected), numbers(a.actual)
    if len(expected) != len(actual) or not expected:
        print(f"compare_outputs: FAILED: {len(expected)} numbers expected, "
              f"{len(actual)} printed")
        sys.exit(1)
    for i, (e, v) in enumerate(zip(expected, actual)):
        if math.isnan(v) or abs(e - v) > a.rtol * max(abs(e), 1e-6):
            print(f"compare_outputs: FAILED: number {i}: expected {e}, got {v}")
            sys.exit(1)
    print(f"compare_outputs: {len(expected)} numbers agree")


if __name__ == "__main__":
    main()
