#!/usr/bin/env python3
"""Compares the results a @main printed (printMemrefF32, one per result, in
order) with PyTorch's (export.py --reference). Prints one line per result
with the largest error; exits 1 when any element differs by more than
atol + rtol * |reference|.

    compare.py reference.json runner-output.txt [--rtol 1e-3] [--atol 1e-5]
"""

import argparse
import json
import re
import sys

NUM = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")


def parse(text):
    blocks = text.split("Unranked Memref")[1:]
    out = []
    for b in blocks:
        data = b.split("data =", 1)[1]
        out.append([float(v) for v in NUM.findall(data)])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("output")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--normwise", action="store_true",
                    help="bound each error by atol + rtol * the largest "
                    "magnitude of its result (for bf16/f16 steps, whose "
                    "rounding is relative to the values summed, not to "
                    "each element)")
    a = ap.parse_args()
    ref = json.load(open(a.reference))["results"]
    got = parse(open(a.output).read())
    if len(got) != len(ref):
        print(f"compare: {len(got)} results printed, {len(ref)} expected")
        return 1
    bad = 0
    for i, (r, g) in enumerate(zip(ref, got)):
        if len(r) != len(g):
            print(f"result {i}: {len(g)} values, {len(r)} expected")
            bad += 1
            continue
        worst, worst_ratio, nans = 0.0, 0.0, 0
        scale = max((abs(x) for x in r), default=0.0)
        for x, y in zip(r, g):
            err = abs(x - y)
            if err != err:  # NaN where the reference is a number
                nans += 1
                continue
            ratio = err / (a.atol + a.rtol * (scale if a.normwise else abs(x)))
            if ratio > worst_ratio:
                worst, worst_ratio = err, ratio
        ok = worst_ratio <= 1.0 and nans == 0
        bad += not ok
        print(f"result {i}: {len(r)} values, max error {worst:.3g}"
              f"{f', {nans} NaN' if nans else ''} "
              f"({'ok' if ok else 'MISMATCH'})")
    print(f"compare: {len(ref) - bad} of {len(ref)} results match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
