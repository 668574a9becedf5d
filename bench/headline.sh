#!/usr/bin/env bash
# The headline experiment in one command: builds LMS if needed, then
#  1. throughput at equal cost (bench/equal_cost.py --headline): for
#     ResNet-50, GPT-2 and the LLaMA-style stack on v100-16g (and the
#     LLaMA-style stack on a100-40g, where batch 1 fits without LMS), the
#     largest batch within 1.25x of the unlimited-memory step for offload,
#     recompute, --lms-plan and PyTorch's own answers; writes
#     docs/results/equal-cost.{md,json} (hours on 2 cores: each probe of
#     --lms-plan at a large batch plans for minutes);
#  2. the largest batch per planner for ResNet-50, 3D U-Net (128^3, 192^3)
#     and GPT-2 on v100-16g, v100-32g-nvlink and h200 (bench/headline.py);
#     writes docs/results/largest-batch.md, headline.json and plots (SVG
#     and PNG).
# headline.md presents step 1's results (read from equal-cost.json) and
# points to largest-batch.md.
# Extra arguments go to bench/headline.py (e.g. --models resnet50:224
# --devices v100-16g); LMS_HEADLINE_SKIP_EQUAL_COST=1 skips step 1, and
# LMS_HEADLINE_SKIP_LARGEST=1 skips step 2 (headline.md is then written
# again from the headline.json there is, with step 1's new lead).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh" lms-opt >/dev/null
if [ -z "${LMS_HEADLINE_SKIP_EQUAL_COST:-}" ]; then
  /usr/bin/python3 "$root/bench/equal_cost.py" --headline
fi
if [ -n "${LMS_HEADLINE_SKIP_LARGEST:-}" ]; then
  exec /usr/bin/python3 "$root/bench/headline.py" \
    --from-json "$root/docs/results/headline.json"
fi
exec /usr/bin/python3 "$root/bench/headline.py" "$@"
