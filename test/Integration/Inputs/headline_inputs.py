"""Writes a small headline.json (the fits-at-all experiment) and
equal-cost.json (three rows) into the directory given, for
headline-render.test."""
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def methods(none, plan, top):
    return {"none": {"within": none, "fits": none},
            "swap": {"within": none, "fits": plan,
                     "step_vs_unlimited": 1.0, "host_peak_bytes": 0},
            "remat": {"within": none, "fits": plan,
                      "step_vs_unlimited": 1.0, "host_peak_bytes": 0},
            "plan": {"within": plan, "fits": top,
                     "step_vs_unlimited": 1.2, "host_peak_bytes": 2 ** 31,
                     "chosen": "joint"},
            "checkpoint": {"within": none, "fits": none},
            "save-on-cpu": {"within": none, "fits": none}}


rows = [
    # 4.80x: under ResNet-50's 5x goal.
    {"model": "resnet50", "size": 224, "device": "v100-16g", "max_batch": 1024,
     "methods": methods(100, 480, 600), "link": {"6": 1.3, "24": 1.1}},
    # At the cap: at least 12.8x.
    {"model": "gpt2", "size": 1024, "device": "v100-16g", "max_batch": 64,
     "methods": methods(5, 64, 64), "link": {"6": 1.28, "24": 1.22}},
    # Batch 1 does not fit without LMS: no multiplier.
    {"model": "llama", "size": 2048, "device": "v100-16g", "max_batch": 16,
     "methods": methods(0, 12, 14)},
]
for r in rows:
    r["plot"] = f"equal-cost-{r['model']}{r['size']}-{r['device']}.svg"
    r.update({"command": "bench/equal_cost.py --headline",
              "commit_of_lms_opt": "abc1234", "seconds": 1800, "probes": []})
json.dump({"limit": 1.25, "max_batch": 64, "seconds": 5400, "rows": rows},
          open(os.path.join(out, "equal-cost.json"), "w"))
json.dump({"seconds": 60, "planning_runs": 12,
           "conditions": "Measured with lms-opt at def5678.",
           "rows": [{"model": "unet3d", "size": 128, "label": "3D U-Net, 128^3",
                     "device": "v100-16g",
                     "max_batch": {"none": 4, "swap": 15, "remat": 10,
                                   "plan": 15},
                     "at_max": {"plan": {"relative_step": 2.0}},
                     "ideal": [[4, 2.0], [8, 4.0]],
                     "curve": {"none": [[4, 2.0]], "plan": [[4, 2.0], [8, 3.0]]},
                     "plot": "headline-unet3d128-v100-16g.svg"}]},
          open(os.path.join(out, "headline.json"), "w"))
