#!/usr/bin/env bash
# For a machine with an NVIDIA GPU (never needed for CI): builds the LMS
# runtime with its CUDA backend, runs the tests that need a device (the CUDA
# backend's unit tests and the `cuda-device` lit tests), and measures pinned
# vs pageable host<->device bandwidth and the overlap of copies with a compute
# kernel. Prints a summary; writes logs and JSON to build/gpu-check/. Works
# without MLIR on the machine too: then the runtime and its smoke test are
# built with g++ directly, the CUDA unit tests run if build/ holds them, and
# the GPU execution checks that scripts/gpu-aot.sh compiled ahead of time
# (build/gpu-aot/) run in place of the lit tests. Finishes in a few minutes
# on an H200.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/gpu-check"
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
status=0
summary=()
step() { # name, command...
  local name=$1; shift
  echo "== $name"
  if "$@" >"$out/$name.log" 2>&1; then
    summary+=("| $name | ok |")
  else
    summary+=("| $name | FAILED (see build/gpu-check/$name.log) |")
    status=1
  fi
  tail -n 25 "$out/$name.log"
}

echo "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 |
  tee "$out/device.txt" || echo "nvidia-smi not available"

if [ -d /usr/lib/llvm-22/lib/cmake/mlir ] && command -v ninja >/dev/null; then
  step build "$root/scripts/build.sh" lms-opt lms_runtime LMSUnitTests
  step cuda-unit-tests "$root/build/unittests/Runtime/LMSRuntimeCudaTests"
  step cuda-lit-tests /usr/lib/llvm-22/bin/lit -v "$root/build/test" \
    --filter 'gpu-execution|gpu-pipeline|mlp-swaps|Runtime'
  runtime="$root/build/lib/liblms_runtime.so"
else
  echo "(no MLIR 22 here: building the runtime alone with g++)"
  # The CUDA backend's unit tests, built where MLIR is (carried here with
  # build/lib/liblms_runtime.so).
  if [ -x "$root/build/unittests/Runtime/LMSRuntimeCudaTests" ]; then
    step cuda-unit-tests env LD_LIBRARY_PATH="$root/build/lib" \
      "$root/build/unittests/Runtime/LMSRuntimeCudaTests"
  fi
  runtime="$out/liblms_runtime.so"
  step build-runtime g++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden \
    -DLMS_RUNTIME_WITH_CUDA -I"$root/include" -I"$cuda/include" \
    "$root"/lib/Runtime/*.cpp "$cuda/lib64/libcudart_static.a" \
    -ldl -lrt -lpthread -o "$runtime"
fi

# A smoke test of the CUDA backend through the C ABI, independent of
# GoogleTest: a round trip through device memory with a pinned staging buffer.
cat > "$out/smoke.cpp" <<'CPP'
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
extern "C" {
void *mgpuStreamCreate(); void mgpuStreamSynchronize(void *);
void *mgpuMemAlloc(uint64_t, void *, bool); void mgpuMemFree(void *, void *);
void mgpuMemcpy(void *, void *, size_t, void *);
const char *lmsRuntimeBackend(); void lmsRuntimeWriteStats(const char *);
}
int main() {
  setenv("LMS_RUNTIME", "cuda", 1);
  std::vector<float> back(1 << 20, 0.0f);
  size_t bytes = back.size() * sizeof(float);
  void *s = mgpuStreamCreate();
  float *staging = static_cast<float *>(mgpuMemAlloc(bytes, nullptr, true));
  for (size_t i = 0; i < back.size(); ++i) staging[i] = float(i % 97);
  void *device = mgpuMemAlloc(bytes, s, false);
  mgpuMemcpy(device, staging, bytes, s);
  mgpuMemcpy(back.data(), device, bytes, s);
  mgpuMemFree(device, s);
  mgpuMemFree(staging, s);
  mgpuStreamSynchronize(s);
  bool ok = back[12345] == float(12345 % 97);
  std::printf("backend %s, round trip %s\n", lmsRuntimeBackend(), ok ? "ok" : "WRONG");
  lmsRuntimeWriteStats("-");
  return ok ? 0 : 1;
}
CPP
step runtime-smoke-test bash -c "g++ -std=c++17 -O2 '$out/smoke.cpp' '$runtime' \
  -Wl,-rpath,'$(dirname "$runtime")' -o '$out/smoke' && '$out/smoke'"

step copy-bandwidth bash -c "'$cuda/bin/nvcc' -O2 -o '$out/copy-bandwidth' \
  '$root/bench/gpu/copy_bandwidth.cu' && '$out/copy-bandwidth' --json \
  '$out/copy-bandwidth.json'"

# The GPU execution checks compiled ahead of time by scripts/gpu-aot.sh
# where MLIR is: the same values as the host pipeline, and each planned
# variant within its budget, measured == analysed, without leaks.
aot="$root/build/gpu-aot"
if [ -d "$aot" ]; then
  checks="$root/test/Integration/Inputs"
  for exe in "$aot"/mlp-*; do
    name=${exe##*/mlp-}
    stats="$out/aot-$name.json"
    command="LMS_RUNTIME=cuda LMS_RUNTIME_STATS='$stats' '$exe' > '$out/aot-$name.out' && \
      python3 '$checks/compare_outputs.py' '$aot/expected.out' '$out/aot-$name.out' && cat '$stats'"
    case $name in
      swaps) command+=" && python3 '$checks/check_stats.py' '$stats' --max-peak 100000 --analysis '$aot/swaps.analysis.json' --function main --no-leaks --min-h2d 1" ;;
      arena) command+=" && python3 '$checks/check_stats.py' '$stats' --max-peak 233472 --analysis '$aot/arena.analysis.json' --function main --arena --no-leaks" ;;
    esac
    step "aot-$name" bash -c "$command"
  done
fi

echo
echo "| step | result |"
echo "|---|---|"
printf '%s\n' "${summary[@]}"
exit $status
