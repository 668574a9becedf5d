//===- PlacementCanonical.cpp - Offsets by a search over canonical order --===//
//
// The placer's canonical search (Placement.cpp): a complete depth-first
// search for offsets under a capacity, over placements in canonical order,
// after MiniMalloc (Moffitt, "MiniMalloc: A Lightweight Memory Allocator for
// Hardware-Accelerated Machine Learning", ASPLOS 2024):
//
//  - Buffers are placed in non-decreasing order of offset (ties by a static
//    preorder), each at the lowest offset the buffers placed before it
//    leave: the top of the highest one it overlaps in time. Every
//    placement can be pushed down into one of this form, so the search is
//    complete.
//  - At each node, the buffers not yet placed are tried by their lowest
//    offset, then by the preorder; a buffer whose lowest offset is at or
//    above the top of another one's lowest placement is skipped (that one
//    could go first into the gap).
//  - Time is compressed first: a step begins only where a buffer is freed
//    (the allocations between two frees only add bytes, so the last point
//    before a free holds all that any point since the last free does).
//    The buffers overlap as before, and the bounds look at fewer steps.
//  - Pruning: at every step a buffer not yet placed is alive, the bytes of
//    those buffers must fit between the capacity and the higher of the
//    step's floor (the top of what is placed there) and the last offset
//    placed (offsets never decrease).
//
// On the offloading plans that fill a device with buffers of a few GB each,
// this reaches within a percent of the live peak where greedy orders, the
// constraint program and the searches over orders stay 5-10% above it.
// Work is counted in nodes; the result depends on nothing else.
//
//===----------------------------------------------------------------------===//

#include "PlacementInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

using namespace lms;

namespace {

enum class Outcome { Found, Exhausted, Aborted };

class CanonicalSearch {
public:
  explicit CanonicalSearch(llvm::ArrayRef<detail::Rectangle> rectangles) {
    size_t n = rectangles.size();
    for (const detail::Rectangle &r : rectangles) {
      sizes.push_back(r.bytes);
      begins.push_back(r.begin);
      ends.push_back(r.end);
      lengths.push_back(r.end - r.begin);
      steps = std::max(steps, r.end);
    }
    // Time compressed (see the file comment): a step begins only where a
    // buffer ends.
    {
      std::vector<uint8_t> isEnd(steps + 1, 0);
      for (uint32_t e : ends)
        isEnd[e] = 1;
      std::vector<uint32_t> map(steps + 1, 0);
      uint32_t current = 0;
      for (uint32_t t = 1; t <= steps; ++t) {
        if (isEnd[t])
          ++current;
        map[t] = current;
      }
      for (size_t k = 0; k < n; ++k) {
        begins[k] = map[begins[k]];
        ends[k] = map[ends[k]];
      }
      steps = current;
    }
    // Overlaps by a sweep in order of begin (compressed rows).
    std::vector<uint32_t> byBegin(n);
    std::iota(byBegin.begin(), byBegin.end(), 0);
    llvm::stable_sort(
        byBegin, [&](uint32_t a, uint32_t b) { return begins[a] < begins[b]; });
    std::vector<std::vector<uint32_t>> lists(n);
    for (size_t x = 0; x < n; ++x)
      for (size_t y = x + 1; y < n && begins[byBegin[y]] < ends[byBegin[x]];
           ++y) {
        lists[byBegin[x]].push_back(byBegin[y]);
        lists[byBegin[y]].push_back(byBegin[x]);
      }
    overlapStart.push_back(0);
    for (auto &list : lists) {
      llvm::append_range(overlaps, list);
      overlapStart.push_back(static_cast<uint32_t>(overlaps.size()));
    }
    // The bytes alive at each step.
    std::vector<int64_t> delta(steps + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      delta[begins[k]] += static_cast<int64_t>(sizes[k]);
      delta[ends[k]] -= static_cast<int64_t>(sizes[k]);
    }
    initialTotals.resize(steps);
    int64_t running = 0;
    for (uint32_t t = 0; t < steps; ++t)
      initialTotals[t] = static_cast<uint64_t>(running += delta[t]);
    most.resize(n);
    for (size_t k = 0; k < n; ++k)
      most[k] = *std::max_element(initialTotals.begin() + begins[k],
                                  initialTotals.begin() + ends[k]);
  }

  /// Searches under `capacity` with the buffers preordered by `keys` (each 'T':
  /// the most bytes alive at a step of the buffer's life, 'A': bytes x steps,
  /// 'W': steps, 'a' and 'w' the same with steps counted in compressed time;
  /// larger first, then by index) within `nodeLimit` nodes.
  Outcome run(llvm::StringRef keys, uint64_t capacity, uint64_t nodeLimit) {
    this->capacity = capacity;
    size_t n = sizes.size();
    std::vector<uint32_t> preorder(n);
    std::iota(preorder.begin(), preorder.end(), 0);
    auto key = [&](uint32_t k, char c) -> uint64_t {
      uint64_t length = c == 'a' || c == 'w' ? ends[k] - begins[k] : lengths[k];
      switch (c) {
      case 'T':
        return most[k];
      case 'A':
      case 'a':
        return sizes[k] > std::numeric_limits<uint64_t>::max() / length
                   ? std::numeric_limits<uint64_t>::max()
                   : sizes[k] * length;
      default:
        return length;
      }
    };
    llvm::stable_sort(preorder, [&](uint32_t a, uint32_t b) {
      for (char c : keys)
        if (key(a, c) != key(b, c))
          return key(a, c) > key(b, c);
      return a < b;
    });
    rank.assign(n, 0);
    for (auto [r, k] : llvm::enumerate(preorder))
      rank[k] = static_cast<uint32_t>(r);

    offsets.assign(n, 0);
    lowest.assign(n, 0);
    placed.assign(n, 0);
    floors.assign(steps, 0);
    totals = initialTotals;
    nodes = 0;
    limit = nodeLimit;
    return search(0, 0, preorder);
  }

  /// The offsets of the last run that found a placement.
  std::vector<uint64_t> offsets;
  /// Nodes of the last run.
  uint64_t nodes = 0;

private:
  Outcome search(uint64_t minOffset, uint32_t minRank,
                 llvm::ArrayRef<uint32_t> parentOrder) {
    if (++nodes > limit)
      return Outcome::Aborted;
    // The buffers not yet placed, by lowest offset, then preorder (the
    // parent's order is nearly sorted already).
    std::vector<uint32_t> order;
    order.reserve(parentOrder.size());
    for (uint32_t k : parentOrder)
      if (!placed[k])
        order.push_back(k);
    if (order.empty())
      return Outcome::Found;
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      return std::make_pair(lowest[a], rank[a]) <
             std::make_pair(lowest[b], rank[b]);
    });
    if (!feasibleAbove(minOffset, order))
      return Outcome::Exhausted;
    uint64_t minHeight = std::numeric_limits<uint64_t>::max();
    for (uint32_t k : order)
      minHeight = std::min(minHeight, lowest[k] + sizes[k]);

    std::vector<std::pair<uint32_t, uint64_t>> raised;
    std::vector<uint64_t> savedFloors;
    for (uint32_t k : order) {
      uint64_t offset = lowest[k];
      // Dominated: another buffer fits below this one's offset (the order
      // is by offset, so every later one is dominated too).
      if (offset >= minHeight)
        break;
      if (offset < minOffset || (offset == minOffset && rank[k] < minRank))
        continue;
      uint64_t top = offset + sizes[k];
      if (top > capacity)
        continue;
      // Place k.
      placed[k] = 1;
      offsets[k] = offset;
      raised.clear();
      for (uint32_t x = overlapStart[k]; x < overlapStart[k + 1]; ++x) {
        uint32_t j = overlaps[x];
        if (!placed[j] && lowest[j] < top) {
          raised.push_back({j, lowest[j]});
          lowest[j] = top;
        }
      }
      savedFloors.assign(floors.begin() + begins[k], floors.begin() + ends[k]);
      for (uint32_t t = begins[k]; t < ends[k]; ++t) {
        floors[t] = top;
        totals[t] -= sizes[k];
      }
      Outcome outcome = Outcome::Exhausted;
      if (feasible(offset))
        outcome = search(offset, rank[k], order);
      if (outcome == Outcome::Found)
        return outcome;
      for (uint32_t t = begins[k]; t < ends[k]; ++t) {
        floors[t] = savedFloors[t - begins[k]];
        totals[t] += sizes[k];
      }
      for (auto it = raised.rbegin(); it != raised.rend(); ++it)
        lowest[it->first] = it->second;
      placed[k] = 0;
      if (outcome == Outcome::Aborted)
        return outcome;
    }
    return Outcome::Exhausted;
  }

  /// Whether the bytes not yet placed can still fit at every step above its
  /// floor and the last offset placed.
  bool feasible(uint64_t offset) const {
    for (uint32_t t = 0; t < steps; ++t)
      if (totals[t] && std::max(offset, floors[t]) + totals[t] > capacity)
        return false;
    return true;
  }

  /// The same with each step's floor raised to the lowest offset of the
  /// buffers not yet placed that are alive there (nothing can go below it):
  /// `order` is those buffers by increasing lowest offset, and each step
  /// takes the first one's that covers it (a union-find over steps skips
  /// the steps already taken).
  bool feasibleAbove(uint64_t offset, llvm::ArrayRef<uint32_t> order) {
    next.resize(steps + 1);
    std::iota(next.begin(), next.end(), 0);
    raisedFloors = floors;
    auto find = [&](uint32_t t) {
      uint32_t root = t;
      while (next[root] != root)
        root = next[root];
      while (next[t] != root) {
        uint32_t up = next[t];
        next[t] = root;
        t = up;
      }
      return root;
    };
    for (uint32_t k : order)
      for (uint32_t t = find(begins[k]); t < ends[k]; t = find(t + 1)) {
        raisedFloors[t] = std::max(raisedFloors[t], lowest[k]);
        next[t] = t + 1;
      }
    for (uint32_t t = 0; t < steps; ++t)
      if (totals[t] && std::max(offset, raisedFloors[t]) + totals[t] > capacity)
        return false;
    return true;
  }

  uint64_t capacity = 0;
  uint32_t steps = 0;
  std::vector<uint32_t> next;
  std::vector<uint64_t> raisedFloors;
  std::vector<uint64_t> sizes;
  std::vector<uint32_t> begins, ends;
  /// Each buffer's steps before the time was compressed.
  std::vector<uint32_t> lengths;
  std::vector<uint32_t> overlapStart, overlaps;
  std::vector<uint64_t> initialTotals;
  /// The most bytes alive at a step of each buffer's life.
  std::vector<uint64_t> most;
  // Search state.
  std::vector<uint32_t> rank;
  std::vector<uint64_t> lowest, floors, totals;
  std::vector<uint8_t> placed;
  uint64_t limit = 0;
};

} // namespace

struct detail::CanonicalSearcher::Impl {
  explicit Impl(llvm::ArrayRef<Rectangle> rectangles) : search(rectangles) {}
  CanonicalSearch search;
};

detail::CanonicalSearcher::CanonicalSearcher(
    llvm::ArrayRef<Rectangle> rectangles)
    : count(rectangles.size()) {
  // With any rectangle that takes no space, nothing is searched.
  if (!rectangles.empty() && searchable(rectangles))
    impl = std::make_unique<Impl>(rectangles);
}

detail::CanonicalSearcher::~CanonicalSearcher() = default;

bool detail::searchable(llvm::ArrayRef<Rectangle> rectangles) {
  return llvm::all_of(rectangles, [](const Rectangle &r) {
    return r.bytes != 0 && r.end > r.begin;
  });
}

detail::SearchResult detail::CanonicalSearcher::solve(uint64_t capacity,
                                                      uint64_t nodeLimit) {
  SearchResult result;
  if (!count) {
    result.found = true;
    return result;
  }
  if (!impl)
    return result;
  CanonicalSearch &search = impl->search;
  // MiniMalloc's three preorders in turn, with node limits that double from
  // the number of buffers: one of them often finds a placement quickly
  // where the others wander; then the same three with the lengths counted
  // in compressed time (the steps between frees, not between allocations),
  // which reach other placements first (the DTR plan of segnet at 80%: at
  // its live peak after 264 nodes of these three, 54,113 of the first
  // three). A run that ends
  // without a placement (not stopped by its limit) proves there is none:
  // the others are not tried.
  uint64_t perRun = count;
  bool exhausted = false;
  while (!result.found && !exhausted && result.nodes < nodeLimit) {
    perRun *= 2;
    for (llvm::StringRef keys : {"TAW", "WAT", "TWA", "Taw", "waT", "Twa"}) {
      uint64_t left = nodeLimit - std::min(nodeLimit, result.nodes);
      if (!left)
        break;
      Outcome outcome = search.run(keys, capacity, std::min(perRun, left));
      result.nodes += search.nodes;
      if (outcome == Outcome::Found) {
        result.found = true;
        result.offsets = std::move(search.offsets);
        break;
      }
      if (outcome == Outcome::Exhausted) {
        exhausted = true;
        break;
      }
    }
  }
  return result;
}
