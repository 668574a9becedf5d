#!/usr/bin/env python3
"""Runs a command while CPU-bound processes compete for every core.

    under_load.py [--burners N] -- command args...

The burners stop when the command ends (they are bounded by a deadline
too). Exits with the command's status; its output passes through.
"""

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def burn(deadline):
    x = 0
    while time.time() < deadline:
        x = (x * 31 + 7) % 1000003


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--burners", type=int, default=0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    n = a.burners or 2 * (os.cpu_count() or 1)
    deadline = time.time() + 300
    burners = [multiprocessing.Process(target=burn, args=(deadline,))
               for _ in range(n)]
    for b in burners:
        b.start()
    try:
        return subprocess.call(command)
    finally:
        for b in burners:
            b.terminate()
            b.join()


if __name__ == "__main__":
    sys.exit(main())
