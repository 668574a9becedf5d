//===- Schedule.cpp - Memory-aware op scheduling --------------------------===//

#include "LMS/Graph/Schedule.h"

#include "LMS/Graph/Memory.h"

#include "SplitMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace lms;

static llvm::Error scheduleError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {

/// The precedence constraints as adjacency lists (deduplicated).
struct Constraints {
  std::vector<std::vector<OpIndex>> preds, succs;
};

/// Every dependence of the graph plus `edges`. Fails on an edge out of range
/// or a self edge.
llvm::Expected<Constraints>
buildConstraints(const Graph &graph,
                 llvm::ArrayRef<std::pair<OpIndex, OpIndex>> edges) {
  OpIndex n = static_cast<OpIndex>(graph.numOps());
  std::vector<std::pair<OpIndex, OpIndex>> all;
  for (const Tensor &tensor : graph.getTensors()) {
    if (tensor.producer != kEntry)
      for (OpIndex user : tensor.users)
        if (user != tensor.producer)
          all.push_back({tensor.producer, user});
  }
  // An op that writes a tensor in place comes after the readers of what it
  // overwrites and before the readers of what it writes.
  for (OpIndex op = 0; op < n; ++op)
    for (TensorIndex t : graph.op(op).updates)
      for (OpIndex user : graph.tensor(t).users)
        if (user < op)
          all.push_back({user, op});
        else if (user > op)
          all.push_back({op, user});
  // Swap ops keep their order among themselves.
  OpIndex lastSwap = -1;
  for (OpIndex op = 0; op < n; ++op) {
    if (graph.op(op).kind == OpKind::Compute)
      continue;
    if (lastSwap >= 0)
      all.push_back({lastSwap, op});
    lastSwap = op;
  }
  for (auto [before, after] : edges) {
    if (before < 0 || before >= n || after < 0 || after >= n)
      return scheduleError(llvm::formatv(
          "ordering constraint ({0}, {1}) names an op outside 0..{2}", before,
          after, n - 1));
    if (before == after)
      return scheduleError(
          llvm::formatv("ordering constraint ({0}, {0}) orders an op "
                        "before itself",
                        before));
    all.push_back({before, after});
  }
  llvm::sort(all);
  all.erase(std::unique(all.begin(), all.end()), all.end());
  Constraints c;
  c.preds.resize(n);
  c.succs.resize(n);
  for (auto [before, after] : all) {
    c.succs[before].push_back(after);
    c.preds[after].push_back(before);
  }
  return c;
}

/// Evaluates orders (given as positions of ops) with the reference plan's
/// memory model: the peak, and optionally the bytes during each position.
class Evaluator {
public:
  explicit Evaluator(const Graph &graph) : graph(graph) {
    size_t n = graph.numOps();
    outBytes.assign(n, 0);
    for (OpIndex op = 0; op < static_cast<OpIndex>(n); ++op)
      for (TensorIndex t : graph.op(op).outputs)
        if (graph.tensor(t).space == MemorySpace::Device)
          outBytes[op] += graph.tensor(t).bytes;
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
         ++t) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.space != MemorySpace::Device || tensor.bytes == 0)
        continue;
      // An unused argument is freed before the first op.
      if (tensor.producer == kEntry && tensor.users.empty() && !tensor.liveOut)
        continue;
      counted.push_back(t);
    }
    diff.assign(n + 2, 0);
    during.assign(n, 0);
  }

  /// The bytes during the op at each position (`during`), and the peak.
  uint64_t evaluate(llvm::ArrayRef<int32_t> pos,
                    llvm::ArrayRef<OpIndex> order) {
    int32_t n = static_cast<int32_t>(order.size());
    std::fill(diff.begin(), diff.end(), 0);
    for (TensorIndex t : counted) {
      const Tensor &tensor = graph.tensor(t);
      int32_t start = tensor.producer == kEntry ? -1 : pos[tensor.producer];
      int32_t end = start;
      if (tensor.liveOut)
        end = n;
      else
        for (OpIndex user : tensor.users)
          end = std::max(end, pos[user]);
      // Resident before the ops at positions start+1 .. end.
      if (end > start) {
        diff[start + 1] += static_cast<int64_t>(tensor.bytes);
        diff[std::min(end, n) + 1] -= static_cast<int64_t>(tensor.bytes);
      }
    }
    int64_t before = 0;
    uint64_t peak = 0;
    for (int32_t k = 0; k < n; ++k) {
      before += diff[k];
      const Op &op = graph.op(order[k]);
      int64_t withOutputs = before + static_cast<int64_t>(outBytes[order[k]]);
      int64_t bytes = op.transientBytes >= 0
                          ? withOutputs + op.transientBytes
                          : std::max(before, withOutputs + op.transientBytes);
      during[k] = static_cast<uint64_t>(bytes);
      peak = std::max(peak, during[k]);
    }
    return peak;
  }

  const std::vector<uint64_t> &getDuring() const { return during; }

private:
  const Graph &graph;
  std::vector<uint64_t> outBytes;
  std::vector<TensorIndex> counted;
  std::vector<int64_t> diff;
  std::vector<uint64_t> during;
};

std::vector<int32_t> positionsOf(llvm::ArrayRef<OpIndex> order) {
  std::vector<int32_t> pos(order.size());
  for (auto [k, op] : llvm::enumerate(order))
    pos[op] = static_cast<int32_t>(k);
  return pos;
}

/// Device bytes of the tensors an op allocates.
uint64_t deviceOutputBytes(const Graph &graph, OpIndex op) {
  uint64_t bytes = 0;
  for (TensorIndex t : graph.op(op).outputs)
    if (graph.tensor(t).space == MemorySpace::Device)
      bytes += graph.tensor(t).bytes;
  return bytes;
}

/// XLA's list scheduler: among the ready ops, the one whose outputs minus
/// the inputs it frees (it is their last unscheduled user) is smallest;
/// ties go to the earlier op of the given order.
std::vector<OpIndex> listSchedule(const Graph &graph, const Constraints &c) {
  OpIndex n = static_cast<OpIndex>(graph.numOps());
  std::vector<int64_t> score(n);
  std::vector<uint32_t> remaining(graph.numTensors(), 0);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    remaining[t] = static_cast<uint32_t>(graph.tensor(t).users.size());
  auto frees = [&](TensorIndex t) {
    const Tensor &tensor = graph.tensor(t);
    return tensor.space == MemorySpace::Device && !tensor.liveOut;
  };
  for (OpIndex op = 0; op < n; ++op) {
    score[op] = static_cast<int64_t>(deviceOutputBytes(graph, op)) +
                std::max<int64_t>(0, graph.op(op).transientBytes);
    for (TensorIndex t : graph.op(op).inputs)
      if (frees(t) && remaining[t] == 1)
        score[op] -= static_cast<int64_t>(graph.tensor(t).bytes);
  }
  std::vector<uint32_t> indegree(n);
  std::set<std::pair<int64_t, OpIndex>> ready;
  for (OpIndex op = 0; op < n; ++op) {
    indegree[op] = static_cast<uint32_t>(c.preds[op].size());
    if (!indegree[op])
      ready.insert({score[op], op});
  }
  std::vector<uint8_t> scheduled(n, 0);
  std::vector<OpIndex> order;
  order.reserve(n);
  while (!ready.empty()) {
    OpIndex op = ready.begin()->second;
    ready.erase(ready.begin());
    scheduled[op] = 1;
    order.push_back(op);
    for (TensorIndex t : graph.op(op).inputs) {
      if (--remaining[t] != 1 || !frees(t))
        continue;
      // The last user left now frees t.
      for (OpIndex user : graph.tensor(t).users) {
        if (scheduled[user])
          continue;
        bool wasReady = !indegree[user];
        if (wasReady)
          ready.erase({score[user], user});
        score[user] -= static_cast<int64_t>(graph.tensor(t).bytes);
        if (wasReady)
          ready.insert({score[user], user});
      }
    }
    for (OpIndex succ : c.succs[op])
      if (--indegree[succ] == 0)
        ready.insert({score[succ], succ});
  }
  return order;
}

/// XLA's DFS scheduler: from each sink (in the given order), the operands
/// first, the one with the most bytes behind it first, so that a branch is
/// finished before the next is started.
std::vector<OpIndex> dfsSchedule(const Graph &graph, const Constraints &c) {
  OpIndex n = static_cast<OpIndex>(graph.numOps());
  // Bytes allocated by an op and everything before it (shared ancestors are
  // counted once per path: an estimate, as XLA's).
  std::vector<double> behind(n, 0);
  std::vector<uint32_t> indegree(n);
  std::vector<OpIndex> topo;
  topo.reserve(n);
  for (OpIndex op = 0; op < n; ++op)
    if (!(indegree[op] = static_cast<uint32_t>(c.preds[op].size())))
      topo.push_back(op);
  for (size_t k = 0; k < topo.size(); ++k) {
    OpIndex op = topo[k];
    behind[op] += static_cast<double>(deviceOutputBytes(graph, op));
    for (OpIndex succ : c.succs[op]) {
      behind[succ] += behind[op];
      if (--indegree[succ] == 0)
        topo.push_back(succ);
    }
  }
  std::vector<uint8_t> state(n, 0); // 0 new, 1 on the stack, 2 emitted
  std::vector<OpIndex> order;
  order.reserve(n);
  std::vector<std::pair<OpIndex, size_t>> stack;
  std::vector<std::vector<OpIndex>> sortedPreds(n);
  for (OpIndex op = 0; op < n; ++op) {
    sortedPreds[op] = c.preds[op];
    llvm::stable_sort(sortedPreds[op], [&](OpIndex a, OpIndex b) {
      return behind[a] > behind[b];
    });
  }
  for (OpIndex root = 0; root < n; ++root) {
    if (!c.succs[root].empty() || state[root])
      continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto &[op, next] = stack.back();
      if (next < sortedPreds[op].size()) {
        OpIndex pred = sortedPreds[op][next++];
        if (!state[pred]) {
          state[pred] = 1;
          stack.push_back({pred, 0});
        }
        continue;
      }
      state[op] = 2;
      order.push_back(op);
      stack.pop_back();
    }
  }
  return order;
}

/// Bytes above `threshold` summed over the positions of the evaluator's last
/// evaluation.
double excessAbove(const Evaluator &evaluator, double threshold) {
  double excess = 0;
  for (uint64_t bytes : evaluator.getDuring())
    if (static_cast<double>(bytes) > threshold)
      excess += static_cast<double>(bytes) - threshold;
  return excess;
}

/// How the goal ranks the evaluator's last evaluation (smaller is better):
/// by the peak; or with LeastExcess, by the bytes above the target, then
/// the peak.
std::pair<double, uint64_t> goalKey(const Evaluator &evaluator,
                                    const ScheduleOptions &options,
                                    uint64_t peak) {
  if (options.goal == ScheduleGoal::LeastExcess && options.targetBytes)
    return {excessAbove(evaluator, static_cast<double>(options.targetBytes)),
            peak};
  return {static_cast<double>(peak), 0};
}

/// Simulated annealing over single-op moves, each within the window its
/// dependences allow (most of them around the peak: a producer of a tensor
/// live there moved later, a consumer moved earlier). A stage minimizes
///   peakWeight * peak + (bytes above a threshold, summed over positions) / n
/// where the threshold is fixed, or a fraction of the best peak so far: the
/// second term rewards moves that thin the top before one of them lowers
/// it, and a low fixed threshold (peakWeight small) smooths the landscape
/// where the peak alone is flat. Every stage starts from the best order so
/// far; the best order is kept by the goal's key (the peak; or, with
/// LeastExcess, the bytes above the target, then the peak).
class Annealer {
public:
  struct Stage {
    double peakWeight;
    /// Bytes, or with `relative` a fraction of the best peak so far.
    double threshold;
    bool relative;
    /// Share of the work limit.
    unsigned share;
  };

  Annealer(const Graph &graph, const Constraints &c, Evaluator &evaluator,
           const ScheduleOptions &options, ScheduleResult &result)
      : graph(graph), c(c), evaluator(evaluator), options(options),
        result(result), n(static_cast<OpIndex>(graph.numOps())),
        random(options.seed * 0x9e3779b97f4a7c15ULL + 0x5343),
        isAround(graph.numOps(), 0),
        startTime(std::chrono::steady_clock::now()) {
    std::vector<int32_t> pos = positionsOf(result.order);
    evaluator.evaluate(pos, result.order);
    bestKey = keyOf(result.peakBytes);
  }

  bool improvedAny() const { return improved; }

  /// Runs one stage; false once the target is met or the time cap bites.
  bool run(const Stage &stage, uint64_t iterations) {
    order = result.order;
    pos = positionsOf(order);
    uint64_t peak = evaluator.evaluate(pos, order);
    auto objective = [&](uint64_t peakBytes) {
      double threshold =
          stage.relative
              ? stage.threshold * static_cast<double>(result.peakBytes)
              : stage.threshold;
      return stage.peakWeight * static_cast<double>(peakBytes) +
             excessAbove(threshold) / n;
    };
    double current = objective(peak);
    double startTemperature = 0.002 * static_cast<double>(result.peakBytes);
    collectAround();
    uint64_t sinceCollect = 0;
    for (uint64_t i = 0; i < iterations; ++i) {
      if ((i & 255) == 0 && expired()) {
        result.stoppedByTimeLimit = true;
        return false;
      }
      if (targetMet())
        return false;
      OpIndex op = !around.empty() && random.below(4) != 0
                       ? around[random.below(around.size())]
                       : static_cast<OpIndex>(random.below(n));
      int32_t lo = 0, hi = n - 1;
      for (OpIndex pred : c.preds[op])
        lo = std::max(lo, pos[pred] + 1);
      for (OpIndex succ : c.succs[op])
        hi = std::min(hi, pos[succ] - 1);
      int32_t from = pos[op];
      if (hi <= lo)
        continue;
      int32_t to = lo + static_cast<int32_t>(random.below(hi - lo + 1));
      if (to == from)
        continue;
      move(from, to);
      uint64_t trialPeak = evaluator.evaluate(pos, order);
      ++result.evaluations;
      double trial = objective(trialPeak);
      double temperature =
          startTemperature * (1.0 - static_cast<double>(i) / iterations);
      bool accept = trial <= current ||
                    (temperature > 0 &&
                     random.unit() < std::exp((current - trial) / temperature));
      if (!accept) {
        move(to, from);
        continue;
      }
      bool peakMoved = trialPeak != peak;
      peak = trialPeak;
      std::pair<double, uint64_t> key = keyOf(peak);
      if (key < bestKey) {
        bestKey = key;
        result.order = order;
        result.peakBytes = peak;
        improved = true;
      }
      current = objective(peak);
      if (++sinceCollect >= 16 || peakMoved) {
        sinceCollect = 0;
        collectAround();
      }
    }
    return true;
  }

private:
  double excessAbove(double threshold) const {
    return ::excessAbove(evaluator, threshold);
  }
  std::pair<double, uint64_t> keyOf(uint64_t peak) const {
    return goalKey(evaluator, options, peak);
  }
  bool targetMet() const {
    return options.targetBytes && result.peakBytes <= options.targetBytes;
  }
  bool expired() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         startTime)
               .count() > options.timeLimitSeconds;
  }
  void move(int32_t from, int32_t to) {
    OpIndex op = order[from];
    if (from < to)
      for (int32_t k = from; k < to; ++k) {
        order[k] = order[k + 1];
        pos[order[k]] = k;
      }
    else
      for (int32_t k = from; k > to; --k) {
        order[k] = order[k - 1];
        pos[order[k]] = k;
      }
    order[to] = op;
    pos[op] = to;
  }
  /// The ops around the peak of the last evaluation: its op, the producers
  /// and last users of what is live across it.
  void collectAround() {
    for (OpIndex op : around)
      isAround[op] = 0;
    around.clear();
    const std::vector<uint64_t> &during = evaluator.getDuring();
    int32_t at = static_cast<int32_t>(
        std::max_element(during.begin(), during.end()) - during.begin());
    auto add = [&](OpIndex op) {
      if (op >= 0 && !isAround[op]) {
        isAround[op] = 1;
        around.push_back(op);
      }
    };
    add(order[at]);
    for (const Tensor &tensor : graph.getTensors()) {
      if (tensor.space != MemorySpace::Device || tensor.bytes == 0 ||
          tensor.liveOut)
        continue;
      int32_t start = tensor.producer == kEntry ? -1 : pos[tensor.producer];
      if (start >= at)
        continue;
      int32_t end = start;
      OpIndex last = -1;
      for (OpIndex user : tensor.users)
        if (pos[user] > end) {
          end = pos[user];
          last = user;
        }
      if (end < at)
        continue;
      add(tensor.producer);
      add(last);
    }
  }

  const Graph &graph;
  const Constraints &c;
  Evaluator &evaluator;
  const ScheduleOptions &options;
  ScheduleResult &result;
  OpIndex n;
  detail::SplitMix random;
  std::vector<OpIndex> order;
  std::vector<int32_t> pos;
  std::vector<OpIndex> around;
  std::vector<uint8_t> isAround;
  std::pair<double, uint64_t> bestKey;
  bool improved = false;
  std::chrono::steady_clock::time_point startTime;
};

} // namespace

uint64_t lms::autoScheduleIterations(const Graph &graph) {
  // About 2e9 units of work (each evaluation costs ops + uses), between 2e4
  // and 2e6 evaluations, and at most 4000 per op (small graphs settle fast).
  uint64_t cost = graph.numOps() + graph.numTensors();
  for (const Tensor &tensor : graph.getTensors())
    cost += tensor.users.size();
  uint64_t iterations = 2000000000ULL / std::max<uint64_t>(cost, 1);
  iterations = std::min<uint64_t>(iterations, 4000 * graph.numOps());
  return std::clamp<uint64_t>(iterations, 20000, 2000000);
}

llvm::Error
lms::verifyOrder(const Graph &graph, llvm::ArrayRef<OpIndex> order,
                 llvm::ArrayRef<std::pair<OpIndex, OpIndex>> edges) {
  size_t n = graph.numOps();
  if (order.size() != n)
    return scheduleError(
        llvm::formatv("the order has {0} ops, the graph {1}", order.size(), n));
  std::vector<int32_t> pos(n, -1);
  for (auto [k, op] : llvm::enumerate(order)) {
    if (op < 0 || static_cast<size_t>(op) >= n)
      return scheduleError(llvm::formatv("op {0} out of range", op));
    if (pos[op] >= 0)
      return scheduleError(llvm::formatv("op {0} appears twice", op));
    pos[op] = static_cast<int32_t>(k);
  }
  llvm::Expected<Constraints> c = buildConstraints(graph, edges);
  if (!c)
    return c.takeError();
  for (OpIndex op = 0; op < static_cast<OpIndex>(n); ++op)
    for (OpIndex succ : c->succs[op])
      if (pos[succ] < pos[op])
        return scheduleError(llvm::formatv(
            "op {0} ('{1}') runs before op {2} ('{3}'), which it depends on",
            succ, graph.op(succ).name, op, graph.op(op).name));
  return llvm::Error::success();
}

Graph lms::reorderGraph(const Graph &graph, llvm::ArrayRef<OpIndex> order) {
  Graph result;
  for (const Tensor &tensor : graph.getTensors()) {
    TensorIndex t = result.addTensor(tensor.name, tensor.bytes, tensor.space);
    Tensor &copy = result.tensor(t);
    copy.rank = tensor.rank;
    copy.liveOut = tensor.liveOut;
    copy.hostBacked = tensor.hostBacked;
  }
  for (OpIndex old : order) {
    const Op &op = graph.op(old);
    OpIndex added =
        result.addOp(op.name, op.inputs, op.outputs, op.cost, op.kind);
    Op &copy = result.op(added);
    copy.updates = op.updates;
    copy.transientBytes = op.transientBytes;
    copy.recomputable = op.recomputable;
  }
  return result;
}

llvm::Expected<ScheduleResult>
lms::scheduleForMemory(const Graph &graph, const ScheduleOptions &options) {
  OpIndex n = static_cast<OpIndex>(graph.numOps());
  llvm::Expected<Constraints> built = buildConstraints(graph, options.edges);
  if (!built)
    return built.takeError();
  const Constraints &c = *built;

  ScheduleResult result;
  std::vector<OpIndex> given(n);
  for (OpIndex op = 0; op < n; ++op)
    given[op] = op;
  // The given order must satisfy the constraints (the graph's own always
  // do; a caller's edge pointing backwards would be a cycle or an error).
  if (llvm::Error err = verifyOrder(graph, given, options.edges))
    return scheduleError("the given order violates an ordering constraint: " +
                         llvm::toString(std::move(err)));

  Evaluator evaluator(graph);
  std::vector<int32_t> pos = positionsOf(given);
  result.originalPeakBytes = evaluator.evaluate(pos, given);
  result.order = given;
  result.peakBytes = result.originalPeakBytes;
  result.method = "given";
  result.evaluations = 1;
  if (n < 2)
    return result;

  // Orders compare by the goal: the peak; or the bytes above the target,
  // then the peak.
  auto keyOf = [&](uint64_t peak) { return goalKey(evaluator, options, peak); };
  std::pair<double, uint64_t> bestKey = keyOf(result.peakBytes);
  auto consider = [&](std::vector<OpIndex> order, llvm::StringRef name) {
    if (order.size() != static_cast<size_t>(n))
      return; // A construction that could not place every op (a cycle).
    uint64_t peak = evaluator.evaluate(positionsOf(order), order);
    ++result.evaluations;
    if (std::pair<double, uint64_t> key = keyOf(peak); key < bestKey) {
      bestKey = key;
      result.peakBytes = peak;
      result.order = std::move(order);
      result.method = name.str();
    }
  };
  consider(listSchedule(graph, c), "list");
  consider(dfsSchedule(graph, c), "dfs");
  if (options.targetBytes && result.peakBytes <= options.targetBytes)
    return result;

  // Annealing over single-op moves from the best construction, in stages
  // of different objectives (see Annealer).
  uint64_t iterations = options.searchIterations
                            ? options.searchIterations
                            : autoScheduleIterations(graph);
  Annealer annealer(graph, c, evaluator, options, result);
  double p0 = static_cast<double>(result.peakBytes);
  std::vector<Annealer::Stage> stages;
  if (options.goal == ScheduleGoal::LeastExcess && options.targetBytes) {
    stages = {{0.1, static_cast<double>(options.targetBytes), false, 2},
              {1.0, 0.9, true, 1}};
  } else {
    stages = {{1.0, 0.9, true, 1},
              {0.1, 0.85 * p0, false, 1},
              {0.1, 0.75 * p0, false, 1}};
  }
  unsigned shares = 0;
  for (const Annealer::Stage &stage : stages)
    shares += stage.share;
  for (const Annealer::Stage &stage : stages) {
    if (!annealer.run(stage, iterations * stage.share / shares))
      break;
  }
  if (annealer.improvedAny())
    result.method += "+anneal";
  return result;
}
