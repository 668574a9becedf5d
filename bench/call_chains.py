#!/usr/bin/env python3
"""How the passes scale with the depth of a call chain.

    bench/call_chains.py [--depths 500,1000,2000,4000]
                         [--hold-depths 150,300,600] [--json out.json]

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
  swaps-hold    --lms-insert-swaps="budget=50% arena=false" on chains whose every function
                holds its argument across its call (call_chain.py --hold):
                half of the functions are rewritten (--hold-depths)
  plan-hold     --lms-plan="budget=50% arena=false" on the same
  swaps-fan     --lms-insert-swaps="budget=3KiB arena=false" on @main calling N functions
                one after another (call_chain.py --fan), every one of them
                rewritten (--depths)
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
    # Live bytes too: the held arguments are what must be offloaded.
    "swaps-hold": ["--lms-insert-swaps=budget=50% arena=false"],
    "plan-hold": ["--lms-plan=budget=50% arena=false"],
    # Live bytes (arena=false): the fan's functions offload their
    # arguments, which an arena plan keeps as allocations of their own (with
    # arena=true 3 KiB is below what each function needs: a clean error).
    "swaps-fan": ["--lms-insert-swaps=budget=3KiB arena=false"],
}
HOLD = {"swaps-hold", "plan-hold"}
FLAGS = {"swaps-hold": ["--hold"], "plan-hold": ["--hold"],
         "swaps-fan": ["--fan"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="500,1000,2000,4000")
    parser.add_argument("--hold-depths", default="150,300,600")
    parser.add_argument("--passes", default=",".join(PASSES))
    parser.add_argument("--json")
    args = parser.parse_args()
    lms_opt = os.environ.get("LMS_OPT",
                             os.path.join(ROOT, "build", "bin", "lms-opt"))
    depths = [int(d) for d in args.depths.split(",")]
    hold_depths = [int(d) for d in args.hold_depths.split(",")]
    names = args.passes.split(",")
    env = dict(os.environ, LMS_CHECK_ANALYSIS_CACHE="0")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            hold = name in HOLD
            for depth in hold_depths if hold else depths:
                flags = FLAGS.get(name, [])
                path = os.path.join(tmp, "chain%d%s.mlir" %
                                    (depth, "".join(flags)))
                if not os.path.exists(path):
                    with open(path, "w") as out:
                        subprocess.run([sys.executable, CHAIN, str(depth)] +
                                       flags, stdout=out, check=True)
                start = time.monotonic()
                run = subprocess.run([lms_opt, path, "-o", "/dev/null"] +
                                     PASSES[name], env=env,
                                     capture_output=True, text=True)
                seconds = time.monotonic() - start
                results.append({"pass": name, "depth": depth,
                                "hold": hold, "seconds": round(seconds, 3),
                                "exit": run.returncode})
                if run.returncode:
                    print("%s at depth %d failed:\n%s" %
                          (name, depth, run.stderr[-2000:]), file=sys.stderr)
    for group in (depths, hold_depths):
        rows = [n for n in names if (n in HOLD) == (group is hold_depths)]
        if not rows:
            continue
        print("%-12s %s" % ("pass", " ".join("%15s" % ("depth %d" % d)
                                             for d in group)))
        for name in rows:
            row, previous = [], None
            for depth in group:
                r = next(r for r in results
                         if r["pass"] == name and r["depth"] == depth)
                cell = "%.2f s" % r["seconds"]
                if previous:
                    cell += " x%.1f" % (r["seconds"] / previous)
                previous = r["seconds"]
                row.append("%15s" % (cell if r["exit"] == 0 else "error"))
            print("%-12s %s" % (name, " ".join(row)))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"command": " ".join(sys.argv), "results": results},
                      out, indent=1)
    return 1 if any(r["exit"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
