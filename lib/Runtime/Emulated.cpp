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
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <algorithm>
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

using namespace lms::runtime;

namespace {

constexpr size_t kAlignment = 256;
constexpr size_t kQuarantineBytes = 64ull << 20;
constexpr unsigned char kPoison = 0xFF;

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
    void *ptr = std::aligned_alloc(kAlignment, rounded);
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
    run(stream, [this, dst, src, bytes] {
      if (copyDelay.count() > 0)
        std::this_thread::sleep_for(copyDelay);
      {
        // When the copy runs, both ends must be live and large enough.
        std::lock_guard<std::mutex> lock(mutex);
        checkRange(dst, bytes, "into");
        checkRange(src, bytes, "out of");
      }
      std::memmove(dst, src, bytes);
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
    });
  }
  void memset32(void *dst, uint32_t value, size_t count,
                void *stream) override {
    run(stream, [dst, value, count] {
      auto *p = static_cast<uint32_t *>(dst);
      std::fill(p, p + count, value);
    });
  }
  void memset16(void *dst, uint16_t value, size_t count,
                void *stream) override {
    run(stream, [dst, value, count] {
      auto *p = static_cast<uint16_t *>(dst);
      std::fill(p, p + count, value);
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
    auto live = carved.find(arena);
    if (live == carved.end() || !live->second.count(offset) ||
        live->second[offset] != bytes || !device.count(arena))
      fatal("releasing a carved buffer at offset " + std::to_string(offset) +
            " (" + std::to_string(bytes) +
            " bytes) that is not live in its arena (released twice?)");
    live->second.erase(offset);
    stats.arenaBytesInUse -= bytes;
    // As a freed allocation: poisoned until a buffer is carved there again.
    std::memset(static_cast<char *>(arena) + offset, kPoison, bytes);
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
    std::memset(ptr, kPoison, bytes);
    stats.deviceBytesInUse -= bytes;
    device.erase(it);
    carved.erase(ptr);
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
