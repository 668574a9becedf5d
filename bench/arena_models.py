#!/usr/bin/env python3
"""Arena placement on the headline models: arena size over the live peak.

    bench/arena_models.py [--device v100-16g] [--work DIR] [--json F] [--markdown F]

For each model of the headline (docs/results/headline.json) at the largest
batch each method fits on the device (none, swap, remat) as the headline
recorded it, or, where that batch no longer fits (the device presets and the
exporter changed since), the largest batch below it that does (bisection;
the table shows the recorded batch in parentheses), runs the method's
pass with the device's capacity as the budget and --lms-report-memory with
the runtime's 256-byte alignment, and reports the arena the function's
buffers need when placed at offsets (Placement.h) against their live peak.
Exports missing models with tools/torch-export (as bench/headline.py does).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import headline  # noqa: E402

LMS_OPT = os.path.join(ROOT, "build", "bin", "lms-opt")


def measure(args, bench, cap, row, method, batch):
    """The arena of `row`'s model at `batch` after `method`'s pass with the
    device's capacity as the budget, or None where it does not fit (the pass
    fails; without a pass, the live peak is over the capacity)."""
    path = bench.export(row["model"], row["size"], batch)
    if path is None:
        return None
    report = path + ".arena.json"
    passes = []
    if method != "none":
        passes.append(f"--{headline.PASSES[method]}=budget={cap} "
                      f"device={args.device}")
    passes.append(f"--lms-report-memory=format=json alignment=256 "
                  f"device={args.device} file={report}")
    start = time.time()
    r = subprocess.run([LMS_OPT, path] + passes + ["-o", os.devnull],
                       capture_output=True, text=True)
    seconds = time.time() - start
    if r.returncode != 0:
        print(f"{row['label']:28} {method:6} {batch:>5} does not fit: "
              f"{r.stderr.strip()[:160]}", flush=True)
        return None
    f = json.load(open(report))["functions"][0]
    os.remove(report)
    arena = f["arena"]
    if method == "none" and arena["live_peak_bytes"] > cap:
        print(f"{row['label']:28} {method:6} {batch:>5} does not fit: "
              f"live peak {arena['live_peak_bytes']}", flush=True)
        return None
    # The placement of the function's buffers (arguments included) against
    # their live peak; and what --lms-carve-arena's lowering needs (the arena
    # plus the arguments and results as allocations of their own).
    return {"model": row["label"], "method": method, "batch": batch,
            "live_peak_bytes": arena["placed_live_peak_bytes"],
            "arena_bytes": arena["placed_bytes"],
            "ratio": arena["placed_bytes"] / arena["placed_live_peak_bytes"],
            "lowered_bytes": arena["bytes"],
            "lowered_ratio": arena["bytes"] / arena["live_peak_bytes"],
            "buffers": len(arena["buffers"]),
            "order": arena["order"], "seconds": round(seconds, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="v100-16g")
    ap.add_argument("--work", default="/tmp/headline-work")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    bench, cap, rows = headline.recorded(args.work, args.device)
    results = []
    print(f"{'model':28} {'method':6} {'batch':>5} {'live peak':>14} "
          f"{'arena':>14} {'ratio':>7} {'seconds':>8}", flush=True)
    for row in rows:
        if row["device"] != args.device:
            continue
        fits = 0  # the largest batch known to fit, for the bisection
        for method in ["none", "swap", "remat"]:
            recorded = row["max_batch"].get(method, 0)
            if not recorded:
                continue

            def probe(batch):
                return measure(args, bench, cap, row, method, batch)

            batch, result = recorded, probe(recorded)
            if result is None:
                # The recorded batch no longer fits (the presets and the
                # exporter changed since the headline ran): the largest
                # batch below it that does, by bisection.
                # (Above the batch an earlier method fit at, measured again
                # when nothing between them fits.)
                lo, hi = fits, recorded
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    r = probe(mid)
                    if r is None:
                        hi = mid
                    else:
                        lo, result = mid, r
                if result is None and lo:
                    result = probe(lo)
                if result is None:
                    continue
                batch = lo
            result["recorded_batch"] = recorded
            fits = max(fits, batch)
            results.append(result)
            print(f"{row['label']:28} {method:6} {batch:>5} "
                  f"{result['live_peak_bytes']:>14} {result['arena_bytes']:>14} "
                  f"{result['ratio']:>7.4f} {result['seconds']:>8.1f}",
                  flush=True)
    command = " ".join(["bench/arena_models.py"] + sys.argv[1:])
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"command": command, "device": args.device,
                       "results": results}, out, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(f"<!-- generated by {command} -->\n\n")
            out.write("| model | method | batch (recorded) | buffers | live peak | arena "
                      "| arena / live | lowered with arena=true / live "
                      "| order | seconds |\n")
            out.write("|---|---|---|---|---|---|---|---|---|---|\n")
            for r in results:
                out.write(f"| {r['model']} | {r['method']} | {r['batch']}"
                          + (f" ({r['recorded_batch']})"
                             if r['recorded_batch'] != r['batch'] else "")
                          + f" | "
                          f"{r['buffers']} | {r['live_peak_bytes']} | "
                          f"{r['arena_bytes']} | {r['ratio']:.4f} | "
                          f"{r['lowered_ratio']:.4f} | "
                          f"{r['order']} | {r['seconds']} |\n")


if __name__ == "__main__":
    main()
