#!/usr/bin/env bash
# Analyses the real training graphs of ../shared/data/models (or the folder
# given as $1) with --lms-report-memory and prints a markdown table; the JSON
# reports go to build/bench/models/.
#
#   bench/analyse-models.sh [models-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models=${1:-$root/../shared/data/models}
out="$root/build/bench/models"
mkdir -p "$out"
"$root/scripts/build.sh" lms-opt >/dev/null
opt="$root/build/bin/lms-opt"

echo "| model | function | ops | peak | op at the peak | smallest feasible budget | analysis s |"
echo "|---|---|---|---|---|---|---|"
for name in mnist_training NanoGPT_FW NanoGPT_BW BertTiny_FW BertTiny_BW; do
  file="$models/$name.mlir"
  [ -f "$file" ] || { echo "| $name | (missing: $file) | | | | | |"; continue; }
  start=$(date +%s.%N)
  "$opt" --allow-unregistered-dialect "$file" \
    --lms-report-memory="format=json file=$out/$name.json" -o /dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out/$name.json" "$name" "$start" "$end" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
seconds = float(sys.argv[4]) - float(sys.argv[3])
def size(b):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if b < 1024 or unit == "GiB":
            return f"{b:.3g} {unit}" if unit != "B" else f"{b} B"
        b /= 1024
for f in report["functions"]:
    op = f["peak_op"]
    where = f'{op["index"]} `{op["name"]}`' if op else "-"
    print(f'| {sys.argv[2]} | @{f["name"]} | {f["num_ops"]} | {size(f["peak_bytes"])} '
          f'| {where} | {size(f["min_feasible_bytes"])} | {seconds:.2f} (whole lms-opt run) |')
PY
done
