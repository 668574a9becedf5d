// copy_bandwidth.cu - host<->device copy bandwidth and copy/compute overlap.
//
//   nvcc -O2 -o copy-bandwidth bench/gpu/copy_bandwidth.cu
//   copy-bandwidth [--json out.json]
//
// Measures, with CUDA events, the bandwidth of cudaMemcpyAsync from pinned
// (cudaMallocHost) and pageable (malloc) host memory in each direction for
// sizes from 1 MiB to 1 GiB, and how much of a copy hides behind a compute
// kernel running on another stream (the overlap LMS's planner counts on).
// Prints a table; with --json also writes the numbers.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(expr)                                                            \
  do {                                                                         \
    cudaError_t status = (expr);                                               \
    if (status != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s failed: %s\n", #expr,                          \
                   cudaGetErrorString(status));                                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// Burns about `iterations` dependent FMAs per thread.
__global__ void busy(float *data, int iterations) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = data[i];
  for (int k = 0; k < iterations; ++k)
    x = x * 0.999f + 0.001f;
  data[i] = x;
}

static float timeCopy(void *dst, const void *src, size_t bytes,
                      cudaStream_t stream, int repeats) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  CHECK(cudaEventRecord(start, stream));
  for (int r = 0; r < repeats; ++r)
    CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return ms / repeats;
}

int main(int argc, char **argv) {
  const char *jsonPath = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--json") == 0)
      jsonPath = argv[i + 1];
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %.1f GiB\n\n", prop.name,
              prop.totalGlobalMem / double(1ull << 30));

  std::string json = "{\"device\": \"" + std::string(prop.name) +
                     "\", \"bandwidth\": [";
  std::printf("| bytes | H2D pinned GB/s | D2H pinned GB/s | H2D pageable GB/s "
              "| D2H pageable GB/s |\n|---|---|---|---|---|\n");
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bool first = true;
  for (size_t bytes = 1ull << 20; bytes <= (1ull << 30); bytes <<= 2) {
    void *device, *pinned;
    CHECK(cudaMalloc(&device, bytes));
    CHECK(cudaMallocHost(&pinned, bytes));
    void *pageable = std::malloc(bytes);
    std::memset(pageable, 1, bytes);
    std::memset(pinned, 1, bytes);
    int repeats = bytes <= (16ull << 20) ? 20 : 4;
    double gb = bytes / 1e9;
    double h2dPinned = gb / (timeCopy(device, pinned, bytes, stream, repeats) / 1e3);
    double d2hPinned = gb / (timeCopy(pinned, device, bytes, stream, repeats) / 1e3);
    double h2dPageable = gb / (timeCopy(device, pageable, bytes, stream, repeats) / 1e3);
    double d2hPageable = gb / (timeCopy(pageable, device, bytes, stream, repeats) / 1e3);
    std::printf("| %zu | %.1f | %.1f | %.1f | %.1f |\n", bytes, h2dPinned,
                d2hPinned, h2dPageable, d2hPageable);
    char row[256];
    std::snprintf(row, sizeof(row),
                  "%s{\"bytes\": %zu, \"h2d_pinned\": %.3f, \"d2h_pinned\": "
                  "%.3f, \"h2d_pageable\": %.3f, \"d2h_pageable\": %.3f}",
                  first ? "" : ", ", bytes, h2dPinned, d2hPinned, h2dPageable,
                  d2hPageable);
    json += row;
    first = false;
    std::free(pageable);
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(device));
  }
  json += "], \"overlap\": [";

  // Overlap: a kernel of about the copy's duration on one stream, the copy
  // on another; overlap = (kernel + copy - together) / min(kernel, copy).
  std::printf("\n| copy | direction | host memory | copy ms | kernel ms | "
              "together ms | overlap |\n|---|---|---|---|---|---|---|\n");
  size_t bytes = 256ull << 20;
  void *device, *pinned;
  float *work;
  int threads = 256, blocks = prop.multiProcessorCount * 8;
  CHECK(cudaMalloc(&device, bytes));
  CHECK(cudaMallocHost(&pinned, bytes));
  CHECK(cudaMalloc(&work, sizeof(float) * threads * blocks));
  void *pageable = std::malloc(bytes);
  cudaStream_t compute;
  CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto timeKernel = [&](int iterations) {
    CHECK(cudaEventRecord(a, compute));
    busy<<<blocks, threads, 0, compute>>>(work, iterations);
    CHECK(cudaEventRecord(b, compute));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  };
  bool firstOverlap = true;
  for (int pinnedHost = 1; pinnedHost >= 0; --pinnedHost) {
    for (int toDevice = 1; toDevice >= 0; --toDevice) {
      void *host = pinnedHost ? pinned : pageable;
      void *dst = toDevice ? device : host;
      void *src = toDevice ? host : device;
      float copyMs = timeCopy(dst, src, bytes, stream, 2);
      // Scale the kernel to last about as long as the copy.
      int iterations = 1 << 12;
      float kernelMs = timeKernel(iterations);
      iterations = int(iterations * copyMs / kernelMs);
      kernelMs = timeKernel(iterations);
      CHECK(cudaDeviceSynchronize());
      auto t0 = std::chrono::steady_clock::now();
      busy<<<blocks, threads, 0, compute>>>(work, iterations);
      CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
      CHECK(cudaDeviceSynchronize());
      float togetherMs = std::chrono::duration<float, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      float overlap = (copyMs + kernelMs - togetherMs) /
                      std::min(copyMs, kernelMs);
      overlap = std::max(0.0f, std::min(1.0f, overlap));
      std::printf("| 256 MiB | %s | %s | %.2f | %.2f | %.2f | %.0f%% |\n",
                  toDevice ? "H2D" : "D2H", pinnedHost ? "pinned" : "pageable",
                  copyMs, kernelMs, togetherMs, overlap * 100);
      char row[256];
      std::snprintf(row, sizeof(row),
                    "%s{\"direction\": \"%s\", \"host\": \"%s\", \"copy_ms\": "
                    "%.3f, \"kernel_ms\": %.3f, \"together_ms\": %.3f, "
                    "\"overlap\": %.3f}",
                    firstOverlap ? "" : ", ", toDevice ? "h2d" : "d2h",
                    pinnedHost ? "pinned" : "pageable", copyMs, kernelMs,
                    togetherMs, overlap);
      json += row;
      firstOverlap = false;
    }
  }
  json += "]}\n";
  if (jsonPath) {
    FILE *f = std::fopen(jsonPath, "w");
    if (f) {
      std::fputs(json.c_str(), f);
      std::fclose(f);
    }
  }
  return 0;
}
