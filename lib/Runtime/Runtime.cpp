//===- Runtime.cpp - The mgpu* entry points and backend selection ---------===//
//
// The C ABI that --gpu-to-llvm calls, dispatched to the backend chosen by
// LMS_RUNTIME (or by whether a GPU is visible), plus the statistics, the
// pinned pool and the size parser shared by the backends.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "LMS/Runtime/Runtime.h"

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace lms::runtime;

void lms::runtime::fatal(const std::string &message) {
  std::fprintf(stderr, "lms runtime: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

uint64_t lms::runtime::parseSize(const char *text, const char *what) {
  char *end = nullptr;
  double value = std::strtod(text, &end);
  // strtod also reads "nan", "inf" and hexadecimal floats.
  bool decimal = end != text && std::isdigit(static_cast<unsigned char>(*text));
  for (const char *c = text; c != end; ++c)
    decimal &= std::isdigit(static_cast<unsigned char>(*c)) || *c == '.' ||
               *c == 'e' || *c == 'E' || *c == '+' || *c == '-';
  if (!decimal || !std::isfinite(value) || value < 0)
    fatal(std::string("invalid ") + what + " '" + text +
          "': expected a number of bytes with an optional unit");
  while (*end == ' ')
    ++end;
  struct Unit {
    const char *name;
    double scale;
  };
  static const Unit units[] = {{"", 1},
                               {"B", 1},
                               {"KB", 1e3},
                               {"MB", 1e6},
                               {"GB", 1e9},
                               {"TB", 1e12},
                               {"KiB", 1024.0},
                               {"MiB", 1024.0 * 1024},
                               {"GiB", 1024.0 * 1024 * 1024},
                               {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  for (const Unit &unit : units)
    if (std::strcmp(end, unit.name) == 0) {
      double bytes = value * unit.scale;
      // 2^63: beyond any device, and beyond what llround can return.
      if (bytes >= 9.2e18)
        fatal(std::string("invalid ") + what + " '" + text +
              "': more bytes than any device has");
      return static_cast<uint64_t>(std::llround(bytes));
    }
  fatal(std::string("invalid ") + what + " '" + text + "': unknown unit '" +
        end + "'");
}

std::string Stats::toJson(const char *backend) const {
  std::ostringstream os;
  os << "{\n  \"backend\": \"" << backend << "\",\n"
     << "  \"peak_device_bytes\": " << peakDeviceBytes << ",\n"
     << "  \"device_bytes_in_use\": " << deviceBytesInUse << ",\n"
     << "  \"device_allocations\": " << deviceAllocations << ",\n"
     << "  \"h2d_bytes\": " << h2dBytes << ",\n"
     << "  \"d2h_bytes\": " << d2hBytes << ",\n"
     << "  \"d2d_bytes\": " << d2dBytes << ",\n"
     << "  \"h2d_copies\": " << h2dCopies << ",\n"
     << "  \"d2h_copies\": " << d2hCopies << ",\n"
     << "  \"d2d_copies\": " << d2dCopies << ",\n"
     << "  \"pinned_bytes\": " << pinnedBytes << ",\n"
     << "  \"pinned_peak_bytes\": " << pinnedPeakBytes << ",\n"
     << "  \"pinned_allocations\": " << pinnedAllocations << ",\n"
     << "  \"pinned_reuses\": " << pinnedReuses << ",\n"
     << "  \"arena_peak_bytes\": " << arenaPeakBytes << ",\n"
     << "  \"arena_buffers\": " << arenaBuffers << ",\n"
     << "  \"arena_bytes_in_use\": " << arenaBytesInUse << ",\n"
     << "  \"leaked_bytes\": " << leakedBytes << ",\n"
     << "  \"leaked_allocations\": " << leakedAllocations << "\n}\n";
  return os.str();
}

//===----------------------------------------------------------------------===//
// PinnedPool
//===----------------------------------------------------------------------===//

PinnedPool::~PinnedPool() {
  for (auto &[size, ptr] : free)
    release(ptr);
}

bool lms::runtime::shouldInjectFault(const char *kind) {
  static const char *spec = std::getenv("LMS_FAULT");
  if (!spec || !*spec)
    return false;
  static std::mutex mutex;
  static std::map<std::string, uint64_t> counts;
  static std::string faultKind;
  static uint64_t faultAt = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (faultAt == 0) {
    const char *colon = std::strchr(spec, ':');
    char *end = nullptr;
    unsigned long long n = colon ? std::strtoull(colon + 1, &end, 10) : 0;
    faultKind = colon ? std::string(spec, colon) : "";
    if (!colon || !end || *end || n == 0 ||
        (faultKind != "alloc" && faultKind != "copy" && faultKind != "pinned"))
      fatal(std::string("invalid LMS_FAULT '") + spec +
            "': expected alloc:N, copy:N or pinned:N with N >= 1");
    faultAt = n;
  }
  return faultKind == kind && ++counts[kind] == faultAt;
}

void lms::runtime::injectedFault(const std::string &what) {
  std::fprintf(stderr, "lms runtime: injected fault (LMS_FAULT=%s): %s\n",
               std::getenv("LMS_FAULT"), what.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

void *PinnedPool::get(size_t bytes, Stats &stats) {
  if (bytes > (uint64_t(1) << 62))
    fatal("invalid staging allocation of " + std::to_string(bytes) +
          " bytes: more than any host has");
  // Size classes of 4 KiB keep reuse likely without wasting much.
  size_t rounded = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
  auto it = free.lower_bound(rounded);
  // Reuse a buffer of the class or up to twice its size.
  if (it != free.end() && it->first <= 2 * rounded) {
    void *ptr = it->second;
    free.erase(it);
    inUse += sizes[ptr];
    ++inUseCount;
    ++stats.pinnedReuses;
    handedOut.insert(ptr);
    return ptr;
  }
  if (cap && held + rounded > cap) {
    // Give the idle buffers back before giving up.
    for (auto &[size, ptr] : free) {
      held -= size;
      sizes.erase(ptr);
      release(ptr);
    }
    free.clear();
    if (held + rounded > cap)
      fatal("the pinned staging pool is full: " + std::to_string(held) +
            " bytes in use and " + std::to_string(rounded) +
            " more requested, over LMS_PINNED_BYTES=" + std::to_string(cap));
  }
  if (shouldInjectFault("pinned"))
    injectedFault("a pinned staging allocation of " + std::to_string(bytes) +
                  " bytes failed");
  void *ptr = allocate(rounded);
  if (!ptr)
    fatal("cannot allocate " + std::to_string(rounded) +
          " bytes of pinned host memory for staging");
  handedOut.insert(ptr);
  sizes[ptr] = rounded;
  held += rounded;
  inUse += rounded;
  ++inUseCount;
  ++stats.pinnedAllocations;
  stats.pinnedBytes = held;
  stats.pinnedPeakBytes = std::max(stats.pinnedPeakBytes, held);
  return ptr;
}

void PinnedPool::put(void *ptr, Stats &stats) {
  auto it = sizes.find(ptr);
  if (it == sizes.end())
    fatal("freeing a staging buffer the pinned pool does not own");
  // Regression: a second free handed one buffer to two later allocations.
  if (!handedOut.erase(ptr))
    fatal("freeing a staging buffer that is already free (double free)");
  inUse -= it->second;
  --inUseCount;
  free.insert({it->second, ptr});
  stats.pinnedBytes = held;
}

//===----------------------------------------------------------------------===//
// Backend selection
//===----------------------------------------------------------------------===//

extern "C" void lmsRuntimeWriteStats(const char *path);

namespace {

void writeStatsAtExit() {
  if (const char *path = std::getenv("LMS_RUNTIME_STATS"))
    lmsRuntimeWriteStats(path);
}

/// Set when the backend is destroyed at exit. A program compiled ahead of
/// time unloads its GPU modules in a global destructor (llvm.global_dtors),
/// which runs after the runtime's static objects are gone; by then the
/// process is ending and the driver unloads them itself.
std::atomic<bool> backendGone{false};

/// The backend, destroyed at exit after backendGone is set.
struct BackendHolder {
  std::unique_ptr<Backend> backend;
  ~BackendHolder() {
    backendGone = true;
    backend.reset();
  }
};

Backend &backend() {
  static BackendHolder holder{[] {
    const char *choice = std::getenv("LMS_RUNTIME");
    std::string name = choice ? choice : "";
    if (name == "emulated")
      return createEmulatedBackend();
    if (name == "cuda") {
      std::unique_ptr<Backend> cuda = createCudaBackend();
      if (!cuda)
        fatal("LMS_RUNTIME=cuda, but this runtime was built without CUDA");
      return cuda;
    }
    if (!name.empty())
      fatal("invalid LMS_RUNTIME '" + name + "': expected emulated or cuda");
    if (cudaDeviceAvailable())
      return createCudaBackend();
    std::fprintf(stderr, "lms runtime: no GPU found, using the emulated "
                         "device (set LMS_RUNTIME=emulated to silence this)\n");
    return createEmulatedBackend();
  }()};
  // Registered after the backend exists, so it runs before the backend is
  // destroyed.
  static bool atExit = (std::atexit(writeStatsAtExit), true);
  (void)atExit;
  return *holder.backend;
}

/// The copies issued into or out of each staging buffer in use: an event
/// recorded after each on its stream, so that lmsStagingFree returns the
/// buffer to the pool only after them.
class StagingUses {
public:
  void add(void *buffer, void *event) {
    std::lock_guard<std::mutex> lock(mutex);
    events[buffer].push_back(event);
  }
  std::vector<void *> take(void *buffer) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = events.find(buffer);
    if (it == events.end())
      return {};
    std::vector<void *> taken = std::move(it->second);
    events.erase(it);
    return taken;
  }

private:
  std::mutex mutex;
  std::unordered_map<void *, std::vector<void *>> events;
};

StagingUses &stagingUses() {
  static StagingUses uses;
  return uses;
}

/// The stream on which deferred staging frees wait for their copies (one,
/// never destroyed: destroying a stream waits for it on the emulated device).
std::atomic<void *> releaseStream{nullptr};
void *stagingReleaseStream() {
  static void *stream = releaseStream = backend().streamCreate();
  return stream;
}

/// Waits until the deferred staging frees issued so far are done (before
/// statistics are read, so that a buffer on its way back is no leak).
void finishStagingFrees() {
  if (void *stream = releaseStream.load())
    backend().streamSynchronize(stream);
}

} // namespace

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

#define LMS_EXPORT extern "C" __attribute__((visibility("default")))

LMS_EXPORT void lmsRuntimeWriteStats(const char *path) {
  Backend &b = backend();
  finishStagingFrees();
  std::string json = b.snapshot().toJson(b.name());
  if (!path || std::strcmp(path, "-") == 0) {
    std::fputs(json.c_str(), stderr);
    return;
  }
  FILE *file = std::fopen(path, "w");
  if (!file)
    fatal(std::string("cannot write the statistics to '") + path + "'");
  std::fputs(json.c_str(), file);
  std::fclose(file);
}

LMS_EXPORT const char *lmsRuntimeBackend(void) { return backend().name(); }

LMS_EXPORT int lmsRuntimeCudaDeviceCount(void) {
  return cudaDeviceAvailable() ? 1 : 0;
}

LMS_EXPORT uint64_t lmsRuntimePeakDeviceBytes(void) {
  return backend().snapshot().peakDeviceBytes;
}

/// Called by code lowered with --lms-carve-arena around each carved buffer
/// (`arena` is the arena allocation's aligned pointer as an integer).
LMS_EXPORT void lmsArenaAcquire(intptr_t arena, intptr_t offset,
                                intptr_t bytes) {
  backend().arenaAcquire(reinterpret_cast<void *>(arena),
                         static_cast<uint64_t>(offset),
                         static_cast<uint64_t>(bytes));
}
LMS_EXPORT void lmsArenaRelease(intptr_t arena, intptr_t offset,
                                intptr_t bytes) {
  backend().arenaRelease(reinterpret_cast<void *>(arena),
                         static_cast<uint64_t>(offset),
                         static_cast<uint64_t>(bytes));
}

LMS_EXPORT void *mgpuStreamCreate() { return backend().streamCreate(); }
LMS_EXPORT void mgpuStreamDestroy(void *stream) {
  backend().streamDestroy(stream);
}
LMS_EXPORT void mgpuStreamSynchronize(void *stream) {
  backend().streamSynchronize(stream);
}
LMS_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  backend().streamWaitEvent(stream, event);
}
LMS_EXPORT void *mgpuEventCreate() { return backend().eventCreate(); }
LMS_EXPORT void mgpuEventDestroy(void *event) { backend().eventDestroy(event); }
LMS_EXPORT void mgpuEventSynchronize(void *event) {
  backend().eventSynchronize(event);
}
LMS_EXPORT void mgpuEventRecord(void *event, void *stream) {
  backend().eventRecord(event, stream);
}
LMS_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared) {
  return backend().memAlloc(bytes, stream, isHostShared);
}
LMS_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  Backend &b = backend();
  // A staging buffer freed the upstream way: ordered by its stream.
  if (ptr && b.isStaging(ptr))
    for (void *event : stagingUses().take(ptr))
      b.eventDestroy(event);
  b.memFree(ptr, stream);
}
LMS_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  Backend &b = backend();
  b.memcpy(dst, src, bytes, stream);
  if (!stream)
    return;
  for (void *end : {dst, src})
    if (b.isStaging(end)) {
      void *event = b.eventCreate();
      b.eventRecord(event, stream);
      stagingUses().add(end, event);
    }
}

/// `lmsStagingAlloc(bytes) -> memref<?xi8>` (emitted by
/// --convert-lms-to-gpu with llvm.emit_c_interface): a staging buffer from
/// the pinned pool.
LMS_EXPORT void _mlir_ciface_lmsStagingAlloc(LMSStagingDescriptor *result,
                                             int64_t bytes) {
  if (bytes < 0)
    fatal("invalid staging allocation of " + std::to_string(bytes) + " bytes");
  void *ptr = backend().memAlloc(static_cast<uint64_t>(bytes), nullptr,
                                 /*hostShared=*/true);
  *result = {ptr, ptr, 0, {bytes}, {1}};
}

/// `lmsStagingFree(address)`: the staging buffer at `address` goes back to
/// the pool once the copies already issued into or out of it are done (the
/// host does not wait).
LMS_EXPORT void lmsStagingFree(intptr_t address) {
  Backend &b = backend();
  void *ptr = reinterpret_cast<void *>(address);
  if (!b.isStaging(ptr))
    fatal("freeing memory that is not a staging buffer in use (double "
          "free?)");
  std::vector<void *> events = stagingUses().take(ptr);
  if (events.empty())
    return b.memFree(ptr, nullptr);
  void *stream = stagingReleaseStream();
  for (void *event : events) {
    b.streamWaitEvent(stream, event);
    b.eventDestroy(event);
  }
  b.memFree(ptr, stream);
}
LMS_EXPORT void mgpuMemset32(void *dst, uint32_t value, size_t count,
                             void *stream) {
  backend().memset32(dst, value, count, stream);
}
LMS_EXPORT void mgpuMemset16(void *dst, uint16_t value, size_t count,
                             void *stream) {
  backend().memset16(dst, value, count, stream);
}

/// The ranked memref descriptor header that mgpuMemHostRegisterMemRef gets.
template <typename T> struct MemRefHeader {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[1];
};

LMS_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t bytes) {
  backend().hostRegister(ptr, bytes);
}
LMS_EXPORT void mgpuMemHostUnregister(void *ptr) {
  backend().hostUnregister(ptr);
}
LMS_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  auto *header = static_cast<MemRefHeader<char> *>(descriptor);
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= header->sizes[i];
  backend().hostRegister(header->aligned + header->offset * elementSizeBytes,
                         static_cast<uint64_t>(count * elementSizeBytes));
}
LMS_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  auto *header = static_cast<MemRefHeader<char> *>(descriptor);
  backend().hostUnregister(header->aligned + header->offset * elementSizeBytes);
}
LMS_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return backend().moduleLoad(data, size);
}
LMS_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return backend().moduleLoadJIT(data, optLevel);
}
LMS_EXPORT void mgpuModuleUnload(void *module) {
  if (backendGone)
    return; // at exit, after the backend (see backendGone)
  backend().moduleUnload(module);
}
LMS_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  return backend().moduleGetFunction(module, name);
}
LMS_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount) {
  backend().launchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                         smem, stream, params, extra, paramsCount);
}
LMS_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  if (device != 0)
    fatal("only device 0 is supported");
}
