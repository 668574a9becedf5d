//===- PlacementSweep.cpp - Offsets by a search in the order of time ------===//
//
// The placer's sweep search (Placement.cpp): a depth-first search for
// offsets under a capacity that places the buffers in the order they are
// allocated, as an allocator would, but looks ahead by backtracking:
//
//  - Each buffer, in order of its first step, goes into a gap that the
//    buffers placed before it and still alive leave below the capacity: at
//    the bottom of the gap or against its top. First the places beside a
//    buffer that dies nearest the step this one dies (the two then free one
//    hole together, where an allocator that looks only at sizes leaves two
//    apart), then the tightest gaps (best fit), then the lowest offset.
//  - The search remembers each state that it has shown leads nowhere: the
//    position in the order and the offsets, sizes and last steps of the
//    buffers alive there (which are all that the rest of the search sees).
//    A state met again, by whatever choices, is not searched again.
//    Buffers of the same size that die at the same step are interchangeable
//    in it, so the many equivalent placements of plans whose buffers are a
//    few sizes repeated are searched once.
//
// On ResNet-50's offloading plan at batch 919, whose large buffers are 1, 2,
// 4 or 8 times one size and alone fill the live peak over hundreds of steps,
// the placer reaches 1.0018 of the live peak so, where the canonical search
// (in the order of offsets) and every other step stay at 1.0999. On plans
// of many distinct sizes (Moccasin's random layered graphs) it finds
// nothing the other steps do not. Work is counted in nodes and in the
// buffers each node looks at; the result depends on nothing else.
//
//===----------------------------------------------------------------------===//

#include "PlacementInternal.h"
#include "SplitMix.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace lms;

namespace {

enum class Outcome { Found, Exhausted, Aborted };

class SweepSearch {
public:
  SweepSearch(llvm::ArrayRef<detail::Rectangle> rectangles,
              llvm::ArrayRef<uint64_t> fixedOffsets) {
    size_t n = rectangles.size();
    order.resize(n);
    std::iota(order.begin(), order.end(), 0);
    // By first step; larger, then longer first among those that begin
    // together.
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      const detail::Rectangle &x = rectangles[a], &y = rectangles[b];
      return std::make_tuple(x.begin, y.bytes, y.end) <
             std::make_tuple(y.begin, x.bytes, x.end);
    });
    for (uint32_t i : order) {
      sizes.push_back(rectangles[i].bytes);
      ends.push_back(rectangles[i].end);
      begins.push_back(rectangles[i].begin);
      fixed.push_back(fixedOffsets.empty() ? kFree : fixedOffsets[i]);
    }
    // The buffers before each one in the order that are still alive at its
    // first step (compressed rows): all that can be in its way.
    std::vector<uint32_t> alive;
    aliveStart.push_back(0);
    for (uint32_t k = 0; k < n; ++k) {
      llvm::erase_if(alive, [&](uint32_t j) { return ends[j] <= begins[k]; });
      llvm::append_range(aliveBefore, alive);
      aliveStart.push_back(static_cast<uint32_t>(aliveBefore.size()));
      alive.push_back(k);
    }
    // The fixed buffers after each free one in the order that begin
    // before it ends: in its way too.
    std::vector<uint32_t> fixedOnes;
    for (uint32_t k = 0; k < n; ++k)
      if (fixed[k] != kFree)
        fixedOnes.push_back(k);
    aheadStart.push_back(0);
    for (uint32_t k = 0; k < n; ++k) {
      if (fixed[k] == kFree)
        for (auto it = llvm::upper_bound(fixedOnes, k);
             it != fixedOnes.end() && begins[*it] < ends[k]; ++it)
          fixedAhead.push_back(*it);
      aheadStart.push_back(static_cast<uint32_t>(fixedAhead.size()));
    }
  }

  static constexpr uint64_t kFree = ~uint64_t(0);

  /// The buffers in the order searched (indices given to the constructor).
  std::vector<uint32_t> order;

  /// Searches under `capacity` within `workLimit` (nodes plus the buffers
  /// they look at). Offsets are by position in `order`.
  Outcome run(uint64_t capacity, uint64_t workLimit) {
    this->capacity = capacity;
    limit = workLimit;
    work = 0;
    offsets.assign(sizes.size(), 0);
    failed.clear();
    return search(0);
  }

  std::vector<uint64_t> offsets;
  uint64_t work = 0;

private:
  Outcome search(uint32_t k) {
    if (k == sizes.size())
      return Outcome::Found;
    llvm::ArrayRef<uint32_t> before(aliveBefore.data() + aliveStart[k],
                                    aliveStart[k + 1] - aliveStart[k]);
    llvm::ArrayRef<uint32_t> ahead(fixedAhead.data() + aheadStart[k],
                                   aheadStart[k + 1] - aheadStart[k]);
    work += 1 + before.size() + ahead.size();
    if (work > limit)
      return Outcome::Aborted;
    // A fixed buffer is where it was put (the free ones before it kept out
    // of its way).
    if (fixed[k] != kFree) {
      offsets[k] = fixed[k];
      return search(k + 1);
    }
    // The state: which sizes sit where until when.
    std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> state;
    state.reserve(before.size());
    for (uint32_t j : before)
      state.push_back({offsets[j], sizes[j], ends[j]});
    llvm::sort(state);
    uint64_t key = mix(k);
    for (auto [offset, size, end] : state)
      key = mix(mix(mix(key ^ offset) ^ size) ^ end);
    // DenseSet reserves the two highest values.
    key = std::min<uint64_t>(key, ~uint64_t(0) - 2);
    if (failed.contains(key))
      return Outcome::Exhausted;

    // The gaps below the capacity, and the places in them: the bottom and
    // the top of each gap that is large enough. First the places beside a
    // buffer that dies nearest the step this one dies (the two free one
    // hole together; the floor and the capacity never die), then the
    // tightest gaps, then the lowest offset.
    uint64_t size = sizes[k];
    constexpr uint32_t kNever = ~uint32_t(0);
    auto apart = [&](uint32_t end) -> uint64_t {
      if (end == kNever)
        return kNever;
      return end > ends[k] ? end - ends[k] : ends[k] - end;
    };
    // (steps apart, slack, offset)
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> places;
    auto gap = [&](uint64_t from, uint64_t to, uint32_t belowEnd,
                   uint32_t aboveEnd) {
      if (to < from + size)
        return;
      uint64_t slack = to - from - size;
      places.push_back({apart(belowEnd), slack, from});
      if (to - size != from)
        places.push_back({apart(aboveEnd), slack, to - size});
    };
    // The fixed buffers that begin later in its life are in its way too
    // (they are the same in every state, so not part of it).
    std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> obstacles = state;
    for (uint32_t j : ahead)
      obstacles.push_back({fixed[j], sizes[j], ends[j]});
    if (!ahead.empty())
      llvm::sort(obstacles);
    // The top reached so far, and when the buffer that reaches it dies.
    uint64_t reach = 0;
    uint32_t reachEnd = kNever;
    for (auto [offset, bytes, end] : obstacles) {
      if (offset > reach)
        gap(reach, std::min(offset, capacity), reachEnd,
            offset < capacity ? end : kNever);
      if (offset + bytes > reach) {
        reach = offset + bytes;
        reachEnd = end;
      }
    }
    if (reach < capacity)
      gap(reach, capacity, reachEnd, kNever);
    llvm::sort(places);
    for (auto [apartSteps, slack, offset] : places) {
      offsets[k] = offset;
      Outcome outcome = search(k + 1);
      if (outcome != Outcome::Exhausted)
        return outcome;
    }
    // At most kRemembered states (a few tens of MB): beyond them the search
    // goes on without remembering more.
    if (failed.size() < kRemembered)
      failed.insert(key);
    return Outcome::Exhausted;
  }

  static constexpr size_t kRemembered = size_t(1) << 22;

  static uint64_t mix(uint64_t value) { return detail::SplitMix(value).next(); }

  uint64_t capacity = 0;
  uint64_t limit = 0;
  std::vector<uint64_t> sizes;
  std::vector<uint32_t> begins, ends;
  std::vector<uint32_t> aliveStart, aliveBefore;
  /// The offset of each fixed buffer (kFree for the others).
  std::vector<uint64_t> fixed;
  std::vector<uint32_t> aheadStart, fixedAhead;
  /// The states shown to lead nowhere (as hashes: a collision can only
  /// make the search miss a placement, never give a wrong one).
  llvm::DenseSet<uint64_t> failed;
};

} // namespace

struct detail::SweepSearcher::Impl {
  Impl(llvm::ArrayRef<Rectangle> rectangles, llvm::ArrayRef<uint64_t> fixed)
      : search(rectangles, fixed) {}
  SweepSearch search;
};

detail::SweepSearcher::SweepSearcher(llvm::ArrayRef<Rectangle> rectangles,
                                     llvm::ArrayRef<uint64_t> fixed)
    : count(rectangles.size()) {
  if (!fixed.empty() && fixed.size() != rectangles.size())
    return;
  if (!rectangles.empty() && searchable(rectangles))
    impl = std::make_unique<Impl>(rectangles, fixed);
}

detail::SweepSearcher::~SweepSearcher() = default;

detail::SearchResult detail::SweepSearcher::solve(uint64_t capacity,
                                                  uint64_t workLimit) {
  SearchResult result;
  if (!count) {
    result.found = true;
    return result;
  }
  if (!impl)
    return result;
  SweepSearch &search = impl->search;
  Outcome outcome = search.run(capacity, workLimit);
  result.nodes = search.work;
  if (outcome != Outcome::Found)
    return result;
  result.found = true;
  result.offsets.assign(count, 0);
  for (auto [position, i] : llvm::enumerate(search.order))
    result.offsets[i] = search.offsets[position];
  return result;
}
