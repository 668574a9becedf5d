#!/usr/bin/env python3
"""How the passes scale with the depth of a call chain.

    bench/call_chains.py [--depths 500,1000,2000,4000] [--json out.json]

A module of N functions, each calling the next
(test/Analysis/Inputs/call_chain.py: an exp and a call per function), run
through each pass below with `lms-opt` (build/bin, or $LMS_OPT); prints the
wall time per depth and the ratio from the previous depth (2.0 on doubling
depths is linear, 4.0 quadratic), and writes JSON.

  report        --lms-report-memory (reads the module)
  swaps-fit     --lms-insert-swaps=budget=1MiB (everything fits: nothing is
                rewritten)
  remat-fit     --lms-rematerialize=budget=1MiB
  plan-fit      --lms-plan=budget=1MiB
  swaps-tight   --lms-insert-swaps=budget=128 (every function but the last
                holds its argument and its exp's result across its call:
                every function is rewritten)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHAIN = os.path.join(ROOT, "test", "Analysis", "Inputs", "call_chain.py")

PASSES = {
    "report": ["--lms-report-memory"],
    "swaps-fit": ["--lms-insert-swaps=budget=1MiB"],
    "remat-fit": ["--lms-rematerialize=budget=1MiB"],
    "plan-fit": ["--lms-plan=budget=1MiB"],
    "swaps-tight": ["--lms-insert-swaps=budget=128"],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="500,1000,2000,4000")
    parser.add_argument("--passes", default=",".join(PASSES))
    parser.add_argument("--json")
    args = parser.parse_args()
    lms_opt = os.environ.get("LMS_OPT",
                             os.path.join(ROOT, "build", "bin", "lms-opt"))
    depths = [int(d) for d in args.depths.split(",")]
    names = args.passes.split(",")
    env = dict(os.environ, LMS_CHECK_ANALYSIS_CACHE="0")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            path = os.path.join(tmp, "chain%d.mlir" % depth)
            with open(path, "w") as out:
                subprocess.run([sys.executable, CHAIN, str(depth)],
                               stdout=out, check=True)
            for name in names:
                start = time.monotonic()
                run = subprocess.run([lms_opt, path, "-o", "/dev/null"] +
                                     PASSES[name], env=env,
                                     capture_output=True, text=True)
                seconds = time.monotonic() - start
                results.append({"pass": name, "depth": depth,
                                "seconds": round(seconds, 3),
                                "exit": run.returncode})
                if run.returncode:
                    print("%s at depth %d failed:\n%s" %
                          (name, depth, run.stderr[-2000:]), file=sys.stderr)
    print("%-12s %s" % ("pass", " ".join("%14s" % ("depth %d" % d)
                                         for d in depths)))
    for name in names:
        row, previous = [], None
        for depth in depths:
            r = next(r for r in results
                     if r["pass"] == name and r["depth"] == depth)
            cell = "%.2f s" % r["seconds"]
            if previous:
                cell += " x%.1f" % (r["seconds"] / previous)
            previous = r["seconds"]
            row.append("%14s" % (cell if r["exit"] == 0 else "error"))
        print("%-12s %s" % (name, " ".join(row)))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"command": " ".join(sys.argv), "results": results},
                      out, indent=1)
    return 1 if any(r["exit"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
