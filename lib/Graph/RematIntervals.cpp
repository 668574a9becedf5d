//===- RematIntervals.cpp - Retention-interval rematerialization ----------===//
//
// The plan of Moccasin's model, searched instead of solved: every op has one
// or more retention intervals [start, end] of stages; it is computed at the
// start of each (the first at its own stage) and resident until the end of
// its end stage. Every computation of a consumer at stage s needs the op
// covered by an interval at s. Inside a stage, computations run in schedule
// order and a tensor whose interval ends there is freed after its last use in
// the stage, so the memory of stage s is
//   cov[s] (intervals carried in: start < s <= end) + extra[s] (the in-stage
//   peak of the computations at s).
//
// Greedy repair: while some stage is over the budget, split the interval of
// a tensor carried across the worst stage at the gap in its uses around it
// (free after the use before, recompute at the use after), choosing the
// tensor with the least estimated recompute cost per byte of overflow
// removed; a recomputation's inputs are covered by extending their interval
// where the memory has room, else by recomputing them too (recursively).
// Large-neighbourhood search: undo a few recomputations (merge intervals),
// repair again with noisy scores, keep what is cheaper (with a small
// annealed tolerance), until the work limit. Where every greedy repair stops
// over the budget, a search over plans that do not fit yet (settle) undoes
// the recomputations in a window and repairs again, keeping what overflows
// no more, until a repair fits; that plan seeds the neighbourhood search.
//
// Where a split recomputes: at the next use, earlier where the stages before
// it have room, right after the crowded stage, and (in a second search with
// its own seeds and neighbourhood search, RematOptions::coveredSearch) at
// the latest stage before the next use where every input is resident
// already, which reads nothing new. The cheaper of the two searches' plans
// is the result.
//
//===----------------------------------------------------------------------===//

#include "RematInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <utility>

#define DEBUG_TYPE "lms-remat-intervals"

using namespace lms;

namespace {

struct Interval {
  int start, end;
};

/// An item of the retention-interval model (RematInternal.h), with what the
/// search needs besides.
struct Item : detail::RetentionItem {
  bool splittable = false;
  /// The device tensors it stands for (an op's outputs, or an argument).
  llvm::SmallVector<TensorIndex, 2> tensors;
};

/// Stage memory for range queries: range add, range max, first index above
/// a threshold (a lazy segment tree).
class MaxTree {
public:
  void reset(int size) {
    n = 1;
    while (n < std::max(size, 1))
      n *= 2;
    mx.assign(2 * n, 0);
    lazy.assign(2 * n, 0);
    // Padding never wins a max.
    for (int i = size; i < n; ++i)
      mx[n + i] = std::numeric_limits<int64_t>::min() / 4;
    for (int i = n - 1; i >= 1; --i)
      mx[i] = std::max(mx[2 * i], mx[2 * i + 1]);
  }
  /// The tree of `values` (its size as reset() gives), in linear time.
  void assign(const std::vector<int64_t> &values) {
    reset(static_cast<int>(values.size()));
    for (size_t i = 0; i < values.size(); ++i)
      mx[n + i] = values[i];
    for (int i = n - 1; i >= 1; --i)
      mx[i] = std::max(mx[2 * i], mx[2 * i + 1]);
  }
  void add(int lo, int hi, int64_t delta) {
    if (lo <= hi)
      add(1, 0, n - 1, lo, hi, delta);
  }
  int64_t max(int lo, int hi) const {
    if (lo > hi)
      return std::numeric_limits<int64_t>::min() / 4;
    return max(1, 0, n - 1, lo, hi);
  }
  /// Whether a value in [lo, hi] exceeds `threshold`: max(lo, hi) >
  /// threshold, without visiting the subtrees whose maximum is at or below
  /// it.
  bool anyAbove(int lo, int hi, int64_t threshold) const {
    if (lo > hi)
      return false;
    return anyAbove(1, 0, n - 1, lo, hi, threshold);
  }
  /// The first index whose value exceeds `threshold`, or -1.
  int firstAbove(int64_t threshold) const {
    if (mx[1] <= threshold)
      return -1;
    int node = 1, lo = 0, hi = n - 1;
    int64_t carried = 0;
    while (lo != hi) {
      carried += lazy[node];
      int mid = (lo + hi) / 2;
      if (mx[2 * node] + carried > threshold) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return lo;
  }
  /// The index of the maximum (the first one), and the maximum.
  std::pair<int, int64_t> argmax() const {
    int64_t best = mx[1];
    return {firstAbove(best - 1), best};
  }

private:
  void add(int node, int lo, int hi, int l, int r, int64_t delta) {
    if (r < lo || hi < l)
      return;
    if (l <= lo && hi <= r) {
      mx[node] += delta;
      lazy[node] += delta;
      return;
    }
    int mid = (lo + hi) / 2;
    add(2 * node, lo, mid, l, r, delta);
    add(2 * node + 1, mid + 1, hi, l, r, delta);
    mx[node] = std::max(mx[2 * node], mx[2 * node + 1]) + lazy[node];
  }
  /// `threshold` is relative to the node: its ancestors' lazy additions
  /// are taken off.
  bool anyAbove(int node, int lo, int hi, int l, int r,
                int64_t threshold) const {
    if (r < lo || hi < l || mx[node] <= threshold)
      return false;
    if (l <= lo && hi <= r)
      return true;
    int mid = (lo + hi) / 2;
    threshold -= lazy[node];
    return anyAbove(2 * node, lo, mid, l, r, threshold) ||
           anyAbove(2 * node + 1, mid + 1, hi, l, r, threshold);
  }
  int64_t max(int node, int lo, int hi, int l, int r) const {
    if (r < lo || hi < l)
      return std::numeric_limits<int64_t>::min() / 4;
    if (l <= lo && hi <= r)
      return mx[node];
    int mid = (lo + hi) / 2;
    return std::max(max(2 * node, lo, mid, l, r),
                    max(2 * node + 1, mid + 1, hi, l, r)) +
           lazy[node];
  }
  int n = 1;
  std::vector<int64_t> mx, lazy;
};

/// The mutable part of a plan, copied for the search's snapshots.
struct State {
  std::vector<std::vector<Interval>> iv;
  std::vector<std::vector<int>> uses; // sorted multiset of stages
  std::vector<std::vector<int>> at;   // items computed at each stage
  std::vector<int64_t> cov, extra;
  /// cov + extra per stage.
  MaxTree memory;
  double cost = 0;
};

class IntervalPlanner {
public:
  IntervalPlanner(const Graph &graph, const DeviceSpec *device, uint64_t budget,
                  const std::vector<uint64_t> &stageBudgets = {})
      : graph(graph), budget(static_cast<int64_t>(budget)),
        numStages(static_cast<int>(graph.numOps())) {
    slack.assign(numStages, 0);
    if (stageBudgets.size() == static_cast<size_t>(numStages))
      for (int st = 0; st < numStages; ++st)
        slack[st] = std::max<int64_t>(
            0, static_cast<int64_t>(stageBudgets[st]) - this->budget);
    // One item per op, one per argument on the device.
    itemOfTensor.assign(graph.numTensors(), -1);
    std::vector<uint8_t> recomputable = detail::recomputableOps(graph);
    opItem.assign(graph.numOps(), -1);
    for (OpIndex i = 0; i < numStages; ++i) {
      const Op &op = graph.op(i);
      Item item;
      item.pos = i;
      item.cost = opCost(graph, i, device);
      item.transient = std::max<int64_t>(op.transientBytes, 0);
      item.recomputable = recomputable[i];
      for (TensorIndex t : op.outputs) {
        const Tensor &tensor = graph.tensor(t);
        if (tensor.space != MemorySpace::Device)
          continue;
        item.mem += tensor.bytes;
        item.tensors.push_back(t);
        item.pinned |= tensor.liveOut;
      }
      item.splittable = item.recomputable && !item.pinned && item.mem > 0;
      opItem[i] = static_cast<int>(items.size());
      for (TensorIndex t : item.tensors)
        itemOfTensor[t] = static_cast<int>(items.size());
      items.push_back(std::move(item));
    }
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
         ++t) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.producer != kEntry || tensor.space != MemorySpace::Device)
        continue;
      Item item;
      item.mem = tensor.bytes;
      item.pinned = tensor.liveOut;
      item.tensors.push_back(t);
      itemOfTensor[t] = static_cast<int>(items.size());
      items.push_back(std::move(item));
    }
    for (OpIndex i = 0; i < numStages; ++i) {
      Item &item = items[opItem[i]];
      for (TensorIndex t : graph.op(i).inputs) {
        int p = itemOfTensor[t];
        if (p >= 0 && !llvm::is_contained(item.inputs, p))
          item.inputs.push_back(p);
      }
    }
    stamp.assign(items.size(), 0);
    lastInStage.assign(items.size(), -1);
  }

  /// The reference plan: every op computed once, kept to its last use
  /// (live-outs to the end; an argument nobody reads freed at entry).
  void reset() {
    std::vector<int> last(items.size(), -2);
    for (OpIndex i = 0; i < numStages; ++i)
      for (int p : items[opItem[i]].inputs)
        last[p] = std::max(last[p], static_cast<int>(i));
    detail::RetentionIntervals reference(items.size());
    for (size_t p = 0; p < items.size(); ++p) {
      const Item &item = items[p];
      if (item.pos < 0 && last[p] < 0 && !item.pinned)
        continue;
      int end = item.pinned ? numStages - 1 : std::max(last[p], item.pos);
      reference[p].push_back({item.pos, end});
    }
    load(reference);
  }

  /// The plan of given intervals (as planOfIntervals takes them).
  void load(const detail::RetentionIntervals &intervals) {
    size_t n = items.size();
    s.iv.assign(n, {});
    s.uses.assign(n, {});
    s.at.assign(numStages, {});
    s.extra.assign(numStages, 0);
    s.cost = 0;
    // The coverage as differences, summed once: linear in the stages and
    // intervals (adding each interval stage by stage was quadratic on a
    // training graph, whose activations live from forward to backward).
    std::vector<int64_t> difference(numStages + 1, 0);
    for (size_t p = 0; p < n && p < intervals.size(); ++p)
      for (auto [start, end] : intervals[p]) {
        s.iv[p].push_back({start, end});
        if (start >= 0) {
          s.at[start].push_back(static_cast<int>(p));
          s.cost += items[p].cost;
          for (int q : items[p].inputs)
            s.uses[q].push_back(start);
        }
        int lo = std::max(start + 1, 0), hi = std::min(end, numStages - 1);
        if (lo <= hi) {
          difference[lo] += static_cast<int64_t>(items[p].mem);
          difference[hi + 1] -= static_cast<int64_t>(items[p].mem);
        }
      }
    s.cov.assign(numStages, 0);
    int64_t running = 0;
    for (int st = 0; st < numStages; ++st)
      s.cov[st] = running += difference[st];
    // The tree holds what each stage needs beyond its own budget's room
    // over `budget` (its slack), so that one comparison with `budget`
    // finds the stages over theirs.
    std::vector<int64_t> excess(s.cov);
    for (int st = 0; st < numStages; ++st)
      excess[st] -= slack[st];
    s.memory.assign(excess);
    for (std::vector<int> &u : s.uses)
      std::sort(u.begin(), u.end());
    dirty.assign(numStages, 1);
    dirtyList.clear();
    for (int st = 0; st < numStages; ++st)
      dirtyList.push_back(st);
    refresh();
    entryBytes = 0;
    for (size_t p = 0; p < n; ++p)
      if (items[p].pos < 0 && !s.iv[p].empty())
        entryBytes += items[p].mem;
    indexed = numStages > kBatchAbove;
    reindex();
  }

  /// The current intervals.
  detail::RetentionIntervals intervals() const {
    detail::RetentionIntervals result(items.size());
    for (size_t p = 0; p < items.size(); ++p)
      for (const Interval &in : s.iv[p])
        result[p].push_back({in.start, in.end});
    return result;
  }

  /// Splits intervals until every stage fits. `noise` randomizes the scores.
  bool repair(std::mt19937_64 *rng, double noise, size_t maxSplits,
              const std::function<bool()> &expired) {
    tabu.assign(items.size(), {});
    gauss.reset();
    for (size_t round = 0; round < maxSplits; ++round) {
      int worst = worstStage();
      if (worst < 0)
        return true;
      // The clock before every split (a plan that fits is returned
      // whatever the time): a round of a large graph scans many stages, and
      // reading it every 64 rounds let a first plan run 100 times past a
      // millisecond's cap.
      if (expired()) {
        failure = "the time limit ran out before the plan fit";
        return false;
      }
      Scan scan = scanCarried(worst, rng, noise);
      if (scan.bestItem < 0) {
        if (unstick(worst, scan))
          continue;
        return false;
      }
      split(scan.bestItem, scan.bestA, scan.bestR);
      if (scan.batch)
        applyRanked(worst, scan);
    }
    failure = "the interval search did not converge at this budget";
    return false;
  }

  /// No greedy repair fits: a search over the plans that do not fit yet.
  /// Each iteration undoes the recomputations that start in a window of
  /// stages (around the stage where the last repair got stuck, or around a
  /// random recomputation) and repairs with noisy scores; the result is
  /// kept when its total overflow is no larger. True when a repair fits
  /// (the state is that plan); false after `iterations`.
  bool settle(std::mt19937_64 &rng, size_t maxSplits, size_t iterations,
              const std::function<bool()> &expired) {
    int64_t current = totalOverflow();
    int stuck = failureOp;
    State saved;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (size_t iteration = 0; iteration < iterations && !expired();
         ++iteration) {
      saved = s;
      std::vector<std::pair<int, int>> recomputes = recomputations();
      int center = stuck;
      if ((center < 0 || unit(rng) < 0.5) && !recomputes.empty())
        center = s.iv[recomputes[rng() % recomputes.size()].first].back().start;
      int width = 1 + static_cast<int>(rng() % 32);
      for (size_t p = 0; p < items.size(); ++p)
        // Later recomputations of one item first: indices stay valid.
        for (int j = static_cast<int>(s.iv[p].size()) - 1; j >= 1; --j) {
          int st = s.iv[p][j].start;
          if (st >= center - width && st <= center + width)
            merge(static_cast<int>(p), j);
        }
      order = rng() % 2 ? Order::First : Order::Worst;
      if (repair(&rng, 0.5, maxSplits, expired))
        return true;
      int64_t overflow = totalOverflow();
      if (overflow <= current) {
        current = overflow;
        stuck = failureOp;
      } else {
        std::swap(s, saved);
        reindex();
        markAllDirty();
      }
      LLVM_DEBUG(llvm::dbgs() << "settle " << iteration << ": overflow "
                              << overflow << ", kept " << current << "\n");
    }
    return false;
  }

  /// The stage over the budget that the repair fixes next (-1: none).
  int worstStage() {
    refresh();
    if (order == Order::First)
      return s.memory.firstAbove(budget);
    auto [at, top] = s.memory.argmax();
    return top > budget ? at : -1;
  }

  /// The noise of a randomized repair's scores (one stream per repair: it
  /// makes its values in pairs).
  std::normal_distribution<double> gauss{0.0, 1.0};

  /// A candidate split: its item, its window (a, r) and a score.
  struct Fallback {
    double excess;
    int item, a, r;
  };

  /// What a scan of the tensors carried across a stage found.
  struct Scan {
    /// The best split (item -1: none).
    int bestItem = -1, bestA = 0, bestR = 0;
    double bestScore = std::numeric_limits<double>::infinity();
    /// Large graphs: every candidate by score, to apply several per scan.
    bool batch = false;
    std::vector<Fallback> ranked;
    /// Splits whose estimate loses more than it gains, to measure exactly
    /// when nothing else is left.
    std::vector<Fallback> fallback;
    /// For the debug output: why candidates were not taken.
    int skippedForLoss = 0, usedThere = 0, carried = 0;
  };

  /// Scores splitting each tensor carried across stage `worst` (recomputed
  /// at its next use, or earlier where there is room): the overflow it
  /// removes around the stage, less what it adds, per second of
  /// recomputation.
  Scan scanCarried(int worst, std::mt19937_64 *rng, double noise) {
    Scan scan;
    scan.batch = numStages > kBatchAbove;
    // The tensors carried across the stage; on large graphs a random
    // sample of them is scored.
    std::vector<int> &carriedItems = carriedScratch;
    carriedAt(worst, carriedItems, scan.batch ? kSample : 0);
    if (scan.batch && carriedItems.size() > kSample) {
      std::mt19937_64 &sampler = rng ? *rng : sampleRng;
      for (size_t i = 0; i < kSample; ++i)
        std::swap(carriedItems[i],
                  carriedItems[i + sampler() % (carriedItems.size() - i)]);
      carriedItems.resize(kSample);
    }
    for (int p : carriedItems) {
      const Item &item = items[p];
      int k = covering(p, worst);
      const Interval &in = s.iv[p][k];
      const std::vector<int> &u = s.uses[p];
      // The uses around `worst` inside the interval.
      auto next = std::upper_bound(u.begin(), u.end(), worst);
      if (next == u.end() || *next > in.end)
        continue;
      auto prev = std::lower_bound(u.begin(), u.end(), worst);
      ++scan.carried;
      if (prev != u.end() && *prev == worst) {
        ++scan.usedThere;
        continue; // used at the worst stage itself
      }
      int a = in.start;
      if (prev != u.begin() && *std::prev(prev) >= in.start)
        a = *std::prev(prev);
      int b = *next;
      // The overflow removed, counted over a window around the stage
      // (gaps can span the whole graph).
      double benefit = 0;
      for (int st = std::max(a + 1, worst - kWindow),
               last = std::min(b, worst + kWindow + 1);
           st < last; ++st) {
        int64_t m = s.cov[st] + s.extra[st] - budgetAt(st);
        if (m > 0)
          benefit += static_cast<double>(
              std::min<int64_t>(m, static_cast<int64_t>(item.mem)));
      }
      if (benefit <= 0)
        continue;
      // Recompute at the next use, or earlier where the stages before it
      // have room (away from a crowded stage).
      int early = b;
      while (early - 1 > worst && b - early < kWindow &&
             s.cov[early - 1] + s.extra[early - 1] +
                     static_cast<int64_t>(item.mem) <=
                 budgetAt(early - 1))
        --early;
      bool tabuAtB = isTabu(static_cast<int>(p), b);
      // The latest stage before the next use where every input is resident
      // already: a recomputation there reads nothing new.
      int covered = -1;
      for (int st = b; coveredCandidates && st > worst && b - st < kWindow;
           --st)
        if (inputsResidentAt(static_cast<int>(p), st)) {
          covered = st;
          break;
        }
      int candidatesR[4] = {b, early, worst + 1, covered};
      for (int ri = 0; ri < 4; ++ri) {
        int r = candidatesR[ri];
        if (r < 0 || (r == b && tabuAtB))
          continue;
        bool seen = false;
        for (int rj = 0; rj < ri; ++rj)
          seen |= candidatesR[rj] == r;
        if (seen)
          continue; // evaluated already
        double lost = 0;
        for (int st = r; st < b && st < r + kWindow; ++st) {
          int64_t m = s.cov[st] + s.extra[st] - budgetAt(st);
          if (m > 0)
            lost += static_cast<double>(
                std::min<int64_t>(m, static_cast<int64_t>(item.mem)));
        }
        if (benefit - lost <= 0)
          continue;
        ++epoch;
        estimatedBytes = 0;
        // No candidate costlier than the best score allows matters.
        estimateCap = std::isinf(scan.bestScore) ? scan.bestScore
                                                 : scan.bestScore * benefit * 4;
        double cost = estimate(static_cast<int>(p), r, 0);
        if (cost > estimateCap)
          continue;
        // The recomputed inputs crowd stage r (p itself is counted above
        // or was resident there anyway).
        estimatedBytes -= item.mem;
        int64_t before = s.cov[r] + s.extra[r] - budgetAt(r);
        int64_t after = before + static_cast<int64_t>(estimatedBytes);
        lost += static_cast<double>(std::max<int64_t>(after, 0) -
                                    std::max<int64_t>(before, 0));
        if (benefit - lost <= 0) {
          LLVM_DEBUG(llvm::dbgs()
                     << "  candidate " << items[p].pos << " mem " << item.mem
                     << " a " << a << " b " << b << " r " << r << " benefit "
                     << benefit << " lost " << lost << " est " << estimatedBytes
                     << " cost " << cost << "\n");
          ++scan.skippedForLoss;
          scan.fallback.push_back({lost - benefit, static_cast<int>(p), a, r});
          continue;
        }
        double score = (cost + 1e-9) / (benefit - lost);
        if (rng && noise > 0)
          score *= std::exp(noise * gauss(*rng));
        if (scan.batch)
          scan.ranked.push_back({score, static_cast<int>(p), a, r});
        if (score < scan.bestScore) {
          scan.bestScore = score;
          scan.bestItem = static_cast<int>(p);
          scan.bestA = a;
          scan.bestR = r;
        }
      }
    }
    return scan;
  }

  /// No split helps stage `worst`: undoes a recomputation that crowds it,
  /// or measures the fallbacks exactly. False (with `failure` set) when
  /// neither helps.
  bool unstick(int worst, Scan &scan) {
    // Stuck: the stage is crowded by its own recomputations. Undo them
    // and forbid recomputing those tensors at this stage again (they
    // will be kept, or recomputed earlier).
    bool undone = false;
    for (size_t p = 0; p < items.size(); ++p)
      for (size_t k = 1; k < s.iv[p].size(); ++k)
        if (s.iv[p][k].start == worst && !isTabu(static_cast<int>(p), worst)) {
          tabu[p].push_back(worst);
          merge(static_cast<int>(p), static_cast<int>(k));
          undone = true;
          break;
        }
    if (undone)
      return true;
    // Every split looks worse than it gains by the estimates, which
    // count a recomputation's inputs as resident all at once. Measure
    // the few least bad ones exactly: the one that lowers the total
    // overflow most goes ahead.
    if (tryFallback(scan.fallback))
      return true;
    LLVM_DEBUG({
      llvm::dbgs() << "stuck at " << worst << " cov " << s.cov[worst]
                   << " extra " << s.extra[worst] << " carried " << scan.carried
                   << " used " << scan.usedThere << " loss "
                   << scan.skippedForLoss << " at:";
      for (int p : s.at[worst])
        llvm::dbgs() << " " << items[p].pos << "(" << items[p].mem << ",k"
                     << s.iv[p].size() << ")";
      llvm::dbgs() << "\n";
    });
    failureOp = worst;
    failure = llvm::formatv(
        "stage {0} ('{1}') needs {2} bytes, over the budget of {3}, and "
        "no tensor carried across it can be freed there",
        worst, graph.op(worst).name, s.cov[worst] + s.extra[worst],
        budgetAt(worst));
    return false;
  }

  /// Large graphs: the next best candidates of a scan go ahead too, while
  /// the stage is still over (each checked against the plan as it is now),
  /// instead of one scan of every tensor per split.
  void applyRanked(int worst, Scan &scan) {
    std::vector<Fallback> &ranked = scan.ranked;
    int bestItem = scan.bestItem;
    std::sort(ranked.begin(), ranked.end(),
              [](const Fallback &x, const Fallback &y) {
                return x.excess < y.excess;
              });
    int applied = 0;
    for (const Fallback &c : ranked) {
      if (applied >= 63)
        break;
      refresh();
      if (s.memory.max(worst, worst) <= budget)
        break;
      if (c.item == bestItem)
        continue;
      int k = covering(c.item, worst);
      if (k < 0 || s.iv[c.item][k].start >= worst)
        continue;
      const std::vector<int> &u = s.uses[c.item];
      auto next = std::upper_bound(u.begin(), u.end(), worst);
      auto prev = std::lower_bound(u.begin(), u.end(), worst);
      if (next == u.end() || *next > s.iv[c.item][k].end ||
          (prev != u.end() && *prev == worst))
        continue;
      int a = s.iv[c.item][k].start;
      if (prev != u.begin() && *std::prev(prev) >= a)
        a = *std::prev(prev);
      if (a != c.a || c.r > *next || isTabu(c.item, c.r))
        continue;
      split(c.item, c.a, c.r);
      ++applied;
    }
  }

  /// Graphs with more stages than this apply several splits per scan.
  static constexpr int kBatchAbove = 4000;

  /// How many stages around the worst one the scores look at.
  static constexpr int kWindow = 64;
  /// How many carried tensors a scan scores on large graphs.
  static constexpr size_t kSample = 384;
  std::vector<int> carriedScratch;
  std::mt19937_64 sampleRng{7};

  /// Which overflowing stage the repair fixes first.
  enum class Order { Worst, First };
  Order order = Order::Worst;
  /// Whether a split may also recompute at the latest stage before the
  /// next use where the inputs are resident already (the second search of
  /// planRematIntervals; RematOptions::coveredSearch).
  bool coveredCandidates = false;

  int64_t totalOverflow() {
    refresh();
    int64_t total = 0;
    for (int st = 0; st < numStages; ++st)
      total += std::max<int64_t>(0, s.cov[st] + s.extra[st] - budgetAt(st));
    return total;
  }

  bool tryFallback(std::vector<Fallback> &fallback) {
    if (fallback.empty())
      return false;
    std::sort(fallback.begin(), fallback.end(),
              [](const Fallback &x, const Fallback &y) {
                return x.excess < y.excess;
              });
    int64_t base = totalOverflow();
    State saved = s;
    int64_t best = base;
    int chosen = -1;
    for (int i = 0; i < static_cast<int>(std::min<size_t>(fallback.size(), 6));
         ++i) {
      split(fallback[i].item, fallback[i].a, fallback[i].r);
      int64_t overflow = totalOverflow();
      s = saved;
      reindex();
      markAllDirty();
      if (overflow < best) {
        best = overflow;
        chosen = i;
      }
    }
    if (chosen < 0)
      return false;
    split(fallback[chosen].item, fallback[chosen].a, fallback[chosen].r);
    return true;
  }

  bool isTabu(int p, int st) const {
    return !tabu.empty() && llvm::is_contained(tabu[p], st);
  }

  /// Frees p after its use at stage a and recomputes it at stage b (at or
  /// before its next use).
  void split(int p, int a, int b) {
    int k = covering(p, a);
    int end = s.iv[p][k].end;
    setEnd(p, k, a);
    insertInterval(p, b, end);
    // A recomputation used only after the gap is now useless.
    trim(p, k);
  }

  /// Rebuilds the index of intervals by stage bucket (after a snapshot is
  /// restored; large graphs only).
  void reindex() {
    if (!indexed)
      return;
    buckets.assign(numStages / kBucket + 1, {});
    for (size_t p = 0; p < items.size(); ++p)
      for (const Interval &in : s.iv[p])
        indexInterval(static_cast<int>(p), in.start, in.end);
  }

  void markAllDirty() {
    for (int st = 0; st < numStages; ++st)
      markDirty(st);
    refresh();
  }

  /// Undoes recomputation `k` (>= 1) of item `p`: the previous interval
  /// now reaches its end.
  void merge(int p, int k) {
    int end = s.iv[p][k].end;
    eraseInterval(p, k);
    setEnd(p, k - 1, end);
  }

  /// All recomputations (item, interval index >= 1).
  std::vector<std::pair<int, int>> recomputations() const {
    std::vector<std::pair<int, int>> result;
    for (size_t p = 0; p < items.size(); ++p)
      for (size_t k = 1; k < s.iv[p].size(); ++k)
        result.push_back({static_cast<int>(p), static_cast<int>(k)});
    return result;
  }

  int64_t peak() {
    refresh();
    int64_t result = entryBytes;
    for (int st = 0; st < numStages; ++st)
      result = std::max(result, s.cov[st] + s.extra[st]);
    return result;
  }

  /// The plan's steps: per stage, its computations in schedule order, each
  /// followed by the frees its last in-stage use allows.
  Plan emit() {
    Plan plan;
    for (size_t p = 0; p < items.size(); ++p)
      if (items[p].pos < 0 && s.iv[p].empty())
        for (TensorIndex t : items[p].tensors)
          plan.push_back(Step::free(t));
    for (int st = 0; st < numStages; ++st)
      simulateStage(st, &plan);
    return plan;
  }

  /// The budget of stage `st`.
  int64_t budgetAt(int st) const { return budget + slack[st]; }

  const Graph &graph;
  int64_t budget;
  int numStages;
  /// Per stage, how far its budget is above `budget`.
  std::vector<int64_t> slack;
  std::vector<Item> items;
  std::vector<int> opItem, itemOfTensor;
  State s;
  std::string failure;
  /// The stage at which the repair got stuck (-1: none).
  int failureOp = -1;

private:
  void addCov(int lo, int hi, int64_t delta) {
    lo = std::max(lo, 0);
    hi = std::min(hi, numStages - 1);
    for (int st = lo; st <= hi; ++st)
      s.cov[st] += delta;
    s.memory.add(lo, hi, delta);
  }

  void markDirty(int st) {
    if (st >= 0 && st < numStages && !dirty[st]) {
      dirty[st] = 1;
      dirtyList.push_back(st);
    }
  }

  void refresh() {
    for (int st : dirtyList) {
      int64_t extra = simulateStage(st, nullptr);
      s.memory.add(st, st, extra - s.extra[st]);
      s.extra[st] = extra;
      dirty[st] = 0;
    }
    dirtyList.clear();
  }

  /// The index of p's interval covering stage `st`, or -1.
  int covering(int p, int st) const {
    const std::vector<Interval> &v = s.iv[p];
    auto it =
        std::upper_bound(v.begin(), v.end(), st, [](int x, const Interval &in) {
          return x < in.start;
        });
    if (it == v.begin())
      return -1;
    --it;
    return it->end >= st ? static_cast<int>(it - v.begin()) : -1;
  }

  /// Whether every input of p is resident at stage `st` (a computation of p
  /// there reads nothing new).
  bool inputsResidentAt(int p, int st) const {
    return llvm::all_of(items[p].inputs,
                        [&](int q) { return covering(q, st) >= 0; });
  }

  /// The index of p's last interval starting at or before `st`.
  int before(int p, int st) const {
    const std::vector<Interval> &v = s.iv[p];
    auto it =
        std::upper_bound(v.begin(), v.end(), st, [](int x, const Interval &in) {
          return x < in.start;
        });
    return static_cast<int>(it - v.begin()) - 1;
  }

  bool endsAt(int p, int st) const {
    if (items[p].pinned)
      return false;
    int k = covering(p, st);
    return k >= 0 && s.iv[p][k].end == st;
  }

  /// The in-stage peak above cov[st]; appends the steps when `plan` is set.
  int64_t simulateStage(int st, Plan *plan) {
    std::vector<int> &ops = s.at[st];
    std::sort(ops.begin(), ops.end(),
              [&](int x, int y) { return items[x].pos < items[y].pos; });
    ++epoch;
    for (size_t i = 0; i < ops.size(); ++i)
      for (int p : items[ops[i]].inputs) {
        stamp[p] = epoch;
        lastInStage[p] = static_cast<int>(i);
      }
    int64_t running = 0, top = 0;
    auto release = [&](int p) {
      running -= static_cast<int64_t>(items[p].mem);
      if (plan)
        for (TensorIndex t : items[p].tensors)
          plan->push_back(Step::free(t));
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      const Item &item = items[ops[i]];
      running += static_cast<int64_t>(item.mem);
      top = std::max(top, running + item.transient);
      if (plan)
        plan->push_back(Step::compute(item.pos));
      for (int p : item.inputs)
        if (lastInStage[p] == static_cast<int>(i) && endsAt(p, st))
          release(p);
      bool usedLater =
          stamp[ops[i]] == epoch && lastInStage[ops[i]] > static_cast<int>(i);
      if (!usedLater && endsAt(ops[i], st))
        release(ops[i]);
    }
    return top;
  }

  void setEnd(int p, int k, int end) {
    Interval &in = s.iv[p][k];
    int64_t mem = static_cast<int64_t>(items[p].mem);
    if (end > in.end) {
      addCov(in.end + 1, end, mem);
      indexInterval(p, in.end + 1, end);
    } else {
      addCov(end + 1, in.end, -mem);
    }
    markDirty(in.end);
    markDirty(end);
    in.end = end;
  }

  void addUse(int q, int st) {
    auto &u = s.uses[q];
    u.insert(std::upper_bound(u.begin(), u.end(), st), st);
  }

  void removeUse(int q, int st) {
    auto &u = s.uses[q];
    auto it = std::lower_bound(u.begin(), u.end(), st);
    u.erase(it);
    int k = covering(q, st);
    if (k >= 0)
      trim(q, k);
  }

  /// Shrinks interval k of q to its last use (dropping a recomputation
  /// nobody uses).
  void trim(int q, int k) {
    if (items[q].pinned)
      return;
    Interval in = s.iv[q][k];
    const auto &u = s.uses[q];
    auto it = std::upper_bound(u.begin(), u.end(), in.end);
    int last = -2;
    if (it != u.begin() && *std::prev(it) >= in.start)
      last = *std::prev(it);
    if (last == -2 && k > 0) {
      eraseInterval(q, k);
      return;
    }
    int end = std::max(in.start, last);
    if (end < in.end)
      setEnd(q, k, end);
  }

  /// A new computation of p at stage `start`, resident through `end`.
  void insertInterval(int p, int start, int end) {
    auto &v = s.iv[p];
    auto it = std::upper_bound(
        v.begin(), v.end(), start,
        [](int x, const Interval &in) { return x < in.start; });
    v.insert(it, Interval{start, end});
    indexInterval(p, start, end);
    s.at[start].push_back(p);
    s.cost += items[p].cost;
    addCov(start + 1, end, static_cast<int64_t>(items[p].mem));
    markDirty(start);
    markDirty(end);
    for (int q : items[p].inputs)
      addUse(q, start);
    for (int q : items[p].inputs)
      cover(q, start);
  }

  void eraseInterval(int p, int k) {
    Interval in = s.iv[p][k];
    auto &here = s.at[in.start];
    here.erase(std::find(here.begin(), here.end(), p));
    s.cost -= items[p].cost;
    addCov(in.start + 1, in.end, -static_cast<int64_t>(items[p].mem));
    markDirty(in.start);
    markDirty(in.end);
    s.iv[p].erase(s.iv[p].begin() + k);
    for (int q : items[p].inputs)
      removeUse(q, in.start);
  }

  /// Whether stages (from, to) have room for `mem` more bytes.
  bool room(int from, int to, uint64_t mem) {
    refresh();
    return roomFast(from, to, mem);
  }

  /// Makes q resident at stage `st`: extend its interval before `st` where
  /// there is room (or q cannot be recomputed), else recompute it at `st`.
  void cover(int q, int st) {
    if (covering(q, st) >= 0)
      return;
    int k = before(q, st);
    if (k < 0)
      return; // cannot happen on a valid graph
    if (!items[q].recomputable || isTabu(q, st) ||
        room(s.iv[q][k].end, st, items[q].mem))
      setEnd(q, k, st);
    else
      insertInterval(q, st, st);
  }

  /// The estimated compute cost of recomputing p at stage `st` (its inputs
  /// covered as cover() would), each item once per estimate.
  double estimate(int p, int st, int depth) {
    stamp[p] = epoch;
    double total = items[p].cost;
    estimatedBytes += items[p].mem;
    if (depth > 64)
      return total;
    for (int q : items[p].inputs) {
      if (total > estimateCap)
        return total;
      if (stamp[q] == epoch || covering(q, st) >= 0 || !items[q].recomputable)
        continue;
      int k = before(q, st);
      if (k >= 0 && roomFast(s.iv[q][k].end, st, items[q].mem))
        continue;
      total += estimate(q, st, depth + 1);
    }
    return total;
  }

  bool roomFast(int from, int to, uint64_t mem) const {
    return !s.memory.anyAbove(std::max(from + 1, 0), to - 1,
                              budget - static_cast<int64_t>(mem));
  }

  /// Large graphs: for each bucket of kBucket stages, the items with an
  /// interval that overlaps it (a superset: shrunk intervals leave stale
  /// entries, checked on use and compacted).
  static constexpr int kBucket = 256;
  bool indexed = false;
  std::vector<std::vector<int>> buckets;

  void indexInterval(int p, int lo, int hi) {
    if (!indexed)
      return;
    lo = std::max(lo, 0);
    for (int b = lo / kBucket; b <= hi / kBucket && b < (int)buckets.size();
         ++b)
      buckets[b].push_back(p);
  }

  bool overlaps(int p, int lo, int hi) const {
    for (const Interval &in : s.iv[p])
      if (in.start <= hi && in.end >= lo)
        return true;
    return false;
  }

  /// The splittable items carried across `st` (start < st <= end).
  void carriedAt(int st, std::vector<int> &out, size_t sampleLimit = 0) {
    out.clear();
    if (!indexed) {
      for (size_t p = 0; p < items.size(); ++p) {
        if (!items[p].splittable)
          continue;
        int k = covering(static_cast<int>(p), st);
        if (k >= 0 && s.iv[p][k].start < st)
          out.push_back(static_cast<int>(p));
      }
      return;
    }
    std::vector<int> &bucket = buckets[st / kBucket];
    ++epoch;
    if (sampleLimit && bucket.size() > 4 * sampleLimit) {
      // A random sample straight from the bucket.
      for (size_t attempt = 0;
           attempt < 8 * sampleLimit && out.size() < sampleLimit; ++attempt) {
        int p = bucket[sampleRng() % bucket.size()];
        if (stamp[p] == epoch)
          continue;
        stamp[p] = epoch;
        if (!items[p].splittable)
          continue;
        int k = covering(p, st);
        if (k >= 0 && s.iv[p][k].start < st)
          out.push_back(p);
      }
      return;
    }
    size_t valid = 0;
    int lo = (st / kBucket) * kBucket, hi = lo + kBucket - 1;
    for (int p : bucket) {
      if (stamp[p] == epoch)
        continue;
      stamp[p] = epoch;
      if (overlaps(p, lo, hi))
        ++valid;
      if (!items[p].splittable)
        continue;
      int k = covering(p, st);
      if (k >= 0 && s.iv[p][k].start < st)
        out.push_back(p);
    }
    if (bucket.size() > 2 * valid + 64) {
      std::vector<int> kept;
      ++epoch;
      for (int p : bucket)
        if (stamp[p] != epoch && overlaps(p, lo, hi)) {
          stamp[p] = epoch;
          kept.push_back(p);
        }
      bucket = std::move(kept);
    }
  }

  std::vector<uint8_t> dirty;
  std::vector<int> dirtyList;
  std::vector<llvm::SmallVector<int, 2>> tabu;
  std::vector<uint32_t> stamp;
  std::vector<int> lastInStage;
  uint32_t epoch = 0;
  uint64_t estimatedBytes = 0;
  double estimateCap = 0;
  int64_t entryBytes = 0;
};

} // namespace

std::vector<detail::RetentionItem>
lms::detail::retentionItems(const Graph &graph, const DeviceSpec *device) {
  IntervalPlanner planner(graph, device, 0);
  return std::vector<RetentionItem>(planner.items.begin(), planner.items.end());
}

llvm::Expected<RematResult> lms::detail::planOfIntervals(
    const Graph &graph, uint64_t budget, const DeviceSpec *device,
    const RetentionIntervals &intervals, std::string method) {
  IntervalPlanner planner(graph, device, budget);
  planner.load(intervals);
  return finishPlan(graph, planner.emit(), budget, device, std::move(method));
}

/// The work limit of IntervalPlanner::settle: a quarter of the search's
/// (each of its iterations is a repair of a window of the graph), which
/// bounds what a budget that no repair fits costs before it fails.
static size_t settleIterations(const Graph &graph,
                               const RematOptions &options) {
  uint64_t search = options.searchIterations ? options.searchIterations
                                             : autoSearchIterations(graph);
  return static_cast<size_t>(std::max<uint64_t>(1, search / 4));
}

llvm::Expected<RematResult>
lms::detail::planRematIntervals(const Graph &graph, uint64_t budget,
                                const RematOptions &options,
                                RetentionIntervals *intervals) {
  IntervalPlanner planner(graph, options.device, budget, options.stageBudgets);

  planner.reset();
  size_t maxSplits = 64 * graph.numOps() + 1024;
  // The time limit is a hard cap, for the first plan too.
  detail::SearchLimits limits(options, autoSearchIterations(graph));
  auto elapsed = [&] { return limits.elapsed(); };
  auto expired = [&] { return limits.expired(); };
  double minimum = scheduleCost(graph, options.device);
  using Order = IntervalPlanner::Order;
  // Two searches, each with its own greedy seeds and large-neighbourhood
  // search: the splits of the first recompute a tensor at its next use (or
  // earlier where the stages before have room, or right after the crowded
  // stage); those of the second may also recompute it at the latest stage
  // before that use where its inputs are resident already (a recomputation
  // that reads nothing new). Neither wins on every graph (docs/Remat.md):
  // the cheaper plan is the result, the second search's on a tie.
  std::optional<State> best;
  double bestCost = std::numeric_limits<double>::infinity();
  // Whether the first search had to search from a stuck repair.
  bool firstSettled = false;
  for (bool covered : {false, true}) {
    if ((best && bestCost <= minimum + 1e-9) ||
        (covered && !options.coveredSearch))
      break;
    planner.coveredCandidates = covered;
    std::mt19937_64 rng(options.seed);
    // Two greedy orders (the worst stage first, the first stage first): the
    // cheaper plan seeds the search; then noisy restarts if neither fits.
    std::optional<State> seedState;
    for (Order order : {Order::Worst, Order::First}) {
      // Large graphs: one greedy pass (the first-stage order) is enough.
      if (order == Order::Worst && graph.numOps() > 20000)
        continue;
      planner.order = order;
      planner.reset();
      if (planner.repair(nullptr, 0, maxSplits, expired) &&
          (!seedState || planner.s.cost < seedState->cost))
        seedState = planner.s;
    }
    std::optional<State> closest;
    int64_t closestOverflow = std::numeric_limits<int64_t>::max();
    int closestStuck = -1;
    for (int attempt = 0; !seedState && attempt < 8 && !expired(); ++attempt) {
      planner.order = attempt % 2 ? Order::First : Order::Worst;
      planner.reset();
      if (planner.repair(&rng, 0.5, maxSplits, expired)) {
        seedState = planner.s;
        break;
      }
      int64_t overflow = planner.totalOverflow();
      if (overflow < closestOverflow) {
        closestOverflow = overflow;
        closest = planner.s;
        closestStuck = planner.failureOp;
      }
    }
    // Still nothing: the first search searches from the closest of those
    // plans, over plans that do not fit yet, for one that does. The second
    // goes on from the first one's plan where the first needed that search
    // too (the repairs of both get stuck on such graphs); where the first
    // one's repairs fit and the second's do not, the first one's plan is
    // the result, at no further cost (going on from it there cost the
    // MLIR passes' joint planner time and changed no plan).
    if (!seedState && best) {
      if (!firstSettled)
        continue;
      seedState = *best;
    }
    // Only from a plan near fitting: where the stages are over by more than
    // half the budget in all, the repairs' windows do not reach a fit (the
    // joint planner's trials of a mix that cannot fit are like that), and
    // the search would only delay the failure.
    if (!seedState && closest && options.settleStuck && !expired() &&
        closestOverflow <= planner.budget / 2) {
      planner.s = std::move(*closest);
      planner.reindex();
      planner.markAllDirty();
      planner.failureOp = closestStuck;
      if (planner.settle(rng, maxSplits, settleIterations(graph, options),
                         expired))
        seedState = planner.s;
      firstSettled = !covered;
    }
    if (!seedState)
      continue;
    planner.s = std::move(*seedState);
    planner.reindex();
    planner.markAllDirty();
    State searchBest = planner.s;
    double searchCost = planner.s.cost;
    double currentCost = searchCost;
    if (options.progress && searchCost < bestCost)
      options.progress({elapsed(), searchCost, 0});
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    size_t iteration = 0;
    // Stops at the time limit, at the trivial bound, or when a long run of
    // ruins brought nothing (small graphs).
    size_t sinceImprovement = 0;
    size_t patience = std::max<size_t>(5000, 50 * graph.numOps());
    // The state before each ruin, assigned (not constructed) so that its
    // vectors keep their storage from one iteration to the next: a copy
    // constructed per iteration spent an eighth of the search's time in
    // malloc and free (a fifth under ASan).
    State saved;
    while (searchCost > minimum + 1e-9 && limits.allows(iteration) &&
           sinceImprovement < patience) {
      ++iteration;
      saved = planner.s;
      std::vector<std::pair<int, int>> recomputes = planner.recomputations();
      if (recomputes.empty())
        break;
      // Ruin: undo one to three recomputations, or every one starting in a
      // window of stages.
      if (unit(rng) < 0.5) {
        int count = 1 + static_cast<int>(rng() % 3);
        for (int c = 0; c < count && !recomputes.empty(); ++c) {
          auto [p, k] = recomputes[rng() % recomputes.size()];
          if (k < static_cast<int>(planner.s.iv[p].size()))
            planner.merge(p, k);
          recomputes = planner.recomputations();
        }
      } else {
        int center = planner.s.iv[recomputes[rng() % recomputes.size()].first]
                         .back()
                         .start;
        int width = 1 + static_cast<int>(rng() % 8);
        bool merged = true;
        while (merged) {
          merged = false;
          for (auto [p, k] : planner.recomputations()) {
            int st = planner.s.iv[p][k].start;
            if (st >= center - width && st <= center + width) {
              planner.merge(p, k);
              merged = true;
              break;
            }
          }
        }
      }
      planner.order = rng() % 2 ? Order::First : Order::Worst;
      bool ok = planner.repair(&rng, 0.3, maxSplits, expired);
      double temperature = 0.01 * limits.remaining(iteration);
      ++sinceImprovement;
      if (ok && planner.s.cost <= currentCost * (1 + temperature)) {
        currentCost = planner.s.cost;
        if (currentCost < searchCost - 1e-9) {
          sinceImprovement = 0;
          searchCost = currentCost;
          searchBest = planner.s;
          if (options.progress && searchCost < bestCost)
            options.progress({elapsed(), searchCost, 0});
        }
      } else {
        std::swap(planner.s, saved);
        planner.reindex();
      }
      if (iteration % 500 == 0) {
        planner.s = searchBest;
        planner.reindex();
        currentCost = searchCost;
      }
    }
    if (searchCost <= bestCost) {
      bestCost = searchCost;
      best = std::move(searchBest);
    }
  }
  if (!best && limits.stoppedByCap())
    return detail::noPlanInTime(options.timeLimitSeconds);
  if (!best)
    return llvm::make_error<RematFailure>(planner.failure, planner.failureOp);
  planner.s = std::move(*best);
  planner.reindex();
  if (intervals)
    *intervals = planner.intervals();
  llvm::Expected<RematResult> result =
      detail::finishPlan(graph, planner.emit(), budget, options.device,
                         "heuristic", options.stageBudgets);
  if (result) {
    result->stoppedByTimeLimit = limits.stoppedByCap();
    result->lowerBound = minimum;
    result->optimal = result->computeCost <= minimum + 1e-9;
  }
  return result;
}
