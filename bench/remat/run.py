#!/usr/bin/env python3
"""The rematerialization benchmark: every planner on every graph.

    bench/remat/run.py [--graphs DIR] [--budgets 80,90] [--methods ...]
                       [--exact-seconds 60] [--heuristic-seconds 1]
                       [--json out.json] [--markdown out.md] [--filter SUBSTR]

For each graph file of DIR (default ../shared/data/graphs/moccasin/normalized)
and each budget (a percentage of the reference order's peak), runs
`lms-plan --method M` for every method, validates each plan with the
independent checker (check_plan.py), and prints a table row per instance:
TDI (= compute cost / sum of all costs - 1), peak, solve time and the
optimality gap where the planner knows a bound, and the arena the plan's
buffers need when placed at offsets (lms-plan --check --arena) over its live
peak. Writes the results as JSON and as Markdown tables.

A method named M+reorder runs `lms-plan --method M --reorder`: the planner
may change the order of the nodes (schedule for a small peak first, then
recompute what does not fit). With --schedule-peaks, each graph's smallest
peak by reordering alone (`lms-plan --reorder` without a budget) is
reported too. The published figures of Checkmate, Moccasin and FastSA on
the random layered graphs (../shared/REFERENCES.md) go in the same table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ARENA = re.compile(
    r"^arena: (?P<arena>\d+) bytes, live peak (?P<live>\d+) bytes, "
    r"ratio (?P<ratio>[\d.]+)")
SUMMARY = re.compile(
    r"^(?P<method>[\w-]+)(?: on the new order)?: peak (?P<peak>\d+) bytes \(budget (?P<budget>\d+), "
    r"[\d.]+% of the reference peak\), compute cost (?P<cost>[\d.e+]+), "
    r"TDI (?P<tdi>-?[\d.]+)%, (?P<seconds>[\d.]+) s(?:, (?P<status>.*))?$")


SCHEDULE = re.compile(r"^schedule: peak (?P<peak>\d+) bytes \((?P<percent>[\d.]+)%"
                      r" of the reference peak\).*, (?P<seconds>[\d.]+) s")

# Published TDI (%) on the random layered graphs, recompute only in the
# textual order (Checkmate MILP with Gurobi, Moccasin with CP-SAT on 16
# workers, up to 3600 s) and with reordering (FastSA); None: time limit or
# not reported.
PUBLISHED = {
    "n100": {"checkmate": (2.3, 0.8), "moccasin": (2.3, 0.8)},
    "n250": {"checkmate": (None, 0.9), "moccasin": (4.9, 0.9),
             "fastsa": (0.0, 0.0)},
    "n500": {"checkmate": (None, None), "moccasin": (3.4, 0.7)},
    "n1000": {"checkmate": (None, None), "moccasin": (3.4, 0.7),
              "fastsa": (2.5, 0.4)},
}


def published(graph, source, budget):
    m = re.match(r"random_layered_(n\d+)_", graph)
    if not m or m[1] not in PUBLISHED or budget not in (80, 90):
        return "-"
    value = PUBLISHED[m[1]].get(source, (None, None))[budget == 90]
    if value is None:
        return "time limit" if source == "checkmate" else "-"
    return f"{value:.1f}%"


def schedule_peak(lms_plan, graph):
    proc = subprocess.run([lms_plan, "--graph", graph, "--reorder"],
                          capture_output=True, text=True)
    m = SCHEDULE.match(proc.stdout.strip().splitlines()[-1]) \
        if proc.returncode == 0 else None
    return {"peak_bytes": int(m["peak"]), "percent": float(m["percent"]),
            "seconds": float(m["seconds"])} if m else None


def run_one(lms_plan, graph, budget, method, seconds):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        base, _, variant = method.partition("+")
        cmd = [lms_plan, "--graph", graph, "--budget", f"{budget}%",
               "--method", base, "--quiet", "--out", out.name]
        if variant == "reorder":
            cmd.append("--reorder")
        if seconds is not None:
            cmd += ["--time-limit", str(seconds)]
        start = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - start
        row = {"method": method, "budget_percent": budget,
               "wall_seconds": round(wall, 3)}
        if proc.returncode != 0:
            message = proc.stderr.strip().splitlines()
            row["error"] = message[-1] if message else "failed"
            return row
        m = SUMMARY.match(proc.stdout.strip().splitlines()[-1])
        if not m:
            row["error"] = "unparsable summary: " + proc.stdout.strip()
            return row
        row.update(peak_bytes=int(m["peak"]), budget_bytes=int(m["budget"]),
                   compute_cost=float(m["cost"]), tdi_percent=float(m["tdi"]),
                   solve_seconds=float(m["seconds"]))
        status = m["status"] or ""
        row["optimal"] = status == "optimal"
        row["optimal_in_model"] = "optimal in the constraint program" in status
        g = re.match(r"gap ([\d.]+)%", status)
        if row["optimal"]:
            row["gap_percent"] = 0.0
        elif g:
            row["gap_percent"] = float(g[1])
        check = subprocess.run(
            [sys.executable, os.path.join(HERE, "check_plan.py"), graph,
             out.name, "--budget", m["budget"]],
            capture_output=True, text=True)
        row["checked"] = check.returncode == 0
        if check.returncode != 0:
            row["error"] = "checker: " + check.stdout.strip()
            return row
        # The plan's buffers placed in one arena (Placement.h): how much
        # more than the live peak a real allocator would need.
        placed = subprocess.run(
            [lms_plan, "--graph", graph, "--check", out.name, "--arena"],
            capture_output=True, text=True)
        a = ARENA.match(placed.stdout)
        if placed.returncode == 0 and a:
            row.update(arena_bytes=int(a["arena"]),
                       arena_ratio=float(a["ratio"]))
        return row


def tdi_cell(row, method):
    """A TDI cell: the TDI, `*` when optimal; the exact planner's time and
    gap in parentheses; why there is no plan."""
    if "error" in row:
        return "infeasible" if "smallest feasible" in row["error"] \
            else "no plan"
    cell = f"{row['tdi_percent']:.3f}%"
    if row.get("optimal"):
        cell += "*"
    elif row.get("optimal_in_model"):
        cell += "+"
    if method.startswith("exact") or method.startswith("moccasin"):
        extra = f"{row['solve_seconds']:.0f} s"
        if not row.get("optimal") and "gap_percent" in row:
            extra += f", gap {row['gap_percent']:.2f}%"
        cell += f" ({extra})"
    return cell


def write_table(f, graphs, budgets, methods, results, cell):
    """A Markdown table: a row per graph and budget, a column per method."""
    f.write("| graph | budget | " + " | ".join(methods) + " |\n")
    f.write("|---|---|" + "---|" * len(methods) + "\n")
    for name in graphs:
        for budget in budgets:
            cells = []
            for method in methods:
                row = next(r for r in results
                           if r["graph"] == name[:-5] and
                           r["method"] == method and
                           r["budget_percent"] == budget)
                cells.append(cell(row, method))
            f.write(f"| {name[:-5]} | {budget}% | " + " | ".join(cells) +
                    " |\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=os.path.join(
        os.path.dirname(ROOT), "shared", "data", "graphs", "moccasin",
        "normalized"))
    parser.add_argument("--budgets", default="80,90")
    parser.add_argument("--methods",
                        default="checkpoint-all,chen-sqrt,chen-greedy,dtr,"
                                "heuristic,exact")
    parser.add_argument("--heuristic-seconds", type=float, default=1.0)
    parser.add_argument("--exact-seconds", type=float, default=60.0)
    parser.add_argument("--moccasin-seconds", type=float, default=None,
                        help="wall-clock cap of the moccasin planner "
                             "(default: none; it stops on work)")
    parser.add_argument("--filter", default="")
    parser.add_argument("--schedule-peaks", action="store_true",
                        help="report each graph's peak by reordering alone")
    parser.add_argument("--published", action="store_true",
                        help="add the published figures as columns")
    parser.add_argument("--lms-plan",
                        default=os.path.join(ROOT, "build", "bin", "lms-plan"))
    parser.add_argument("--json", default="")
    parser.add_argument("--markdown", default="")
    args = parser.parse_args()

    graphs = sorted(f for f in os.listdir(args.graphs)
                    if f.endswith(".json") and args.filter in f)
    methods = args.methods.split(",")
    budgets = [int(b) for b in args.budgets.split(",")]
    results = []
    header = f"{'graph':34} {'budget':>6} " + " ".join(
        f"{m:>16}" for m in methods)
    print(header)
    for name in graphs:
        path = os.path.join(args.graphs, name)
        for budget in budgets:
            cells = []
            for method in methods:
                seconds = None
                if method.split("+")[0] in ("heuristic", "dtr"):
                    seconds = args.heuristic_seconds
                elif method.split("+")[0] == "exact":
                    seconds = args.exact_seconds
                elif method.split("+")[0] == "moccasin":
                    seconds = args.moccasin_seconds
                row = run_one(args.lms_plan, path, budget, method, seconds)
                row["graph"] = name[:-5]
                results.append(row)
                if "error" in row:
                    cells.append("infeasible" if "smallest feasible" in
                                 row["error"] else "no plan")
                else:
                    mark = "*" if row.get("optimal") else ""
                    cells.append(f"{row['tdi_percent']:.3f}%{mark}")
            print(f"{name[:34]:34} {budget:>5}% " +
                  " ".join(f"{c:>16}" for c in cells), flush=True)

    schedules = {}
    if args.schedule_peaks:
        for name in graphs:
            schedules[name[:-5]] = schedule_peak(
                args.lms_plan, os.path.join(args.graphs, name))
            print(f"{name[:-5]}: reordering alone reaches "
                  f"{schedules[name[:-5]]}", flush=True)

    meta = {"command": " ".join([os.path.relpath(sys.argv[0], ROOT)] +
                                sys.argv[1:]),
            "heuristic_seconds": args.heuristic_seconds,
            "exact_seconds": args.exact_seconds,
            "moccasin_seconds": args.moccasin_seconds,
            "machine": os.uname().nodename + ", " +
            str(os.cpu_count()) + " cores"}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results,
                       "schedule_peaks": schedules}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("<!-- generated by bench/remat/run.py -->\n\n")
            f.write(f"Command: `{meta['command']}`\n\n")
            f.write("TDI = compute cost / sum of all costs - 1 (lower is "
                    "better); `*` = proven optimal; `+` = proven optimal "
                    "within the moccasin constraint program (whose memory "
                    "is conservative), not among all plans; "
                    "`infeasible` = budget "
                    "below the smallest feasible one (reported); time and "
                    "gap of the exact and moccasin planners in "
                    "parentheses.\n\n")
            columns = methods
            sources = ["checkmate", "moccasin", "fastsa"] \
                if args.published else []
            rows = list(results)
            for name in graphs:
                for budget in budgets:
                    for source in sources:
                        rows.append({"graph": name[:-5],
                                     "method": source + " (paper)",
                                     "budget_percent": budget,
                                     "published": published(name, source,
                                                            budget)})
            write_table(f, graphs, budgets,
                        columns + [s + " (paper)" for s in sources], rows,
                        lambda row, method: row["published"]
                        if "published" in row else tdi_cell(row, method))
            if sources:
                f.write("\nThe last columns are published figures "
                        "(../shared/REFERENCES.md): Checkmate's MILP with "
                        "Gurobi and Moccasin's CP-SAT on 16 workers, up to "
                        "3600 s, in the textual order; FastSA (simulated "
                        "annealing over order and recomputation; n=250 "
                        "reaches 72.2% of its peak by reordering alone, so "
                        "both budgets need no recomputation).\n")
            if schedules:
                f.write("\nSmallest peak by reordering alone (`lms-plan "
                        "--reorder`, no recomputation), in % of the "
                        "reference order's peak:\n\n| graph | peak | time "
                        "|\n|---|---|---|\n")
                for name, s in schedules.items():
                    f.write(f"| {name} | {s['percent']:.1f}% | "
                            f"{s['seconds']:.2f} s |\n" if s else
                            f"| {name} | failed | |\n")
            f.write("\nArena over live peak of each plan (its buffers placed "
                    "at offsets in one arena, `lms-plan --check --arena`; "
                    "1.0000 = no fragmentation):\n\n")
            write_table(f, graphs, budgets, methods, results,
                        lambda row, method: f"{row['arena_ratio']:.4f}"
                        if "arena_ratio" in row else "-")
    bad = [r for r in results if r.get("checked") is False]
    if bad:
        print(f"{len(bad)} plans failed the independent checker",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
