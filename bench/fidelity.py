#!/usr/bin/env python3
"""Sweeps budgets over real programs and counts rewrites that do not realize
their plans.

For each MLIR file, each planning pass and each budget (a percentage of the
function's peak), runs lms-opt with stats=true and classifies the result:
rewritten, fits without change, a clean error (a budget no plan reaches),
an internal error (a rewrite whose analysed peak exceeds its plan's: a
fault of LMS) or a crash. A `@main` driver, if any, gets a budget of its own
(lms.budget) so that the sweep is about the functions it calls.

    bench/fidelity.py build/bin/lms-opt FILE... [--json OUT]
        [--passes rematerialize,insert-swaps,plan] [--budgets 50:98:3]

Time too: for each rewrite, what the plan said against the simulated time
of the rewritten program (`--lms-report-memory` of the output): the stall
of an offloading plan (`estimated-stall-us`), the extra compute of a
recomputation plan (`extra-compute-us`), and for `--lms-plan` the joint
planner's `planned`/`written` times. Differences over a microsecond per
function (the statistics print whole microseconds) are counted as time
mismatches and listed; they do not fail the run.

The passes run with arena=false: the plans are made and checked on live
bytes. (With arena=true a pass plans again for less until its placement
fits, so a rewrite is by design not its first plan, in bytes or time.)

Prints a table per pass and the internal errors with the command that
reproduces each; exits 1 when there is an internal error or a crash.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MAIN = "func.func @main() {"
ALIGNMENT = 256
MAIN_BUDGET = "func.func @main() attributes {lms.budget = 1000000000000 : i64} {"


def classify(proc):
    if proc.returncode == 0:
        changed = "<- chosen" in proc.stderr or any(
            int(n) > 0 for n in re.findall(
                r"(\d+) (?:recomputes|tensors-swapped)", proc.stderr))
        return "rewritten" if changed else "fits"
    if "internal error" in proc.stderr:
        return "internal error"
    if proc.returncode == 1 and "error:" in proc.stderr and \
            "Stack dump" not in proc.stderr:
        return "clean error"
    return "crash"


def report(lms_opt, path):
    """Per function of `path`: (compute seconds, stall seconds, whether
    another function calls it). A caller's compute includes its callees'."""
    # With the planner's alignment: buffers, and the copies that move
    # them, are rounded up alike.
    proc = subprocess.run(
        [lms_opt, path,
         f"--lms-report-memory=format=json alignment={ALIGNMENT}",
         "-o", os.devnull], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    called = set(re.findall(r"call @([\w$.]+)\(", open(path).read()))
    return [(f["estimated_compute_s"], f["estimated_stall_s"],
             f["name"] in called)
            for f in json.loads(proc.stdout)["functions"]]


def time_mismatch(lms_opt, pass_name, src, out, stderr):
    """What the plan said against the rewritten program, or None."""
    if pass_name == "plan":
        for planned, written in re.findall(
                r"joint: planned ([\d.]+) us, written ([\d.]+) us", stderr):
            if abs(float(planned) - float(written)) > 0.15:
                return f"joint planned {planned} us, written {written} us"
        return None
    before, after = report(lms_opt, src), report(lms_opt, out)
    if before is None or after is None:
        return "no report"
    functions = len(after)
    if pass_name == "insert-swaps":
        said = sum(int(n) for n in re.findall(r"(\d+) estimated-stall-us",
                                              stderr))
        got = sum(stall for _, stall, _ in after) * 1e6
        what = "stall"
    else:
        said = sum(int(n) for n in re.findall(r"(\d+) extra-compute-us",
                                              stderr))
        # Of the functions no other calls (a callee's time is in its
        # callers').
        got = (sum(c for c, _, called in after if not called) -
               sum(c for c, _, called in before if not called)) * 1e6
        what = "extra compute"
    if abs(said - got) > functions:
        return f"{what}: plan {said} us, rewritten {got:.1f} us"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lms_opt")
    p.add_argument("files", nargs="+")
    p.add_argument("--passes", default="rematerialize,insert-swaps,plan")
    p.add_argument("--budgets", default="50:98:3",
                   help="first:last:step, percent of the peak")
    p.add_argument("--json")
    a = p.parse_args()
    first, last, step = (int(x) for x in a.budgets.split(":"))
    budgets = list(range(first, last + 1, step))
    passes = a.passes.split(",")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            text = open(path).read().replace(MAIN, MAIN_BUDGET)
            src = os.path.join(tmp, os.path.basename(path))
            with open(src, "w") as f:
                f.write(text)
            for pass_name in passes:
                for percent in budgets:
                    options = (f"budget={percent}% alignment={ALIGNMENT} "
                               "stats=true arena=false")
                    out = os.path.join(tmp, "out.mlir")
                    cmd = [a.lms_opt, src, f"--lms-{pass_name}={options}",
                           "-o", out]
                    proc = subprocess.run(cmd, capture_output=True,
                                          text=True)
                    outcome = classify(proc)
                    result = dict(file=os.path.basename(path),
                                  pass_name=pass_name, percent=percent,
                                  outcome=outcome)
                    if outcome == "rewritten":
                        mismatch = time_mismatch(a.lms_opt, pass_name, src,
                                                 out, proc.stderr)
                        if mismatch:
                            result["time_mismatch"] = mismatch
                    if outcome in ("internal error", "crash"):
                        lines = [l for l in proc.stderr.splitlines()
                                 if "error" in l or "Stack" in l]
                        result["message"] = (lines or [""])[0][:300]
                        result["command"] = " ".join(
                            [a.lms_opt, path, f"'--lms-{pass_name}={options}'"])
                    results.append(result)
    outcomes = ["rewritten", "fits", "clean error", "internal error", "crash"]
    print("| pass | " + " | ".join(outcomes) + " |")
    print("|---" * (len(outcomes) + 1) + "|")
    for pass_name in passes:
        counts = [sum(1 for r in results if r["pass_name"] == pass_name
                      and r["outcome"] == o) for o in outcomes]
        print(f"| {pass_name} | " + " | ".join(map(str, counts)) + " |")
    bad = [r for r in results if r["outcome"] in ("internal error", "crash")]
    for r in bad:
        print(f"\n{r['outcome']}: {r['command']}\n  {r['message']}")
    slow = [r for r in results if "time_mismatch" in r]
    for r in slow:
        print(f"\ntime mismatch: {r['file']} --lms-{r['pass_name']} at "
              f"{r['percent']}%: {r['time_mismatch']}")
    rewritten = sum(1 for r in results if r["outcome"] == "rewritten")
    print(f"\n{len(slow)} of {rewritten} rewrites differ in time from "
          f"their plans")
    print(f"\n{len(a.files)} files x {len(passes)} passes x {len(budgets)} "
          f"budgets: {len(bad)} internal errors or crashes")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
