//===- Cuda.cpp - The CUDA backend ----------------------------------------===//
//
// cudart only: driver entry points (module loading, kernel launches, 32- and
// 16-bit memsets) come through cudaGetDriverEntryPoint, so the library loads
// on machines without the driver. Every call is checked; an error prints
// the call and CUDA's message and aborts. Device memory is stream-ordered
// (cudaMallocAsync / cudaFreeAsync); host staging comes from a pool of
// cudaMallocHost buffers, returned to the pool in stream order.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#ifdef LMS_RUNTIME_WITH_CUDA

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdlib>

using namespace lms::runtime;

#define LMS_CUDA_CHECK(expr)                                                   \
  do {                                                                         \
    cudaError_t status = (expr);                                               \
    if (status != cudaSuccess)                                                 \
      fatal(std::string(#expr) + " failed: " + cudaGetErrorString(status));    \
  } while (false)

#define LMS_CU_CHECK(expr)                                                     \
  do {                                                                         \
    CUresult status = (expr);                                                  \
    if (status != CUDA_SUCCESS)                                                \
      fatal(std::string(#expr) + " failed with CUresult " +                    \
            std::to_string(static_cast<int>(status)));                         \
  } while (false)

namespace {

/// Driver entry points, looked up through cudart.
struct Driver {
  decltype(&cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&cuModuleLoadDataEx) moduleLoadDataEx = nullptr;
  decltype(&cuModuleUnload) moduleUnload = nullptr;
  decltype(&cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&cuLaunchKernel) launchKernel = nullptr;
  decltype(&cuMemsetD32Async) memsetD32Async = nullptr;
  decltype(&cuMemsetD16Async) memsetD16Async = nullptr;

  template <typename F> void lookup(const char *symbol, F &target) {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult result;
    // The ABI of these entry points is the one of CUDA 12.0.
    LMS_CUDA_CHECK(cudaGetDriverEntryPointByVersion(
        symbol, &fn, 12000, cudaEnableDefault, &result));
    if (result != cudaDriverEntryPointSuccess || !fn)
      fatal(std::string("the CUDA driver has no entry point ") + symbol);
    target = reinterpret_cast<F>(fn);
  }
  Driver() {
    lookup("cuModuleLoadData", moduleLoadData);
    lookup("cuModuleLoadDataEx", moduleLoadDataEx);
    lookup("cuModuleUnload", moduleUnload);
    lookup("cuModuleGetFunction", moduleGetFunction);
    lookup("cuLaunchKernel", launchKernel);
    lookup("cuMemsetD32Async", memsetD32Async);
    lookup("cuMemsetD16Async", memsetD16Async);
  }
};

class CudaBackend final : public Backend {
public:
  CudaBackend()
      : pool(
            [](size_t bytes) {
              void *ptr = nullptr;
              LMS_CUDA_CHECK(cudaMallocHost(&ptr, bytes));
              return ptr;
            },
            [](void *ptr) { cudaFreeHost(ptr); },
            std::getenv("LMS_PINNED_BYTES")
                ? parseSize(std::getenv("LMS_PINNED_BYTES"), "LMS_PINNED_BYTES")
                : 0) {
    LMS_CUDA_CHECK(cudaSetDevice(0));
  }

  const char *name() const override { return "cuda"; }

  // Streams are pooled: every `gpu.wait async` makes one and every
  // `gpu.wait` ends one, so a step creates thousands.
  void *streamCreate() override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idleStreams.empty()) {
        cudaStream_t stream = idleStreams.back();
        idleStreams.pop_back();
        return stream;
      }
    }
    cudaStream_t stream;
    LMS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
  }
  void streamDestroy(void *stream) override {
    LMS_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    std::lock_guard<std::mutex> lock(mutex);
    idleStreams.push_back(static_cast<cudaStream_t>(stream));
  }
  void streamSynchronize(void *stream) override {
    LMS_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  }
  void streamWaitEvent(void *stream, void *event) override {
    LMS_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                       static_cast<cudaEvent_t>(event), 0));
  }
  void *eventCreate() override {
    cudaEvent_t event;
    LMS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }
  void eventDestroy(void *event) override {
    LMS_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }
  void eventSynchronize(void *event) override {
    LMS_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  void eventRecord(void *event, void *stream) override {
    LMS_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event),
                                   static_cast<cudaStream_t>(stream)));
  }

  void *memAlloc(uint64_t bytes, void *stream, bool hostShared) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (hostShared)
      return pool.get(bytes, stats);
    void *ptr = nullptr;
    if (stream)
      LMS_CUDA_CHECK(
          cudaMallocAsync(&ptr, bytes, static_cast<cudaStream_t>(stream)));
    else
      LMS_CUDA_CHECK(cudaMalloc(&ptr, bytes));
    device[ptr] = bytes;
    stats.deviceBytesInUse += bytes;
    stats.peakDeviceBytes =
        std::max(stats.peakDeviceBytes, stats.deviceBytesInUse);
    ++stats.deviceAllocations;
    return ptr;
  }

  void memFree(void *ptr, void *stream) override {
    if (!ptr)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    if (pool.owns(ptr)) {
      lock.unlock();
      if (!stream) {
        std::lock_guard<std::mutex> relock(mutex);
        pool.put(ptr, stats);
        return;
      }
      // Back to the pool once the stream has reached this point.
      auto *request = new std::pair<CudaBackend *, void *>(this, ptr);
      LMS_CUDA_CHECK(cudaLaunchHostFunc(
          static_cast<cudaStream_t>(stream),
          [](void *data) {
            auto *r = static_cast<std::pair<CudaBackend *, void *> *>(data);
            std::lock_guard<std::mutex> relock(r->first->mutex);
            r->first->pool.put(r->second, r->first->stats);
            delete r;
          },
          request));
      return;
    }
    auto it = device.find(ptr);
    if (it == device.end())
      fatal("freeing memory that is not a live device allocation");
    stats.deviceBytesInUse -= it->second;
    device.erase(it);
    lock.unlock();
    if (stream)
      LMS_CUDA_CHECK(cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream)));
    else
      LMS_CUDA_CHECK(cudaFree(ptr));
  }

  void memcpy(void *dst, void *src, size_t bytes, void *stream) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      bool toDevice = isDevice(dst), fromDevice = isDevice(src);
      if (toDevice && fromDevice) {
        stats.d2dBytes += bytes;
        ++stats.d2dCopies;
      } else if (toDevice) {
        stats.h2dBytes += bytes;
        ++stats.h2dCopies;
      } else if (fromDevice) {
        stats.d2hBytes += bytes;
        ++stats.d2hCopies;
      }
    }
    LMS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                   static_cast<cudaStream_t>(stream)));
  }
  void memset32(void *dst, uint32_t value, size_t count,
                void *stream) override {
    LMS_CU_CHECK(driver().memsetD32Async(reinterpret_cast<CUdeviceptr>(dst),
                                         value, count,
                                         static_cast<CUstream>(stream)));
  }
  void memset16(void *dst, uint16_t value, size_t count,
                void *stream) override {
    LMS_CU_CHECK(driver().memsetD16Async(reinterpret_cast<CUdeviceptr>(dst),
                                         value, count,
                                         static_cast<CUstream>(stream)));
  }
  bool isStaging(void *ptr) override {
    std::lock_guard<std::mutex> lock(mutex);
    return pool.isHandedOut(ptr);
  }
  void hostRegister(void *ptr, uint64_t bytes) override {
    LMS_CUDA_CHECK(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault));
  }
  void hostUnregister(void *ptr) override {
    LMS_CUDA_CHECK(cudaHostUnregister(ptr));
  }

  void *moduleLoad(void *data, size_t) override {
    CUmodule module;
    LMS_CU_CHECK(driver().moduleLoadData(&module, data));
    return module;
  }
  void *moduleLoadJIT(void *data, int optLevel) override {
    CUmodule module;
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
    LMS_CU_CHECK(driver().moduleLoadDataEx(&module, data, 1, options, values));
    return module;
  }
  void moduleUnload(void *module) override {
    LMS_CU_CHECK(driver().moduleUnload(static_cast<CUmodule>(module)));
  }
  void *moduleGetFunction(void *module, const char *name) override {
    CUfunction function;
    LMS_CU_CHECK(driver().moduleGetFunction(
        &function, static_cast<CUmodule>(module), name));
    return function;
  }
  void launchKernel(void *function, intptr_t gridX, intptr_t gridY,
                    intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                    intptr_t blockZ, int32_t smem, void *stream, void **params,
                    void **extra, size_t) override {
    LMS_CU_CHECK(driver().launchKernel(
        static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX, blockY,
        blockZ, smem, static_cast<CUstream>(stream), params, extra));
  }

  Stats snapshot() override {
    LMS_CUDA_CHECK(cudaDeviceSynchronize());
    std::lock_guard<std::mutex> lock(mutex);
    Stats result = stats;
    result.leakedBytes = stats.deviceBytesInUse + pool.bytesInUse();
    result.leakedAllocations = device.size() + pool.buffersInUse();
    return result;
  }

  // Carved buffers are only counted on a real GPU: the placement checker
  // proved them disjoint, and poisoning would cost a kernel each.
  void arenaAcquire(void *, uint64_t, uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    stats.arenaBytesInUse += bytes;
    stats.arenaPeakBytes =
        std::max(stats.arenaPeakBytes, stats.arenaBytesInUse);
    ++stats.arenaBuffers;
  }
  void arenaRelease(void *, uint64_t, uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    stats.arenaBytesInUse -= std::min(bytes, stats.arenaBytesInUse);
  }

private:
  Driver &driver() {
    static Driver instance;
    return instance;
  }
  bool isDevice(void *ptr) {
    auto it = device.upper_bound(ptr);
    if (it == device.begin())
      return false;
    --it;
    return static_cast<char *>(ptr) <
           static_cast<char *>(it->first) + it->second;
  }

  std::mutex mutex;
  Stats stats;
  PinnedPool pool;
  std::map<void *, size_t> device;
  std::vector<cudaStream_t> idleStreams;
};

} // namespace

std::unique_ptr<Backend> lms::runtime::createCudaBackend() {
  return std::make_unique<CudaBackend>();
}

bool lms::runtime::cudaDeviceAvailable() {
  int count = 0;
  // No driver or no device: an error here, never a crash or a hang.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

#else // !LMS_RUNTIME_WITH_CUDA

std::unique_ptr<lms::runtime::Backend> lms::runtime::createCudaBackend() {
  return nullptr;
}
bool lms::runtime::cudaDeviceAvailable() { return false; }

#endif
