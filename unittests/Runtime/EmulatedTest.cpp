//===- EmulatedTest.cpp - The emulated device backend ---------------------===//
//
// Capacity, accounting, late copies in stream order, poisoning, events,
// the pinned pool and the statistics of the emulated device. The backend is
// chosen once per process, so this binary sets its environment before any
// runtime call.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include "RuntimeAPI.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
const int environment = [] {
  setenv("LMS_RUNTIME", "emulated", 1);
  setenv("LMS_DEVICE_BYTES", "1MiB", 1);
  setenv("LMS_COPY_DELAY_US", "20000", 1);
  setenv("LMS_PINNED_BYTES", "256KiB", 1);
  return 0;
}();

bool allBytes(const void *ptr, size_t bytes, unsigned char value) {
  const auto *p = static_cast<const unsigned char *>(ptr);
  for (size_t i = 0; i < bytes; ++i)
    if (p[i] != value)
      return false;
  return true;
}
} // namespace

TEST(EmulatedRuntime, IsTheBackend) {
  EXPECT_STREQ(lmsRuntimeBackend(), "emulated");
}

TEST(EmulatedRuntime, AllocationsAreCountedRoundedTo256Bytes) {
  uint64_t before = statField("device_bytes_in_use");
  void *a = mgpuMemAlloc(1000, nullptr, false);
  void *b = mgpuMemAlloc(3000, nullptr, false);
  EXPECT_EQ(statField("device_bytes_in_use"), before + 1024 + 3072);
  EXPECT_GE(lmsRuntimePeakDeviceBytes(), before + 4096);
  mgpuMemFree(a, nullptr);
  mgpuMemFree(b, nullptr);
  EXPECT_EQ(statField("device_bytes_in_use"), before);
}

TEST(EmulatedRuntime, FreshMemoryIsPoisoned) {
  void *a = mgpuMemAlloc(512, nullptr, false);
  EXPECT_TRUE(allBytes(a, 512, 0xFF));
  mgpuMemFree(a, nullptr);
}

TEST(EmulatedRuntime, CopiesCompleteLateInStreamOrder) {
  std::vector<float> host(64, 3.0f);
  void *device = mgpuMemAlloc(host.size() * sizeof(float), nullptr, false);
  void *stream = mgpuStreamCreate();
  mgpuMemcpy(device, host.data(), host.size() * sizeof(float), stream);
  // The copy has not happened yet: a program that reads now is wrong.
  EXPECT_TRUE(allBytes(device, host.size() * sizeof(float), 0xFF));
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(static_cast<float *>(device)[17], 3.0f);
  // A free enqueued after a copy-out happens after it.
  std::vector<float> back(64, 0.0f);
  mgpuMemcpy(back.data(), device, back.size() * sizeof(float), stream);
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(back[5], 3.0f);
}

TEST(EmulatedRuntime, EventsOrderStreams) {
  std::vector<int32_t> host(256, 7), result(256, 0);
  size_t bytes = host.size() * sizeof(int32_t);
  void *device = mgpuMemAlloc(bytes, nullptr, false);
  void *producer = mgpuStreamCreate(), *consumer = mgpuStreamCreate();
  void *event = mgpuEventCreate();
  mgpuMemcpy(device, host.data(), bytes, producer);
  mgpuEventRecord(event, producer);
  mgpuStreamWaitEvent(consumer, event);
  mgpuMemcpy(result.data(), device, bytes, consumer);
  mgpuStreamSynchronize(consumer);
  EXPECT_EQ(result[200], 7);
  mgpuEventDestroy(event);
  mgpuMemFree(device, nullptr);
  mgpuStreamDestroy(producer);
  mgpuStreamDestroy(consumer);
}

TEST(EmulatedRuntime, EventsMayBeDestroyedBeforeAStreamWaitsOnThem) {
  // Regression: the stream's wait ran on a deleted event (the lowering of
  // `gpu.wait async [%t]` destroys the event right after the wait is
  // enqueued, as CUDA allows); programs hung or read freed memory.
  std::vector<int32_t> host(256, 9), result(256, 0);
  size_t bytes = host.size() * sizeof(int32_t);
  void *device = mgpuMemAlloc(bytes, nullptr, false);
  for (int round = 0; round < 4; ++round) {
    void *producer = mgpuStreamCreate(), *consumer = mgpuStreamCreate();
    void *event = mgpuEventCreate();
    mgpuMemcpy(device, host.data(), bytes, producer); // completes late
    mgpuEventRecord(event, producer);
    mgpuStreamWaitEvent(consumer, event);
    mgpuEventDestroy(event);
    mgpuMemcpy(result.data(), device, bytes, consumer);
    mgpuStreamSynchronize(consumer);
    EXPECT_EQ(result[100], 9);
    mgpuStreamDestroy(producer);
    mgpuStreamDestroy(consumer);
  }
  mgpuMemFree(device, nullptr);
}

TEST(EmulatedRuntime, CarvedBuffersAreCountedAndPoisonedOnRelease) {
  auto *arena =
      static_cast<unsigned char *>(mgpuMemAlloc(4096, nullptr, false));
  auto address = reinterpret_cast<intptr_t>(arena);
  lmsArenaAcquire(address, 0, 1024);
  lmsArenaAcquire(address, 1024, 2048);
  std::memset(arena, 1, 1024);
  lmsArenaRelease(address, 0, 1024);
  EXPECT_TRUE(allBytes(arena, 1024, 0xFF));
  // The released bytes are free for another buffer.
  lmsArenaAcquire(address, 0, 512);
  lmsArenaRelease(address, 0, 512);
  lmsArenaRelease(address, 1024, 2048);
  EXPECT_GE(statField("arena_peak_bytes"), 3072u);
  // A frame inside the arena (a callee's buffers at its caller's offset):
  // offsets are relative to the frame, checks to the whole arena.
  lmsArenaAcquire(address, 0, 1024);
  lmsArenaAcquire(address + 2048, 0, 1024);
  lmsArenaRelease(address + 2048, 0, 1024);
  lmsArenaRelease(address, 0, 1024);
  mgpuMemFree(arena, nullptr);
}

TEST(EmulatedRuntime, EmptyCarvedBuffersOccupyNothing) {
  // A buffer of no bytes (a tensor<0xf32> of a torch export) may be carved
  // at the offset of a live buffer: acquiring and releasing it leaves that
  // buffer live. Before, it replaced the live buffer's record, whose
  // release then failed as "released twice".
  auto *arena =
      static_cast<unsigned char *>(mgpuMemAlloc(1024, nullptr, false));
  auto address = reinterpret_cast<intptr_t>(arena);
  uint64_t inUse = statField("arena_bytes_in_use");
  lmsArenaAcquire(address, 0, 288);
  lmsArenaAcquire(address, 0, 0);
  lmsArenaRelease(address, 0, 0);
  EXPECT_EQ(statField("arena_bytes_in_use"), inUse + 288);
  lmsArenaRelease(address, 0, 288);
  EXPECT_EQ(statField("arena_bytes_in_use"), inUse);
  mgpuMemFree(arena, nullptr);
}

TEST(EmulatedRuntime, FreeingAnArenaDropsWhatIsStillCarved) {
  // The results a function of the host-arena convention leaves in its
  // host's arena are dropped with the arena.
  auto *arena =
      static_cast<unsigned char *>(mgpuMemAlloc(1024, nullptr, false));
  auto address = reinterpret_cast<intptr_t>(arena);
  uint64_t inUse = statField("arena_bytes_in_use");
  lmsArenaAcquire(address, 256, 512);
  EXPECT_EQ(statField("arena_bytes_in_use"), inUse + 512);
  mgpuMemFree(arena, nullptr);
  EXPECT_EQ(statField("arena_bytes_in_use"), inUse);
}

TEST(EmulatedRuntime, MemsetAndCopyDirectionsAreCounted) {
  uint64_t h2d = statField("h2d_bytes"), d2h = statField("d2h_bytes");
  std::vector<uint32_t> host(16, 0);
  void *device = mgpuMemAlloc(64, nullptr, false);
  void *stream = mgpuStreamCreate();
  mgpuMemset32(device, 0x01020304u, 16, stream);
  mgpuMemcpy(host.data(), device, 64, stream);
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(host[3], 0x01020304u);
  EXPECT_EQ(statField("d2h_bytes"), d2h + 64);
  EXPECT_EQ(statField("h2d_bytes"), h2d);
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
}

TEST(EmulatedRuntime, PinnedStagingBuffersAreReused) {
  uint64_t reuses = statField("pinned_reuses");
  void *a = mgpuMemAlloc(5000, nullptr, true);
  mgpuMemFree(a, nullptr);
  void *b = mgpuMemAlloc(5000, nullptr, true);
  EXPECT_EQ(a, b);
  EXPECT_EQ(statField("pinned_reuses"), reuses + 1);
  mgpuMemFree(b, nullptr);
}

/// A staging buffer from lmsStagingAlloc's C interface.
static void *stagingAlloc(int64_t bytes) {
  LMSStagingDescriptor descriptor;
  _mlir_ciface_lmsStagingAlloc(&descriptor, bytes);
  EXPECT_EQ(descriptor.allocated, descriptor.aligned);
  EXPECT_EQ(descriptor.offset, 0);
  EXPECT_EQ(descriptor.sizes[0], bytes);
  EXPECT_EQ(descriptor.strides[0], 1);
  return descriptor.aligned;
}

TEST(EmulatedRuntime, StagingFreeWaitsForTheCopiesIssuedOnTheBuffer) {
  std::vector<float> host(64, 5.0f);
  size_t bytes = host.size() * sizeof(float);
  void *device = mgpuMemAlloc(bytes, nullptr, false);
  mgpuMemcpy(device, host.data(), bytes, nullptr);
  void *staging = stagingAlloc(static_cast<int64_t>(bytes));
  std::memset(staging, 0, bytes);
  void *stream = mgpuStreamCreate();
  // The copy out completes late (LMS_COPY_DELAY_US); the free does not wait
  // on the host, yet the buffer goes back to the pool only after the copy:
  // handed out again at once, it is another buffer, or the copy is done.
  mgpuMemcpy(staging, device, bytes, stream);
  lmsStagingFree(reinterpret_cast<intptr_t>(staging));
  void *other = stagingAlloc(static_cast<int64_t>(bytes));
  if (other == staging) {
    EXPECT_EQ(static_cast<float *>(staging)[9], 5.0f);
  }
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(static_cast<float *>(staging)[9], 5.0f);
  lmsStagingFree(reinterpret_cast<intptr_t>(other));
  mgpuStreamDestroy(stream);
  mgpuMemFree(device, nullptr);
}

TEST(EmulatedRuntime, LeaksAreReported) {
  uint64_t leaked = statField("leaked_bytes");
  void *a = mgpuMemAlloc(256, nullptr, false);
  EXPECT_EQ(statField("leaked_bytes"), leaked + 256);
  mgpuMemFree(a, nullptr);
  EXPECT_EQ(statField("leaked_bytes"), leaked);
}

using EmulatedRuntimeDeathTest = ::testing::Test;

TEST_F(EmulatedRuntimeDeathTest, AllocationBeyondTheCapacityFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(mgpuMemAlloc(2 << 20, nullptr, false),
               "out of device memory: allocating 2097152 bytes");
}

TEST_F(EmulatedRuntimeDeathTest, FirstFitFailsOnFragmentedMemory) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // 512 KiB are free, in two blocks of 256 KiB: the count allows it, the
  // address space does not.
  EXPECT_DEATH(
      {
        setenv("LMS_DEVICE_ALLOCATOR", "first-fit", 1);
        void *a = mgpuMemAlloc(256 << 10, nullptr, false);
        void *b = mgpuMemAlloc(256 << 10, nullptr, false);
        void *c = mgpuMemAlloc(256 << 10, nullptr, false);
        void *d = mgpuMemAlloc(256 << 10, nullptr, false);
        mgpuMemFree(a, nullptr);
        mgpuMemFree(c, nullptr);
        // Freed blocks are reused: a 256 KiB buffer fits in one.
        void *e = mgpuMemAlloc(256 << 10, nullptr, false);
        mgpuMemFree(e, nullptr);
        mgpuMemAlloc(512 << 10, nullptr, false);
        (void)b;
        (void)d;
      },
      "out of device memory: allocating 524288 bytes with 524288 in use of "
      "a capacity of 1048576, but the largest free block is 262144 bytes "
      "\\(fragmented in 2 blocks");
}

TEST_F(EmulatedRuntimeDeathTest, StagingMisuseFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        void *staging = stagingAlloc(1024);
        lmsStagingFree(reinterpret_cast<intptr_t>(staging));
        lmsStagingFree(reinterpret_cast<intptr_t>(staging));
      },
      "freeing memory that is not a staging buffer in use \\(double "
      "free\\?\\)");
  EXPECT_DEATH(
      {
        std::vector<char> host(1024);
        lmsStagingFree(reinterpret_cast<intptr_t>(host.data()));
      },
      "not a staging buffer in use");
  EXPECT_DEATH(
      {
        void *device = mgpuMemAlloc(1024, nullptr, false);
        void *staging = stagingAlloc(1024);
        lmsStagingFree(reinterpret_cast<intptr_t>(staging));
        mgpuMemcpy(staging, device, 1024, nullptr);
      },
      "a copy into a staging buffer that was freed \\(use after free");
  EXPECT_DEATH(
      {
        LMSStagingDescriptor descriptor;
        _mlir_ciface_lmsStagingAlloc(&descriptor, -8);
      },
      "invalid staging allocation of -8 bytes");
}

TEST_F(EmulatedRuntimeDeathTest, UnknownAllocatorIsRejected) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        setenv("LMS_DEVICE_ALLOCATOR", "buddy", 1);
        mgpuMemAlloc(256, nullptr, false);
      },
      "invalid LMS_DEVICE_ALLOCATOR 'buddy': expected count");
}

TEST_F(EmulatedRuntimeDeathTest, InvalidInFlightCheckSettingIsRejected) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        setenv("LMS_CHECK_IN_FLIGHT", "yes", 1);
        mgpuMemAlloc(256, nullptr, false);
      },
      "invalid LMS_CHECK_IN_FLIGHT 'yes': expected 1");
}

TEST_F(EmulatedRuntimeDeathTest, OverlappingCarvedBuffersFailLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        auto address =
            reinterpret_cast<intptr_t>(mgpuMemAlloc(4096, nullptr, false));
        lmsArenaAcquire(address, 1024, 1024);
        lmsArenaAcquire(address, 1536, 1024);
      },
      "buffers carved out of one arena overlap: \\[1536, 2560\\) and "
      "\\[1024, 2048\\) are live at once");
  EXPECT_DEATH(
      {
        auto address =
            reinterpret_cast<intptr_t>(mgpuMemAlloc(4096, nullptr, false));
        lmsArenaAcquire(address, 3072, 2048);
      },
      "runs past the end of its arena of 4096 bytes");
  EXPECT_DEATH(
      {
        auto address =
            reinterpret_cast<intptr_t>(mgpuMemAlloc(4096, nullptr, false));
        lmsArenaAcquire(address, 0, 1024);
        lmsArenaRelease(address, 0, 1024);
        lmsArenaRelease(address, 0, 1024);
      },
      "not live in its arena \\(released twice\\?\\)");
  EXPECT_DEATH(lmsArenaAcquire(12345, 0, 16),
               "which is not a live device allocation");
  EXPECT_DEATH(
      {
        auto address =
            reinterpret_cast<intptr_t>(mgpuMemAlloc(4096, nullptr, false));
        lmsArenaAcquire(address, 1024, 1024);
        lmsArenaAcquire(address + 512, 1024, 1024); // [1536, 2560)
      },
      "buffers carved out of one arena overlap: \\[1536, 2560\\)");
}

TEST_F(EmulatedRuntimeDeathTest, DoubleFreeFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        void *a = mgpuMemAlloc(256, nullptr, false);
        mgpuMemFree(a, nullptr);
        mgpuMemFree(a, nullptr);
      },
      "not a live device allocation");
}

TEST_F(EmulatedRuntimeDeathTest, PinnedPoolCapFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(mgpuMemAlloc(512 << 10, nullptr, true),
               "the pinned staging pool is full");
}

TEST_F(EmulatedRuntimeDeathTest, KernelsCannotRun) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  char image[4] = {0};
  EXPECT_DEATH(mgpuModuleLoad(image, sizeof(image)),
               "the emulated device cannot run GPU kernels");
}

TEST_F(EmulatedRuntimeDeathTest, AllocationSizesThatWrapFailLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // Regression: the rounding to 256 bytes wrapped and returned a pointer.
  EXPECT_DEATH(mgpuMemAlloc(~uint64_t(0) - 10, nullptr, false),
               "invalid device allocation of 18446744073709551605 bytes");
}

TEST_F(EmulatedRuntimeDeathTest, InvalidEnvironmentValuesAreRejected) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // Regression: nan, inf, hexadecimal and sizes beyond 2^63 were accepted.
  // (A death test runs in a fresh process: the backend reads the value.)
  for (const char *bad : {"nan", "inf", "1e30", "-5", "12potatoes", "0x10"})
    EXPECT_DEATH(
        {
          setenv("LMS_DEVICE_BYTES", bad, 1);
          mgpuMemAlloc(256, nullptr, false);
        },
        "invalid LMS_DEVICE_BYTES")
        << bad;
}

TEST_F(EmulatedRuntimeDeathTest, CopiesPastTheEndFailLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        void *a = mgpuMemAlloc(256, nullptr, false);
        std::vector<char> host(1024);
        mgpuMemcpy(a, host.data(), 1024, nullptr);
      },
      "a copy of 1024 bytes into a device buffer of 256 bytes runs past its "
      "end");
}

TEST_F(EmulatedRuntimeDeathTest, CopiesIntoFreedMemoryFailLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        void *a = mgpuMemAlloc(256, nullptr, false);
        mgpuMemFree(a, nullptr);
        std::vector<char> host(16);
        mgpuMemcpy(a, host.data(), 16, nullptr);
      },
      "a copy into freed device memory");
}

TEST_F(EmulatedRuntimeDeathTest, PinnedDoubleFreeFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // Regression: the second free made two later allocations share a buffer.
  EXPECT_DEATH(
      {
        void *a = mgpuMemAlloc(4096, nullptr, true);
        mgpuMemFree(a, nullptr);
        mgpuMemFree(a, nullptr);
      },
      "already free \\(double free\\)");
}

TEST_F(EmulatedRuntimeDeathTest, DestroyingAStreamTwiceFailsLoudly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        void *stream = mgpuStreamCreate();
        mgpuStreamDestroy(stream);
        mgpuStreamDestroy(stream);
      },
      "destroying a stream that is not live");
}

TEST_F(EmulatedRuntimeDeathTest, InjectedFaultsExitCleanly) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // The N-th operation of a kind fails: a message and exit status 3.
  EXPECT_EXIT(
      {
        setenv("LMS_FAULT", "alloc:2", 1);
        mgpuMemAlloc(256, nullptr, false);
        mgpuMemAlloc(256, nullptr, false);
      },
      ::testing::ExitedWithCode(3),
      "injected fault \\(LMS_FAULT=alloc:2\\): a device allocation of 256 "
      "bytes failed");
  EXPECT_EXIT(
      {
        setenv("LMS_FAULT", "copy:1", 1);
        void *a = mgpuMemAlloc(256, nullptr, false);
        std::vector<char> host(16);
        mgpuMemcpy(a, host.data(), 16, nullptr);
      },
      ::testing::ExitedWithCode(3), "a copy of 16 bytes failed");
  EXPECT_EXIT(
      {
        setenv("LMS_FAULT", "pinned:1", 1);
        mgpuMemAlloc(4096, nullptr, true);
      },
      ::testing::ExitedWithCode(3), "a pinned staging allocation");
  EXPECT_DEATH(
      {
        setenv("LMS_FAULT", "disk:1", 1);
        mgpuMemAlloc(256, nullptr, false);
      },
      "invalid LMS_FAULT 'disk:1'");
}

// A read or write of a buffer whose copy is still in flight (a missing
// wait) faults on the guarded pages and is reported with the copy it
// raced; before, the program read poison (NaN) or, when the copy later
// landed in freed memory, that was reported instead.
TEST_F(EmulatedRuntimeDeathTest, ReadingTheDestinationOfACopyInFlightFails) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        std::vector<char> host(16384, 1);
        auto *device =
            static_cast<char *>(mgpuMemAlloc(host.size(), nullptr, false));
        void *stream = mgpuStreamCreate();
        mgpuMemcpy(device, host.data(), host.size(), stream);
        volatile char value = device[8192];
        (void)value;
      },
      "lms runtime: the program read or wrote memory at 0x[0-9a-f]+ while a "
      "copy of 16384 bytes into it was still in flight \\(use before the "
      "copy completed: is a wait missing\\?\\)");
}

TEST_F(EmulatedRuntimeDeathTest, WritingTheSourceOfACopyInFlightFails) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        std::vector<char> host(16384, 1);
        auto *device =
            static_cast<char *>(mgpuMemAlloc(host.size(), nullptr, false));
        mgpuMemcpy(device, host.data(), host.size(), nullptr);
        void *stream = mgpuStreamCreate();
        mgpuMemcpy(host.data(), device, host.size(), stream);
        device[8192] = 2;
      },
      "the program wrote memory at 0x[0-9a-f]+ while a copy of 16384 bytes "
      "out of it was still in flight");
}

TEST_F(EmulatedRuntimeDeathTest, FreeingTheEndOfACopyInFlightFails) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        std::vector<char> host(16384, 1);
        void *device = mgpuMemAlloc(host.size(), nullptr, false);
        void *stream = mgpuStreamCreate();
        mgpuMemcpy(device, host.data(), host.size(), stream);
        mgpuMemFree(device, nullptr);
      },
      "freeing device memory that a copy still in flight reads or writes");
}

// What the guards allow: reading the source of a copy in flight, and the
// streams' own work on guarded pages (a copy into a buffer queued behind
// a copy out of it, a fill of a buffer a later copy reads).
TEST(EmulatedRuntime, GuardsAllowReadsOfASourceAndStreamWork) {
  const size_t bytes = 16384;
  std::vector<char> host(bytes, 1), back(bytes, 0), filled(bytes, 0);
  auto *device = static_cast<char *>(mgpuMemAlloc(bytes, nullptr, false));
  auto *other = static_cast<char *>(mgpuMemAlloc(bytes, nullptr, false));
  mgpuMemcpy(device, host.data(), bytes, nullptr);
  void *stream = mgpuStreamCreate();
  mgpuMemcpy(back.data(), device, bytes, stream);
  EXPECT_EQ(device[8192], 1); // read-only while the copy out is in flight
  mgpuMemcpy(device, host.data(), bytes, stream);
  mgpuMemset32(other, 0x02020202u, bytes / 4, stream);
  mgpuMemcpy(filled.data(), other, bytes, stream);
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(back[8192], 1);
  EXPECT_EQ(filled[8192], 2);
  device[8192] = 3; // writable again once the copies ran
  EXPECT_EQ(device[8192], 3);
  mgpuStreamDestroy(stream);
  mgpuMemFree(device, nullptr);
  mgpuMemFree(other, nullptr);
}
