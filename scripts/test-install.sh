#!/usr/bin/env bash
# Checks LMS as an embedder sees it: installs the build to a temporary prefix,
# builds examples/embed against the installed CMake package, runs it, and
# runs the installed tools and plugins (with Debian's upstream mlir-opt).
# Exits non-zero on any failure. Needs a build (scripts/build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
work=$(mktemp -d /tmp/lms-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
mlp="$root/examples/mlp_train.mlir"
budget_bytes=50331648 # 48 MiB; the MLP's peak is 79822848 bytes

fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
step() { echo "test-install: $*"; }

step "installing to $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/lms-opt bin/lms-plan lib/libLMS.so lib/libLMS-C.so \
         lib/liblms_runtime.so lib/LMSDialectPlugin.so lib/LMSPassPlugin.so \
         lib/cmake/lms/LMSConfig.cmake lib/cmake/lms/LMSTargets.cmake \
         include/LMS/InitLMS.h include/LMS-c/LMS.h \
         include/LMS/Transforms/Passes.h.inc; do
  [ -e "$prefix/$f" ] || fail "missing $f in the prefix"
done

step "building examples/embed against the installed package"
cmake -S "$root/examples/embed" -B "$work/embed" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" \
  || { cat "$work/cmake.log"; fail "configuring examples/embed"; }
grep -q "Using LMSConfig.cmake in: $prefix/lib/cmake/lms" "$work/cmake.log" \
  || fail "examples/embed did not find the installed package"
ninja -C "$work/embed" -j "${LMS_JOBS:-2}" >"$work/ninja.log" \
  || { cat "$work/ninja.log"; fail "building examples/embed"; }

step "lms-embed: buildLMSPipeline() in the host's pass manager"
"$work/embed/lms-embed" "$mlp" --budget=48MiB --strategy=swap \
  -o "$work/swapped.mlir" 2>"$work/peaks.txt" || fail "lms-embed failed"
grep -q "lms.swap_out" "$work/swapped.mlir" || fail "no swap in the output"
after=$(sed -n 's/^@mlp_step peak after: \([0-9]*\) bytes$/\1/p' "$work/peaks.txt")
[ -n "$after" ] || fail "lms-embed printed no peak"
[ "$after" -le "$budget_bytes" ] || fail "peak $after exceeds $budget_bytes"
if "$work/embed/lms-embed" "$mlp" --budget=48MiB --strategy=bogus \
    >/dev/null 2>&1; then
  fail "lms-embed accepted strategy=bogus"
fi

step "lms-embed-opt: MlirOptMain with the LMS registration calls"
"$work/embed/lms-embed-opt" "$mlp" --lms-insert-swaps --lms-budget=48MiB \
  -o "$work/opt.mlir" || fail "lms-embed-opt failed"
grep -q "lms.swap_out" "$work/opt.mlir" || fail "lms-embed-opt inserted no swap"

step "lms-embed-c: the C API from the installed libLMS-C.so"
"$work/embed/lms-embed-c" "$mlp" mlp_step 48MiB >"$work/c.mlir" \
  || fail "lms-embed-c failed"
after=$(sed -n 's|^// peak after: \([0-9]*\)$|\1|p' "$work/c.mlir")
[ -n "$after" ] && [ "$after" -le "$budget_bytes" ] \
  || fail "lms-embed-c: peak '$after' not within $budget_bytes"
if "$work/embed/lms-embed-c" "$mlp" mlp_step 1KiB >/dev/null 2>&1; then
  fail "lms-embed-c accepted an impossible budget"
fi

step "the installed lms-opt and the plugins in upstream mlir-opt"
"$prefix/bin/lms-opt" "$mlp" --lms-insert-swaps --lms-budget=48MiB \
  -o "$work/lms-opt.mlir" || fail "the installed lms-opt failed"
grep -q "lms.swap_out" "$work/lms-opt.mlir" || fail "installed lms-opt"
/usr/lib/llvm-22/bin/mlir-opt "$mlp" \
  --load-dialect-plugin="$prefix/lib/LMSDialectPlugin.so" \
  --load-pass-plugin="$prefix/lib/LMSPassPlugin.so" \
  --pass-pipeline='builtin.module(lms-insert-swaps{budget=48MiB})' \
  -o "$work/plugin.mlir" || fail "upstream mlir-opt with the plugins failed"
grep -q "lms.swap_out" "$work/plugin.mlir" || fail "plugins in upstream mlir-opt"

step "ok"
