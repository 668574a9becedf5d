#!/usr/bin/env python3
"""The largest batch that fits a device with every buffer placed in an arena.

    bench/arena_batches.py [--device v100-16g] [--models resnet50:224,...]
                           [--methods swap,remat] [--work DIR]
                           [--arena-arguments] [--json F] [--markdown F]

For each headline model (docs/results/headline.json) and method, finds by
binary search the largest batch for which the method's pass with
`budget=<capacity> arena=true alignment=256` succeeds: the rewritten
function's arena plus its arguments and results (allocations of their own,
as --lms-carve-arena lowers it) within the device's capacity. The search
starts at the batches the headline found without LMS and with the method
(live bytes; an older device preset may have made them larger or smaller)
and grows by a quarter above the largest that fits. `--live-bytes` runs the
same search with arena=false, the reference under the same presets.
`--arena-arguments` runs --lms-mark-arena-arguments first: the host places
the step's arguments and results in the arena (the convention of
`lms.arena_arguments`, docs/Arena.md), so those that die early share its
bytes instead of standing beside it. Exports
missing models with tools/torch-export (as bench/headline.py does).
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

LMS_OPT = os.environ.get("LMS_OPT",
                         os.path.join(ROOT, "build", "bin", "lms-opt"))


def attempt(bench, model, size, batch, device, method, cap, log, arena=True,
            arena_arguments=False):
    """(fits, record) for one batch: the pass with arena=true (or without:
    live bytes), then the report of the rewritten function."""
    path = bench.export(model, size, batch)
    if path is None:
        return False, {"error": "export"}
    report = path + f".{device}.{method}.arena-batch.json"
    passes = ["--lms-mark-arena-arguments"] if arena_arguments else []
    passes += [f"--{headline.PASSES[method]}=budget={cap} device={device} "
              f"alignment=256" + (" arena=true" if arena else " arena=false"),
              f"--lms-report-memory=format=json alignment=256 "
              f"device={device} file={report}"]
    start = time.time()
    r = subprocess.run([LMS_OPT, path] + passes + ["-o", os.devnull],
                       capture_output=True, text=True)
    seconds = round(time.time() - start, 1)
    if r.returncode != 0:
        first = r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""
        print(f"  b{batch}: no ({seconds} s) {first[:160]}", file=log,
              flush=True)
        return False, {"batch": batch, "seconds": seconds}
    f = json.load(open(report))["functions"][0]
    os.remove(report)
    arena_on = arena
    arena = f["arena"]
    record = {"batch": batch, "seconds": seconds,
              "arena_need_bytes": arena["bytes"],
              "live_peak_bytes": arena["live_peak_bytes"]}
    fits = (arena["bytes"] if arena_on else f["peak_bytes"]) <= cap
    print(f"  b{batch}: {'yes' if fits else 'NO (pass said yes)'} "
          f"({seconds} s) need {arena['bytes']}", file=log, flush=True)
    return fits, record


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="v100-16g")
    ap.add_argument("--models", default="",
                    help="model:size pairs, comma-separated (default: all)")
    ap.add_argument("--methods", default="swap,remat")
    ap.add_argument("--work", default="/tmp/headline-work")
    ap.add_argument("--live-bytes", action="store_true",
                    help="the same search without arena=true: the budget "
                    "bounds live bytes (the reference for the arena batch)")
    ap.add_argument("--arena-arguments", action="store_true",
                    help="mark the step first (--lms-mark-arena-arguments): "
                    "its arguments and results in the host's arena")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    bench, cap, rows = headline.recorded(args.work, args.device)
    wanted = {tuple(m.split(":")) for m in args.models.split(",") if m}
    results = []
    for row in rows:
        if row["device"] != args.device:
            continue
        if wanted and (row["model"], str(row["size"])) not in wanted:
            continue
        low = row["max_batch"].get("none", 0)
        for method in args.methods.split(","):
            high = row["max_batch"].get(method, 0)
            print(f"{row['label']} {method}: between {low} and {high}",
                  file=sys.stderr, flush=True)
            best = None
            probe = lambda b: attempt(bench, row["model"], row["size"], b,
                                      args.device, method, cap, sys.stderr,
                                      not args.live_bytes,
                                      args.arena_arguments)
            lo, hi = 0, None          # lo fits (or is 0); hi does not
            for b in (low, high):
                if not b or b <= lo or (hi is not None and b >= hi):
                    continue
                fits, record = probe(b)
                if fits:
                    lo, best = b, record
                else:
                    hi = b
            # Above every batch tried that fits: grow by a quarter until
            # one does not.
            while hi is None:
                b = min(headline.MAX_BATCH, max(lo + 1, lo * 5 // 4))
                fits, record = probe(b)
                if fits:
                    lo, best = b, record
                    if b >= headline.MAX_BATCH:
                        hi = b + 1
                else:
                    hi = b
            while hi - lo > 1:
                mid = (lo + hi) // 2
                fits, record = probe(mid)
                if fits:
                    lo, best = mid, record
                else:
                    hi = mid
            result = {"model": row["label"], "method": method,
                      "live_bytes_batch": high, "arena_batch": lo}
            if best:
                result.update(arena_need_bytes=best["arena_need_bytes"],
                              live_peak_bytes=best["live_peak_bytes"],
                              seconds=best["seconds"])
            results.append(result)
            print(f"{row['label']:28} {method:6} live-bytes batch {high:>5} "
                  f"arena batch {lo:>5}", flush=True)
    command = " ".join(["bench/arena_batches.py"] + sys.argv[1:])
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"command": command, "device": args.device,
                       "capacity_bytes": cap, "results": results}, out,
                      indent=1)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(f"<!-- generated by {command} -->\n\n")
            out.write(f"Device {args.device}, capacity {cap} bytes.\n\n")
            out.write("| model | method | batch (live bytes) | batch (arena) "
                      "| arena need | live peak | seconds |\n")
            out.write("|---|---|---|---|---|---|---|\n")
            for r in results:
                out.write(f"| {r['model']} | {r['method']} | "
                          f"{r['live_bytes_batch']} | {r['arena_batch']} | "
                          f"{r.get('arena_need_bytes', '-')} | "
                          f"{r.get('live_peak_bytes', '-')} | "
                          f"{r.get('seconds', '-')} |\n")


if __name__ == "__main__":
    main()
