//===- Placement.cpp - Buffers at offsets in one arena --------------------===//

#include "LMS/Graph/Placement.h"

#include "PlacementInternal.h"
#include "SplitMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

using namespace lms;

static llvm::Error placementError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::vector<BufferLife>> lms::bufferLives(const Graph &graph,
                                                         const Plan &plan) {
  // The evaluator is the one definition of a valid plan.
  EvalOptions eval;
  eval.recordSteps = false;
  if (llvm::Expected<MemoryProfile> profile = evaluatePlan(graph, plan, eval);
      !profile)
    return profile.takeError();
  if (plan.size() >= std::numeric_limits<uint32_t>::max())
    return placementError("plan too long to place");

  std::vector<BufferLife> lives;
  // The open life of each resident device tensor.
  std::vector<int64_t> open(graph.numTensors(), -1);
  auto allocate = [&](TensorIndex t, OpIndex op, uint32_t step) {
    open[t] = static_cast<int64_t>(lives.size());
    lives.push_back({t, op, graph.tensor(t).bytes, step, step});
  };
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (graph.tensor(t).producer == kEntry &&
        graph.tensor(t).space == MemorySpace::Device)
      allocate(t, -1, 0);

  for (auto [index, step] : llvm::enumerate(plan)) {
    uint32_t s = static_cast<uint32_t>(index);
    switch (step.kind) {
    case Step::Compute: {
      const Op &op = graph.op(step.index);
      for (TensorIndex t : op.outputs)
        if (graph.tensor(t).space == MemorySpace::Device && open[t] < 0)
          allocate(t, step.index, s);
      if (op.transientBytes > 0)
        lives.push_back({-1, step.index,
                         static_cast<uint64_t>(op.transientBytes), s, s + 1});
      break;
    }
    case Step::SwapIn:
      allocate(step.index, -1, s);
      break;
    case Step::Free:
      lives[open[step.index]].end = s;
      open[step.index] = -1;
      break;
    case Step::SwapOut:
    case Step::FreeHost:
      break;
    }
  }
  for (int64_t life : open)
    if (life >= 0)
      lives[life].end = static_cast<uint32_t>(plan.size());
  return lives;
}

namespace {

/// A buffer that takes space: nonzero bytes over a nonempty lifetime.
bool occupies(const BufferLife &life) {
  return life.bytes > 0 && life.begin < life.end;
}

/// The static overlap structure: a centered interval tree over all lifetimes,
/// asked for the buffers whose lifetime intersects a given one. Every
/// lifetime is known before placement starts, so the tree is built once and
/// the placer filters what it has placed.
class LifetimeTree {
public:
  explicit LifetimeTree(llvm::ArrayRef<BufferLife> lives) : lives(lives) {
    std::vector<uint32_t> all;
    for (auto [i, life] : llvm::enumerate(lives))
      if (occupies(life))
        all.push_back(static_cast<uint32_t>(i));
    root = build(all);
  }

  /// Calls `visit(i)` for every buffer whose lifetime intersects [begin, end).
  template <typename Visit>
  void forEachOverlap(uint32_t begin, uint32_t end, Visit &&visit) const {
    int32_t node = root;
    // Iterative over a small explicit stack: the tree is balanced.
    llvm::SmallVector<int32_t, 64> stack;
    if (node >= 0)
      stack.push_back(node);
    while (!stack.empty()) {
      const Node &n = nodes[stack.pop_back_val()];
      if (begin <= n.center && n.center < end) {
        for (uint32_t i : n.byBegin)
          visit(i);
      } else if (n.center < begin) {
        // Intervals here contain center < begin; they reach begin when
        // their end is past it. byEnd is in decreasing end order.
        for (uint32_t i : n.byEnd) {
          if (lives[i].end <= begin)
            break;
          visit(i);
        }
      } else {
        for (uint32_t i : n.byBegin) {
          if (lives[i].begin >= end)
            break;
          visit(i);
        }
      }
      if (n.left >= 0 && begin < n.center)
        stack.push_back(n.left);
      if (n.right >= 0 && end > n.center + 1)
        stack.push_back(n.right);
    }
  }

private:
  struct Node {
    uint32_t center = 0;
    /// Lifetimes containing `center` (begin <= center < end).
    std::vector<uint32_t> byBegin, byEnd;
    /// Lifetimes ending at or before center, and beginning after it.
    int32_t left = -1, right = -1;
  };

  int32_t build(std::vector<uint32_t> &items) {
    if (items.empty())
      return -1;
    // The median of the begin points splits the set.
    std::vector<uint32_t> points;
    points.reserve(items.size());
    for (uint32_t i : items)
      points.push_back(lives[i].begin);
    auto middle = points.begin() + points.size() / 2;
    std::nth_element(points.begin(), middle, points.end());
    uint32_t center = *middle;
    std::vector<uint32_t> left, right, here;
    for (uint32_t i : items) {
      if (lives[i].end <= center)
        left.push_back(i);
      else if (lives[i].begin > center)
        right.push_back(i);
      else
        here.push_back(i);
    }
    items.clear();
    items.shrink_to_fit();
    int32_t index = static_cast<int32_t>(nodes.size());
    nodes.emplace_back();
    Node node;
    node.center = center;
    node.byBegin = here;
    llvm::sort(node.byBegin, [&](uint32_t a, uint32_t b) {
      return std::tie(lives[a].begin, a) < std::tie(lives[b].begin, b);
    });
    node.byEnd = std::move(here);
    llvm::sort(node.byEnd, [&](uint32_t a, uint32_t b) {
      return std::make_tuple(lives[b].end, a) <
             std::make_tuple(lives[a].end, b);
    });
    node.left = build(left);
    node.right = build(right);
    nodes[index] = std::move(node);
    return index;
  }

  llvm::ArrayRef<BufferLife> lives;
  std::vector<Node> nodes;
  int32_t root = -1;
};

/// Greedy best-fit placement in a given order.
class GreedyPlacer {
public:
  GreedyPlacer(llvm::ArrayRef<BufferLife> lives, uint64_t alignment)
      : lives(lives), tree(lives), alignment(alignment) {
    sizes.reserve(lives.size());
    for (const BufferLife &life : lives)
      sizes.push_back(alignedSize(life.bytes));
  }

  uint64_t alignedSize(uint64_t bytes) const {
    return alignment > 1 ? llvm::alignTo(bytes, alignment) : bytes;
  }
  uint64_t size(uint32_t i) const { return sizes[i]; }

  /// Places every occupying buffer of `order` (others get offset 0) and
  /// returns the arena size. With firstFit, each takes the lowest gap that
  /// holds it instead of the smallest.
  uint64_t run(llvm::ArrayRef<uint32_t> order, std::vector<uint64_t> &offsets,
               bool firstFit) {
    offsets.assign(lives.size(), 0);
    placed.assign(lives.size(), 0);
    uint64_t arena = 0;
    for (uint32_t i : order)
      if (occupies(lives[i]))
        arena = std::max(arena, placeOne(i, offsets, firstFit) + sizes[i]);
    return arena;
  }

  /// As run(), for an order whose first `keep` buffers are those of an
  /// order that `prefix` holds a run of, with the same fit: they keep their
  /// offsets (each was placed only among the buffers before it, so a run
  /// gives them the same) and only the rest are placed again.
  uint64_t runFrom(llvm::ArrayRef<uint32_t> order, size_t keep,
                   const std::vector<uint64_t> &prefix,
                   std::vector<uint64_t> &offsets, bool firstFit) {
    offsets = prefix;
    placed.assign(lives.size(), 0);
    uint64_t arena = 0;
    for (auto [k, i] : llvm::enumerate(order)) {
      if (!occupies(lives[i]))
        continue;
      if (k >= keep)
        placeOne(i, offsets, firstFit);
      else
        placed[i] = 1;
      arena = std::max(arena, offsets[i] + sizes[i]);
    }
    return arena;
  }

  /// Ruin and recreate: takes `ruined` out of a complete placement and
  /// places them again in that order around the others. Returns the new
  /// arena; the caller restores the offsets when it is worse.
  void replace(llvm::ArrayRef<uint32_t> ruined, std::vector<uint64_t> &offsets,
               bool firstFit) {
    for (uint32_t i : ruined)
      placed[i] = 0;
    for (uint32_t i : ruined)
      placeOne(i, offsets, firstFit);
  }

  void markAllPlaced() { placed.assign(lives.size(), 1); }

  /// Overlaps enumerated so far: the unit of the work limit.
  uint64_t visits = 0;

  /// Calls visit(j) for each buffer alive at some step of [begin, end).
  template <typename Visit>
  void forEachOverlap(uint32_t begin, uint32_t end, Visit &&visit) const {
    tree.forEachOverlap(begin, end, visit);
  }

private:
  /// Places buffer i among the placed buffers it overlaps in time: the
  /// smallest gap that holds it (or the lowest, with firstFit), else on top
  /// of them all. Returns its offset.
  uint64_t placeOne(uint32_t i, std::vector<uint64_t> &offsets, bool firstFit) {
    const BufferLife &life = lives[i];
    taken.clear();
    tree.forEachOverlap(life.begin, life.end, [&](uint32_t j) {
      ++visits;
      if (placed[j])
        taken.push_back({offsets[j], offsets[j] + sizes[j]});
    });
    llvm::sort(taken);
    uint64_t need = sizes[i];
    uint64_t cursor = 0;
    uint64_t bestOffset = 0, bestGap = std::numeric_limits<uint64_t>::max();
    bool found = false;
    for (auto [begin, end] : taken) {
      if (begin > cursor) {
        uint64_t gap = begin - cursor;
        if (gap >= need && gap < bestGap && !(firstFit && found)) {
          bestGap = gap;
          bestOffset = cursor;
          found = true;
        }
      }
      cursor = std::max(cursor, end);
    }
    uint64_t offset = found ? bestOffset : cursor;
    offsets[i] = offset;
    placed[i] = 1;
    return offset;
  }

  std::vector<std::pair<uint64_t, uint64_t>> taken;

private:
  llvm::ArrayRef<BufferLife> lives;
  LifetimeTree tree;
  uint64_t alignment;
  std::vector<uint64_t> sizes;
  std::vector<uint8_t> placed;
};

/// Aligned bytes alive at every step (steps up to the last end).
std::vector<uint64_t> liveBytesPerStep(llvm::ArrayRef<BufferLife> buffers,
                                       uint64_t alignment) {
  uint32_t steps = 0;
  for (const BufferLife &life : buffers)
    if (occupies(life))
      steps = std::max(steps, life.end);
  std::vector<int64_t> delta(steps + 1, 0);
  for (const BufferLife &life : buffers) {
    if (!occupies(life))
      continue;
    int64_t bytes = static_cast<int64_t>(
        alignment > 1 ? llvm::alignTo(life.bytes, alignment) : life.bytes);
    delta[life.begin] += bytes;
    delta[life.end] -= bytes;
  }
  std::vector<uint64_t> bytes(steps, 0);
  int64_t live = 0;
  for (uint32_t s = 0; s < steps; ++s) {
    live += delta[s];
    bytes[s] = static_cast<uint64_t>(live);
  }
  return bytes;
}

/// Range maximum with its first position, by a sparse table.
class SparseMax {
public:
  explicit SparseMax(const std::vector<uint64_t> &values) {
    size_t n = values.size();
    table.emplace_back(n);
    for (size_t i = 0; i < n; ++i)
      table[0][i] = {values[i], static_cast<uint32_t>(i)};
    for (size_t width = 1; 2 * width <= n; width *= 2) {
      const auto &previous = table.back();
      std::vector<std::pair<uint64_t, uint32_t>> level(n - 2 * width + 1);
      for (size_t i = 0; i < level.size(); ++i)
        level[i] = better(previous[i], previous[i + width]);
      table.push_back(std::move(level));
    }
  }
  /// The largest value over [begin, end) and its first position.
  std::pair<uint64_t, uint32_t> query(uint32_t begin, uint32_t end) const {
    unsigned k = llvm::Log2_32(end - begin);
    return better(table[k][begin], table[k][end - (1u << k)]);
  }

private:
  static std::pair<uint64_t, uint32_t> better(std::pair<uint64_t, uint32_t> a,
                                              std::pair<uint64_t, uint32_t> b) {
    return a.first > b.first || (a.first == b.first && a.second <= b.second)
               ? a
               : b;
  }
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> table;
};

/// What an allocator that cannot see the future does: in schedule order,
/// frees first at each step, each new buffer in the smallest hole that holds
/// it, else at the top of the used region. O(n log n); exact for buffers
/// freed in the reverse order of their allocation.
uint64_t allocateOnline(llvm::ArrayRef<BufferLife> lives, uint64_t alignment,
                        std::vector<uint64_t> &offsets) {
  offsets.assign(lives.size(), 0);
  auto sizeOf = [&](uint32_t i) {
    return alignment > 1 ? llvm::alignTo(lives[i].bytes, alignment)
                         : lives[i].bytes;
  };
  // (step, 0 = free / 1 = allocate, index)
  std::vector<std::tuple<uint32_t, int, uint32_t>> events;
  for (auto [i, life] : llvm::enumerate(lives)) {
    if (!occupies(life))
      continue;
    events.push_back({life.begin, 1, static_cast<uint32_t>(i)});
    events.push_back({life.end, 0, static_cast<uint32_t>(i)});
  }
  llvm::sort(events);
  std::map<uint64_t, uint64_t> holes;             // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> bySize; // (size, offset)
  uint64_t used = 0, arena = 0;
  auto removeHole = [&](std::map<uint64_t, uint64_t>::iterator it) {
    bySize.erase({it->second, it->first});
    return holes.erase(it);
  };
  for (auto [step, allocate, i] : events) {
    uint64_t size = sizeOf(i);
    if (allocate) {
      auto fit = bySize.lower_bound({size, 0});
      if (fit != bySize.end()) {
        auto [holeSize, holeOffset] = *fit;
        removeHole(holes.find(holeOffset));
        offsets[i] = holeOffset;
        if (holeSize > size) {
          holes[holeOffset + size] = holeSize - size;
          bySize.insert({holeSize - size, holeOffset + size});
        }
      } else {
        // A hole that ends at the top grows into it.
        uint64_t offset = used;
        if (!holes.empty()) {
          auto last = std::prev(holes.end());
          if (last->first + last->second == used) {
            offset = last->first;
            removeHole(last);
          }
        }
        offsets[i] = offset;
        used = offset + size;
      }
      arena = std::max(arena, offsets[i] + size);
      continue;
    }
    // Free: merge with the neighbouring holes; a hole at the top lowers it.
    uint64_t begin = offsets[i], end = offsets[i] + size;
    auto next = holes.lower_bound(begin);
    if (next != holes.end() && next->first == end) {
      end += next->second;
      next = removeHole(next);
    }
    if (next != holes.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == begin) {
        begin = previous->first;
        removeHole(previous);
      }
    }
    if (end == used) {
      used = begin;
    } else {
      holes[begin] = end - begin;
      bySize.insert({end - begin, begin});
    }
  }
  return arena;
}

/// The number of (ordered) pairs of buffers alive at a common step, each
/// buffer with itself included: what one offline placement enumerates.
uint64_t overlapCount(llvm::ArrayRef<BufferLife> lives) {
  std::vector<uint32_t> begins, ends;
  for (const BufferLife &life : lives)
    if (occupies(life)) {
      begins.push_back(life.begin);
      ends.push_back(life.end);
    }
  llvm::sort(begins);
  llvm::sort(ends);
  uint64_t count = 0;
  for (const BufferLife &life : lives) {
    if (!occupies(life))
      continue;
    // Buffers that begin before this one ends, less those that end before
    // (or when) it begins.
    uint64_t beganBefore =
        std::lower_bound(begins.begin(), begins.end(), life.end) -
        begins.begin();
    uint64_t endedBefore =
        std::upper_bound(ends.begin(), ends.end(), life.begin) - ends.begin();
    count += beganBefore - endedBefore;
  }
  return count;
}

} // namespace

uint64_t lms::livePeakBytes(llvm::ArrayRef<BufferLife> buffers,
                            uint64_t alignment) {
  // +bytes at begin, -bytes at end; ends first at the same step.
  std::vector<std::pair<uint32_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const BufferLife &life : buffers) {
    if (!occupies(life))
      continue;
    int64_t bytes = static_cast<int64_t>(
        alignment > 1 ? llvm::alignTo(life.bytes, alignment) : life.bytes);
    events.push_back({life.begin, bytes});
    events.push_back({life.end, -bytes});
  }
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

/// Places buffers given in allocation order with times 0..n-1 (see
/// placeBuffers).
static llvm::Expected<Placement>
placeNormalized(llvm::ArrayRef<BufferLife> buffers,
                const PlacementOptions &options);

namespace {

/// The placer's constraint step (where the build has the constraint solver):
/// the largest buffers (at least a share of the live peak, at most
/// kConstraintBuffers of them) placed exactly by the constraint program
/// under a capacity, the others around them by best fit in decreasing size,
/// for capacities from 1.2 times the live peak down to the live peak while
/// the program finds a placement within its failure limit. Each set is
/// solved twice: as it is, and with room kept above each of its buffers for
/// the most bytes of the others alive during its life (without that room a
/// placement of the largest buffers at the live peak can leave the others
/// no hole: GPT-2's offloading plan; with it, the program finds less for
/// plans whose long-lived buffers must share the top: ResNet-50's). Returns
/// the lowest placement of each way, where it is below `greedyBest`. Work:
/// at most kConstraintFails failures per capacity (the best-fit fills are
/// not charged to the placer's work limit: the improvement steps start
/// again from the count after the greedy orders).
constexpr size_t kConstraintBuffers = 400;
constexpr uint64_t kConstraintFails = 1000;

struct ConstraintStart {
  uint64_t arena = 0;
  std::vector<uint64_t> offsets;
};

std::vector<ConstraintStart>
constraintPlacements(llvm::ArrayRef<BufferLife> buffers, GreedyPlacer &placer,
                     uint64_t alignment, uint64_t livePeak,
                     uint64_t greedyBest) {
  // (Capacities up to 1.2 times the live peak must not wrap.)
  if (!detail::haveOffsetSolver() || livePeak > (uint64_t(1) << 56))
    return {};
  std::vector<uint32_t> bySize;
  uint32_t steps = 0;
  for (auto [i, life] : llvm::enumerate(buffers))
    if (occupies(life)) {
      bySize.push_back(static_cast<uint32_t>(i));
      steps = std::max(steps, life.end);
    }
  auto length = [&](uint32_t i) { return buffers[i].end - buffers[i].begin; };
  llvm::stable_sort(bySize, [&](uint32_t a, uint32_t b) {
    return std::make_tuple(placer.size(b), length(b), a) <
           std::make_tuple(placer.size(a), length(a), b);
  });
  // The lowest placement with and without the room kept.
  ConstraintStart starts[2] = {{greedyBest, {}}, {greedyBest, {}}};
  std::vector<uint64_t> offsets;
  size_t lastChosen = 0;
  // Two shares: which buffers the rest fits best around differs by graph.
  for (uint64_t share : {50, 200}) {
    size_t chosen = 0;
    while (chosen < bySize.size() && chosen < kConstraintBuffers &&
           placer.size(bySize[chosen]) >= livePeak / share)
      ++chosen;
    if (chosen < 2 || chosen == lastChosen)
      continue;
    lastChosen = chosen;
    llvm::ArrayRef<uint32_t> rest = llvm::ArrayRef(bySize).drop_front(chosen);
    // The bytes of the rest alive at each step (at most the live peak).
    std::vector<uint64_t> restLive(steps + 1, 0);
    for (uint32_t i : rest) {
      restLive[buffers[i].begin] += placer.size(i);
      restLive[buffers[i].end] -= placer.size(i);
    }
    for (uint32_t t = 1; t <= steps; ++t)
      restLive[t] += restLive[t - 1];
    for (bool keepRoom : {false, true}) {
      uint64_t &best = starts[keepRoom].arena;
      std::vector<detail::Rectangle> rectangles;
      for (uint32_t i : llvm::ArrayRef(bySize).take_front(chosen)) {
        uint64_t reserve = 0;
        if (keepRoom)
          reserve = *std::max_element(restLive.begin() + buffers[i].begin,
                                      restLive.begin() + buffers[i].end);
        rectangles.push_back(
            {placer.size(i), buffers[i].begin, buffers[i].end, reserve});
      }
      uint64_t lastCapacity = 0;
      for (uint64_t percent : {120, 115, 110, 107, 105, 103, 102, 101, 100}) {
        // (Below the best placement so far: capacities above it that all
        // come down to it are solved once.)
        uint64_t capacity = std::min(livePeak * percent / 100, best - 1);
        if (capacity < livePeak)
          break;
        if (capacity == lastCapacity)
          continue;
        lastCapacity = capacity;
        std::optional<std::vector<uint64_t>> solved = detail::solveOffsets(
            rectangles, capacity, alignment, kConstraintFails);
        if (!solved)
          break;
        offsets.assign(buffers.size(), 0);
        for (size_t k = 0; k < chosen; ++k)
          offsets[bySize[k]] = (*solved)[k];
        placer.markAllPlaced();
        placer.replace(rest, offsets, /*firstFit=*/false);
        uint64_t arena = 0;
        for (uint32_t i : bySize)
          arena = std::max(arena, offsets[i] + placer.size(i));
        if (arena < best) {
          best = arena;
          starts[keepRoom].offsets = offsets;
        }
      }
    }
  }
  std::vector<ConstraintStart> found;
  for (ConstraintStart &start : starts)
    if (start.arena < greedyBest)
      found.push_back(std::move(start));
  return found;
}

/// The canonical search step (PlacementCanonical.cpp), for at most
/// kCanonicalBuffers buffers with at most kCanonicalPairs overlapping pairs
/// (the search keeps their lists): first under the live peak itself, then
/// by bisection between the highest capacity it found nothing under and
/// the best placement so far, within kCanonicalNodesPerBuffer nodes per
/// buffer in all, but at least kCanonicalMinWork nodes times buffers (small
/// programs: 64 nodes a buffer gave the 87 buffers of a DTR plan of segnet
/// 5,568 nodes, where a placement at the live peak takes 54,113 in one
/// preorder), and at most kCanonicalWork nodes times buffers (a node costs
/// about a microsecond per 100 buffers: a second and a half for GPT-2's
/// offloading plan of 1,438 buffers); each probe gets its share of what is
/// left. A placement it finds replaces the best (it is lower).
constexpr size_t kCanonicalBuffers = 4000;
constexpr uint64_t kCanonicalPairs = 2000000;
constexpr uint64_t kCanonicalNodesPerBuffer = 64;
constexpr uint64_t kCanonicalMinWork = uint64_t(1) << 26;
constexpr uint64_t kCanonicalWork = 150000000;
constexpr unsigned kCanonicalProbes = 8;

/// The buffers that take space (`items`, their indices) as the searches
/// of steps 6 and 7 see them; false when there are none or more than those
/// searches take.
bool searchRectangles(llvm::ArrayRef<BufferLife> buffers,
                      const GreedyPlacer &placer, uint64_t pairs,
                      std::vector<uint32_t> &items,
                      std::vector<detail::Rectangle> &rectangles) {
  for (auto [i, life] : llvm::enumerate(buffers))
    if (occupies(life)) {
      items.push_back(static_cast<uint32_t>(i));
      rectangles.push_back({placer.size(i), life.begin, life.end, 0});
    }
  return !items.empty() && items.size() <= kCanonicalBuffers &&
         pairs <= kCanonicalPairs;
}

void canonicalStep(llvm::ArrayRef<BufferLife> buffers,
                   const GreedyPlacer &placer, uint64_t alignment,
                   uint64_t pairs, Placement &result, uint64_t &best) {
  std::vector<uint32_t> items;
  std::vector<detail::Rectangle> rectangles;
  if (!searchRectangles(buffers, placer, pairs, items, rectangles))
    return;
  uint64_t budget = std::min<uint64_t>(
      std::max<uint64_t>(kCanonicalNodesPerBuffer * items.size(),
                         kCanonicalMinWork / items.size()),
      kCanonicalWork / items.size());
  detail::CanonicalSearcher searcher(rectangles);
  // lo: no placement found under it (or none exists); best: one is known.
  uint64_t lo = result.livePeakBytes - 1;
  for (unsigned probe = 0; probe < kCanonicalProbes && budget; ++probe) {
    uint64_t capacity =
        probe == 0 ? result.livePeakBytes : lo + (best - lo) / 2;
    capacity = capacity / alignment * alignment;
    if (capacity <= lo || capacity >= best)
      break;
    uint64_t share = budget / (kCanonicalProbes - probe);
    detail::SearchResult found = searcher.solve(capacity, share);
    budget -= std::min(budget, found.nodes);
    if (!found.found) {
      lo = capacity;
      continue;
    }
    uint64_t arena = 0;
    for (auto [k, i] : llvm::enumerate(items)) {
      result.offsets[i] = found.offsets[k];
      arena = std::max(arena, found.offsets[k] + placer.size(i));
    }
    best = arena;
    result.strategy = "canonical";
    ++result.placementsTried;
    if (best == result.livePeakBytes)
      break;
  }
}

/// The sweep search step (PlacementSweep.cpp), for as many buffers and
/// overlapping pairs as the canonical step, where the best placement is
/// still more than 1/kSweepAbove above the live peak. The large buffers (at
/// least 1/kSweepLargeShare of the live peak) are searched in the order of
/// time under a capacity: first, with one probe's work and not counted in
/// kSweepWork, under the best less one unit (where even that finds nothing,
/// the step ends: the lower capacities below are harder still); then the
/// live peak, then by bisection between
/// the highest capacity they found no placement under and the lower of the
/// best so far and the lowest top they reached. Around each placement of
/// them, the small ones (with them, few states would repeat and the search
/// would remember in vain) are searched the same way under the best less
/// one unit, then by bisection down to the large ones' top. Within
/// kSweepWork units of work in all (a node plus the buffers it looks at,
/// about 20 ns each).
constexpr uint64_t kSweepAbove = 50;
constexpr uint64_t kSweepLargeShare = 1000;
constexpr uint64_t kSweepWork = 200000000;
constexpr unsigned kSweepProbes = 8;

void sweepStep(llvm::ArrayRef<BufferLife> buffers, const GreedyPlacer &placer,
               uint64_t alignment, uint64_t pairs, Placement &result,
               uint64_t &best) {
  std::vector<uint32_t> items, large;
  std::vector<detail::Rectangle> rectangles, largeRectangles;
  if (!searchRectangles(buffers, placer, pairs, items, rectangles))
    return;
  for (auto [k, r] : llvm::enumerate(rectangles))
    if (r.bytes >= result.livePeakBytes / kSweepLargeShare) {
      large.push_back(static_cast<uint32_t>(k));
      largeRectangles.push_back(r);
    }
  constexpr uint64_t kFree = ~uint64_t(0);
  detail::SweepSearcher largeSearch(largeRectangles);
  // First the easiest capacity that would help: the large ones under the
  // best less one unit, with one probe's work. Where even that finds
  // nothing, the probes below (at lower capacities) are hopeless: buffers
  // of many distinct sizes, whose states rarely repeat.
  uint64_t easiest = (best - 1) / alignment * alignment;
  if (easiest < result.livePeakBytes)
    return;
  detail::SearchResult gate =
      largeSearch.solve(easiest, kSweepWork / kSweepProbes);
  if (!gate.found)
    return;
  uint64_t budget = kSweepWork;
  // No placement of the large ones found under lo; none lower than
  // largeTop's found yet.
  uint64_t lo = result.livePeakBytes - 1;
  uint64_t largeTop = best;
  for (unsigned probe = 0; probe < kSweepProbes && budget; ++probe) {
    uint64_t hi = std::min(best, largeTop);
    uint64_t capacity = probe == 0 ? result.livePeakBytes : lo + (hi - lo) / 2;
    capacity = capacity / alignment * alignment;
    if (capacity <= lo || capacity >= hi)
      break;
    uint64_t share = budget / (kSweepProbes - probe);
    detail::SearchResult found = largeSearch.solve(capacity, share);
    budget -= std::min(budget, found.nodes);
    if (!found.found) {
      lo = capacity;
      continue;
    }
    std::vector<uint64_t> offsets(items.size(), kFree);
    uint64_t top = 0;
    for (auto [m, k] : llvm::enumerate(large)) {
      offsets[k] = found.offsets[m];
      top = std::max(top, found.offsets[m] + rectangles[k].bytes);
    }
    largeTop = std::min(largeTop, top);
    uint64_t arena = top;
    if (large.size() < items.size()) {
      // The small ones around them: under the best, then lower.
      detail::SweepSearcher all(rectangles, offsets);
      uint64_t smallLo = top - 1, smallHi = best;
      bool any = false;
      for (unsigned round = 0; round < kSweepProbes && budget; ++round) {
        uint64_t under =
            round == 0 ? best - alignment : smallLo + (smallHi - smallLo) / 2;
        under = under / alignment * alignment;
        if (under <= smallLo || under >= smallHi)
          break;
        detail::SearchResult placed = all.solve(under, std::min(budget, share));
        budget -= std::min(budget, placed.nodes);
        if (!placed.found) {
          if (round == 0)
            break;
          smallLo = under;
          continue;
        }
        any = true;
        offsets = std::move(placed.offsets);
        smallHi = 0;
        for (auto [k, i] : llvm::enumerate(items))
          smallHi = std::max(smallHi, offsets[k] + placer.size(i));
      }
      if (!any)
        continue;
      arena = smallHi;
    }
    if (arena >= best)
      continue;
    for (auto [k, i] : llvm::enumerate(items))
      result.offsets[i] = offsets[k];
    best = arena;
    result.strategy = "sweep";
    ++result.placementsTried;
    if (best == result.livePeakBytes)
      break;
  }
}

} // namespace

namespace {

/// The placements found in this process, by all they depend on: the
/// normalized buffers' sizes and lives, and the options. A planning pass
/// asks for the same placement many times (the arena after a rewrite, the
/// check that the function fits, the report, the lowering), and each can
/// take seconds; the placement is a function of its input, so a cached one
/// is the one the placer would find again. At most kEntries placements
/// of at most kWords buffers in all, the most recently used kept.
class PlacementCache {
public:
  static PlacementCache &get() {
    static PlacementCache cache;
    return cache;
  }

  static std::vector<uint64_t> keyOf(llvm::ArrayRef<BufferLife> normalized,
                                     const PlacementOptions &options) {
    std::vector<uint64_t> key;
    key.reserve(2 * normalized.size() + 3);
    key.push_back(options.alignment);
    key.push_back(options.workLimit);
    key.push_back(uint64_t(options.constraintSearch) |
                  uint64_t(options.canonicalSearch) << 1 |
                  uint64_t(options.sweepSearch) << 2);
    for (const BufferLife &life : normalized) {
      key.push_back(life.bytes);
      key.push_back(uint64_t(life.begin) << 32 | life.end);
    }
    return key;
  }

  std::optional<Placement> find(const std::vector<uint64_t> &key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (it->first == key) {
        entries.splice(entries.begin(), entries, it);
        return entries.front().second;
      }
    return std::nullopt;
  }

  void insert(std::vector<uint64_t> key, const Placement &placed) {
    if (key.size() > kWords)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    words += key.size();
    entries.emplace_front(std::move(key), placed);
    while (entries.size() > kEntries || words > kWords) {
      words -= entries.back().first.size();
      entries.pop_back();
    }
  }

private:
  static constexpr size_t kEntries = 16;
  static constexpr size_t kWords = size_t(1) << 22;
  std::mutex mutex;
  std::list<std::pair<std::vector<uint64_t>, Placement>> entries;
  size_t words = 0;
};

} // namespace

llvm::Expected<Placement> lms::placeBuffers(llvm::ArrayRef<BufferLife> buffers,
                                            const PlacementOptions &options) {
  // The placement depends only on which buffers are alive together and on
  // their sizes, never on how time is counted: buffer j of the allocation
  // order (by begin, then as given) begins at time j, and a buffer ends at
  // the number of allocations made before its end. Two programs that make
  // the same allocations and frees in the same order (a plan over steps,
  // the lowered IR over ops) get the same offsets.
  std::vector<uint32_t> order;
  std::vector<uint32_t> begins;
  for (auto [i, life] : llvm::enumerate(buffers))
    if (occupies(life)) {
      order.push_back(static_cast<uint32_t>(i));
      begins.push_back(life.begin);
    }
  llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
    return buffers[a].begin < buffers[b].begin;
  });
  llvm::sort(begins);
  std::vector<BufferLife> normalized;
  normalized.reserve(order.size());
  for (auto [rank, i] : llvm::enumerate(order)) {
    BufferLife life = buffers[i];
    life.begin = static_cast<uint32_t>(rank);
    life.end = static_cast<uint32_t>(
        std::lower_bound(begins.begin(), begins.end(), buffers[i].end) -
        begins.begin());
    normalized.push_back(life);
  }
  std::vector<uint64_t> key = PlacementCache::keyOf(normalized, options);
  llvm::Expected<Placement> placed = [&]() -> llvm::Expected<Placement> {
    if (options.reuse)
      if (std::optional<Placement> cached = PlacementCache::get().find(key))
        return std::move(*cached);
    llvm::Expected<Placement> found = placeNormalized(normalized, options);
    if (found)
      PlacementCache::get().insert(std::move(key), *found);
    return found;
  }();
  if (!placed)
    return placed.takeError();
  std::vector<uint64_t> offsets(buffers.size(), 0);
  for (auto [rank, i] : llvm::enumerate(order))
    offsets[i] = placed->offsets[rank];
  placed->offsets = std::move(offsets);
  return placed;
}

static llvm::Expected<Placement>
placeNormalized(llvm::ArrayRef<BufferLife> buffers,
                const PlacementOptions &options) {
  uint64_t alignment = std::max<uint64_t>(1, options.alignment);
  // Every offset and sum below is bounded by the total of all sizes.
  uint64_t total = 0;
  for (const BufferLife &life : buffers) {
    uint64_t size;
    if (!occupies(life))
      continue;
    if (__builtin_add_overflow(life.bytes, alignment - 1, &size) ||
        __builtin_add_overflow(total, size, &total) ||
        total > (uint64_t(1) << 62))
      return placementError("cannot place buffers of more than 2^62 bytes "
                            "in all");
  }
  Placement result;
  result.livePeakBytes = livePeakBytes(buffers, alignment);
  result.offsets.assign(buffers.size(), 0);
  if (buffers.empty())
    return result;

  // The online allocator first: cheap, and the answer when the offline
  // orders would cost more than the work limit.
  uint64_t work = (options.workLimit ? options.workLimit : 50) * 1000000ull;
  std::vector<uint64_t> offsets;
  uint64_t best = allocateOnline(buffers, alignment, offsets);
  result.offsets = offsets;
  result.strategy = "online";
  result.placementsTried = 1;
  // Every offline placement enumerates each overlapping pair twice.
  uint64_t pairs = overlapCount(buffers);
  if (best == result.livePeakBytes || pairs > work) {
    result.arenaBytes = best;
    return result;
  }

  GreedyPlacer placer(buffers, alignment);
  std::vector<uint32_t> base(buffers.size());
  std::iota(base.begin(), base.end(), 0);
  auto length = [&](uint32_t i) {
    return static_cast<uint64_t>(buffers[i].end - buffers[i].begin);
  };
  // Decreasing size, longer lifetimes first among equals (XLA's and
  // TFLite's order); decreasing area; schedule order (what an allocator
  // that cannot see the future does, with best fit).
  std::vector<std::pair<std::string, std::vector<uint32_t>>> orders;
  {
    std::vector<uint32_t> order = base;
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      return std::make_tuple(placer.size(b), length(b), a) <
             std::make_tuple(placer.size(a), length(a), b);
    });
    orders.push_back({"size", std::move(order)});
  }
  {
    std::vector<uint32_t> order = base;
    // Saturating: sizes near 2^50 times long plans must not wrap.
    auto area = [&](uint32_t i) {
      uint64_t product;
      return __builtin_mul_overflow(placer.size(i), length(i), &product)
                 ? std::numeric_limits<uint64_t>::max()
                 : product;
    };
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      return std::make_tuple(area(b), a) < std::make_tuple(area(a), b);
    });
    orders.push_back({"size-x-lifetime", std::move(order)});
  }
  orders.push_back({"schedule", base});
  {
    // Size classes (an eighth of a power of two apart), larger first, each
    // in schedule order: buffers of nearly the same size follow each other
    // through the same slot, as a size-class allocator keeps them.
    auto sizeClass = [&](uint32_t i) {
      uint64_t size = std::max<uint64_t>(placer.size(i), 1);
      unsigned log = llvm::Log2_64(size);
      uint64_t eighth = log >= 3 ? (size >> (log - 3)) & 7 : 0;
      return static_cast<uint64_t>(log) * 8 + eighth;
    };
    std::vector<uint32_t> order = base;
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      return std::make_tuple(sizeClass(b), buffers[a].begin, a) <
             std::make_tuple(sizeClass(a), buffers[b].begin, b);
    });
    orders.push_back({"size-class", std::move(order)});
  }
  {
    // Greedy by breadth (TFLite): the busiest steps first. Each buffer is
    // keyed by the most bytes alive at a step of its lifetime; buffers that
    // span the peak are placed first and sit side by side.
    std::vector<uint64_t> stepBytes = liveBytesPerStep(buffers, alignment);
    SparseMax busiest(stepBytes);
    std::vector<std::pair<uint64_t, uint32_t>> key(buffers.size());
    for (auto [i, life] : llvm::enumerate(buffers))
      key[i] = occupies(life) ? busiest.query(life.begin, life.end)
                              : std::make_pair<uint64_t, uint32_t>(0, 0);
    std::vector<uint32_t> order = base;
    llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
      // More bytes at the busiest step first; the same step together;
      // larger first there.
      return std::make_tuple(key[b].first, key[a].second, placer.size(b),
                             length(b),
                             a) < std::make_tuple(key[a].first, key[b].second,
                                                  placer.size(a), length(a), b);
    });
    orders.push_back({"breadth", std::move(order)});
  }

  // The order and fit of the best greedy placement (the schedule order
  // with best fit while the online allocator's is best).
  std::vector<uint32_t> bestOrder = base;
  bool bestFirstFit = false;
  for (bool firstFit : {false, true}) {
    for (auto &[name, order] : orders) {
      if (best == result.livePeakBytes || placer.visits + pairs > work)
        break;
      uint64_t arena = placer.run(order, offsets, firstFit);
      ++result.placementsTried;
      if (arena < best) {
        best = arena;
        result.offsets = offsets;
        result.strategy = name + (firstFit ? "/first-fit" : "/best-fit");
        bestOrder = order;
        bestFirstFit = firstFit;
      }
    }
  }

  // The improvement steps, from the placement in result.offsets (of size
  // `best`) and bestOrder, until the placer has looked at `limit` overlaps;
  // they leave the best placement found in result.offsets.
  auto improve = [&](uint64_t limit) {
    detail::SplitMix random(0x4c4d53);
    // Improvement by ruin and recreate: take out the buffers alive around a
    // buffer that reaches the top, and place them again in another order
    // around the rest. A result no higher is kept (moves along a plateau let
    // the search leave it), so the arena never grows. The work limit counts
    // overlaps enumerated, not seconds.
    std::vector<uint64_t> current = result.offsets;
    // The placer's state is the best placement: every buffer placed.
    placer.markAllPlaced();
    std::vector<uint32_t> tops, ruined;
    std::vector<uint64_t> saved;
    uint32_t lastStep = 0;
    for (const BufferLife &life : buffers)
      lastStep = std::max(lastStep, life.end);
    uint64_t repairWork =
        placer.visits + (limit - std::min(limit, placer.visits)) / 2;
    while (best > result.livePeakBytes && placer.visits < repairWork) {
      tops.clear();
      for (auto [i, life] : llvm::enumerate(buffers))
        if (occupies(life) && current[i] + placer.size(i) == best)
          tops.push_back(static_cast<uint32_t>(i));
      uint32_t top = tops[random.below(tops.size())];
      // A window around the top buffer's lifetime, of random reach.
      const BufferLife &life = buffers[top];
      uint32_t reach = static_cast<uint32_t>(
          random.below(std::max<uint32_t>(1, life.end - life.begin) * 2 + 2));
      uint32_t begin = life.begin > reach ? life.begin - reach : 0;
      uint32_t end = std::min(lastStep, life.end + reach);
      ruined.clear();
      placer.forEachOverlap(begin, end,
                            [&](uint32_t j) { ruined.push_back(j); });
      // This round enumerates about |ruined| overlaps per ruined buffer at
      // most; stop before the limit.
      placer.visits += buffers.size() + ruined.size();
      if (placer.visits + ruined.size() * ruined.size() > repairWork)
        break;
      // Decreasing size, with random swaps of neighbours; sometimes at random.
      llvm::sort(ruined, [&](uint32_t a, uint32_t b) {
        return std::make_tuple(placer.size(b), a) <
               std::make_tuple(placer.size(a), b);
      });
      unsigned mode = static_cast<unsigned>(random.below(4));
      if (mode == 3) {
        for (size_t k = ruined.size(); k > 1; --k)
          std::swap(ruined[k - 1], ruined[random.below(k)]);
      } else {
        for (size_t k = 1; k < ruined.size(); ++k)
          if (random.below(4) == 0)
            std::swap(ruined[k - 1], ruined[k]);
      }
      saved.clear();
      for (uint32_t i : ruined)
        saved.push_back(current[i]);
      placer.replace(ruined, current, mode == 2);
      uint64_t arena = 0;
      for (auto [i, life] : llvm::enumerate(buffers))
        if (occupies(life))
          arena = std::max(arena, current[i] + placer.size(i));
      ++result.placementsTried;
      if (arena <= best) {
        if (arena < best) {
          result.strategy = "search";
          best = arena;
        }
        continue;
      }
      for (auto [k, i] : llvm::enumerate(ruined))
        current[i] = saved[k];
    }
    // Improvement of the order (iterated greedy), with the rest of the work:
    // a buffer that reaches the top moves earlier in the best order, or two
    // buffers trade places, and the whole order is placed again; an order
    // that places no higher is kept. It starts from the repaired placement
    // read as an order (its buffers by increasing offset, first fit, which
    // gives that placement back or a lower one), else from the best greedy
    // order.
    // The offsets of a run of bestOrder (empty until there is one): an order
    // that begins as bestOrder does keeps that beginning's offsets.
    std::vector<uint64_t> bestRun;
    auto keep = [&](std::vector<uint32_t> &order, bool firstFit,
                    size_t unchanged) {
      uint64_t arena =
          unchanged && !bestRun.empty() && firstFit == bestFirstFit
              ? placer.runFrom(order, unchanged, bestRun, offsets, firstFit)
              : placer.run(order, offsets, firstFit);
      ++result.placementsTried;
      if (arena > best)
        return;
      if (arena < best)
        result.strategy = "order-search";
      best = arena;
      current = offsets;
      bestRun = offsets;
      bestOrder = order;
      bestFirstFit = firstFit;
    };
    auto roundFits = [&] {
      return best > result.livePeakBytes && placer.visits + 2 * pairs <= limit;
    };
    if (roundFits()) {
      std::vector<uint32_t> byOffset = base;
      llvm::stable_sort(byOffset, [&](uint32_t a, uint32_t b) {
        return std::make_tuple(current[a], placer.size(b), a) <
               std::make_tuple(current[b], placer.size(a), b);
      });
      keep(byOffset, /*firstFit=*/true, 0);
    }
    std::vector<uint32_t> order;
    while (roundFits()) {
      order = bestOrder;
      // The first position the moves change: bestOrder's before it.
      size_t unchanged = order.size();
      unsigned moves = 1 + static_cast<unsigned>(random.below(3));
      for (unsigned m = 0; m < moves; ++m) {
        if (random.below(3) == 0) {
          size_t a = random.below(order.size()), b = random.below(order.size());
          std::swap(order[a], order[b]);
          unchanged = std::min({unchanged, a, b});
          continue;
        }
        // A top buffer of the best placement (uniformly among them), earlier.
        uint32_t top = 0, seen = 0;
        for (auto [i, life] : llvm::enumerate(buffers))
          if (occupies(life) && current[i] + placer.size(i) == best &&
              random.below(++seen) == 0)
            top = static_cast<uint32_t>(i);
        if (!seen)
          break;
        auto from = llvm::find(order, top);
        auto to = order.begin() +
                  random.below(static_cast<uint64_t>(from - order.begin()) + 1);
        std::rotate(to, from, from + 1);
        unchanged =
            std::min(unchanged, static_cast<size_t>(to - order.begin()));
      }
      keep(order, bestFirstFit, unchanged);
    }
    result.offsets = std::move(current);
  };

  // The largest buffers placed exactly by the constraint program and the
  // rest around them (the lowest placement with room kept above them and
  // the lowest without): where that is lower than the greedy placement, the
  // improvement steps run from it too, each with the work they have without
  // the constraint step (from the greedy placement: the same result as
  // without it), and the lowest result is kept (the earlier one's on a tie:
  // greedy, then without room, then with). Less work from the constraint
  // step's placement measured worse (the arena U-Net's offloading plan
  // lowers to: 1.042 of its live peak with the same work, 1.087 with half,
  // 1.164 with a quarter).
  uint64_t greedyVisits = placer.visits;
  std::vector<ConstraintStart> starts;
  if (options.constraintSearch && best > result.livePeakBytes)
    starts = constraintPlacements(buffers, placer, alignment,
                                  result.livePeakBytes, best);
  Placement greedy = starts.empty() ? Placement() : result;
  std::vector<uint32_t> greedyOrder = bestOrder;
  bool greedyFirstFit = bestFirstFit;
  placer.visits = greedyVisits;
  improve(work);
  for (ConstraintStart &start : starts) {
    Placement before = std::move(result);
    uint64_t beforeBest = best;
    result = greedy;
    result.offsets = std::move(start.offsets);
    result.strategy = "constraint";
    result.placementsTried = before.placementsTried + 1;
    best = start.arena;
    bestOrder = greedyOrder;
    bestFirstFit = greedyFirstFit;
    placer.visits = greedyVisits;
    improve(work);
    if (beforeBest <= best) {
      before.placementsTried = result.placementsTried;
      result = std::move(before);
      best = beforeBest;
    }
  }
  // The canonical search: under the live peak, then capacities between the
  // lowest it found nothing under and the best so far.
  if (options.canonicalSearch && best > result.livePeakBytes)
    canonicalStep(buffers, placer, alignment, pairs, result, best);
  // The sweep search: the same, in the order of time, where the placement
  // is still more than 2% above the live peak.
  if (options.sweepSearch &&
      best > result.livePeakBytes + result.livePeakBytes / kSweepAbove)
    sweepStep(buffers, placer, alignment, pairs, result, best);
  result.arenaBytes = best;
  return result;
}

llvm::Error lms::verifyPlacement(llvm::ArrayRef<BufferLife> buffers,
                                 const Placement &placement,
                                 uint64_t alignment) {
  alignment = std::max<uint64_t>(1, alignment);
  if (placement.offsets.size() != buffers.size())
    return placementError(llvm::formatv("{0} offsets for {1} buffers",
                                        placement.offsets.size(),
                                        buffers.size()));
  auto describe = [&](size_t i) {
    const BufferLife &life = buffers[i];
    return llvm::formatv("buffer {0} ({1} {2}, {3} bytes at {4}, steps "
                         "[{5}, {6}))",
                         i, life.tensor >= 0 ? "tensor" : "transient of op",
                         life.tensor >= 0 ? life.tensor : life.op, life.bytes,
                         placement.offsets[i], life.begin, life.end)
        .str();
  };
  // Sweep the steps with the live buffers ordered by offset; a new buffer
  // overlaps something only if it overlaps a neighbour.
  std::vector<std::pair<uint32_t, uint32_t>> events; // (step, 2i or 2i+1)
  for (auto [i, life] : llvm::enumerate(buffers)) {
    uint64_t size =
        alignment > 1 ? llvm::alignTo(life.bytes, alignment) : life.bytes;
    uint64_t end;
    if (!occupies(life))
      continue;
    if (placement.offsets[i] % alignment)
      return placementError(describe(i) + " is not aligned to " +
                            llvm::Twine(alignment));
    if (__builtin_add_overflow(placement.offsets[i], size, &end) ||
        end > placement.arenaBytes)
      return placementError(describe(i) + " ends past the arena of " +
                            llvm::Twine(placement.arenaBytes) + " bytes");
    events.push_back({life.begin, 2 * static_cast<uint32_t>(i) + 1});
    events.push_back({life.end, 2 * static_cast<uint32_t>(i)});
  }
  // Ends (even) before begins (odd) at the same step.
  llvm::sort(events, [](auto a, auto b) {
    return std::make_tuple(a.first, a.second & 1, a.second) <
           std::make_tuple(b.first, b.second & 1, b.second);
  });
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> live; // (offset, i)->end
  for (auto [step, code] : events) {
    uint32_t i = code / 2;
    uint64_t offset = placement.offsets[i];
    if (!(code & 1)) {
      live.erase({offset, i});
      continue;
    }
    uint64_t end =
        offset + (alignment > 1 ? llvm::alignTo(buffers[i].bytes, alignment)
                                : buffers[i].bytes);
    auto next = live.lower_bound({offset, 0});
    if (next != live.end() && next->first.first < end)
      return placementError(describe(i) + " overlaps " +
                            describe(next->first.second));
    if (next != live.begin()) {
      auto previous = std::prev(next);
      if (previous->second > offset)
        return placementError(describe(i) + " overlaps " +
                              describe(previous->first.second));
    }
    live.emplace(std::make_pair(offset, i), end);
  }
  return llvm::Error::success();
}

llvm::Expected<Placement> lms::placePlan(const Graph &graph, const Plan &plan,
                                         const PlacementOptions &options) {
  llvm::Expected<std::vector<BufferLife>> lives = bufferLives(graph, plan);
  if (!lives)
    return lives.takeError();
  llvm::Expected<Placement> placement = placeBuffers(*lives, options);
  if (placement)
    placement->buffers = std::move(*lives);
  return placement;
}

llvm::Expected<ArenaFit>
lms::fitArena(const Graph &graph, uint64_t budget,
              llvm::function_ref<llvm::Expected<Plan>(uint64_t target)> planAt,
              const PlacementOptions &options, unsigned maxRounds) {
  uint64_t target = budget;
  std::optional<ArenaFit> smallest;
  for (unsigned round = 1; round <= std::max(1u, maxRounds); ++round) {
    llvm::Expected<Plan> plan = planAt(target);
    if (!plan) {
      if (!smallest)
        return plan.takeError();
      // The planner cannot go lower: report what the rounds reached.
      llvm::consumeError(plan.takeError());
      break;
    }
    llvm::Expected<Placement> placement = placePlan(graph, *plan, options);
    if (!placement)
      return placement.takeError();
    uint64_t arena = placement->arenaBytes;
    if (!smallest || arena < smallest->placement.arenaBytes)
      smallest =
          ArenaFit{std::move(*plan), std::move(*placement), target, round};
    smallest->rounds = round;
    if (arena <= budget)
      return std::move(*smallest);
    uint64_t excess = arena - budget;
    if (excess >= target)
      break;
    target -= std::max<uint64_t>(excess, options.alignment);
  }
  return placementError(llvm::formatv(
      "no plan's arena fits the budget of {0} bytes: the smallest arena "
      "found is {1} bytes (live peak {2}, planned for {3} bytes)",
      budget, smallest->placement.arenaBytes, smallest->placement.livePeakBytes,
      smallest->plannedBudget));
}

llvm::Expected<ArenaNeed>
lms::arenaNeed(const Graph &graph, const Plan &plan,
               llvm::ArrayRef<uint8_t> ownAllocation,
               llvm::ArrayRef<std::optional<ArenaCall>> calls,
               const PlacementOptions &options) {
  EvalOptions eval;
  eval.recordSteps = false;
  if (llvm::Expected<MemoryProfile> profile = evaluatePlan(graph, plan, eval);
      !profile)
    return profile.takeError();
  if (ownAllocation.size() != graph.numTensors() ||
      calls.size() != graph.numOps())
    return placementError("arenaNeed: one entry per tensor and per op");
  auto device = [&](TensorIndex t) {
    return graph.tensor(t).space == MemorySpace::Device;
  };
  // The arena's buffers and frames as lives; the rest counted as the
  // evaluator counts them (a negative extra never below what was held).
  std::vector<BufferLife> lives;
  std::vector<int64_t> open(graph.numTensors(), -1);
  std::vector<uint8_t> resident(graph.numTensors(), 0);
  // The bytes of the allocations of their own, and the same without the
  // caller's slots (ArenaNeed::ownPeakWithSlotsBytes).
  struct Own {
    int64_t bytes = 0, peak = 0;
  } own, slotted;
  auto add = [&](TensorIndex t, int64_t sign) {
    int64_t bytes = sign * static_cast<int64_t>(graph.tensor(t).bytes);
    own.bytes += bytes;
    if (ownAllocation[t] != kCallerSlot)
      slotted.bytes += bytes;
  };
  auto peakAt = [](Own &o, int64_t before, int64_t extra) {
    o.peak = std::max(o.peak, extra >= 0 ? o.bytes + extra
                                         : std::max(before, o.bytes + extra));
  };
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (graph.tensor(t).producer == kEntry && device(t)) {
      resident[t] = 1;
      if (ownAllocation[t] == kHostPlaced) {
        // In the arena before anything the function allocates.
        open[t] = static_cast<int64_t>(lives.size());
        lives.push_back({t, -1, graph.tensor(t).bytes, 0, 0});
      } else {
        add(t, 1);
      }
    }
  own.peak = own.bytes;
  slotted.peak = slotted.bytes;
  auto allocate = [&](TensorIndex t, OpIndex op, uint32_t s) {
    resident[t] = 1;
    if (ownAllocation[t] && ownAllocation[t] != kHostPlaced) {
      add(t, 1);
      return;
    }
    open[t] = static_cast<int64_t>(lives.size());
    lives.push_back({t, op, graph.tensor(t).bytes, s, s});
  };
  for (auto [index, step] : llvm::enumerate(plan)) {
    uint32_t s = static_cast<uint32_t>(index);
    switch (step.kind) {
    case Step::Compute: {
      const Op &op = graph.op(step.index);
      int64_t before = own.bytes, beforeSlotted = slotted.bytes;
      const std::optional<ArenaCall> &call = calls[step.index];
      // Results in the caller's slots first, then the other outputs, then
      // the frame: the order in which the lowering carves them.
      if (call)
        for (TensorIndex t : call->slots)
          if (device(t) && !resident[t]) {
            resident[t] = 1;
            open[t] = static_cast<int64_t>(lives.size());
            lives.push_back({t, step.index, graph.tensor(t).bytes, s, s});
          }
      for (TensorIndex t : op.outputs)
        if (device(t) && !resident[t])
          allocate(t, step.index, s);
      int64_t extra = op.transientBytes;
      if (call) {
        if (call->frameBytes > 0)
          lives.push_back({-1, step.index, call->frameBytes, s, s + 1});
        extra = call->ownExtraBytes;
      }
      peakAt(own, before, extra);
      peakAt(slotted, beforeSlotted, extra);
      break;
    }
    case Step::Free:
      resident[step.index] = 0;
      if (open[step.index] >= 0) {
        BufferLife &life = lives[open[step.index]];
        // An argument the host placed holds its bytes at entry.
        life.end = life.op < 0 && life.begin == 0 &&
                           ownAllocation[step.index] == kHostPlaced
                       ? hostPlacedEnd(s)
                       : s;
        open[step.index] = -1;
      } else {
        add(step.index, -1);
      }
      break;
    case Step::SwapIn:
      allocate(step.index, -1, s);
      own.peak = std::max(own.peak, own.bytes);
      slotted.peak = std::max(slotted.peak, slotted.bytes);
      break;
    case Step::SwapOut:
    case Step::FreeHost:
      break;
    }
  }
  for (int64_t life : open)
    if (life >= 0)
      lives[life].end = static_cast<uint32_t>(plan.size());
  ArenaNeed need;
  need.ownPeakBytes = static_cast<uint64_t>(own.peak);
  need.ownPeakWithSlotsBytes = static_cast<uint64_t>(slotted.peak);
  // Buffers of no bytes (an unused constant or empty tensor) allocate
  // nothing: the lowering carves no arena for them alone (before, such a
  // function was counted with a one-byte arena, rounded up to the
  // alignment, which the emulated device never measured).
  llvm::erase_if(lives, [](const BufferLife &life) { return life.bytes == 0; });
  if (lives.empty())
    return need;
  llvm::Expected<Placement> placed = placeBuffers(lives, options);
  if (!placed)
    return placed.takeError();
  need.arenaBytes = std::max<uint64_t>(placed->arenaBytes, 1);
  return need;
}

Graph lms::reserveOwnAllocations(const Graph &graph,
                                 llvm::ArrayRef<uint8_t> ownAllocation,
                                 uint64_t ownPeakBytes,
                                 llvm::ArrayRef<int64_t> callFrames) {
  Graph reserved = graph;
  for (auto [op, frame] : llvm::enumerate(callFrames))
    if (frame >= 0 && op < graph.numOps())
      reserved.setTransientBytes(static_cast<OpIndex>(op), frame);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (t < static_cast<TensorIndex>(ownAllocation.size()) &&
        ownAllocation[t] && graph.tensor(t).space == MemorySpace::Device)
      reserved.setBytes(t, 0);
  // Recomputing an op that makes one would allocate it again.
  for (OpIndex op = 0; op < static_cast<OpIndex>(graph.numOps()); ++op)
    for (TensorIndex t : graph.op(op).outputs)
      if (t < static_cast<TensorIndex>(ownAllocation.size()) &&
          ownAllocation[t])
        reserved.op(op).recomputable = false;
  TensorIndex all =
      reserved.addTensor("allocations of their own", ownPeakBytes);
  reserved.setLiveOut(all);
  return reserved;
}
