#!/usr/bin/env python3
"""How far --lms-split lowers the smallest feasible budget of real models.

Every planner that keeps ops whole (offloading, recomputation, TFLMS,
Checkmate, Moccasin, DTR) stops at the smallest feasible budget: the bytes
of the largest op's operands and results. For each model exported by
tools/torch-export (one training step) and batch, this prints that bound,
then the bound after --lms-split splits, round after round, whichever op
sets it (budget 1 byte: as far as it goes), with the number of splits and
the time the pass took. Writes split.{md,json}.

    bench/split.py --out docs/results
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT = os.path.join(ROOT, "tools", "torch-export", "export.py")
LMS_OPT = os.environ.get("LMS_OPT", os.path.join(ROOT, "build", "bin",
                                                 "lms-opt"))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable

CASES = [
    ("gpt2", 1024, 1, "GPT-2 small, 1024 tokens"),
    ("gpt2", 1024, 8, "GPT-2 small, 1024 tokens"),
    ("gpt2", 1024, 32, "GPT-2 small, 1024 tokens"),
    ("resnet50", 224, 64, "ResNet-50, 224x224"),
    ("resnet50", 224, 256, "ResNet-50, 224x224"),
    ("unet3d", 128, 4, "3D U-Net, 128^3"),
]


def export(work, model, size, batch):
    path = os.path.join(work, f"{model}-{size}-b{batch}.mlir")
    if not os.path.exists(path):
        subprocess.run([PY, EXPORT, "--model", model, "--batch", str(batch),
                        "--size", str(size), "--train", "-o", path],
                       check=True, capture_output=True)
    return path


def report(path):
    out = path + ".report.json"
    subprocess.run([LMS_OPT, path, f"--lms-report-memory=format=json "
                    f"alignment=1 file={out}", "-o", os.devnull], check=True,
                   capture_output=True)
    f = json.load(open(out))["functions"][0]
    os.remove(out)
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write split.md and split.json here")
    ap.add_argument("--work", help="keep exports here")
    ap.add_argument("--cases", help="comma-separated model:batch subset")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="lms-split-")
    os.makedirs(work, exist_ok=True)
    cases = CASES
    if args.cases:
        keep = set(args.cases.split(","))
        cases = [c for c in CASES if f"{c[0]}:{c[2]}" in keep]
    rows = []
    for model, size, batch, title in cases:
        path = export(work, model, size, batch)
        before = report(path)
        split = path + ".split.mlir"
        t0 = time.time()
        r = subprocess.run([LMS_OPT, path,
                            "--lms-split=budget=1B stats=true", "-o", split],
                           capture_output=True, text=True)
        seconds = time.time() - t0
        if r.returncode != 0:
            print(f"{model} b{batch}: lms-split failed: "
                  f"{r.stderr.strip().splitlines()[0][:200]}",
                  file=sys.stderr)
            continue
        splits = [line for line in r.stderr.splitlines()
                  if line.startswith("lms-split:")]
        stop = re.search(r"warning: lms-split: (.*)\n(?:.*\n)*?.*note: see "
                         r"current operation:\s*(?:%[\w#:]+ = )?\"?([\w.]+)",
                         r.stderr)
        after = report(split)
        row = {
            "model": model, "size": size, "batch": batch, "title": title,
            "peak_bytes": before["peak_bytes"],
            "min_feasible_bytes": before["min_feasible_bytes"],
            "split_min_feasible_bytes": after["min_feasible_bytes"],
            "split_peak_bytes": after["peak_bytes"],
            "splits": len(splits), "seconds": round(seconds, 2),
            "stopped_by": (f"'{stop.group(2)}': " + stop.group(1).replace(
                "is set by this op", "is set by it")) if stop else "",
        }
        row["factor"] = round(row["min_feasible_bytes"] /
                              max(1, row["split_min_feasible_bytes"]), 2)
        rows.append(row)
        print(f"{title} b{batch}: smallest feasible budget "
              f"{row['min_feasible_bytes'] / 2**20:.0f} MiB -> "
              f"{row['split_min_feasible_bytes'] / 2**20:.0f} MiB "
              f"({row['factor']}x, {row['splits']} splits, "
              f"{seconds:.1f} s)", flush=True)
        os.remove(split)
    md = ["# Splitting below the single-op bound",
          "",
          "Produced by `bench/split.py --out docs/results` (one training step "
          "per model from `tools/torch-export`, f32). *Smallest feasible "
          "budget*: what `--lms-report-memory` prints, the bound of every "
          "planner that keeps ops whole (the largest op's operands, results "
          "and temporaries). *After*: the same bound once `--lms-split="
          "budget=1B` has split, round after round, whichever op sets it, "
          "until the op that sets it cannot be split or splitting it no "
          "longer lowers it.",
          "",
          "| model | batch | peak | smallest feasible budget | after "
          "--lms-split | factor | splits | seconds |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['title']} | {r['batch']} | "
                  f"{r['peak_bytes'] / 2**30:.2f} GiB | "
                  f"{r['min_feasible_bytes'] / 2**20:.0f} MiB | "
                  f"{r['split_min_feasible_bytes'] / 2**20:.0f} MiB | "
                  f"{r['factor']}x | {r['splits']} | {r['seconds']} |")
    md.append("")
    md.append("Where it stops (the op that then sets the bound):")
    md.append("")
    for r in rows:
        md.append(f"- {r['title']}, batch {r['batch']}: "
                  f"{r['stopped_by'] or 'the budget'}")
    md.append("")
    text = "\n".join(md)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "split.md"), "w") as f:
            f.write(text)
        with open(os.path.join(args.out, "split.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
