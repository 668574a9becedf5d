#!/usr/bin/env bash
# Here, with MLIR 22 and no GPU: compiles the GPU execution checks ahead of
# time into build/gpu-aot/, so that a GPU machine without MLIR can run them
# (scripts/gpu-check.sh runs what it finds there). Each check is the MLP
# training step with its driver (the program of
# test/Integration/gpu-execution.mlir) lowered with --lms-gpu-pipeline (CUDA
# kernels for sm_90, cubins embedded), translated to LLVM IR, compiled with
# llc and linked with the LMS runtime and bench/gpu/aot_main.c (a main and the
# printMemrefF32 that mlir-runner's utilities would give). The expected
# values come from the host pipeline run here with mlir-runner; for each
# planned variant the analysis JSON is written beside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/gpu-aot"
bin=/usr/lib/llvm-22/bin
lib=/usr/lib/llvm-22/lib
opt="$root/build/bin/lms-opt"
mkdir -p "$out"
/usr/bin/python3 "$root/tools/gen-models/mlp_train.py" --batch 64 --inputs 32 \
  --width 64 --layers 4 --classes 8 --with-main -o "$out/mlp.mlir"
"$opt" "$out/mlp.mlir" --lms-host-pipeline=arena=false -o "$out/host.ll.mlir"
"$bin/mlir-runner" "$out/host.ll.mlir" -e main -entry-point-result=void \
  -shared-libs="$root/build/lib/liblms_runtime.so,$lib/libmlir_runner_utils.so,$lib/libmlir_c_runner_utils.so" \
  >"$out/expected.out"
cc -O2 -c "$root/bench/gpu/aot_main.c" -o "$out/aot_main.o"
cp "$root/build/lib/liblms_runtime.so" "$out/"
# name | pipeline options | the planning pass that gives the analysis (or none)
while IFS='|' read -r name options planning; do
  "$opt" "$out/mlp.mlir" "--lms-gpu-pipeline=$options" -o "$out/$name.ll.mlir"
  "$bin/mlir-translate" --mlir-to-llvmir "$out/$name.ll.mlir" |
    sed 's/@main(/@lms_main(/' >"$out/$name.ll"
  "$bin/llc" -O2 -filetype=obj -relocation-model=pic "$out/$name.ll" \
    -o "$out/$name.o"
  cc "$out/$name.o" "$out/aot_main.o" -L"$out" -llms_runtime -lm \
    -rdynamic -Wl,-rpath,'$ORIGIN' -o "$out/mlp-$name"
  if [ "$planning" != none ]; then
    "$opt" "$out/mlp.mlir" "--$planning" -o "$out/$name.planned.mlir"
    "$opt" "$out/$name.planned.mlir" \
      --lms-report-memory="format=json alignment=256" -o /dev/null \
      >"$out/$name.analysis.json"
  fi
  rm -f "$out/$name.o" "$out/$name.ll"
done <<'LIST'
plain|device=h200 arena=false|none
swaps|budget=100000 arena=false|lms-insert-swaps=budget=100000 alignment=256 arena=false
arena|budget=233472 arena=true|lms-insert-swaps=budget=233472 alignment=256 arena=true
LIST
ls -la "$out"
