#!/usr/bin/env bash
# Configures (once) and builds LMS in build/ with at most 2 jobs.
#   LMS_BUILD_DIR   another build tree (scripts/check-static.sh: build-static/)
#   LMS_CMAKE_ARGS  more -D options for its first configuration
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${LMS_BUILD_DIR:-$root/build}"
jobs=${LMS_JOBS:-2}

if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086 # LMS_CMAKE_ARGS is a list of -D options
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLLVM_USE_LINKER=lld ${LMS_CMAKE_ARGS:-} >/dev/null
fi
ninja -C "$build" -j "$jobs" "$@"
