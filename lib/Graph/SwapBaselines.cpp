//===- SwapBaselines.cpp - TFLMS v2 and swap-everything planners ----------===//
//
// Baselines measured side by side with LMS's planner (bench/swap-overhead).
//
// TFLMS v2 (Le, Imai, Negishi, Kawachiya; ISMM'19), on a schedule:
// * topological levels: an op is one level above the highest producer of
//   its inputs (arguments are produced at level 0);
// * a tensor is a candidate when a consumer is more than `threshold` levels
//   after its producer (tensors of rank <= 1 are skipped); the consumers
//   within `threshold` keep using the device copy;
// * far consumers within `groupby` levels of the first of a group share one
//   swap-in, from the one host copy;
// * a group's swap-in is triggered by the last op at `ahead` levels before
//   its first consumer; without such an op it is synchronous;
// * the device copy is released once the copy-out is done;
// * auto-tuning: the largest threshold that fits the budget with ahead 1 and
//   groupby 0, then the largest ahead, then the largest groupby. TFLMS checks
//   its own memory estimate against 0.9 x (GPU memory - weights); here every
//   setting is checked against the exact peak, which can only help it.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace lms;

namespace {

/// Compute seconds of each op and the copy hiding rules shared by the
/// baselines.
struct Timing {
  Timing(const Graph &graph, const DeviceSpec &device) : device(device) {
    prefix.assign(graph.numOps() + 1, 0);
    for (size_t i = 0; i < graph.numOps(); ++i)
      prefix[i + 1] = prefix[i] + (graph.op(i).kind == OpKind::Compute
                                       ? device.computeSeconds(graph.op(i).cost)
                                       : 0);
  }
  /// The first release point after op a at which a copy-out of `bytes`
  /// issued after a has finished behind compute, but before `limit`.
  Position release(OpIndex a, uint64_t bytes, Position limit) const {
    double need = prefix[a + 1] + device.d2hSeconds(bytes);
    auto it = std::lower_bound(prefix.begin() + a + 1, prefix.end(), need);
    Position r = static_cast<Position>(it - prefix.begin()) - 1;
    return std::min(r, limit);
  }
  const DeviceSpec &device;
  std::vector<double> prefix;
};

int valueId(const SwapOptions &options, TensorIndex t, OpIndex a, OpIndex b) {
  return options.valueAfterGap ? options.valueAfterGap(t, a, b) : 0;
}

/// Marks reuse of the previous decision's host copy where the value is the
/// same, releasing those at their last use.
void markReuse(SwapPlan &plan, const std::vector<int> &values,
               const SwapOptions &options) {
  std::map<TensorIndex, int> lastValue;
  std::vector<size_t> order(plan.decisions.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const SwapDecision &a = plan.decisions[x], &b = plan.decisions[y];
    return a.tensor != b.tensor ? a.tensor < b.tensor : a.lastUse < b.lastUse;
  });
  for (size_t i : order) {
    SwapDecision &d = plan.decisions[i];
    auto it = lastValue.find(d.tensor);
    if (it != lastValue.end() && it->second == values[i] &&
        (!options.canReuseAfter ||
         options.canReuseAfter(d.tensor, d.lastUse))) {
      d.reuseHostCopy = true;
      d.releaseAfter = d.lastUse;
    }
    lastValue[d.tensor] = values[i];
  }
}

SwapResult finish(const Graph &graph, const DeviceSpec &device, SwapPlan plan) {
  SwapResult result;
  SwappedGraph swapped = applySwapPlan(graph, plan);
  MemoryProfile profile = evaluateSchedule(swapped.graph);
  result.peakBytes = profile.peakBytes;
  result.hostPeakBytes = profile.hostPeakBytes;
  result.timeline = simulate(swapped.graph, device);
  result.plan = std::move(plan);
  return result;
}

/// The TFLMS plan for one setting of its knobs.
SwapPlan tflmsPlan(const Graph &graph, const Timing &timing,
                   const std::vector<int> &level, int threshold, int ahead,
                   int groupby, const SwapOptions &options) {
  SwapPlan plan;
  std::vector<int> values;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.space != MemorySpace::Device || tensor.liveOut ||
        tensor.bytes == 0 || tensor.users.empty() ||
        (tensor.rank >= 0 && tensor.rank <= 1))
      continue;
    // The level of the value's last writer (its producer, or the last op
    // that updated it in place).
    int producerLevel = tensor.producer >= 0 ? level[tensor.producer] : 0;
    for (OpIndex user : tensor.users)
      if (llvm::is_contained(graph.op(user).updates, t))
        producerLevel = std::max(producerLevel, level[user]);
    // Far consumers in schedule order, grouped (writers are not consumers).
    std::vector<OpIndex> far;
    for (OpIndex user : tensor.users)
      if (level[user] - producerLevel > threshold &&
          !llvm::is_contained(graph.op(user).updates, t))
        far.push_back(user);
    size_t i = 0;
    while (i < far.size()) {
      OpIndex first = far[i];
      int groupLevel = level[first];
      size_t j = i + 1;
      while (j < far.size() && level[far[j]] <= groupLevel + groupby)
        ++j;
      // The gap before the group's first consumer.
      OpIndex lastUse = tensor.producer;
      for (OpIndex user : tensor.users)
        if (user < first)
          lastUse = user;
      i = j;
      if (first - lastUse < 2)
        continue;
      int id = valueId(options, t, lastUse, first);
      if (id < 0)
        continue;
      // Trigger: the last op before the consumer at `ahead` levels below it.
      OpIndex trigger = -2;
      for (OpIndex k = first - 1; k > lastUse; --k)
        if (level[k] <= groupLevel - ahead) {
          trigger = k;
          break;
        }
      OpIndex swapIn = trigger >= 0 ? trigger + 1 : first;
      SwapDecision d;
      d.tensor = t;
      d.lastUse = lastUse;
      d.nextUse = first;
      d.swapOutAfter = lastUse;
      d.swapInBefore = swapIn;
      d.releaseAfter = timing.release(lastUse, tensor.bytes, swapIn - 1);
      plan.decisions.push_back(d);
      values.push_back(id);
    }
  }
  markReuse(plan, values, options);
  return plan;
}

} // namespace

llvm::Expected<SwapResult> lms::planSwapsTFLMS(const Graph &graph,
                                               const DeviceSpec &device,
                                               uint64_t budget,
                                               const SwapOptions &options) {
  Timing timing(graph, device);
  // Levels follow the data: an op is one level above the op that last wrote
  // each of its inputs (allocation or in-place update).
  std::vector<int> level(graph.numOps(), 0);
  std::vector<int> writtenAt(graph.numTensors(), -1);
  int maxLevel = 0;
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    const Op &op = graph.op(i);
    int l = 0;
    for (TensorIndex t : op.inputs)
      l = std::max(l, writtenAt[t] + 1);
    level[i] = l;
    maxLevel = std::max(maxLevel, l);
    for (TensorIndex t : op.outputs)
      writtenAt[t] = l;
    for (TensorIndex t : op.updates)
      writtenAt[t] = l;
  }
  auto peakOf = [&](int threshold, int ahead, int groupby) {
    SwapPlan plan =
        tflmsPlan(graph, timing, level, threshold, ahead, groupby, options);
    return evaluateSchedule(applySwapPlan(graph, plan).graph).peakBytes;
  };
  auto fits = [&](int threshold, int ahead, int groupby) {
    return peakOf(threshold, ahead, groupby) <= budget;
  };
  if (evaluateSchedule(graph).peakBytes <= budget)
    return finish(graph, device, SwapPlan());
  // Fixed knobs are used as given; the others are tuned.
  int ahead = options.swapinAhead >= 0 ? options.swapinAhead : 1;
  int groupby = options.swapinGroupby >= 0 ? options.swapinGroupby : 0;
  int threshold = options.swapoutThreshold;
  if (threshold < 0) {
    if (!fits(0, ahead, groupby))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("TFLMS cannot fit the budget {0}: its smallest peak "
                        "is {1}",
                        budget, peakOf(0, ahead, groupby))
              .str());
    // The largest threshold that fits (fewest swaps).
    int lo = 0, hi = maxLevel;
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (fits(mid, ahead, groupby))
        lo = mid;
      else
        hi = mid - 1;
    }
    threshold = lo;
  } else if (!fits(threshold, ahead, groupby)) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("TFLMS cannot fit the budget {0} with threshold {1}",
                      budget, threshold)
            .str());
  }
  if (options.swapinAhead < 0) {
    int lo = ahead, hi = maxLevel;
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (fits(threshold, mid, groupby))
        lo = mid;
      else
        hi = mid - 1;
    }
    ahead = lo;
  }
  if (options.swapinGroupby < 0) {
    int lo = groupby, hi = maxLevel;
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (fits(threshold, ahead, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    groupby = lo;
  }
  return finish(
      graph, device,
      tflmsPlan(graph, timing, level, threshold, ahead, groupby, options));
}

SwapResult lms::planSwapEverything(const Graph &graph, const DeviceSpec &device,
                                   const SwapOptions &options) {
  Timing timing(graph, device);
  SwapPlan plan;
  std::vector<int> values;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.space != MemorySpace::Device || tensor.liveOut ||
        tensor.bytes == 0)
      continue;
    OpIndex previous = tensor.producer;
    for (OpIndex use : tensor.users) {
      if (use - previous >= 2) {
        int id = valueId(options, t, previous, use);
        if (id >= 0) {
          SwapDecision d;
          d.tensor = t;
          d.lastUse = previous;
          d.nextUse = use;
          d.swapOutAfter = previous;
          d.releaseAfter = timing.release(previous, tensor.bytes, use - 2);
          d.releaseAfter = std::max(d.releaseAfter, previous);
          d.swapInBefore = std::max(d.releaseAfter + 1, use - 1);
          plan.decisions.push_back(d);
          values.push_back(id);
        }
      }
      previous = use;
    }
  }
  markReuse(plan, values, options);
  return finish(graph, device, std::move(plan));
}

SwapResult lms::planSaveOnCpu(const Graph &graph, const DeviceSpec &device,
                              const SwapOptions &options) {
  SwapPlan plan;
  std::vector<int> values;
  const std::vector<uint8_t> &backward = options.backwardOps;
  for (TensorIndex t = 0;
       !backward.empty() && t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.space != MemorySpace::Device || tensor.liveOut ||
        tensor.bytes == 0 || tensor.producer == kEntry ||
        backward[tensor.producer])
      continue;
    // The last forward use before the first backward read.
    OpIndex last = tensor.producer, first = -1;
    for (OpIndex use : tensor.users) {
      if (backward[use]) {
        first = use;
        break;
      }
      last = use;
    }
    if (first < 0 || first - last < 2)
      continue;
    int id = valueId(options, t, last, first);
    if (id < 0)
      continue;
    SwapDecision d;
    d.tensor = t;
    d.lastUse = last;
    d.nextUse = first;
    d.swapOutAfter = last;
    d.releaseAfter = last;
    d.swapInBefore = first;
    plan.decisions.push_back(d);
    values.push_back(id);
  }
  markReuse(plan, values, options);
  return finish(graph, device, std::move(plan));
}

//===----------------------------------------------------------------------===//
// The planners by name
//===----------------------------------------------------------------------===//

static constexpr std::pair<SwapMethod, llvm::StringLiteral> kSwapMethodNames[] =
    {
        {SwapMethod::LMS, "lms"},
        {SwapMethod::TFLMS, "tflms"},
        {SwapMethod::SwapAll, "swap-all"},
        {SwapMethod::SaveOnCpu, "save-on-cpu"},
};

llvm::StringRef lms::swapMethodName(SwapMethod method) {
  for (auto [m, name] : kSwapMethodNames)
    if (m == method)
      return name;
  return "unknown";
}

std::optional<SwapMethod> lms::parseSwapMethod(llvm::StringRef name) {
  for (auto [m, text] : kSwapMethodNames)
    if (text == name)
      return m;
  return std::nullopt;
}

llvm::Expected<SwapResult>
lms::planSwapsWith(SwapMethod method, const Graph &graph,
                   const DeviceSpec &device, uint64_t budget,
                   const SwapOptions &options, Infeasible *infeasible) {
  switch (method) {
  case SwapMethod::LMS:
    return planSwaps(graph, device, budget, options, infeasible);
  case SwapMethod::TFLMS:
    return planSwapsTFLMS(graph, device, budget, options);
  case SwapMethod::SwapAll:
    return planSwapEverything(graph, device, options);
  case SwapMethod::SaveOnCpu:
    return planSaveOnCpu(graph, device, options);
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown swap planner");
}
