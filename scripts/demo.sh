#!/usr/bin/env bash
# The main job on a bundled example: installs what is missing, builds lms-opt,
# and fits one training step of an MLP (examples/mlp_train.mlir) into 60% of
# its peak device memory with --lms-insert-swaps: the memory report before,
# the pass, the report after, and the timeline picture (build/demo/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/deps.sh"
"$root/scripts/build.sh" lms-opt >/dev/null
opt="$root/build/bin/lms-opt"
model="$root/examples/mlp_train.mlir"
out="$root/build/demo"
mkdir -p "$out"
# 60%: with arena=true (the default) the arguments and returned gradients are
# allocations of their own beside the arena; the smallest feasible budget is
# 40.1 MiB of the 76.1 MiB peak (24.1 MiB on live bytes, arena=false).
budget=${LMS_DEMO_BUDGET:-60%}

echo "== 1. Where the memory goes: lms-opt --lms-report-memory $(basename "$model")"
"$opt" "$model" --lms-report-memory=top=5 -o /dev/null
echo
echo "== 2. Fit it into $budget of that: lms-opt --lms-insert-swaps --lms-budget=$budget"
"$opt" "$model" --lms-insert-swaps=stats=true --lms-budget="$budget" \
  -o "$out/mlp_train.swapped.mlir"
echo "   -> $out/mlp_train.swapped.mlir; the first offload in it:"
grep -n -m1 -B1 -A1 "lms.swap_out" "$out/mlp_train.swapped.mlir" | cut -c1-150
grep -n -m1 "lms.swap_wait" "$out/mlp_train.swapped.mlir" | cut -c1-150
grep -n -m1 -A1 "lms.swap_in" "$out/mlp_train.swapped.mlir" | cut -c1-150
echo
echo "== 3. The memory report after the rewrite"
"$opt" "$out/mlp_train.swapped.mlir" --lms-report-memory="top=5 budget=$budget" -o /dev/null
echo
echo "== 4. The timeline picture (with and without LMS, swaps marked)"
"$opt" "$out/mlp_train.swapped.mlir" \
  --lms-report-memory="format=svg budget=$budget file=$out/mlp_train.svg" -o /dev/null
echo "   -> $out/mlp_train.svg"
echo
echo "== 5. lms-opt --lms-strip gives back the original program"
"$opt" "$out/mlp_train.swapped.mlir" --lms-strip -o "$out/mlp_train.stripped.mlir"
"$opt" "$model" -o "$out/mlp_train.original.mlir"
if diff -q "$out/mlp_train.stripped.mlir" "$out/mlp_train.original.mlir" >/dev/null; then
  echo "   identical"
else
  echo "   they differ" >&2
  exit 1
fi
