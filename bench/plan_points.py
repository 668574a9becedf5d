#!/usr/bin/env python3
"""Planners at chosen batches: step time against unlimited memory.

For each model (one training step exported by tools/torch-export), device
preset and batch: the step without LMS (its simulated time is the
unlimited-memory time) and each method's rewrite for a budget of the
device's memory: whether it fits, its simulated step time as a multiple of
the unlimited-memory time, how it was made (the --lms-plan candidate chosen,
with stats=true), and how long planning took. Prints a table and writes
JSON.

    bench/plan_points.py --model resnet50 --size 224 --device v100-16g \\
        --batches 688,850 --methods remat,plan --json out.json

Methods: swap (--lms-insert-swaps), remat (--lms-rematerialize), plan
(--lms-plan), joint (--lms-plan strategy=joint), and PyTorch's own answers on
the same graph: checkpoint (--lms-rematerialize=planner=segments, what
torch.utils.checkpoint over segments of the forward does) and save-on-cpu
(--lms-insert-swaps=planner=save-on-cpu, torch.autograd.graph.save_on_cpu).

--link GBPS sets both host links of the device (a DLTI target spec on the
module over the preset) for a bandwidth sensitivity run.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT = os.path.join(ROOT, "tools", "torch-export", "export.py")
LMS_OPT = os.environ.get("LMS_OPT", os.path.join(ROOT, "build", "bin", "lms-opt"))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable
PASSES = {
    "none": None,
    "swap": "lms-insert-swaps",
    "remat": "lms-rematerialize",
    "plan": "lms-plan",
    "joint": "lms-plan",
    "checkpoint": "lms-rematerialize",
    "save-on-cpu": "lms-insert-swaps",
}
PLANNER = {"checkpoint": "segments", "save-on-cpu": "save-on-cpu"}


def with_link(path, device, gbps):
    """A copy of the export whose device is `device` with both host links
    at `gbps` GB/s (a DLTI target spec; the passes then get no device=)."""
    out = path.replace(".mlir", f".link{gbps:g}.mlir")
    if not os.path.exists(out):
        spec = ('#dlti.target_system_spec<"GPU" = #dlti.target_device_spec<'
                f'"lms.preset" = "{device}", '
                f'"lms.h2d_bandwidth" = {gbps * 1e9:.6e} : f64, '
                f'"lms.d2h_bandwidth" = {gbps * 1e9:.6e} : f64>>')
        text = open(path).read().replace(
            "module {", f"module attributes {{dlti.target_system_spec = {spec}}} {{",
            1)
        open(out + ".tmp", "w").write(text)
        os.replace(out + ".tmp", out)
    return out


def run(work, model, size, batch, device, method, precision="f32",
        link=None):
    suffix = "" if precision == "f32" else f"-{precision}"
    path = os.path.join(work, f"{model}-{size}-b{batch}{suffix}.mlir")
    if not os.path.exists(path):
        subprocess.run([PY, EXPORT, "--model", model, "--batch", str(batch),
                        "--size", str(size), "--train", "--precision",
                        precision, "-o", path + ".tmp"],
                       check=True, capture_output=True)
        os.replace(path + ".tmp", path)
    if link:
        path = with_link(path, device, link)
    report = path + f".{device}.{method}.json"
    passes = []
    # With a link override the module's DLTI spec names the device.
    on = "" if link else f"device={device}"
    if PASSES[method]:
        # Points of the live-bytes bound (arena=false), as the headline.
        options = on + " arena=false"
        if method in PLANNER:
            options += f" planner={PLANNER[method]}"
        if method in ("plan", "joint"):
            options += " stats=true"
        if method == "joint":
            options += " strategy=joint"
        passes.append(f"--{PASSES[method]}={options}")
    # Exact bytes, as the planners above count with arena=false.
    passes.append(f"--lms-report-memory=format=json {on} alignment=1 "
                  f"file={report}")
    t0 = time.time()
    r = subprocess.run([LMS_OPT, path] + passes + ["-o", os.devnull],
                       capture_output=True, text=True)
    seconds = time.time() - t0
    result = {"model": model, "size": size, "batch": batch, "device": device,
              "method": method, "planning_s": round(seconds, 1)}
    if precision != "f32":
        result["precision"] = precision
    if link:
        result["link_gbps"] = link
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if "error:" in l]
        result["fits"] = False
        result["error"] = (lines[0] if lines else "failed")[:240]
        return result
    f = json.load(open(report))
    cap = f["device"]["capacity_bytes"]
    fn = f["functions"][0]
    os.remove(report)
    result.update({"fits": fn["peak_bytes"] <= cap, "peak": fn["peak_bytes"],
                   "time_s": fn["estimated_time_s"],
                   "host_peak": fn["host_peak_bytes"]})
    chosen = [l for l in r.stderr.splitlines() if "<- chosen" in l]
    if chosen:
        result["chosen"] = re.sub(r":.*", "", chosen[-1]).strip()
        line = chosen[-1]
        offloaded = re.search(r"(\d+) tensors offloaded", line)
        recomputes = re.search(r"(\d+) recomputes", line)
        n_off = int(offloaded.group(1)) if offloaded else 0
        n_rec = int(recomputes.group(1)) if recomputes else 0
        split = any(l.startswith("lms-split:") for l in r.stderr.splitlines())
        result["chosen_kind"] = ("joint" if n_off and n_rec else
                                 "offload" if n_off else
                                 "recompute" if n_rec else "none") + \
            (" + split" if split else "")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--device", default="v100-16g")
    ap.add_argument("--batches", required=True)
    ap.add_argument("--methods", default="remat,plan")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--precision", choices=["f32", "bf16", "f16"],
                    default="f32", help="the exported step's compute type "
                    "(export.py --precision)")
    ap.add_argument("--link", type=float, help="both host links at this "
                    "many GB/s (a DLTI spec over the preset)")
    ap.add_argument("--json")
    ap.add_argument("--work", help="keep exports here (default: a temporary "
                    "directory)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    methods = ["none"] + [m for m in args.methods.split(",") if m != "none"]
    for m in methods:
        if m not in PASSES:
            ap.error(f"unknown method '{m}': expected one of "
                     f"{', '.join(PASSES)}")
    work = args.work or tempfile.mkdtemp(prefix="lms-points-")
    os.makedirs(work, exist_ok=True)
    # Exports first (one per batch), then the runs in parallel.
    for b in batches:
        run(work, args.model, args.size, b, args.device, "none",
            args.precision, args.link)
    jobs = [(b, m) for b in batches for m in methods]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda job: run(work, args.model, args.size, job[0], args.device,
                            job[1], args.precision, args.link), jobs))
    base = {r["batch"]: r.get("time_s") for r in results
            if r["method"] == "none"}
    for r in results:
        if r.get("time_s") and base.get(r["batch"]):
            r["vs_unlimited"] = round(r["time_s"] / base[r["batch"]], 3)
    print(f"| batch | method | fits | step vs unlimited | host GiB | "
          f"chosen | planning (s) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        host = f"{r['host_peak'] / 2**30:.1f}" if "host_peak" in r else "-"
        print(f"| {r['batch']} | {r['method']} | "
              f"{'yes' if r.get('fits') else 'no'} | "
              f"{r.get('vs_unlimited', '-')} | {host} | "
              f"{r.get('chosen', '')} | {r['planning_s']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "size": args.size,
                       "device": args.device, "precision": args.precision,
                       "link_gbps": args.link, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
