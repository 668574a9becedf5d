//===- Emulated.cpp - The emulated device backend -------------------------===//
//
// Device memory is host memory with a capacity; every stream is a worker
// thread that runs its operations in order, each copy after a delay (copies
// "complete late", so a program that reads a copy's destination without
// waiting sees stale data); fresh and freed device memory is poisoned with
// 0xFF bytes (NaN as floats) and freed memory is quarantined before it is
// returned to the system, so a read after free or a missing wait shows.
// Allocation beyond the capacity aborts with a message. With
// LMS_DEVICE_ALLOCATOR=first-fit the device also has an address space of
// the capacity's size, allocated first-fit as a caching allocator would:
// an allocation fails when no contiguous block is free, even if enough
// bytes are (fragmentation).
//
// While a copy is queued or under way, the whole pages of its destination
// are inaccessible and those of its source read-only (device buffers and
// staging buffers are page-aligned): the program's read or write of a
// buffer whose copy is still in flight faults, and a SIGSEGV handler
// reports it with the copy it raced and aborts (LMS_CHECK_IN_FLIGHT=0
// turns this off). The streams' own work runs with the guards lifted.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <thread>
#include <unordered_map>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace lms::runtime;

namespace {

constexpr size_t kAlignment = 256;
constexpr size_t kQuarantineBytes = 64ull << 20;
constexpr unsigned char kPoison = 0xFF;

constexpr size_t kPage = 4096;

//===----------------------------------------------------------------------===//
// In-flight guards
//===----------------------------------------------------------------------===//

/// The pages of one copy in flight, as the SIGSEGV handler reads them
/// (lock-free: a handler takes no lock). `begin` 0 is a free slot.
struct GuardSlot {
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<uint64_t> bytes{0};
  /// The copy writes these pages (any access races it) or reads them
  /// (a write races it).
  std::atomic<bool> destination{false};
};
constexpr size_t kMaxGuards = 4096;
GuardSlot guardSlots[kMaxGuards];
struct sigaction previousSegv;

/// write(2) of a NUL-terminated string (async-signal-safe).
void writeText(const char *text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    ssize_t written = ::write(2, text, n);
    if (written <= 0)
      return;
    text += written;
    n -= static_cast<size_t>(written);
  }
}

/// `value` in decimal or hexadecimal into `out` (async-signal-safe).
void formatNumber(uint64_t value, bool hex, char *out) {
  char digits[24];
  int n = 0;
  unsigned base = hex ? 16 : 10;
  do {
    digits[n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0);
  char *p = out;
  if (hex) {
    *p++ = '0';
    *p++ = 'x';
  }
  while (n > 0)
    *p++ = digits[--n];
  *p = 0;
}

void onSegv(int signal, siginfo_t *info, void *context) {
  auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (GuardSlot &slot : guardSlots) {
    uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin ||
        address >= slot.end.load(std::memory_order_acquire))
      continue;
    bool destination = slot.destination.load(std::memory_order_relaxed);
    char where[24], bytes[24];
    formatNumber(address, true, where);
    formatNumber(slot.bytes.load(std::memory_order_relaxed), false, bytes);
    writeText("lms runtime: the program ");
    writeText(destination ? "read or wrote" : "wrote");
    writeText(" memory at ");
    writeText(where);
    writeText(" while a copy of ");
    writeText(bytes);
    writeText(destination
                  ? " bytes into it was still in flight (use before the "
                    "copy completed: is a wait missing?)\n"
                  : " bytes out of it was still in flight (a write under "
                    "the copy: is a wait missing?)\n");
    std::abort();
  }
  // Not a guarded page. A guard lifted meanwhile: the access succeeds when
  // it runs again. Any other fault repeats: after a few, the previous
  // handler takes it.
  static std::atomic<int> strayFaults{0};
  if (strayFaults.fetch_add(1) < 16)
    return;
  sigaction(SIGSEGV, &previousSegv, nullptr);
  (void)signal;
  (void)context;
}

/// Installs the handler once per process; false when guards are off.
bool installGuardHandler() {
  static const bool installed = [] {
    const char *setting = std::getenv("LMS_CHECK_IN_FLIGHT");
    if (setting && std::string(setting) == "0")
      return false;
    if (setting && std::string(setting) != "1")
      fatal(std::string("invalid LMS_CHECK_IN_FLIGHT '") + setting +
            "': expected 1 (the default: accesses to buffers whose copy is "
            "in flight fault) or 0");
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = onSegv;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSEGV, &action, &previousSegv) == 0;
  }();
  return installed;
}

/// `bytes` rounded up to the allocation granularity; 0 when that does not
/// fit in a size_t (the caller reports it).
size_t roundUp(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes > std::numeric_limits<size_t>::max() - (kAlignment - 1))
    return 0;
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// A stream: a thread that runs tasks in order.
class Stream {
public:
  Stream() : worker([this] { run(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    worker.join();
  }
  void enqueue(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      tasks.push_back(std::move(task));
      ++pending;
    }
    wake.notify_all();
  }
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return pending == 0; });
  }

private:
  void run() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return stopping || !tasks.empty(); });
        if (tasks.empty())
          return;
        task = std::move(tasks.front());
        tasks.pop_front();
      }
      task();
      {
        std::lock_guard<std::mutex> lock(mutex);
        --pending;
      }
      done.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable wake, done;
  std::deque<std::function<void()>> tasks;
  size_t pending = 0;
  bool stopping = false;
  std::thread worker;
};

struct Event {
  std::mutex mutex;
  std::condition_variable cv;
  bool signalled = true; // an unrecorded event is complete
  uint64_t generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return signalled; });
  }
};

class EmulatedBackend final : public Backend {
public:
  EmulatedBackend()
      : pool(
            [](size_t bytes) { return std::aligned_alloc(4096, bytes); },
            [](void *ptr) { std::free(ptr); },
            std::getenv("LMS_PINNED_BYTES")
                ? parseSize(std::getenv("LMS_PINNED_BYTES"), "LMS_PINNED_BYTES")
                : 0) {
    capacity =
        std::getenv("LMS_DEVICE_BYTES")
            ? parseSize(std::getenv("LMS_DEVICE_BYTES"), "LMS_DEVICE_BYTES")
            : (16ull << 30);
    if (const char *delay = std::getenv("LMS_COPY_DELAY_US"))
      copyDelay = std::chrono::microseconds(std::atoll(delay));
    if (const char *allocator = std::getenv("LMS_DEVICE_ALLOCATOR")) {
      std::string name = allocator;
      if (name == "first-fit")
        firstFit = true;
      else if (name != "count")
        fatal("invalid LMS_DEVICE_ALLOCATOR '" + name +
              "': expected count (the default: only the total is bounded) "
              "or first-fit");
      if (firstFit)
        holes[0] = capacity;
    }
    guarding = installGuardHandler();
  }

  ~EmulatedBackend() override {
    // Streams first: their threads may still touch memory.
    idleStreams.clear();
    liveStreams.clear();
    for (auto &[ptr, bytes] : quarantine)
      std::free(ptr);
    for (auto &[ptr, bytes] : device)
      std::free(ptr);
  }

  const char *name() const override { return "emulated"; }

  void *streamCreate() override {
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Stream> stream;
    if (!idleStreams.empty()) {
      stream = std::move(idleStreams.back());
      idleStreams.pop_back();
    } else {
      stream = std::make_unique<Stream>();
    }
    Stream *raw = stream.get();
    liveStreams[raw] = std::move(stream);
    return raw;
  }
  void streamDestroy(void *stream) override {
    if (!stream)
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!liveStreams.count(static_cast<Stream *>(stream)))
        fatal("destroying a stream that is not live (destroyed twice?)");
    }
    streamOf(stream)->synchronize();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = liveStreams.find(static_cast<Stream *>(stream));
    idleStreams.push_back(std::move(it->second));
    liveStreams.erase(it);
  }
  void streamSynchronize(void *stream) override {
    if (stream)
      streamOf(stream)->synchronize();
  }
  void streamWaitEvent(void *stream, void *event) override {
    // The task holds the event: the host may destroy it before the stream
    // gets to the wait (CUDA allows that).
    std::shared_ptr<Event> e = eventOf(event);
    run(stream, [e] { e->wait(); });
  }
  void *eventCreate() override {
    auto event = std::make_shared<Event>();
    std::lock_guard<std::mutex> lock(mutex);
    events[event.get()] = event;
    return event.get();
  }
  void eventDestroy(void *event) override {
    std::shared_ptr<Event> e = eventOf(event);
    std::lock_guard<std::mutex> lock(mutex);
    events.erase(event);
  }
  void eventSynchronize(void *event) override { eventOf(event)->wait(); }
  void eventRecord(void *event, void *stream) override {
    std::shared_ptr<Event> e = eventOf(event);
    {
      std::lock_guard<std::mutex> lock(e->mutex);
      e->signalled = false;
    }
    run(stream, [e] {
      {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->signalled = true;
      }
      e->cv.notify_all();
    });
  }

  void *memAlloc(uint64_t bytes, void *stream, bool hostShared) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (hostShared)
      return pool.get(bytes, stats);
    // The memory is taken when the host asks, whatever the stream.
    if (shouldInjectFault("alloc"))
      injectedFault("a device allocation of " + std::to_string(bytes) +
                    " bytes failed");
    size_t rounded = roundUp(bytes);
    if (rounded == 0)
      fatal("invalid device allocation of " + std::to_string(bytes) +
            " bytes: more than any device has");
    if (rounded > capacity || stats.deviceBytesInUse > capacity - rounded)
      fatal("out of device memory: allocating " + std::to_string(bytes) +
            " bytes with " + std::to_string(stats.deviceBytesInUse) +
            " in use of a capacity of " + std::to_string(capacity) +
            " (LMS_DEVICE_BYTES)");
    uint64_t address = 0;
    if (firstFit)
      address = takeAddress(bytes, rounded);
    // Page-aligned and whole pages, so that a copy's guard covers the
    // buffer and no other (the statistics count `rounded`).
    void *ptr =
        std::aligned_alloc(kPage, (rounded + kPage - 1) / kPage * kPage);
    if (!ptr)
      fatal("the host is out of memory for " + std::to_string(rounded) +
            " bytes of emulated device memory");
    if (firstFit)
      addresses[ptr] = address;
    std::memset(ptr, kPoison, rounded);
    device[ptr] = rounded;
    stats.deviceBytesInUse += rounded;
    stats.peakDeviceBytes =
        std::max(stats.peakDeviceBytes, stats.deviceBytesInUse);
    ++stats.deviceAllocations;
    return ptr;
  }

  void memFree(void *ptr, void *stream) override {
    if (!ptr)
      return;
    run(stream, [this, ptr] { release(ptr); });
  }

  void memcpy(void *dst, void *src, size_t bytes, void *stream) override {
    if (shouldInjectFault("copy"))
      injectedFault("a copy of " + std::to_string(bytes) + " bytes failed");
    // Until the copy runs, the program must not touch its destination nor
    // write its source.
    std::vector<int> guards;
    if (stream) {
      std::lock_guard<std::mutex> lock(mutex);
      guard(dst, bytes, /*destination=*/true, guards);
      guard(src, bytes, /*destination=*/false, guards);
    }
    run(stream, [this, dst, src, bytes, guards] {
      if (copyDelay.count() > 0)
        std::this_thread::sleep_for(copyDelay);
      std::lock_guard<std::mutex> lock(mutex);
      unguard(guards);
      // When the copy runs, both ends must be live and large enough.
      checkRange(dst, bytes, "into");
      checkRange(src, bytes, "out of");
      withAccess({{dst, bytes}, {src, bytes}},
                 [&] { std::memmove(dst, src, bytes); });
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
    });
  }
  void memset32(void *dst, uint32_t value, size_t count,
                void *stream) override {
    run(stream, [this, dst, value, count] {
      std::lock_guard<std::mutex> lock(mutex);
      withAccess({{dst, count * 4}}, [&] {
        auto *p = static_cast<uint32_t *>(dst);
        std::fill(p, p + count, value);
      });
    });
  }
  void memset16(void *dst, uint16_t value, size_t count,
                void *stream) override {
    run(stream, [this, dst, value, count] {
      std::lock_guard<std::mutex> lock(mutex);
      withAccess({{dst, count * 2}}, [&] {
        auto *p = static_cast<uint16_t *>(dst);
        std::fill(p, p + count, value);
      });
    });
  }
  bool isStaging(void *ptr) override {
    std::lock_guard<std::mutex> lock(mutex);
    return pool.isHandedOut(ptr);
  }
  void hostRegister(void *, uint64_t) override {}
  void hostUnregister(void *) override {}

  void *moduleLoad(void *, size_t) override {
    fatal("the emulated device cannot run GPU kernels: lower with "
          "lms-host-pipeline, or run on a GPU with LMS_RUNTIME=cuda");
  }
  void *moduleLoadJIT(void *data, int) override { return moduleLoad(data, 0); }
  void moduleUnload(void *) override {}
  void *moduleGetFunction(void *, const char *) override { return nullptr; }
  void launchKernel(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                    intptr_t, int32_t, void *, void **, void **,
                    size_t) override {
    fatal("the emulated device cannot run GPU kernels");
  }

  Stats snapshot() override {
    // Let in-flight work finish so that the numbers are final.
    std::vector<Stream *> streams;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &[raw, owned] : liveStreams)
        streams.push_back(raw);
    }
    for (Stream *stream : streams)
      stream->synchronize();
    std::lock_guard<std::mutex> lock(mutex);
    Stats result = stats;
    result.leakedBytes = stats.deviceBytesInUse + pool.bytesInUse();
    result.leakedAllocations = device.size() + pool.buffersInUse();
    return result;
  }

  /// The device allocation that contains `ptr` (a frame passed to a callee
  /// lies inside its caller's arena), with `offset` made relative to it.
  std::map<void *, size_t>::iterator containing(void *&ptr, uint64_t &offset) {
    auto it = device.upper_bound(ptr);
    if (it == device.begin())
      return device.end();
    --it;
    char *start = static_cast<char *>(it->first);
    uint64_t shift = static_cast<uint64_t>(static_cast<char *>(ptr) - start);
    if (shift >= it->second)
      return device.end();
    ptr = it->first;
    offset += shift;
    return it;
  }

  void arenaAcquire(void *arena, uint64_t offset, uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    void *given = arena;
    auto it = containing(arena, offset);
    if (it == device.end())
      fatal("a buffer carved out of " + pointerText(given) +
            ", which is not a live device allocation");
    uint64_t end;
    if (__builtin_add_overflow(offset, bytes, &end) || end > it->second)
      fatal("a buffer carved at offset " + std::to_string(offset) + " (" +
            std::to_string(bytes) +
            " bytes) runs past the end of its arena "
            "of " +
            std::to_string(it->second) + " bytes");
    // A buffer of no bytes occupies nothing: it may share its offset with a
    // live buffer (the placer puts it anywhere), so it is not recorded.
    if (bytes == 0) {
      ++stats.arenaBuffers;
      return;
    }
    auto &live = carved[arena];
    auto next = live.lower_bound(offset);
    auto overlaps = [&](std::map<uint64_t, uint64_t>::iterator other) {
      fatal("buffers carved out of one arena overlap: [" +
            std::to_string(offset) + ", " + std::to_string(end) + ") and [" +
            std::to_string(other->first) + ", " +
            std::to_string(other->first + other->second) +
            ") are live at once");
    };
    if (bytes > 0 && next != live.end() && next->first < end)
      overlaps(next);
    if (bytes > 0 && next != live.begin() &&
        std::prev(next)->first + std::prev(next)->second > offset)
      overlaps(std::prev(next));
    live[offset] = bytes;
    stats.arenaBytesInUse += bytes;
    stats.arenaPeakBytes =
        std::max(stats.arenaPeakBytes, stats.arenaBytesInUse);
    ++stats.arenaBuffers;
  }

  void arenaRelease(void *arena, uint64_t offset, uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (containing(arena, offset) == device.end())
      fatal("releasing a carved buffer of " + pointerText(arena) +
            ", which is not a live device allocation");
    if (bytes == 0)
      return;
    auto live = carved.find(arena);
    if (live == carved.end() || !live->second.count(offset) ||
        live->second[offset] != bytes || !device.count(arena))
      fatal("releasing a carved buffer at offset " + std::to_string(offset) +
            " (" + std::to_string(bytes) +
            " bytes) that is not live in its arena (released twice?)");
    live->second.erase(offset);
    stats.arenaBytesInUse -= bytes;
    char *start = static_cast<char *>(arena) + offset;
    failIfGuarded(start, bytes, "releasing a carved buffer");
    // As a freed allocation: poisoned until a buffer is carved there again.
    std::memset(start, kPoison, bytes);
  }

private:
  static std::string pointerText(void *ptr) {
    char text[32];
    std::snprintf(text, sizeof(text), "%p", ptr);
    return text;
  }

  Stream *streamOf(void *stream) { return static_cast<Stream *>(stream); }

  std::shared_ptr<Event> eventOf(void *event) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = events.find(event);
    if (it == events.end())
      fatal("using an event that is not live (destroyed already?)");
    return it->second;
  }

  /// Runs `task` in stream order, or now on the null stream.
  void run(void *stream, std::function<void()> task) {
    if (stream)
      streamOf(stream)->enqueue(std::move(task));
    else
      task();
  }

  /// A copy of `bytes` into or out of `ptr` (as `direction` says) must stay
  /// inside one live device buffer or pinned staging buffer when it starts
  /// in one, and must not touch freed device memory.
  void checkRange(void *ptr, size_t bytes, const char *direction) {
    char *begin = static_cast<char *>(ptr);
    auto contains = [&](void *base, size_t size) {
      char *start = static_cast<char *>(base);
      return begin >= start && begin < start + size;
    };
    auto it = device.upper_bound(ptr);
    if (it != device.begin() &&
        contains(std::prev(it)->first, std::prev(it)->second)) {
      --it;
      char *end = static_cast<char *>(it->first) + it->second;
      if (bytes > static_cast<size_t>(end - begin))
        fatal(std::string("a copy of ") + std::to_string(bytes) + " bytes " +
              direction + " a device buffer of " + std::to_string(it->second) +
              " bytes runs past its end");
      return;
    }
    if (pool.owns(ptr)) {
      if (!pool.isHandedOut(ptr))
        fatal(std::string("a copy ") + direction +
              " a staging buffer that was freed (use after free: is a wait "
              "missing?)");
      if (bytes > pool.sizeOf(ptr))
        fatal(std::string("a copy of ") + std::to_string(bytes) + " bytes " +
              direction + " a staging buffer of " +
              std::to_string(pool.sizeOf(ptr)) + " bytes runs past its end");
      return;
    }
    for (auto &[base, size] : quarantine)
      if (contains(base, size))
        fatal(std::string("a copy ") + direction +
              " freed device memory (use after free: is a wait missing?)");
  }

  bool isDevice(void *ptr) {
    // Copies address the start of a buffer or a point inside it.
    auto it = device.upper_bound(ptr);
    if (it == device.begin())
      return false;
    --it;
    return static_cast<char *>(ptr) <
           static_cast<char *>(it->first) + it->second;
  }

  void release(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    if (pool.owns(ptr)) {
      pool.put(ptr, stats);
      return;
    }
    auto it = device.find(ptr);
    if (it == device.end())
      fatal("freeing memory that is not a live device allocation (double "
            "free?)");
    size_t bytes = it->second;
    failIfGuarded(ptr, bytes, "freeing device memory");
    std::memset(ptr, kPoison, bytes);
    stats.deviceBytesInUse -= bytes;
    device.erase(it);
    // What is still carved out of an arena (the results a function of the
    // host-arena convention left there for its host) goes with it.
    if (auto live = carved.find(ptr); live != carved.end()) {
      for (auto [offset, carvedBytes] : live->second)
        stats.arenaBytesInUse -= carvedBytes;
      carved.erase(live);
    }
    if (firstFit) {
      auto address = addresses.find(ptr);
      returnAddress(address->second, bytes);
      addresses.erase(address);
    }
    // Keep freed memory poisoned for a while before the system reuses it.
    quarantine.push_back({ptr, bytes});
    quarantined += bytes;
    while (quarantined > kQuarantineBytes) {
      quarantined -= quarantine.front().second;
      std::free(quarantine.front().first);
      quarantine.pop_front();
    }
  }

  /// The whole pages inside [ptr, ptr + bytes) (empty when none).
  static std::pair<uintptr_t, uintptr_t> innerPages(const void *ptr,
                                                    size_t bytes) {
    auto begin = reinterpret_cast<uintptr_t>(ptr);
    uintptr_t first = (begin + kPage - 1) / kPage * kPage;
    uintptr_t last = (begin + bytes) / kPage * kPage;
    if (bytes == 0 || begin + bytes < begin || last <= first)
      return {0, 0};
    return {first, last};
  }

  /// Whether the emulator owns the memory at `ptr` (a device or staging
  /// buffer): only its own pages are guarded.
  bool owned(void *ptr) { return isDevice(ptr) || pool.owns(ptr); }

  /// Guards the pages of a copy's end; appends the slot to `guards`.
  void guard(void *ptr, size_t bytes, bool destination,
             std::vector<int> &guards) {
    if (!guarding || !owned(ptr))
      return;
    auto [first, last] = innerPages(ptr, bytes);
    if (first == last)
      return;
    int slot = -1;
    for (size_t i = 0; i < kMaxGuards; ++i)
      if (guardSlots[i].begin.load(std::memory_order_relaxed) == 0) {
        slot = static_cast<int>(i);
        break;
      }
    if (slot < 0)
      return; // more copies in flight than slots: this one goes unguarded
    GuardSlot &g = guardSlots[slot];
    g.end.store(last, std::memory_order_relaxed);
    g.bytes.store(bytes, std::memory_order_relaxed);
    g.destination.store(destination, std::memory_order_relaxed);
    g.begin.store(first, std::memory_order_release);
    for (uintptr_t page = first; page < last; page += kPage)
      ++(destination ? pageGuards[page].first : pageGuards[page].second);
    protect(first, last);
    guards.push_back(slot);
  }

  /// Lifts the guards of a copy that runs now.
  void unguard(const std::vector<int> &guards) {
    for (int slot : guards) {
      GuardSlot &g = guardSlots[slot];
      uintptr_t first = g.begin.load(std::memory_order_relaxed);
      uintptr_t last = g.end.load(std::memory_order_relaxed);
      bool destination = g.destination.load(std::memory_order_relaxed);
      g.begin.store(0, std::memory_order_release);
      for (uintptr_t page = first; page < last; page += kPage) {
        auto it = pageGuards.find(page);
        --(destination ? it->second.first : it->second.second);
      }
      protect(first, last);
      for (uintptr_t page = first; page < last; page += kPage) {
        auto it = pageGuards.find(page);
        if (it->second.first == 0 && it->second.second == 0)
          pageGuards.erase(it);
      }
    }
  }

  /// Sets the protection of the pages in [first, last) from their guards,
  /// a run of pages of one protection at a time.
  void protect(uintptr_t first, uintptr_t last) {
    auto protectionOf = [&](uintptr_t page) {
      auto it = pageGuards.find(page);
      if (it == pageGuards.end())
        return PROT_READ | PROT_WRITE;
      if (it->second.first > 0)
        return PROT_NONE;
      return it->second.second > 0 ? PROT_READ : PROT_READ | PROT_WRITE;
    };
    for (uintptr_t page = first; page < last;) {
      int protection = protectionOf(page);
      uintptr_t end = page + kPage;
      while (end < last && protectionOf(end) == protection)
        end += kPage;
      if (mprotect(reinterpret_cast<void *>(page), end - page, protection) != 0)
        fatal("cannot protect the pages of a copy in flight (mprotect "
              "failed; LMS_CHECK_IN_FLIGHT=0 turns the check off)");
      page = end;
    }
  }

  /// Runs `work` (a stream's own access, under the lock) with the pages of
  /// `ranges` readable and writable, then guards them again.
  void withAccess(std::initializer_list<std::pair<void *, size_t>> ranges,
                  const std::function<void()> &work) {
    std::vector<std::pair<uintptr_t, uintptr_t>> lifted;
    for (auto [ptr, bytes] : ranges) {
      if (pageGuards.empty())
        break;
      auto begin = reinterpret_cast<uintptr_t>(ptr) / kPage * kPage;
      uintptr_t end = reinterpret_cast<uintptr_t>(ptr) + bytes;
      auto it = pageGuards.lower_bound(begin);
      if (it == pageGuards.end() || it->first >= end)
        continue;
      uintptr_t first = it->first, last = first;
      for (; it != pageGuards.end() && it->first < end; ++it)
        last = it->first + kPage;
      if (mprotect(reinterpret_cast<void *>(first), last - first,
                   PROT_READ | PROT_WRITE) != 0)
        fatal("cannot lift the guard of a copy in flight (mprotect failed)");
      lifted.push_back({first, last});
    }
    work();
    for (auto [first, last] : lifted)
      protect(first, last);
  }

  /// Freeing memory that a copy in flight still reads or writes is an
  /// error (the copy would land in, or read, freed memory).
  void failIfGuarded(void *ptr, size_t bytes, const char *what) {
    if (pageGuards.empty())
      return;
    auto begin = reinterpret_cast<uintptr_t>(ptr);
    auto it = pageGuards.lower_bound(begin / kPage * kPage);
    if (it != pageGuards.end() && it->first < begin + bytes)
      fatal(std::string(what) +
            " that a copy still in flight reads or writes (use after free: "
            "is a wait missing?)");
  }

  /// First fit in the address space: the lowest free block that holds it.
  uint64_t takeAddress(uint64_t bytes, uint64_t rounded) {
    for (auto it = holes.begin(); it != holes.end(); ++it) {
      if (it->second < rounded)
        continue;
      uint64_t address = it->first, size = it->second;
      holes.erase(it);
      if (size > rounded)
        holes[address + rounded] = size - rounded;
      return address;
    }
    uint64_t largest = 0;
    for (auto &[address, size] : holes)
      largest = std::max(largest, size);
    fatal("out of device memory: allocating " + std::to_string(bytes) +
          " bytes with " + std::to_string(stats.deviceBytesInUse) +
          " in use of a capacity of " + std::to_string(capacity) +
          ", but the largest free block is " + std::to_string(largest) +
          " bytes (fragmented in " + std::to_string(holes.size()) +
          " blocks; LMS_DEVICE_ALLOCATOR=first-fit)");
  }

  void returnAddress(uint64_t address, uint64_t bytes) {
    uint64_t end = address + bytes;
    auto next = holes.lower_bound(address);
    if (next != holes.end() && next->first == end) {
      end += next->second;
      next = holes.erase(next);
    }
    if (next != holes.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == address) {
        address = previous->first;
        holes.erase(previous);
      }
    }
    holes[address] = end - address;
  }

  std::mutex mutex;
  Stats stats;
  PinnedPool pool;
  uint64_t capacity;
  /// LMS_DEVICE_ALLOCATOR=first-fit: free blocks of the address space
  /// (offset -> size) and the address of each live buffer.
  bool firstFit = false;
  std::map<uint64_t, uint64_t> holes;
  std::map<void *, uint64_t> addresses;
  /// The live carved buffers of each arena: offset -> bytes.
  std::map<void *, std::map<uint64_t, uint64_t>> carved;
  std::chrono::microseconds copyDelay{200};
  std::map<void *, size_t> device;
  /// Whether copies in flight guard their pages (LMS_CHECK_IN_FLIGHT), and
  /// per guarded page the copies in flight that write it and that read it.
  bool guarding = false;
  std::map<uintptr_t, std::pair<int, int>> pageGuards;
  std::deque<std::pair<void *, size_t>> quarantine;
  size_t quarantined = 0;
  std::unordered_map<Stream *, std::unique_ptr<Stream>> liveStreams;
  std::unordered_map<void *, std::shared_ptr<Event>> events;
  std::vector<std::unique_ptr<Stream>> idleStreams;
};

} // namespace

std::unique_ptr<Backend> lms::runtime::createEmulatedBackend() {
  return std::make_unique<EmulatedBackend>();
}
