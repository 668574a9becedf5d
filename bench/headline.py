#!/usr/bin/env python3
"""The headline experiment: how much larger a batch fits with LMS, at what
cost.

For each model (exported from PyTorch by tools/torch-export: one training
step) and device preset: the largest batch that fits without LMS (the
analysed peak within the device's memory) and with --lms-insert-swaps,
--lms-rematerialize and --lms-plan (the pass finds a plan for a budget of the
device's memory), and the simulated step time of each against an
unlimited-memory device (the original program's simulated time at the same
batch). Writes docs/results/headline.json, largest-batch.md and one plot
(SVG and PNG, with matplotlib) of throughput against batch size per model
and device, and headline.md: the equal-cost results of
bench/equal_cost.py --headline (equal-cost.json) and a pointer to
largest-batch.md.

    bench/headline.sh            # or: bench/headline.py --out docs/results

Batches are found by a bounded search: the peak and the smallest feasible
budget grow affinely with the batch, so two exports give the bounds, and a
binary search in between finds the largest batch each planner fits.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT = os.path.join(ROOT, "tools", "torch-export", "export.py")
LMS_OPT = os.environ.get("LMS_OPT", os.path.join(ROOT, "build", "bin", "lms-opt"))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable

MODELS = [
    ("resnet50", 224, "ResNet-50, 224x224"),
    ("unet3d", 128, "3D U-Net, 128^3"),
    ("unet3d", 192, "3D U-Net, 192^3"),
    ("gpt2", 1024, "GPT-2 small, 1024 tokens"),
]
DEVICES = ["v100-16g", "v100-32g-nvlink", "h200"]
METHODS = ["none", "swap", "remat", "plan"]
PASSES = {
    "swap": "lms-insert-swaps",
    "remat": "lms-rematerialize",
    "plan": "lms-plan",
}
MAX_BATCH = 4096
# Methods that split ops (--lms-plan splits when the smallest feasible
# budget is above the budget), so the bound of whole ops does not cap them.
SPLITS = {"plan"}


def lms_opt_commit():
    """The commit lms-opt was built from, taken when a run starts (the tree
    may move on while it runs): LMS_OPT_COMMIT, else the checkout's HEAD."""
    return os.environ.get("LMS_OPT_COMMIT") or subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True).stdout.strip()


class Bench:
    def __init__(self, work, jobs, log):
        self.work = work
        self.log = log
        self.pool = concurrent.futures.ThreadPoolExecutor(jobs)
        self.lock = threading.Lock()
        self.exports = {}
        self.results = {}
        self.calls = 0

    def say(self, msg):
        with self.lock:
            print(msg, file=self.log, flush=True)

    # ---- one export per (model, size, batch) ------------------------------
    def export(self, model, size, batch):
        key = (model, size, batch)
        with self.lock:
            ev = self.exports.get(key)
            if ev is None:
                ev = self.exports[key] = [threading.Event(), None]
                mine = True
            else:
                mine = False
        if not mine:
            ev[0].wait()
            return ev[1]
        path = os.path.join(self.work, f"{model}-{size}-b{batch}.mlir")
        sources = [EXPORT, os.path.join(os.path.dirname(EXPORT), "lower.py"),
                   os.path.join(os.path.dirname(EXPORT), "models.py")]
        if os.path.exists(path) and os.path.getmtime(path) > max(
                os.path.getmtime(f) for f in sources):
            ev[1] = path  # exported by an earlier run of the same exporter
            ev[0].set()
            return path
        r = subprocess.run([PY, EXPORT, "--model", model, "--batch",
                            str(batch), "--size", str(size), "--train", "-o",
                            path + ".tmp"], capture_output=True, text=True)
        if r.returncode == 0:
            os.replace(path + ".tmp", path)
        ev[1] = path if r.returncode == 0 else None
        if r.returncode != 0:
            lines = r.stderr.strip().splitlines()
            self.say(f"  export {model} {size} b{batch} failed "
                     f"(exit {r.returncode}): "
                     f"{lines[-1] if lines else 'no message'}")
        ev[0].set()
        return ev[1]

    # ---- one planning run per (model, size, batch, device, method) ----------
    def run(self, model, size, batch, device, method):
        key = (model, size, batch, device, method)
        with self.lock:
            if key in self.results:
                ev = self.results[key]
                mine = False
            else:
                ev = self.results[key] = [threading.Event(), None]
                mine = True
        if not mine:
            ev[0].wait()
            return ev[1]
        res = self._run(model, size, batch, device, method)
        ev[1] = res
        ev[0].set()
        return res

    def _run(self, model, size, batch, device, method):
        path = self.export(model, size, batch)
        if path is None:
            return {"fits": False, "error": "export"}
        report = path + f".{device}.{method}.json"
        passes = []
        cap = self.capacity(device)
        if method != "none":
            # The headline's batches are those whose live bytes fit (the
            # budget as arena=false bounds it); bench/arena_batches.py
            # measures the batches whose arena fits.
            passes.append(f"--{PASSES[method]}=budget={cap} device={device} "
                          "arena=false")
        # Exact bytes, as the planners above count with arena=false.
        passes.append(f"--lms-report-memory=format=json device={device} "
                      f"alignment=1 file={report}")
        t0 = time.time()
        r = subprocess.run([LMS_OPT, path] + passes + ["-o", os.devnull],
                           capture_output=True, text=True)
        with self.lock:
            self.calls += 1
        if r.returncode != 0:
            return {"fits": False, "seconds": time.time() - t0,
                    "error": r.stderr.strip().splitlines()[0][:200]
                    if r.stderr.strip() else "failed"}
        f = json.load(open(report))["functions"][0]
        os.remove(report)
        return {"fits": f["peak_bytes"] <= cap, "peak": f["peak_bytes"],
                "min_feasible": f["min_feasible_bytes"],
                "time": f["estimated_time_s"],
                "stall": f["estimated_stall_s"],
                "seconds": time.time() - t0}

    _caps = {}

    def capacity(self, device):
        if device not in self._caps:
            # The device's capacity as the report states it.
            path = self.export("tiny-cnn", 8, 2)
            report = os.path.join(self.work, f"cap-{device}.json")
            subprocess.run([LMS_OPT, path, f"--lms-report-memory=format=json "
                            f"device={device} file={report}", "-o",
                            os.devnull], check=True, capture_output=True)
            self._caps[device] = json.load(open(report))["device"][
                "capacity_bytes"]
        return self._caps[device]

    # ---- searches ---------------------------------------------------------
    def affine(self, model, size, device, field):
        """field(b) = a + c * b from batches 1 and 2."""
        r1 = self.run(model, size, 1, device, "none")
        r2 = self.run(model, size, 2, device, "none")
        if "peak" not in r1 or "peak" not in r2:
            return None
        c = r2[field] - r1[field]
        return r1[field] - c, c

    def max_batch(self, model, size, device, method, lower=0):
        """The largest batch that fits (0: not even batch 1)."""
        cap = self.capacity(device)
        fits = lambda b: self.run(model, size, b, device, method)["fits"]
        field = "peak" if method == "none" else "min_feasible"
        fit = self.affine(model, size, device, field)
        if fit is None:
            return 0
        a, c = fit
        pred = MAX_BATCH if c <= 0 else int((cap - a) // c)
        pred = max(0, min(pred, MAX_BATCH))
        if method == "none":
            # The peak is affine in the batch: the prediction is (nearly)
            # exact; walk to the boundary.
            b = pred
            if b >= 1 and not fits(b):
                while b >= 1 and not fits(b):
                    b -= 1
                return b
            while b + 1 <= MAX_BATCH and fits(b + 1):
                b += 1
            return b
        # No plan that keeps ops whole exists above the smallest feasible
        # budget's bound; what fits without LMS fits with it. Binary search
        # in between.
        lo, hi = lower, pred + 1   # lo fits (or is 0); hi does not
        if lo >= hi:
            lo = 0
        if method in SPLITS and fits(hi):
            # --lms-plan splits ops below that bound: search further up.
            lo = hi
            hi = min(MAX_BATCH, 2 * hi)
            while lo < MAX_BATCH and fits(hi):
                lo = hi
                hi = min(MAX_BATCH, 2 * hi)
            if lo >= MAX_BATCH:
                return MAX_BATCH
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        return lo


def recorded(work, device):
    """For the scripts that start from the recorded headline: a Bench in
    `work` (one job), the device's capacity, and the rows of
    docs/results/headline.json."""
    os.makedirs(work, exist_ok=True)
    bench = Bench(work, 1, sys.stderr)
    rows = json.load(open(os.path.join(ROOT, "docs", "results",
                                       "headline.json")))["rows"]
    return bench, bench.capacity(device), rows


def fmt_batch(b):
    return str(b) if b else "—"


def throughput_plot(title, series, path):
    """Throughput (samples/s) against batch size, one line per method, with
    matplotlib (python3-matplotlib): `path` (an .svg) and a PNG beside it,
    so that the plot shows wherever the docs are read. Deterministic: no
    dates in the files, fixed SVG ids."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "lms-headline"
    import matplotlib.pyplot as plt
    colors = {"ideal": "#999999", "limit": "#999999", "none": "#000000",
              "swap": "#1f77b4", "remat": "#2ca02c", "plan": "#d62728",
              "checkpoint": "#9467bd", "save-on-cpu": "#8c564b"}
    labels = {"ideal": "unlimited memory", "limit": "1.25x its step",
              "none": "no LMS", "swap": "offload", "remat": "recompute",
              "plan": "lms-plan", "checkpoint": "PyTorch checkpoint",
              "save-on-cpu": "PyTorch save_on_cpu"}
    styles = {"ideal": "--", "limit": ":"}
    if not any(series.values()):
        return
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for name, pts in series.items():
        if not pts:
            continue
        pts = sorted(pts)
        ax.plot([b for b, _ in pts], [t for _, t in pts], marker="o",
                markersize=3, linewidth=1.8, color=colors[name],
                linestyle=styles.get(name, "-"),
                label=labels.get(name, name))
    ax.set_xscale("log", base=2)
    top = max(b for pts in series.values() for b, _ in pts)
    ax.set_xticks([2 ** i for i in range((top - 1).bit_length() + 1)])
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("batch size (log scale)")
    ax.set_ylabel("samples / s (simulated)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    fig.savefig(os.path.splitext(path)[0] + ".png", format="png",
                metadata={"Software": None})
    plt.close(fig)


def plot_rows(rows, out):
    """The plot of each row, from its curves (as headline.json keeps them)."""
    for r in rows:
        series = {"ideal": [tuple(p) for p in r.get("ideal", [])]}
        for m, pts in r.get("curve", {}).items():
            series[m] = [tuple(p) for p in pts]
        throughput_plot(f"{r['label']} on {r['device']}", series,
                        os.path.join(out, r["plot"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--models", help="comma-separated subset, e.g. "
                    "resnet50:224,unet3d:128")
    ap.add_argument("--devices", help="comma-separated subset")
    ap.add_argument("--work", help="keep exports here (default: a "
                    "temporary directory)")
    ap.add_argument("--from-json", help="only rewrite headline.md from a "
                    "headline.json")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of other models and devices from "
                    "the headline.json in --out")
    a = ap.parse_args()
    if a.from_json:
        data = json.load(open(a.from_json))
        write_markdown(data["rows"], a.out, data["seconds"],
                       data["planning_runs"], data.get("conditions"))
        plot_rows(data["rows"], a.out)
        return
    if not os.path.exists(LMS_OPT):
        sys.exit("headline.py: build first (scripts/build.sh)")
    models = MODELS
    if a.models:
        want = [tuple(m.split(":")) for m in a.models.split(",")]
        models = [m for m in MODELS if (m[0], str(m[1])) in want]
    devices = a.devices.split(",") if a.devices else DEVICES
    work = a.work or tempfile.mkdtemp(prefix="lms-headline-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    bench = Bench(work, a.jobs, sys.stderr)
    t_start = time.time()
    commit = lms_opt_commit()

    rows = []
    for model, size, label in models:
        for device in devices:
            t0 = time.time()
            best = {"none": bench.max_batch(model, size, device, "none")}
            futures = {m: bench.pool.submit(bench.max_batch, model, size,
                                            device, m, best["none"])
                       for m in METHODS[1:]}
            for m, f in futures.items():
                best[m] = f.result()
            # Step times at each method's largest batch, and a batch grid for
            # the plot (powers of two up to the largest batch of all).
            top = max(best.values())
            grid = sorted({b for b in [2 ** i for i in range(13)] if b <= top}
                          | {b for b in best.values() if b})
            jobs = [(b, m) for b in grid for m in METHODS if best[m] >= b]
            list(bench.pool.map(lambda bm: bench.run(model, size, bm[0],
                                                     device, bm[1]), jobs))
            # The unlimited-memory device: the original's simulated time.
            ideal = {b: bench.run(model, size, b, device, "none")
                     for b in grid}
            ideal = {b: r["time"] for b, r in ideal.items() if "time" in r}
            series = {"ideal": [(b, b / ideal[b]) for b in grid if b in ideal]}
            row = {"model": model, "size": size, "label": label,
                   "device": device, "max_batch": best, "at_max": {},
                   "curve": {}}
            for m in METHODS:
                pts = []
                for b in grid:
                    if best[m] >= b:
                        r = bench.run(model, size, b, device, m)
                        if r.get("fits") and b in ideal:
                            pts.append((b, b / r["time"]))
                series[m] = pts
                row["curve"][m] = pts
                if best[m]:
                    r = bench.run(model, size, best[m], device, m)
                    row["at_max"][m] = {
                        "batch": best[m], "step_s": r["time"],
                        "stall_s": r["stall"], "peak_bytes": r["peak"],
                        "ideal_step_s": ideal.get(best[m]),
                        "relative_step": r["time"] / ideal[best[m]]
                        if best[m] in ideal else None}
            row["ideal"] = series["ideal"]
            plot = f"headline-{model}{size}-{device}.svg"
            throughput_plot(f"{label} on {device}", series,
                            os.path.join(a.out, plot))
            row["plot"] = plot
            rows.append(row)
            bench.say(f"{label:28s} {device:16s} max batch "
                      + " ".join(f"{m}={best[m]}" for m in METHODS)
                      + f"  ({time.time() - t0:.0f} s)")

    elapsed = time.time() - t_start
    calls = bench.calls
    old_conditions = None
    if a.merge and os.path.exists(os.path.join(a.out, "headline.json")):
        old = json.load(open(os.path.join(a.out, "headline.json")))
        old_conditions = old.get("conditions")
        done = {(r["model"], r["size"], r["device"]) for r in rows}
        keep = [r for r in old["rows"]
                if (r["model"], r["size"], r["device"]) not in done]
        order = {(m, s, d): i * len(DEVICES) + j
                 for i, (m, s, _) in enumerate(MODELS)
                 for j, d in enumerate(DEVICES)}
        rows = sorted(keep + rows, key=lambda r: order.get(
            (r["model"], r["size"], r["device"]), 1 << 30))
        elapsed += old.get("seconds", 0)
        calls += old.get("planning_runs", 0)
    conditions = (f"Measured with lms-opt at {commit} and that commit's "
                  "device presets.")
    if a.merge and old_conditions:
        conditions = (old_conditions + " Rows measured again: "
                      + ", ".join(f"{m}:{s} on {d}" for m, s, d in
                                  sorted(done)) + f" (lms-opt at {commit}).")
    write_results(rows, a.out, elapsed, calls, conditions)
    bench.say(f"headline: {bench.calls} planning runs, "
              f"{len(bench.exports)} exports, {elapsed:.0f} s; "
              f"results in {a.out}/headline.md")


def write_results(rows, out, elapsed, calls, conditions):
    with open(os.path.join(out, "headline.json"), "w") as f:
        json.dump({"rows": rows, "seconds": elapsed, "planning_runs": calls,
                   "conditions": conditions}, f, indent=1)
    write_markdown(rows, out, elapsed, calls, conditions)


# The goals of the headline (issue 17): the largest batch within 1.25x of
# the unlimited-memory step with LMS, against the largest without LMS.
GOALS = {("resnet50", 224): 5.0, ("gpt2", 1024): 4.0, ("llama", 2048): 4.0}
# What TFLMS reported on a real V100 (largest batch that trains at all,
# TensorFlow without LMS as the baseline; REFERENCES.md).
TFLMS = {("resnet50", 224): 4.7, ("unet3d", 128): 2.0}


def equal_cost_lead(out):
    """The headline's lead: throughput at equal cost, from the
    equal-cost.json that bench/equal_cost.py --headline wrote into `out`
    (or into docs/results); [] when there is none."""
    import equal_cost
    path = os.path.join(out, "equal-cost.json")
    if not os.path.exists(path):
        path = os.path.join(ROOT, "docs", "results", "equal-cost.json")
    if not os.path.exists(path):
        return []
    data = json.load(open(path))
    rows = data["rows"]
    runs = sorted({(r["command"], r["commit_of_lms_opt"]) for r in rows})
    if len(runs) == 1 and data.get("seconds") is not None:
        made = (f"`{runs[0][0]}` (step 1 of `bench/headline.sh`; "
                f"{data['seconds'] / 60:.0f} minutes on this machine's 2 "
                f"cores, lms-opt at {runs[0][1]})")
    else:
        made = "several runs, each row's command and lms-opt commit in " \
            "[equal-cost.md](equal-cost.md)"
    text = ["## Throughput at equal cost", "",
            f"Produced by {made}. For each model and device: the largest "
            "batch whose simulated step is within 1.25x of the same batch's "
            "step on a device with unlimited memory, without LMS and with "
            "LMS's best method, and PyTorch's own answers computed on the "
            "same graph (`torch.utils.checkpoint` over segments of the "
            "forward; `save_on_cpu`). Steps are simulated on the preset's "
            "usable memory and pinned-copy link rates, not measured on a "
            "GPU. Every table, the link sensitivity and the plots: "
            "[equal-cost.md](equal-cost.md).", "",
            "| model | device | no LMS | offload | recompute | joint "
            "(--lms-plan) | best / no LMS | PyTorch checkpoint | PyTorch "
            "save_on_cpu | best: step, pinned host | --lms-plan with 6 / 24 "
            "GB/s links |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    goals = []
    for r in rows:
        top = r.get("max_batch", data.get("max_batch", 0))
        cap = lambda b: f"≥{b}" if b >= top else str(b or "—")
        ms = r["methods"]
        lms = [m for m in ("plan", "remat", "swap") if m in ms]
        best = max(lms, key=lambda m: (ms[m]["within"], m == "plan"),
                   default=None)
        none = ms.get("none", {}).get("within", 0)
        b = ms[best]["within"] if best else 0
        at = (f"{best}: {ms[best]['step_vs_unlimited']:.3f}x, "
              f"{ms[best]['host_peak_bytes'] / 2**30:.1f} GiB"
              if b else "—")
        if none and b:
            mult = f"{'≥' if b >= top else ''}{b / none:.2f}x"
        else:
            mult = "no baseline (batch 1 does not fit)" if b else "—"
        link = r.get("link", {})
        cells = [cap(none)]
        for m in ("swap", "remat", "plan"):
            cells.append(cap(ms[m]["within"]) if m in ms else "not run")
        cells.append(mult)
        for m in ("checkpoint", "save-on-cpu"):
            cells.append(cap(ms[m]["within"]) if m in ms else "not run")
        cells.append(at)
        cells.append(f"{link.get('6', '—')}x / {link.get('24', '—')}x"
                     if link else "—")
        name = equal_cost.NAMES.get(r["model"], r["model"])
        text.append(f"| {name}, {r['size']} | {r['device']} | "
                    + " | ".join(cells) + " |")
        goal = GOALS.get((r["model"], r["size"]))
        if goal and none and b:
            verdict = "met" if b / none >= goal else "not met"
            goals.append(f"- {name} on {r['device']}: {mult} the batch "
                         f"without LMS within 1.25x ({cap(b)} with {best} "
                         f"against {none}); goal {goal:g}x: {verdict}.")
        elif goal and b:
            goals.append(f"- {name} on {r['device']}: {cap(b)} within 1.25x "
                         "with LMS; batch 1 does not fit without it, so "
                         "there is no multiplier here.")
        tflms = TFLMS.get((r["model"], r["size"]))
        if tflms and none and b and r["device"] == "v100-16g":
            goals.append(f"- Against TFLMS: it reported {tflms:g}x for "
                         f"{name} on a real V100 (the largest batch that "
                         "trains at all, measured); ours is "
                         f"{mult} within 1.25x of the unlimited-memory step "
                         "(and more that fits at all), simulated. A "
                         "comparison of multipliers, not of batches.")
    plots = [f"![{equal_cost.NAMES.get(r['model'], r['model'])}, "
             f"{r['size']} on {r['device']}]"
             f"({os.path.splitext(r['plot'])[0]}.png) ([SVG]({r['plot']}))"
             for r in rows if r.get("plot")]
    if plots:
        plots = ["Simulated throughput at each batch the searches tried "
                 "(dashed: unlimited memory; dotted: 1.25x its step):",
                 ""] + plots + [""]
    return text + ["", "Goals:", ""] + goals + [""] + plots


def capped(b):
    return f"≥{b}" if b >= MAX_BATCH else fmt_batch(b)


def write_markdown(rows, out, elapsed, calls, conditions=None):
    table = []
    table.append("| model | device | max batch: no LMS | swap | remat | plan "
                 "| best LMS / no LMS | step time at the max batch vs "
                 "unlimited memory: swap / remat / plan |")
    table.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        mb = r["max_batch"]
        lms_best = max(mb["swap"], mb["remat"], mb["plan"])
        cap = "≥" if lms_best >= MAX_BATCH else ""
        mult = f"{cap}{lms_best / mb['none']:.2f}x" if mb["none"] else (
            "fits only with LMS" if lms_best else "—")
        rel = []
        for m in ("swap", "remat", "plan"):
            at = r["at_max"].get(m)
            rel.append(f"{at['relative_step']:.2f}x"
                       if at and at["relative_step"] else "—")
        table.append(f"| {r['label']} | {r['device']} | {capped(mb['none'])}"
                     f" | {capped(mb['swap'])} | {capped(mb['remat'])} | "
                     f"{capped(mb['plan'])} | {mult} | {' / '.join(rel)} |")

    # Throughput at a fixed overhead: the largest batch on the plot's grid
    # whose step is within 1.25x of unlimited memory.
    near = []
    near.append("| model | device | no LMS | swap | remat | plan |")
    near.append("|---|---|---|---|---|---|")
    for r in rows:
        ideal = {b: t for b, t in r["ideal"]}
        cells = []
        for m in METHODS:
            ok = [b for b, t in r["curve"].get(m, [])
                  if b in ideal and ideal[b] / t <= 1.25]
            cells.append(str(max(ok)) if ok else "—")
        near.append(f"| {r['label']} | {r['device']} | " + " | ".join(cells)
                    + " |")

    text = [
        "# Headline experiment: how much larger a batch fits, at what cost",
        "",
        "Produced by `bench/headline.sh` (one command: the two "
        "experiments below). Each model is one training step exported from "
        "PyTorch by `tools/torch-export`; simulated times come from LMS's "
        "device model (the preset's usable memory, FLOP/s, memory and link "
        "bandwidth; the event simulator for copies and stalls), not from a "
        "GPU.",
        "",
    ] + equal_cost_lead(out) + [
        "## Largest batch that fits at all",
        "",
        "The second experiment of `bench/headline.sh` (`bench/"
        "headline.py`: the largest batch per planner for ResNet-50, the "
        "3D U-Net and GPT-2 on three presets, with throughput plots) is "
        "in [largest-batch.md](largest-batch.md), with the commit and "
        "presets it was measured with.",
        "",
    ]
    # The second experiment, with the conditions it was measured under.
    second = [
        "# Largest batch that fits at all, per planner and device",
        "",
        "The second experiment (`bench/headline.py`, step 2 of "
        f"`bench/headline.sh`: {calls} planning runs in "
        f"{elapsed / 60:.0f} minutes on this machine's 2 cores). The step "
        "is forward, mean cross-entropy and backward (f32, parameters as "
        "arguments). For each device preset, the largest batch that fits "
        "without LMS (the analysed peak within the device's memory) and "
        "with `--lms-insert-swaps`, `--lms-rematerialize` and `--lms-plan` "
        "(the pass finds a plan for a budget of the device's memory), and "
        "the simulated step time of the rewritten step against an "
        "unlimited-memory device (the original step's simulated time at "
        "the same batch). " + (conditions or ""),
        "",
    ] + table + [
        "",
        "`≥4096`: the search stops at 4096.",
        "",
        "## Largest batch within 1.25x of the unlimited-memory step time",
        "",
        "On the plots' grid (powers of two and each method's largest batch):",
        "",
    ] + near + [
        "",
        "## Throughput against batch size",
        "",
        "Samples per second (simulated) per method; the dashed line is the "
        "unlimited-memory device.",
        "",
    ] + [f"![{r['label']} on {r['device']}]"
         f"({os.path.splitext(r['plot'])[0]}.png) "
         f"([SVG]({r['plot']}))" for r in rows] + [
        "",
        "Raw numbers: `headline.json` (per model and device: the largest "
        "batches, the step time, stall and peak at each, and the curves).",
        "",
        "## How to read this",
        "",
        "- Fitting is judged the same way with and without LMS: the "
        "analysed peak of the step within the device's capacity (no "
        "allocator fragmentation on either side). TFLMS's multipliers are "
        "against TensorFlow's largest batch on a real V100; ours are "
        "against our own analysed baseline, so any comparison is of "
        "multipliers, not of absolute batches, and this experiment counts "
        "a batch however slow its step (the headline's equal-cost "
        "experiment counts it only within 1.25x).",
        "- No plan that keeps ops whole exists above the smallest feasible "
        "budget: the arguments (weights, inputs) plus the largest single op "
        "with its operands and results. That bound grows with the batch and "
        "caps offloading and recomputation (and TFLMS, Checkmate, Moccasin, "
        "DTR); for GPT-2 it is the backward of the loss over the "
        "50257-word vocabulary. `--lms-plan` splits the op that sets it "
        "into loops over slices of the batch (`--lms-split`, "
        "[Split.md](../Split.md)) when the bound is above the budget, so "
        "the plan column can go past it.",
        "- Offloading costs link time, recomputation compute; `--lms-plan` "
        "chooses per tensor between keeping, offloading and recomputing "
        "([Remat.md](../Remat.md#the-joint-planner)).",
        "",
    ]
    with open(os.path.join(out, "headline.md"), "w") as f:
        f.write("\n".join(text))
    with open(os.path.join(out, "largest-batch.md"), "w") as f:
        f.write("\n".join(second))
    print("\n".join(table))
    print(f"\n{calls} planning runs in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
