#!/usr/bin/env python3
"""Checks the LMS runtime's statistics JSON against what a test expects.

    check_stats.py stats.json [--max-peak N] [--analysis report.json
        --function F] [--no-leaks] [--min-h2d N] [--min-d2h N]

--analysis compares the measured peak device bytes with the peak (with
--arena: the arena) of function F in a --lms-report-memory JSON report (made with alignment=256, the emulated
device's allocation granularity): they must be equal. Prints one line per
check; exits 1 on the first failure.
"""

import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("stats")
    p.add_argument("--max-peak", type=int)
    p.add_argument("--analysis")
    p.add_argument("--function", default="main")
    p.add_argument("--arena", action="store_true",
                   help="compare with the function's arena, not its peak")
    p.add_argument("--no-leaks", action="store_true")
    p.add_argument("--min-h2d", type=int)
    p.add_argument("--min-d2h", type=int)
    a = p.parse_args()
    stats = json.load(open(a.stats))
    peak = stats["peak_device_bytes"]

    def fail(message):
        print("check_stats: FAILED: " + message)
        sys.exit(1)

    if a.max_peak is not None:
        if peak > a.max_peak:
            fail(f"peak device bytes {peak} > budget {a.max_peak}")
        print(f"peak device bytes {peak} <= {a.max_peak}")
    if a.analysis:
        report = json.load(open(a.analysis))
        functions = {f["name"]: f for f in report["functions"]}
        if a.function not in functions:
            fail(f"no function {a.function} in {a.analysis}")
        what = "arena" if a.arena else "peak"
        expected = (functions[a.function]["arena"]["bytes"] if a.arena
                    else functions[a.function]["peak_bytes"])
        if peak != expected:
            fail(f"measured peak {peak} != analysed {what} {expected}")
        print(f"measured peak {peak} == analysed {what}")
    if a.no_leaks:
        if stats["leaked_bytes"] or stats["leaked_allocations"]:
            fail(f"{stats['leaked_bytes']} bytes leaked in "
                 f"{stats['leaked_allocations']} allocations")
        print("no leaks")
    if a.min_h2d is not None:
        if stats["h2d_bytes"] < a.min_h2d:
            fail(f"h2d bytes {stats['h2d_bytes']} < {a.min_h2d}")
        print(f"h2d bytes {stats['h2d_bytes']} >= {a.min_h2d}")
    if a.min_d2h is not None:
        if stats["d2h_bytes"] < a.min_d2h:
            fail(f"d2h bytes {stats['d2h_bytes']} < {a.min_d2h}")
        print(f"d2h bytes {stats['d2h_bytes']} >= {a.min_d2h}")


if __name__ == "__main__":
    main()
