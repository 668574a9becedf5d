#!/usr/bin/env python3
"""Property check of --lms-rematerialize over many budgets.

    remat_property.py LMS_OPT MODEL.mlir PERCENT... [--planner P] [--live]

For each budget (a percentage of the model's arena measure, what the budget
bounds with the default arena=true; with --live, of its live peak, planned
with arena=false): either the pass succeeds,
the memory analysis of its output fits the budget and --lms-strip of the
output gives back the original program; or it fails cleanly (exit status 1,
an 'error:' diagnostic, no crash). Prints one line per budget and a summary;
exits 1 if any property fails or no budget needed recomputations.
"""
import json
import subprocess
import sys


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True)


def main():
    args = sys.argv[1:]
    planner = "heuristic"
    if "--planner" in args:
        i = args.index("--planner")
        planner = args[i + 1]
        del args[i:i + 2]
    # --live: plan on live bytes (arena=false) and check the live peak;
    # otherwise the budget bounds the arena measure (the default).
    live = "--live" in args
    if live:
        args.remove("--live")
    measure = (lambda f: f["peak_bytes"]) if live else \
        (lambda f: f["arena"]["bytes"])
    opt, model, percents = args[0], args[1], args[2:]
    original = run([opt, model]).stdout
    report = json.loads(run([opt, model, "--lms-report-memory=format=json",
                             "-o", "/dev/null"]).stdout)
    peaks = {f["name"]: measure(f) for f in report["functions"]}
    top = max(peaks.values())
    ok = True
    rewritten = 0
    for percent in percents:
        budget = int(top * float(percent) / 100)
        res = run([opt, model,
                   f"--lms-rematerialize=budget={budget} planner={planner} "
                   f"arena={'false' if live else 'true'}"])
        if res.returncode != 0:
            clean = res.returncode == 1 and "error:" in res.stderr and \
                "Stack dump" not in res.stderr
            print(f"{percent}%: {budget} bytes: "
                  f"{'clean error' if clean else 'CRASH or unclear failure'}")
            ok &= clean
            continue
        after = json.loads(run([opt, "--lms-report-memory=format=json",
                                "-o", "/dev/null"], res.stdout).stdout)
        worst = max(measure(f) for f in after["functions"])
        stripped = run([opt, "--lms-strip"], res.stdout).stdout
        recomputes = res.stdout.count("lms.recompute")
        fits = worst <= budget or budget >= top
        same = stripped == original
        rewritten += recomputes > 0
        print(f"{percent}%: {budget} bytes: peak {worst} "
              f"{'fits' if fits else 'OVER BUDGET'}, {recomputes} "
              f"recomputes, strip {'gives back the original' if same else 'DIFFERS'}")
        ok &= fits and same
    print(f"{rewritten} budgets needed recomputations")
    sys.exit(0 if ok and rewritten > 0 else 1)


if __name__ == "__main__":
    main()
