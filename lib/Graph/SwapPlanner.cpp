//===- SwapPlanner.cpp - LMS's swap planner -------------------------------===//
//
// Greedy on the peak, refined by simulation:
//
// 1. Every gap in a tensor's uses is a candidate (the options and the IR
//    layer may rule some out). Offloading every candidate at once gives the
//    smallest reachable peak; a budget below it is infeasible.
// 2. While the peak op P is over budget, pick among the gaps around P the one
//    with the least estimated stall per byte it releases at P (plus a small
//    price on the bytes moved, so that few large transfers win over many
//    small ones). Its release point is the first op by which the copy-out has
//    finished behind compute, its prefetch point the last op from which the
//    copy-in still finishes behind compute before the next use (XLA's
//    overlap idea); when that would leave P uncovered, they are moved to P's
//    neighbours and the stall is accounted. A gap already offloaded may be
//    widened the same way.
// 3. Offloads that are no longer needed are dropped, later offloads of an
//    unchanged value reuse the first host copy, and the plan is simulated
//    (compute stream, one copy stream each way): swap-ins whose copy the
//    consumer waits for are moved earlier and releases that stall are moved
//    later, as far as the budget allows.
//
// Memory is tracked per op with a segment tree (range add, range max): an
// offload of t over (r, s) lowers every op strictly between by bytes(t),
// which is exact for the rewritten graph (see applySwapPlan).
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace lms;

namespace {

/// Range add, range max (leftmost argmax) over op indices.
class SegmentTree {
public:
  explicit SegmentTree(const std::vector<int64_t> &values)
      : n(std::max<size_t>(1, values.size())), maxv(4 * n, 0), arg(4 * n, 0),
        lazy(4 * n, 0) {
    build(1, 0, n - 1, values);
  }
  void add(int64_t lo, int64_t hi, int64_t delta) {
    if (lo > hi)
      return;
    add(1, 0, n - 1, lo, hi, delta);
  }
  /// Max over [lo, hi] and its leftmost index.
  std::pair<int64_t, int64_t> query(int64_t lo, int64_t hi) {
    if (lo > hi)
      return {std::numeric_limits<int64_t>::min(), -1};
    return query(1, 0, n - 1, lo, hi);
  }
  std::pair<int64_t, int64_t> top() { return {maxv[1], arg[1]}; }
  int64_t get(int64_t i) { return query(i, i).first; }

private:
  void build(size_t node, size_t lo, size_t hi,
             const std::vector<int64_t> &values) {
    if (lo == hi) {
      maxv[node] =
          lo < values.size() ? values[lo] : std::numeric_limits<int64_t>::min();
      arg[node] = lo;
      return;
    }
    size_t mid = (lo + hi) / 2;
    build(2 * node, lo, mid, values);
    build(2 * node + 1, mid + 1, hi, values);
    pull(node);
  }
  void pull(size_t node) {
    if (maxv[2 * node] >= maxv[2 * node + 1]) {
      maxv[node] = maxv[2 * node];
      arg[node] = arg[2 * node];
    } else {
      maxv[node] = maxv[2 * node + 1];
      arg[node] = arg[2 * node + 1];
    }
    maxv[node] += lazy[node];
  }
  void add(size_t node, size_t lo, size_t hi, int64_t l, int64_t h,
           int64_t delta) {
    if (h < static_cast<int64_t>(lo) || l > static_cast<int64_t>(hi))
      return;
    if (l <= static_cast<int64_t>(lo) && static_cast<int64_t>(hi) <= h) {
      maxv[node] += delta;
      lazy[node] += delta;
      return;
    }
    size_t mid = (lo + hi) / 2;
    add(2 * node, lo, mid, l, h, delta);
    add(2 * node + 1, mid + 1, hi, l, h, delta);
    pull(node);
  }
  std::pair<int64_t, int64_t> query(size_t node, size_t lo, size_t hi,
                                    int64_t l, int64_t h) {
    if (h < static_cast<int64_t>(lo) || l > static_cast<int64_t>(hi))
      return {std::numeric_limits<int64_t>::min(), -1};
    if (l <= static_cast<int64_t>(lo) && static_cast<int64_t>(hi) <= h)
      return {maxv[node], arg[node]};
    size_t mid = (lo + hi) / 2;
    auto left = query(2 * node, lo, mid, l, h);
    auto right = query(2 * node + 1, mid + 1, hi, l, h);
    auto best = left.first >= right.first ? left : right;
    if (best.second >= 0)
      best.first += lazy[node];
    return best;
  }

  size_t n;
  std::vector<int64_t> maxv, arg, lazy;
};

/// A candidate gap and, once offloaded, its release and prefetch points.
struct Gap {
  TensorIndex tensor;
  OpIndex a, b;
  int64_t bytes;
  int valueId;
  double d2h, h2d;
  bool active = false;
  Position r = 0;
  OpIndex s = 0;
  bool reuse = false;
};

/// Shared state of the planner for one graph, device and budget.
class Planner {
public:
  Planner(const Graph &graph, const DeviceSpec &device,
          const SwapOptions &options)
      : graph(graph), device(device), options(options) {
    OpIndex n = static_cast<OpIndex>(graph.numOps());
    prefix.assign(n + 1, 0);
    for (OpIndex i = 0; i < n; ++i) {
      const Op &op = graph.op(i);
      prefix[i + 1] =
          prefix[i] +
          (op.kind == OpKind::Compute ? device.computeSeconds(op.cost) : 0);
    }
    collectGaps();
  }

  /// Compute seconds of ops [from, to).
  double compute(OpIndex from, OpIndex to) const {
    if (to <= from)
      return 0;
    return prefix[to] - prefix[std::max<OpIndex>(from, 0)];
  }

  void collectGaps() {
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
         ++t) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.space != MemorySpace::Device || tensor.liveOut ||
          tensor.bytes == 0 || tensor.users.empty())
        continue;
      OpIndex previous = tensor.producer;
      for (OpIndex use : tensor.users) {
        OpIndex inside = use - previous - 1;
        bool allowed = inside >= 1;
        if (options.swapoutThreshold >= 0)
          allowed &= inside > options.swapoutThreshold;
        if (options.swapinGroupby >= 0)
          allowed &= use - previous > options.swapinGroupby;
        int valueId = 0;
        if (allowed && options.valueAfterGap)
          valueId = options.valueAfterGap(t, previous, use);
        if (allowed && valueId >= 0) {
          Gap gap;
          gap.tensor = t;
          gap.a = previous;
          gap.b = use;
          gap.bytes = static_cast<int64_t>(tensor.bytes);
          gap.valueId = valueId;
          // A host-backed tensor (a constant) is already on the host.
          gap.d2h = tensor.hostBacked ? 0 : device.d2hSeconds(tensor.bytes);
          gap.h2d = device.h2dSeconds(tensor.bytes);
          gaps.push_back(gap);
        }
        previous = use;
      }
    }
    std::sort(gaps.begin(), gaps.end(),
              [](const Gap &x, const Gap &y) { return x.a < y.a; });
    // Per tensor, its gaps in order (for host-copy reuse).
    for (size_t i = 0; i < gaps.size(); ++i)
      gapsOfTensor[gaps[i].tensor].push_back(i);
    for (auto &[t, list] : gapsOfTensor)
      std::sort(list.begin(), list.end(),
                [&](size_t x, size_t y) { return gaps[x].a < gaps[y].a; });
  }

  /// The previous offloaded gap of the same tensor, if it holds the same
  /// value (its host copy can be reused).
  bool canReuse(size_t g) const {
    // A constant's host copy is its global: always there, never changed.
    if (graph.tensor(gaps[g].tensor).hostBacked)
      return true;
    if (options.canReuseAfter &&
        !options.canReuseAfter(gaps[g].tensor, gaps[g].a))
      return false;
    const std::vector<size_t> &list = gapsOfTensor.at(gaps[g].tensor);
    auto it = llvm::find(list, g);
    while (it != list.begin()) {
      --it;
      if (gaps[*it].active)
        return gaps[*it].valueId == gaps[g].valueId;
    }
    return false;
  }

  /// The earliest release point after which the copy-out has finished behind
  /// compute (issued after op a).
  Position hidingRelease(const Gap &gap) const {
    // Smallest r >= a with compute(a + 1, r + 1) >= d2h.
    double need = prefix[gap.a + 1] + gap.d2h;
    auto it = std::lower_bound(prefix.begin() + gap.a + 1, prefix.end(), need);
    OpIndex r = static_cast<OpIndex>(it - prefix.begin()) - 1;
    return std::min<Position>(r, gap.b - 1);
  }

  /// The latest prefetch point from which the copy-in finishes behind compute
  /// before op b.
  OpIndex hidingPrefetch(const Gap &gap) const {
    if (options.swapinAhead >= 0)
      return std::max<OpIndex>(gap.a + 1, gap.b - options.swapinAhead);
    // Largest s <= b with compute(s, b) >= h2d.
    double need = prefix[gap.b] - gap.h2d;
    auto it = std::upper_bound(prefix.begin() + gap.a + 1,
                               prefix.begin() + gap.b + 1, need);
    OpIndex s = static_cast<OpIndex>(it - prefix.begin()) - 1;
    return std::max<OpIndex>(s, gap.a + 1);
  }

  double releaseStall(const Gap &gap, Position r, bool reuse) const {
    if (reuse)
      return 0;
    return std::max(0.0, gap.d2h - compute(gap.a + 1, r + 1));
  }
  double prefetchStall(const Gap &gap, OpIndex s) const {
    return std::max(0.0, gap.h2d - compute(s, gap.b));
  }

  const Graph &graph;
  const DeviceSpec &device;
  const SwapOptions &options;
  std::vector<double> prefix;
  std::vector<Gap> gaps;
  std::map<TensorIndex, std::vector<size_t>> gapsOfTensor;
};

/// The memory during every op of the schedule.
std::vector<int64_t> opMemory(const Graph &graph) {
  MemoryProfile profile = evaluateSchedule(graph);
  std::vector<int64_t> during(graph.numOps(), 0);
  for (auto [op, memory] : profile.computeSteps)
    during[op] = static_cast<int64_t>(memory.during);
  return during;
}

} // namespace

uint64_t lms::entryBytes(const Graph &graph) {
  uint64_t bytes = 0;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.producer == kEntry && tensor.space == MemorySpace::Device &&
        graph.lastUse(t) != kEntry)
      bytes += tensor.bytes;
  }
  return bytes;
}

std::pair<uint64_t, OpIndex> lms::smallestSwapPeak(const Graph &graph,
                                                   const SwapOptions &options) {
  DeviceSpec anyDevice;
  Planner planner(graph, anyDevice, options);
  std::vector<int64_t> during = opMemory(graph);
  std::vector<int64_t> delta(graph.numOps() + 1, 0);
  for (const Gap &gap : planner.gaps) {
    delta[gap.a + 1] -= gap.bytes;
    delta[gap.b] += gap.bytes;
  }
  // The arguments are on the device when the function starts: nothing can
  // be offloaded before that.
  int64_t running = 0, best = static_cast<int64_t>(entryBytes(graph));
  OpIndex at = kEntry;
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    running += delta[i];
    if (during[i] + running > best) {
      best = during[i] + running;
      at = i;
    }
  }
  return {static_cast<uint64_t>(std::max<int64_t>(best, 0)), at};
}

static SwapPlan buildPlan(const Planner &planner,
                          const std::vector<size_t> &order) {
  SwapPlan plan;
  for (size_t g : order) {
    const Gap &gap = planner.gaps[g];
    SwapDecision d;
    d.tensor = gap.tensor;
    d.lastUse = gap.a;
    d.nextUse = gap.b;
    d.swapOutAfter = gap.a;
    d.releaseAfter = gap.r;
    d.swapInBefore = gap.s;
    d.reuseHostCopy = gap.reuse;
    plan.decisions.push_back(d);
  }
  return plan;
}

/// Why no offloading plan fits: the op (or the entry) at which the
/// smallest feasible budget `smallest` binds, and what it holds there.
static void describeInfeasible(const Graph &graph, uint64_t smallest,
                               OpIndex smallestAt, Infeasible &infeasible) {
  infeasible.smallestBudget = smallest;
  infeasible.op = smallestAt;
  if (smallestAt == kEntry) {
    infeasible.reason = llvm::formatv("the function's arguments are on "
                                      "the device when it starts: {0}",
                                      formatBytes(smallest))
                            .str();
  } else {
    const Op &op = graph.op(smallestAt);
    int64_t signedBytes = op.transientBytes;
    for (TensorIndex t : llvm::concat<const TensorIndex>(op.inputs, op.outputs))
      if (graph.tensor(t).space == MemorySpace::Device)
        signedBytes += graph.tensor(t).bytes;
    uint64_t opBytes = static_cast<uint64_t>(std::max<int64_t>(signedBytes, 0));
    // The last op without results: the function's return.
    bool returns = smallestAt + 1 == static_cast<OpIndex>(graph.numOps()) &&
                   op.outputs.empty() && !op.inputs.empty();
    infeasible.reason =
        returns
            ? llvm::formatv("the values it returns stay on the device "
                            "and need {0}",
                            formatBytes(opBytes))
                  .str()
            : llvm::formatv("its operands, results and temporaries need {0}",
                            formatBytes(opBytes))
                  .str();
    if (smallest > opBytes)
      infeasible.reason +=
          llvm::formatv(" and {0} of other tensors live across it cannot "
                        "be offloaded",
                        formatBytes(smallest - opBytes))
              .str();
  }
}

namespace {

/// The offloading search of planSwaps on one graph and budget: the gaps of
/// the planner, the device bytes at every position with the active offloads
/// applied, and the steps that change them.
class OffloadSearch {
public:
  OffloadSearch(const Graph &graph, const DeviceSpec &device,
                const SwapOptions &options, std::vector<int64_t> during,
                int64_t limit)
      : graph(graph), device(device), options(options),
        planner(graph, device, options), gaps(planner.gaps),
        memory(std::move(during)), limit(limit) {}

  /// 2. Greedy on the peak: while some position is over the limit, offload
  /// the gap around it (or widen an active one) with the least stall and
  /// transfer per byte of relief.
  llvm::Error coverPeaks() {
    while (true) {
      auto [peak, at] = memory.top();
      if (peak <= limit)
        break;
      OpIndex p = static_cast<OpIndex>(at);
      int64_t excess = peak - limit;
      double bestScore = std::numeric_limits<double>::infinity();
      int64_t bestBytes = 0;
      size_t best = gaps.size();
      Position bestR = 0;
      OpIndex bestS = 0;
      // Gaps are sorted by a; those around p have a < p.
      size_t end = std::lower_bound(gaps.begin(), gaps.end(), p,
                                    [](const Gap &gap, OpIndex value) {
                                      return gap.a < value;
                                    }) -
                   gaps.begin();
      for (size_t g = 0; g < end; ++g) {
        const Gap &gap = gaps[g];
        if (gap.b <= p || (gap.active && gap.r < p && p < gap.s))
          continue;
        bool reuse = !gap.active && planner.canReuse(g);
        Position r =
            reuse ? gap.a
                  : std::min<Position>(planner.hidingRelease(gap), p - 1);
        OpIndex s = std::max<OpIndex>(planner.hidingPrefetch(gap), p + 1);
        double stall =
            planner.releaseStall(gap, r, reuse) + planner.prefetchStall(gap, s);
        double transfer = (reuse ? 0 : gap.d2h) + gap.h2d;
        if (gap.active) {
          r = std::min(r, gap.r);
          s = std::max(s, gap.s);
          stall = planner.releaseStall(gap, r, gap.reuse) +
                  planner.prefetchStall(gap, s) -
                  planner.releaseStall(gap, gap.r, gap.reuse) -
                  planner.prefetchStall(gap, gap.s);
          transfer = 0;
        }
        double relief = static_cast<double>(std::min(gap.bytes, excess));
        double score = (stall + transferPrice * transfer) / relief;
        if (score < bestScore ||
            (score == bestScore && gap.bytes > bestBytes)) {
          bestScore = score;
          bestBytes = gap.bytes;
          best = g;
          bestR = r;
          bestS = s;
        }
      }
      if (best == gaps.size())
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv(
                "internal error: no tensor can be offloaded around op "
                "{0}",
                p)
                .str());
      if (!gaps[best].active)
        gaps[best].reuse = planner.canReuse(best);
      setWindow(best, bestR, bestS);
    }

    return llvm::Error::success();
  }

  /// 3a. Drops offloads the budget no longer needs, costliest first.
  void dropUnneeded() {
    std::vector<size_t> active;
    for (size_t g = 0; g < gaps.size(); ++g)
      if (gaps[g].active)
        active.push_back(g);
    auto totalCost = [&](size_t g) {
      const Gap &gap = gaps[g];
      return planner.releaseStall(gap, gap.r, gap.reuse) +
             planner.prefetchStall(gap, gap.s) +
             transferPrice * ((gap.reuse ? 0 : gap.d2h) + gap.h2d);
    };
    std::sort(active.begin(), active.end(),
              [&](size_t x, size_t y) { return totalCost(x) > totalCost(y); });
    for (size_t g : active) {
      Gap &gap = gaps[g];
      if (memory.query(gap.r + 1, gap.s - 1).first + gap.bytes <= limit)
        deactivate(g);
    }
  }

  /// 3b. Host-copy reuse, in order of the gaps of each tensor: a later
  /// offload of an unchanged value needs no copy-out and releases at its
  /// last use.
  void reuseHostCopies() {
    for (auto &[t, list] : planner.gapsOfTensor) {
      int previousValue = -1;
      bool havePrevious = false;
      for (size_t g : list) {
        Gap &gap = gaps[g];
        if (!gap.active)
          continue;
        bool reuse = graph.tensor(t).hostBacked ||
                     (havePrevious && previousValue == gap.valueId &&
                      (!options.canReuseAfter ||
                       options.canReuseAfter(gap.tensor, gap.a)));
        if (reuse && !gap.reuse) {
          gap.reuse = true;
          memory.add(gap.a + 1, gap.r, -gap.bytes);
          gap.r = gap.a;
        } else if (!reuse && gap.reuse) {
          // Its predecessor was dropped: it needs its own copy-out again, and
          // releasing at the same point makes that copy synchronous (the
          // refinement below may release later).
          gap.reuse = false;
        }
        havePrevious = true;
        previousValue = gap.valueId;
      }
    }
  }

  /// 3c. Refines the windows by simulation: a consumer that waits for its
  /// copy-in gets an earlier prefetch, a wait that stalls a later release,
  /// as far as the limit allows.
  void refineBySimulation() {
    for (int round = 0; round < 8; ++round) {
      std::vector<size_t> order = activeOrder();
      SwapPlan plan = buildPlan(planner, order);
      SwappedGraph swapped = applySwapPlan(graph, plan);
      Timeline tl = simulate(swapped.graph, device);
      // The index in `swapped` of every original op.
      std::vector<OpIndex> swappedIndex(graph.numOps(), 0);
      for (size_t i = 0; i < swapped.originalOp.size(); ++i)
        if (swapped.originalOp[i] >= 0)
          swappedIndex[swapped.originalOp[i]] = static_cast<OpIndex>(i);
      bool changed = false;
      for (size_t k = 0; k < order.size(); ++k) {
        Gap &gap = gaps[order[k]];
        const SwappedGraph::DecisionOps &ops = swapped.decisionOps[k];
        // A consumer waiting for the copy-in: prefetch earlier.
        OpIndex consumer = swappedIndex[gap.b];
        double computeReady = consumer > 0 ? tl.end[consumer - 1] : 0;
        for (OpIndex j = consumer - 1; j >= 0; --j)
          if (swapped.graph.op(j).kind == OpKind::Compute) {
            computeReady = tl.end[j];
            break;
          }
        double inStall = tl.end[ops.swapIn] - computeReady;
        if (inStall > 1e-12 && options.swapinAhead < 0) {
          OpIndex s = gap.s;
          double gained = 0;
          while (s - 1 > gap.r && gained < inStall &&
                 memory.get(s - 1) + gap.bytes <= limit) {
            --s;
            gained += planner.compute(s, s + 1);
            memory.add(s, s, gap.bytes);
          }
          if (s != gap.s) {
            gap.s = s;
            changed = true;
          }
        }
        // A wait that stalls: release later.
        if (ops.wait >= 0) {
          double waitStall = tl.end[ops.wait] - tl.start[ops.wait];
          if (waitStall > 1e-12) {
            Position r = gap.r;
            double gained = 0;
            while (r + 1 < gap.s - 1 && gained < waitStall &&
                   memory.get(r + 1) + gap.bytes <= limit) {
              ++r;
              gained += planner.compute(r, r + 1);
              memory.add(r, r, gap.bytes);
            }
            if (r != gap.r) {
              gap.r = r;
              changed = true;
            }
          }
        }
      }
      if (!changed)
        break;
    }
  }

  /// The active offloads, in the planner's order of gaps.
  std::vector<size_t> activeOrder() const {
    std::vector<size_t> order;
    for (size_t g = 0; g < gaps.size(); ++g)
      if (gaps[g].active)
        order.push_back(g);
    return order;
  }

  const Planner &getPlanner() const { return planner; }

private:
  /// Applies a new (r, s) to gap g, updating memory over what changes.
  void setWindow(size_t g, Position r, OpIndex s) {
    Gap &gap = gaps[g];
    if (gap.active)
      memory.add(gap.r + 1, gap.s - 1, gap.bytes);
    gap.active = true;
    gap.r = r;
    gap.s = s;
    memory.add(r + 1, s - 1, -gap.bytes);
  }
  void deactivate(size_t g) {
    Gap &gap = gaps[g];
    if (!gap.active)
      return;
    memory.add(gap.r + 1, gap.s - 1, gap.bytes);
    gap.active = false;
  }

  /// The price of a byte moved, against a second of stall.
  static constexpr double transferPrice = 0.1;

  const Graph &graph;
  const DeviceSpec &device;
  const SwapOptions &options;
  Planner planner;
  std::vector<Gap> &gaps;
  SegmentTree memory;
  int64_t limit;
};

} // namespace

llvm::Expected<SwapResult>
lms::planSwaps(const Graph &graph, const DeviceSpec &device, uint64_t budget,
               const SwapOptions &options, Infeasible *infeasible) {
  SwapResult result;
  std::vector<int64_t> during = opMemory(graph);
  int64_t limit = static_cast<int64_t>(budget);
  if (graph.numOps() == 0 || SegmentTree(during).top().first <= limit) {
    MemoryProfile profile = evaluateSchedule(graph);
    result.peakBytes = profile.peakBytes;
    result.hostPeakBytes = profile.hostPeakBytes;
    result.timeline = simulate(graph, device);
    return result;
  }

  auto [smallest, smallestAt] = smallestSwapPeak(graph, options);
  if (smallest > budget) {
    if (infeasible)
      describeInfeasible(graph, smallest, smallestAt, *infeasible);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("budget {0} is below the smallest feasible budget {1}",
                      budget, smallest)
            .str());
  }

  OffloadSearch search(graph, device, options, std::move(during), limit);
  if (llvm::Error error = search.coverPeaks())
    return std::move(error);
  search.dropUnneeded();
  search.reuseHostCopies();
  search.refineBySimulation();

  result.plan = buildPlan(search.getPlanner(), search.activeOrder());
  SwappedGraph swapped = applySwapPlan(graph, result.plan);
  MemoryProfile profile = evaluateSchedule(swapped.graph);
  result.peakBytes = profile.peakBytes;
  result.hostPeakBytes = profile.hostPeakBytes;
  result.timeline = simulate(swapped.graph, device);
  if (result.peakBytes > budget)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("internal error: the plan's peak {0} exceeds the budget "
                      "{1}",
                      result.peakBytes, budget)
            .str());
  return result;
}
