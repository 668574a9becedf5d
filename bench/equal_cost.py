#!/usr/bin/env python3
"""Throughput at equal cost: the largest batch within 1.25x of the
unlimited-memory step, per model and device, for LMS's planners and for
PyTorch's own answers computed on the same graph.

For each model (one training step exported by tools/torch-export) and device
preset, and each method: the largest batch whose rewrite for the device's
memory fits it at all, and the largest batch whose simulated step is within
1.25x of the same batch's step on a device with unlimited memory (the
original program's simulated time). Methods:

  none         the step as exported (no LMS)
  swap         --lms-insert-swaps (offload)
  remat        --lms-rematerialize (recompute)
  plan         --lms-plan (joint: recompute and offload together)
  checkpoint   torch.utils.checkpoint over segments of the forward
               (--lms-rematerialize=planner=segments)
  save-on-cpu  torch.autograd.graph.save_on_cpu
               (--lms-insert-swaps=planner=save-on-cpu)

plus the host memory each holds at its batch, and the sensitivity of
--lms-plan's step at its batch to the host link (both directions at half and
twice the preset's rate). Batches are found by doubling, then bisection (a
step's overhead grows with the batch, so "within 1.25x" is taken to be
monotone; the batches tried are in the JSON). Rows search side by side,
their probes sharing --jobs processes. Writes a Markdown table, JSON and,
beside the Markdown, one plot per row (matplotlib, SVG and PNG) of the
simulated throughput at the batches tried:

    bench/equal_cost.py --models gpt2:1024,llama:2048 --device v100-16g \\
        --json docs/results/equal-cost.json --md docs/results/equal-cost.md

A model may name its own search cap and device: model:size[:max_batch]
[@device]. `--headline` measures the rows of docs/results/equal-cost.md
(HEADLINE below) into that file and its JSON, in one command.
"""

import argparse
import concurrent.futures
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headline  # noqa: E402
import plan_points  # noqa: E402

METHODS = ["none", "swap", "remat", "plan", "checkpoint", "save-on-cpu"]
LABELS = {"none": "no LMS", "swap": "LMS offload", "remat": "LMS recompute",
          "plan": "LMS joint (--lms-plan)",
          "checkpoint": "PyTorch checkpoint (segments)",
          "save-on-cpu": "PyTorch save_on_cpu"}
NAMES = {"gpt2": "GPT-2 small (124M, tied head)", "llama": "LLaMA-style 1.1B",
         "resnet50": "ResNet-50", "unet3d": "3D U-Net"}
LIMIT = 1.25
# The searches stop here (--max-batch): "fits at all" grows far with
# --lms-plan, which splits ops, and each probe there costs minutes.
MAX_BATCH = 64
# The rows of docs/results/equal-cost.md: each model's cap is past its
# largest batch within 1.25x, or where a probe takes many minutes. The
# LLaMA-style stack does not fit at batch 1 without LMS on 16 GB (its f32
# weights, gradients and AdamW state alone are 17.6 GB), so it is measured
# on a100-40g too, where batch 1 fits.
HEADLINE = ("resnet50:224:1024,gpt2:1024:64,llama:2048:16,"
            "llama:2048:32@a100-40g")
# Exports one at a time (each holds a traced model in memory; two rows of
# one model on two devices share its exports).
EXPORT_LOCK = threading.Lock()
# At most --jobs probes run at once, over all rows (set in main).
SLOTS = threading.BoundedSemaphore(2)


def parse_spec(spec, device, max_batch):
    """model:size[:max_batch][@device] -> (model, size, device, max_batch)."""
    spec, _, named = spec.partition("@")
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not all(p for p in parts):
        sys.exit(f"equal_cost.py: bad model '{spec}' (model:size"
                 "[:max_batch][@device])")
    try:
        size = int(parts[1])
        cap = int(parts[2]) if len(parts) == 3 else max_batch
    except ValueError:
        sys.exit(f"equal_cost.py: bad model '{spec}': size and max_batch "
                 "are integers")
    return parts[0], size, named or device, cap


class Search:
    """Probes of one model and device: each (batch, method, link) runs once
    (threads asking for one being run wait for it), and its result is kept
    on disk next to the export, valid while lms-opt is not rebuilt, so that
    a search can be resumed."""

    def __init__(self, work, model, size, device, cap=MAX_BATCH):
        self.work, self.model, self.size, self.device = work, model, size, device
        self.cap = cap
        self.cache = {}
        self.lock = threading.Lock()

    def _saved(self, batch, method, link):
        return os.path.join(
            self.work, f"{self.model}-{self.size}-b{batch}.{self.device}."
            f"{method}.{link or 'preset'}.result.json")

    def probe(self, batch, method, link=None):
        key = (batch, method, link)
        with self.lock:
            entry = self.cache.get(key)
            mine = entry is None
            if mine:
                entry = self.cache[key] = [threading.Event(), None]
        if not mine:
            entry[0].wait()
            return entry[1]
        saved = self._saved(batch, method, link)
        if os.path.exists(saved) and os.path.getmtime(saved) > \
                os.path.getmtime(plan_points.LMS_OPT):
            r = json.load(open(saved))
        else:
            r = self._run(batch, method, link)
            with open(saved + ".tmp", "w") as f:
                json.dump(r, f)
            os.replace(saved + ".tmp", saved)
        entry[1] = r
        entry[0].set()
        return r

    def _run(self, batch, method, link):
        if (method, link) == ("none", None):
            with EXPORT_LOCK, SLOTS:
                r = plan_points.run(self.work, self.model, self.size, batch,
                                    self.device, "none")
            base = r
        else:
            # Never hold a slot while waiting for another probe.
            base = self.probe(batch, "none")
            with SLOTS:
                r = plan_points.run(self.work, self.model, self.size, batch,
                                    self.device, method, "f32", link)
            if link is not None and method != "none":
                base = self.probe(batch, "none", link)
        if r.get("time_s") and base.get("time_s"):
            r["vs_unlimited"] = r["time_s"] / base["time_s"]
        return r

    def largest(self, method, good, start):
        """The largest batch b >= 1 with good(probe(b, method)), by doubling
        from `start` (which is taken to be good when >= 1) then bisection;
        0 when batch 1 is not good."""
        ok = lambda b: good(self.probe(b, method))
        lo = start if start >= 1 else 0
        if lo == 0:
            if not ok(1):
                return 0
            lo = 1
        hi = lo * 2
        cap = self.cap
        while lo < cap and ok(min(hi, cap)):
            lo, hi = min(hi, cap), hi * 2
        if lo >= cap:
            return cap
        hi = min(hi, cap)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo


def fits(r):
    return bool(r.get("fits"))


def within(r):
    return fits(r) and r.get("vs_unlimited") is not None and \
        r["vs_unlimited"] <= LIMIT + 1e-9


def measure(work, model, size, device, jobs, methods=METHODS, cap=MAX_BATCH):
    s = Search(work, model, size, device, cap)
    none = s.largest("none", fits, 0)
    row = {"model": model, "size": size, "device": device, "methods": {}}
    methods = [m for m in METHODS if m == "none" or m in methods]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {}
        # --lms-plan's searches first: their probes take minutes each and
        # their chain of bisections is the longest.
        for m in sorted(methods, key=lambda m: m != "plan"):
            start = none
            futures[(m, "fits")] = pool.submit(s.largest, m, fits, start)
            futures[(m, "within")] = pool.submit(s.largest, m, within, start)
        for m in methods:
            row["methods"][m] = {what: futures[(m, what)].result()
                                 for what in ("fits", "within")}
    for m in methods:
        b = row["methods"][m]["within"]
        if b:
            r = s.probe(b, m)
            row["methods"][m].update({
                "step_vs_unlimited": round(r.get("vs_unlimited", 0), 3),
                "host_peak_bytes": r.get("host_peak", 0),
                "chosen": r.get("chosen_kind", "")})
    # Link sensitivity of the joint plan at its batch.
    b = row["methods"].get("plan", {}).get("within")
    if b:
        row["link"] = {}
        for gbps in (6.0, 24.0):
            r = s.probe(b, "plan", gbps)
            if r.get("vs_unlimited"):
                row["link"][f"{gbps:g}"] = round(r["vs_unlimited"], 3)
    row["probes"] = sorted(
        [{"batch": k[0], "method": k[1], "link_gbps": k[2],
          "fits": v.get("fits"), "time_s": v.get("time_s"), "vs_unlimited":
          round(v["vs_unlimited"], 4) if v.get("vs_unlimited") else None,
          "planning_s": v.get("planning_s")}
         for k, (_, v) in s.cache.items()],
        key=lambda p: (METHODS.index(p["method"]), p["link_gbps"] or 0,
                       p["batch"]))
    return row


def plot_row(row, out):
    """Throughput (simulated samples/s) against batch size at the batches
    the searches probed, per method, with the unlimited-memory device and
    1.25x its step (at or above that line: within 1.25x): an SVG and a PNG
    in `out`, named in row["plot"]."""
    probes = [p for p in row["probes"] if p["link_gbps"] is None]
    ideal = {p["batch"]: p["time_s"] for p in probes
             if p["method"] == "none" and p.get("time_s")}
    if not ideal:
        return  # a row measured before probes kept their times
    series = {"ideal": [(b, b / t) for b, t in sorted(ideal.items())],
              "limit": [(b, b / (LIMIT * t)) for b, t in sorted(ideal.items())]}
    for m in METHODS:
        series[m] = sorted((p["batch"], p["batch"] / p["time_s"])
                           for p in probes if p["method"] == m and
                           p["fits"] and p.get("time_s"))
    row["plot"] = f"equal-cost-{row['model']}{row['size']}-{row['device']}.svg"
    headline.throughput_plot(
        f"{NAMES.get(row['model'], row['model'])}, {row['size']} on "
        f"{row['device']}", series, os.path.join(out, row["plot"]))


def markdown(rows, seconds=None):
    runs = {(r["command"], r["commit_of_lms_opt"]) for r in rows}
    if len(runs) == 1 and seconds is not None:
        # One run measured every row (side by side).
        ((command, commit),) = runs
        commands = (f"`{command}` ({seconds / 60:.0f} minutes on this "
                    f"machine's 2 cores, lms-opt at {commit})")
    else:
        commands = "; ".join(
            f"`{r['command']}` ({r['seconds'] / 60:.0f} minutes on this "
            f"machine's 2 cores, lms-opt at {r['commit_of_lms_opt']})"
            for r in rows)
    out = ["# Throughput at equal cost", "",
           f"Produced by {commands}. Each model is one training step exported "
           "from PyTorch by `tools/torch-export` (f32). Step times are "
           "simulated on LMS's device model (the preset's usable capacity, "
           "FLOP/s, memory and link bandwidth; the event simulator for "
           "copies and stalls), not measured on a GPU; PyTorch's answers are "
           "plans of the same graph, not PyTorch runs.", "",
           "Largest batch within 1.25x of the unlimited-memory step (and, "
           "in parentheses, the largest batch that fits at all; the "
           "searches stop at each row's cap, reported as ≥; —: not even batch "
           "1):", "",
           "| model | device | " + " | ".join(LABELS[m] for m in METHODS)
           + " |",
           "|---|---|" + "---|" * len(METHODS)]
    for r in rows:
        cells = []
        for m in METHODS:
            d = r["methods"].get(m)
            if d is None:
                cells.append("not run")
                continue
            top = r.get("max_batch", MAX_BATCH)
            cap = lambda b: f"≥{b}" if b >= top else str(b or "—")
            cells.append(f"{cap(d['within'])} ({cap(d['fits'])})")
        out.append(f"| {NAMES.get(r['model'], r['model'])}, {r['size']} | "
                   f"{r['device']} | " + " | ".join(cells) + " |")
    out += ["", "At those batches: the step against unlimited memory, the "
            "host memory held, and what --lms-plan chose:", "",
            "| model | device | " + " | ".join(LABELS[m] for m in METHODS)
            + " | joint's choice |", "|---|---|" + "---|" * (len(METHODS) + 1)]
    for r in rows:
        cells = []
        for m in METHODS:
            d = r["methods"].get(m)
            if d is None:
                cells.append("not run")
                continue
            if not d["within"]:
                cells.append("—")
                continue
            cells.append(f"{d['step_vs_unlimited']:.3f}x, "
                         f"{d['host_peak_bytes'] / 2**30:.1f} GiB")
        out.append(f"| {NAMES.get(r['model'], r['model'])}, {r['size']} | "
                   f"{r['device']} | " + " | ".join(cells) + " | "
                   f"{r['methods'].get('plan', {}).get('chosen', '')} |")
    out += ["", "Sensitivity to the host link: --lms-plan's step against "
            "unlimited memory at its batch above, with both links at 6, "
            "the preset's, and 24 GB/s (the plan is made for each rate):", "",
            "| model | device | batch | 6 GB/s | preset | 24 GB/s |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        b = r["methods"].get("plan", {}).get("within")
        if not b or "link" not in r:
            continue
        out.append(f"| {NAMES.get(r['model'], r['model'])}, {r['size']} | "
                   f"{r['device']} | {b} | {r['link'].get('6', '—')}x | "
                   f"{r['methods']['plan']['step_vs_unlimited']}x | "
                   f"{r['link'].get('24', '—')}x |")
    plots = [r for r in rows if r.get("plot")]
    if plots:
        out += ["", "## Throughput against batch size", "",
                "Simulated samples per second at each batch the searches "
                "tried, per method; dashed: the unlimited-memory device; "
                "dotted: 1.25x its step (a point on or above it is within "
                "1.25x).", ""]
        out += [f"![{NAMES.get(r['model'], r['model'])}, {r['size']} on "
                f"{r['device']}]({os.path.splitext(r['plot'])[0]}.png) "
                f"([SVG]({r['plot']}))" for r in plots]
    out += ["", "## How to read this", "",
            "- PyTorch checkpoint is `--lms-rematerialize=planner=segments`: "
            "the forward (what the loss depends on) cut into segments as "
            "`torch.utils.checkpoint` over blocks would, each segment's "
            "dropped tensors recomputed once in the backward; the segment "
            "count of lowest peak is taken. Its cost is about one more "
            "forward at every batch, so whether it is within 1.25x does not "
            "depend on the batch.",
            "- PyTorch save_on_cpu is `--lms-insert-swaps="
            "planner=save-on-cpu`: every tensor the forward makes and the "
            "backward reads goes to the host after its last forward use and "
            "comes back at its first backward read, and PyTorch issues both "
            "copies on the compute stream, so none is hidden. The "
            "parameters PyTorch also packs are not counted (in its favour).",
            "- \"Within 1.25x\" is searched by doubling and bisection, "
            "which assumes the overhead grows with the batch. It need not: "
            "`--lms-plan` splits ops into loops over slices that divide the "
            "batch, so a batch with more divisors can be cheaper than a "
            "smaller one (GPT-2 with lms-opt at 5622f5a: 1.237x at 32, 1.231x at "
            "33; the probes in "
            "the JSON show every batch tried). The batch reported was run "
            "and is within 1.25x.",
            "- Host memory is what the plan holds in pinned host memory at "
            "once; every plan is checked against the preset's host memory.",
            "- The link rows plan again for each rate: a faster link lets "
            "the joint planner offload what it recomputed."]
    return "\n".join(out) + "\n"


def main():
    global MAX_BATCH, SLOTS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gpt2:1024,llama:2048",
                    help="model:size[:max_batch][@device] list")
    ap.add_argument("--headline", action="store_true",
                    help="the rows of docs/results/equal-cost.md, into it "
                    "and its JSON (unless --json/--md say otherwise)")
    ap.add_argument("--device", default="v100-16g")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-batch", type=int, default=MAX_BATCH,
                    help="the searches stop at this batch (reported as >=)")
    ap.add_argument("--work", help="keep exports here")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--merge", action="store_true", help="keep the rows of "
                    "other models and devices from the --json file (and, "
                    "with --methods, the other methods of the same row)")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="the methods to measure (none always is)")
    ap.add_argument("--from-json", help="only write the Markdown of a JSON "
                    "this script wrote")
    args = ap.parse_args()
    if args.from_json:
        data = json.load(open(args.from_json))
        MAX_BATCH = data["max_batch"]
        if args.md:
            for row in data["rows"]:
                plot_row(row, os.path.dirname(os.path.abspath(args.md)))
        text = markdown(data["rows"], data.get("seconds"))
        if args.md:
            open(args.md, "w").write(text)
        else:
            print(text)
        return
    if args.headline:
        args.models = HEADLINE
        results = os.path.join(plan_points.ROOT, "docs", "results")
        args.json = args.json or os.path.join(results, "equal-cost.json")
        args.md = args.md or os.path.join(results, "equal-cost.md")
    specs = [parse_spec(spec, args.device, args.max_batch)
             for spec in args.models.split(",")]
    work = args.work or tempfile.mkdtemp(prefix="lms-equal-cost-")
    os.makedirs(work, exist_ok=True)
    methods = args.methods.split(",")
    for m in methods:
        if m not in METHODS:
            sys.exit(f"equal_cost.py: unknown method '{m}'")
    commit = headline.lms_opt_commit()
    SLOTS = threading.BoundedSemaphore(max(1, args.jobs))

    def one(spec):
        model, size, device, cap = spec
        t = time.time()
        row = measure(work, model, size, device, args.jobs, methods, cap)
        row["seconds"] = round(time.time() - t)
        row["max_batch"] = cap
        print(f"{model}:{size} {device}: " + ", ".join(
            f"{m} {d['within']} ({d['fits']})"
            for m, d in row["methods"].items()) +
            f"  [{row['seconds']} s]", flush=True)
        return row

    t_run = time.time()
    # The rows search side by side (a search waits for each probe before it
    # asks the next), their probes sharing the --jobs slots; each row's
    # results do not depend on the others'.
    with concurrent.futures.ThreadPoolExecutor(len(specs)) as pool:
        rows = list(pool.map(one, specs))
    seconds = round(time.time() - t_run)
    if args.headline:
        command = "bench/equal_cost.py --headline"
    else:
        command = ("bench/equal_cost.py --models " + args.models +
                   " --device " + args.device +
                   f" --max-batch {args.max_batch}")
    partial = set(methods) | {"none"} != set(METHODS)
    if partial:
        command += " --methods " + args.methods
    for row in rows:
        row["command"] = command
        row["commit_of_lms_opt"] = commit
    if args.merge and args.json and os.path.exists(args.json):
        old = {(r["model"], r["size"], r["device"]): r
               for r in json.load(open(args.json))["rows"]}
        for row in rows:
            before = old.get((row["model"], row["size"], row["device"]))
            if not partial or before is None:
                continue
            # Only some methods measured: the others' results (and their
            # probes) stay, and both runs' commands are told.
            mine = set(row["methods"]) - {"none"}
            before["methods"].update(
                {m: d for m, d in row["methods"].items() if m in mine})
            if "link" in row:
                before["link"] = row["link"]
            before["probes"] = [p for p in before["probes"]
                                if p["method"] not in mine] + \
                [p for p in row["probes"] if p["method"] in mine]
            before["command"] += (f"` ({before['seconds'] / 60:.0f} minutes, "
                                  f"lms-opt at {before['commit_of_lms_opt']})"
                                  f", then `{row['command']}")
            before["commit_of_lms_opt"] = row["commit_of_lms_opt"]
            before["seconds"] = row["seconds"]
            row.clear()
            row.update(before)
        # The old rows in their order, each measured one in its place.
        new = {(r["model"], r["size"], r["device"]): r for r in rows}
        rows = [new.pop(key, r) for key, r in old.items()] + list(new.values())
    if args.merge:
        seconds = None  # rows of several runs
    if args.md:
        for row in rows:
            plot_row(row, os.path.dirname(os.path.abspath(args.md)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"limit": LIMIT, "max_batch": args.max_batch,
                       "seconds": seconds, "rows": rows},
                      f, indent=1)
    text = markdown(rows, seconds)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
