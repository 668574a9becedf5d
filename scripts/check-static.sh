#!/usr/bin/env bash
# Builds LMS against MLIR's static libraries (LMS_LINK_MLIR_DYLIB=OFF), as an
# LLVM installation without libMLIR.so would, in build-static/, and runs the
# analysis, transform and transform-op tests with that lms-opt (and
# lms-bench-placement, which test/Transforms/report-placement.test runs on
# lms-opt's reports). Debian ships both kinds of MLIR library, so this
# checks the static configuration here.
# Usage: scripts/check-static.sh   (installs what is missing first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${LMS_STATIC_BUILD:-$root/build-static}"

"$root/scripts/deps.sh"
LMS_BUILD_DIR="$build" LMS_CMAKE_ARGS="-DLMS_LINK_MLIR_DYLIB=OFF" \
  "$root/scripts/build.sh" lms-opt lms-plan lms-bench-placement
# No libMLIR.so in the binary: the static configuration is what was built.
if ldd "$build/bin/lms-opt" | grep -q 'libMLIR\.so'; then
  echo "check-static: $build/bin/lms-opt links libMLIR.so" >&2
  exit 1
fi
/usr/lib/llvm-22/bin/lit -q "$build/test/Analysis" "$build/test/Transforms" \
  "$build/test/TransformOps" "$build/test/Plugins"
