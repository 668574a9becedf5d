#!/usr/bin/env python3
"""Do the planners' time limits hold? Wall-clock caps measured.

    bench/time_limits.py [--limits 0.5,2] [--methods heuristic,moccasin,dtr,exact,schedule]
                         [--graphs DIR] [--load N] [--json out.json]

Runs `lms-plan --time-limit L` for each graph, method and limit, with N
CPU-bound processes beside it (--load, default 2: the limits must hold on a
loaded machine too), and reports the planner's own time (the seconds
lms-plan prints for the search, without reading the graph) and the
process's wall time. A limit holds when the planner's time is at most 1.1 L
(within 10%); a search that the limit stops before it has any plan ends
with the error "no plan within the time limit" (a hard cap), which holds
when the time lms-plan reports with the error is within 1.1 L too.
`schedule` is `--reorder` without a budget (the scheduling search alone).
Prints a table and writes JSON; exits 1 when a limit does not hold.

The graphs: the Checkmate/Moccasin benchmark graphs (../shared/data/graphs,
never copied into the project) and one generated 10^5-node training graph
(bench/remat/scaling.py's).
"""

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "remat"))
from scaling import training_graph  # noqa: E402

DEFAULT_GRAPHS = os.path.join(ROOT, "..", "shared", "data", "graphs",
                              "moccasin", "normalized")
GRAPHS = [
    "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json",
    "VGG19_256_224_224_3_train_nx.json",
    "ResNet50_256_224_224_3_train_nx.json",
    "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json",
]
SECONDS = re.compile(r", ([0-9.]+) s(,|$| \()")
AFTER = re.compile(r"\(after ([0-9.]+) s\)")


def burn(stop):
    x = 0
    while not stop.is_set():
        x = (x * 1103515245 + 12345) % 2147483648


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", default="0.5,2")
    parser.add_argument("--methods",
                        default="heuristic,moccasin,dtr,exact,schedule")
    parser.add_argument("--graphs", default=DEFAULT_GRAPHS)
    parser.add_argument("--budget", default="85%")
    parser.add_argument("--load", type=int, default=2)
    parser.add_argument("--large", type=int, default=100000,
                        help="nodes of the generated graph (0: none)")
    parser.add_argument("--lms-plan",
                        default=os.path.join(ROOT, "build", "bin", "lms-plan"))
    parser.add_argument("--json", default="")
    args = parser.parse_args()

    limits = [float(x) for x in args.limits.split(",")]
    methods = args.methods.split(",")
    tmp = tempfile.mkdtemp(prefix="lms-time-limits-")
    graphs = [(name.split("_")[0] if not name.startswith("random")
               else name.split("_w")[0].replace("random_layered_", "random "),
               os.path.join(args.graphs, name)) for name in GRAPHS]
    if args.large:
        path = os.path.join(tmp, "train.json")
        with open(path, "w") as f:
            json.dump(training_graph(args.large), f)
        graphs.append((f"training {args.large}", path))

    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=burn, args=(stop,))
               for _ in range(args.load)]
    for b in burners:
        b.start()
    rows = []
    failed = 0
    try:
        for label, path in graphs:
            if not os.path.exists(path):
                print(f"skipped {label}: {path} not found", file=sys.stderr)
                continue
            for method in methods:
                for limit in limits:
                    cmd = [args.lms_plan, "--graph", path, "--quiet",
                           "--time-limit", str(limit)]
                    if method == "schedule":
                        cmd += ["--reorder", "--schedule-iterations",
                                "1000000000"]
                    else:
                        cmd += ["--budget", args.budget, "--method", method,
                                "--iterations", "1000000000",
                                "--out", os.path.join(tmp, "plan.json")]
                    t0 = time.monotonic()
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    wall = time.monotonic() - t0
                    out = p.stdout.strip().splitlines()
                    line = out[-1] if out else ""
                    m = SECONDS.search(line)
                    after = AFTER.search(p.stderr)
                    if p.returncode == 0 and m:
                        outcome, planner = "plan", float(m.group(1))
                    elif "no plan within the time limit" in p.stderr:
                        outcome = "no plan in time"
                        planner = float(after.group(1)) if after else wall
                    else:
                        err = (p.stderr.strip().splitlines() or ["?"])[-1]
                        outcome = "error: " + err[:60]
                        planner = float(after.group(1)) if after else wall
                    holds = planner <= 1.1 * limit
                    failed += not holds
                    rows.append({"graph": label, "method": method,
                                 "limit_s": limit,
                                 "planner_s": round(planner, 3),
                                 "wall_s": round(wall, 3),
                                                                  "ratio": round(planner / limit, 3),
                                 "outcome": outcome, "holds": holds})
                    r = rows[-1]
                    print(f"{label:18} {method:9} {limit:5.1f} s  planner "
                          f"{r['planner_s']:7.2f} s  ({r['ratio']:.2f}x)  "
                          f"wall {wall:6.2f} s  {outcome}"
                          f"{'' if holds else '  OVER'}", flush=True)
    finally:
        stop.set()
        for b in burners:
            b.join()
    worst = max((r["ratio"] for r in rows), default=0)
    print(f"\n{len(rows)} runs beside {args.load} CPU-bound processes, "
          f"{failed} over 1.1x their limit; worst {worst:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "load": args.load,
                       "budget": args.budget, "runs": rows,
                       "over": failed, "worst_ratio": worst}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
