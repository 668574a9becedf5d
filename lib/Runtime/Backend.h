//===- Backend.h - The LMS runtime backends (internal) ----------*- C++ -*-===//
//
// A backend implements the mgpu* operations; statistics and the pinned
// staging pool are shared by both.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_RUNTIME_BACKEND_H
#define LMS_RUNTIME_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace lms {
namespace runtime {

/// Prints "lms runtime: <message>" and aborts.
[[noreturn]] void fatal(const std::string &message);

/// Fault injection (LMS_FAULT=alloc:N, copy:N or pinned:N): whether this
/// operation of `kind` (the n-th, counted from 1) is the one to fail. The
/// caller then calls injectedFault.
bool shouldInjectFault(const char *kind);
/// Reports an injected fault and exits with status 3 (no statistics
/// written: a partial run is not a result).
[[noreturn]] void injectedFault(const std::string &what);

/// Parses "123", "16GiB", "1.5GB"... (0 on error after a fatal message).
uint64_t parseSize(const char *text, const char *what);

/// Counters, updated under the backend's lock.
struct Stats {
  uint64_t deviceBytesInUse = 0, peakDeviceBytes = 0, deviceAllocations = 0;
  uint64_t h2dBytes = 0, d2hBytes = 0, d2dBytes = 0;
  uint64_t h2dCopies = 0, d2hCopies = 0, d2dCopies = 0;
  uint64_t pinnedBytes = 0, pinnedPeakBytes = 0, pinnedAllocations = 0,
           pinnedReuses = 0;
  uint64_t leakedBytes = 0, leakedAllocations = 0;
  /// Buffers carved out of arenas (lmsArenaAcquire / lmsArenaRelease): the
  /// most bytes of them held at once, and how many were carved.
  uint64_t arenaBytesInUse = 0, arenaPeakBytes = 0, arenaBuffers = 0;
  std::string toJson(const char *backend) const;
};

/// Reuses pinned host buffers by size; `allocate` / `release` are the
/// backend's pinned allocation functions. Not thread-safe: callers lock.
class PinnedPool {
public:
  PinnedPool(std::function<void *(size_t)> allocate,
             std::function<void(void *)> release, uint64_t cap)
      : allocate(std::move(allocate)), release(std::move(release)), cap(cap) {}
  ~PinnedPool();
  /// A buffer of at least `bytes`; updates the pinned statistics.
  void *get(size_t bytes, Stats &stats);
  /// Returns a buffer to the pool.
  void put(void *ptr, Stats &stats);
  bool owns(void *ptr) const { return sizes.count(ptr) != 0; }
  /// Whether `ptr` is a buffer of the pool handed out and not returned.
  bool isHandedOut(void *ptr) const { return handedOut.count(ptr) != 0; }
  size_t sizeOf(void *ptr) const { return sizes.at(ptr); }
  /// Buffers handed out and not returned.
  uint64_t bytesInUse() const { return inUse; }
  uint64_t buffersInUse() const { return inUseCount; }

private:
  std::function<void *(size_t)> allocate;
  std::function<void(void *)> release;
  uint64_t cap;
  uint64_t held = 0, inUse = 0, inUseCount = 0;
  std::unordered_map<void *, size_t> sizes;
  std::multimap<size_t, void *> free;
  /// Buffers handed out and not returned (a second return is an error).
  std::unordered_set<void *> handedOut;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;

  virtual void *streamCreate() = 0;
  virtual void streamDestroy(void *stream) = 0;
  virtual void streamSynchronize(void *stream) = 0;
  virtual void streamWaitEvent(void *stream, void *event) = 0;
  virtual void *eventCreate() = 0;
  virtual void eventDestroy(void *event) = 0;
  virtual void eventSynchronize(void *event) = 0;
  virtual void eventRecord(void *event, void *stream) = 0;

  virtual void *memAlloc(uint64_t bytes, void *stream, bool hostShared) = 0;
  virtual void memFree(void *ptr, void *stream) = 0;
  virtual void memcpy(void *dst, void *src, size_t bytes, void *stream) = 0;
  virtual void memset32(void *dst, uint32_t value, size_t count,
                        void *stream) = 0;
  virtual void memset16(void *dst, uint16_t value, size_t count,
                        void *stream) = 0;
  /// Whether `ptr` is a staging buffer of the pinned pool held by the
  /// program (allocated and not yet returned).
  virtual bool isStaging(void *ptr) = 0;
  virtual void hostRegister(void *ptr, uint64_t bytes) = 0;
  virtual void hostUnregister(void *ptr) = 0;

  virtual void *moduleLoad(void *data, size_t size) = 0;
  /// Loads PTX, compiling it at the given optimization level.
  virtual void *moduleLoadJIT(void *data, int optLevel) = 0;
  virtual void moduleUnload(void *module) = 0;
  virtual void *moduleGetFunction(void *module, const char *name) = 0;
  virtual void launchKernel(void *function, intptr_t gridX, intptr_t gridY,
                            intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                            intptr_t blockZ, int32_t smem, void *stream,
                            void **params, void **extra,
                            size_t paramsCount) = 0;

  /// A snapshot of the statistics, with leaks counted.
  virtual Stats snapshot() = 0;

  /// A buffer carved out of the device allocation `arena` at `offset`
  /// (--lms-carve-arena) begins or ends. The emulated device checks that it
  /// lies inside the arena and overlaps no other live buffer of it, and
  /// poisons its bytes when it ends; both count the arena's use.
  virtual void arenaAcquire(void *arena, uint64_t offset, uint64_t bytes) = 0;
  virtual void arenaRelease(void *arena, uint64_t offset, uint64_t bytes) = 0;
};

std::unique_ptr<Backend> createEmulatedBackend();
/// Null when the runtime was built without CUDA.
std::unique_ptr<Backend> createCudaBackend();
/// Whether a CUDA device is usable (false without CUDA support).
bool cudaDeviceAvailable();

} // namespace runtime
} // namespace lms

#endif // LMS_RUNTIME_BACKEND_H
