#!/usr/bin/env bash
# The headline experiment in one command: builds LMS if needed, then for
# ResNet-50, 3D U-Net (128^3, 192^3) and GPT-2 on v100-16g, v100-32g-nvlink
# and h200, the largest batch without LMS and with each planner, and the
# simulated step time against unlimited memory. Writes
# docs/results/headline.{md,json} and SVG plots. Extra arguments go to
# bench/headline.py (e.g. --models resnet50:224 --devices v100-16g).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh" lms-opt >/dev/null
exec /usr/bin/python3 "$root/bench/headline.py" "$@"
