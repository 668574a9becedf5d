//===- CudaTest.cpp - The CUDA backend ------------------------------------===//
//
// Runs on a machine with a CUDA device; everywhere else every test skips
// itself with a message.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include "RuntimeAPI.h"

#include <cstdlib>
#include <vector>

namespace {
const bool haveDevice = [] {
  bool found = lmsRuntimeCudaDeviceCount() > 0;
  if (found)
    setenv("LMS_RUNTIME", "cuda", 1);
  return found;
}();
} // namespace

#define REQUIRE_CUDA_DEVICE()                                                  \
  if (!haveDevice)                                                             \
  GTEST_SKIP() << "no CUDA device here: the CUDA backend tests need one"

TEST(CudaRuntime, IsTheBackend) {
  REQUIRE_CUDA_DEVICE();
  EXPECT_STREQ(lmsRuntimeBackend(), "cuda");
}

TEST(CudaRuntime, RoundTripThroughTheDevice) {
  REQUIRE_CUDA_DEVICE();
  std::vector<float> host(1 << 20, 1.5f), back(1 << 20, 0.0f);
  size_t bytes = host.size() * sizeof(float);
  void *stream = mgpuStreamCreate();
  void *device = mgpuMemAlloc(bytes, stream, false);
  void *staging = mgpuMemAlloc(bytes, nullptr, true);
  std::copy(host.begin(), host.end(), static_cast<float *>(staging));
  mgpuMemcpy(device, staging, bytes, stream);
  mgpuMemset32(staging, 0, host.size(), stream);
  mgpuMemcpy(back.data(), device, bytes, stream);
  mgpuMemFree(device, stream);
  mgpuMemFree(staging, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(back[12345], 1.5f);
  EXPECT_GE(statField("h2d_bytes"), bytes);
  EXPECT_GE(statField("d2h_bytes"), bytes);
  EXPECT_EQ(statField("device_bytes_in_use"), 0u);
}

TEST(CudaRuntime, EventsOrderStreams) {
  REQUIRE_CUDA_DEVICE();
  std::vector<int32_t> host(4096, 9), result(4096, 0);
  size_t bytes = host.size() * sizeof(int32_t);
  void *producer = mgpuStreamCreate(), *consumer = mgpuStreamCreate();
  void *device = mgpuMemAlloc(bytes, producer, false);
  void *event = mgpuEventCreate();
  mgpuMemcpy(device, host.data(), bytes, producer);
  mgpuEventRecord(event, producer);
  mgpuStreamWaitEvent(consumer, event);
  mgpuMemcpy(result.data(), device, bytes, consumer);
  mgpuMemFree(device, consumer);
  mgpuStreamSynchronize(consumer);
  EXPECT_EQ(result[4000], 9);
  mgpuEventDestroy(event);
  mgpuStreamDestroy(producer);
  mgpuStreamDestroy(consumer);
}

TEST(CudaRuntime, StagingFreeIsOrderedAfterItsCopies) {
  REQUIRE_CUDA_DEVICE();
  std::vector<float> host(1 << 20, 2.5f);
  size_t bytes = host.size() * sizeof(float);
  void *stream = mgpuStreamCreate();
  void *device = mgpuMemAlloc(bytes, stream, false);
  mgpuMemcpy(device, host.data(), bytes, stream);
  LMSStagingDescriptor descriptor;
  _mlir_ciface_lmsStagingAlloc(&descriptor, static_cast<int64_t>(bytes));
  void *staging = descriptor.aligned;
  mgpuMemcpy(staging, device, bytes, stream);
  // Does not wait; the buffer returns to the pool after the copy.
  lmsStagingFree(reinterpret_cast<intptr_t>(staging));
  _mlir_ciface_lmsStagingAlloc(&descriptor, static_cast<int64_t>(bytes));
  if (descriptor.aligned == staging) {
    EXPECT_EQ(static_cast<float *>(staging)[777], 2.5f);
  }
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(static_cast<float *>(staging)[777], 2.5f);
  lmsStagingFree(reinterpret_cast<intptr_t>(descriptor.aligned));
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(statField("leaked_bytes"), 0u);
}
