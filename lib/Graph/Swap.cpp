//===- Swap.cpp - Swap plans: checks, application, simulation -------------===//

#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Memory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace lms;

/// Decisions grouped by tensor, each group sorted by lastUse.
static std::map<TensorIndex, std::vector<size_t>>
decisionsByTensor(const SwapPlan &plan) {
  std::map<TensorIndex, std::vector<size_t>> byTensor;
  for (size_t i = 0; i < plan.decisions.size(); ++i)
    byTensor[plan.decisions[i].tensor].push_back(i);
  for (auto &[tensor, indices] : byTensor)
    std::sort(indices.begin(), indices.end(), [&](size_t a, size_t b) {
      return plan.decisions[a].lastUse < plan.decisions[b].lastUse;
    });
  return byTensor;
}

std::string lms::verifySwapPlan(const Graph &graph, const SwapPlan &plan) {
  std::string message;
  llvm::raw_string_ostream os(message);
  OpIndex numOps = static_cast<OpIndex>(graph.numOps());
  for (auto [index, d] : llvm::enumerate(plan.decisions)) {
    auto fail = [&](const llvm::Twine &why) {
      os << "decision " << index << " (tensor " << d.tensor << "): " << why;
      return message;
    };
    if (d.tensor < 0 ||
        d.tensor >= static_cast<TensorIndex>(graph.numTensors()))
      return fail("tensor out of range");
    const Tensor &t = graph.tensor(d.tensor);
    if (t.space != MemorySpace::Device)
      return fail("not a device tensor");
    if (t.liveOut)
      return fail("a live-out tensor stays resident");
    if (d.nextUse < 0 || d.nextUse >= numOps ||
        !llvm::is_contained(t.users, d.nextUse))
      return fail("nextUse is not a use of the tensor");
    bool lastIsUse =
        d.lastUse == t.producer || llvm::is_contained(t.users, d.lastUse);
    if (!lastIsUse)
      return fail("lastUse is neither its producer nor one of its uses");
    for (OpIndex user : t.users)
      if (user > d.lastUse && user < d.nextUse)
        return fail(llvm::formatv("op {0} uses it inside the gap", user));
    if (d.swapOutAfter != d.lastUse)
      return fail("the swap-out must follow the last use before the gap");
    if (d.releaseAfter < d.swapOutAfter || d.releaseAfter >= d.nextUse)
      return fail("the release must lie in [swapOutAfter, nextUse)");
    if (d.swapInBefore <= d.releaseAfter || d.swapInBefore > d.nextUse)
      return fail("the swap-in must lie in (releaseAfter, nextUse]");
    if (d.reuseHostCopy && d.releaseAfter != d.lastUse)
      return fail("a decision reusing a host copy releases at its last use");
  }
  for (auto &[tensor, indices] : decisionsByTensor(plan)) {
    for (size_t k = 0; k < indices.size(); ++k) {
      const SwapDecision &d = plan.decisions[indices[k]];
      if (k == 0 && d.reuseHostCopy && !graph.tensor(tensor).hostBacked) {
        os << "decision " << indices[k] << " (tensor " << tensor
           << ") reuses a host copy but no earlier decision made one";
        return message;
      }
      if (k > 0 && d.lastUse < plan.decisions[indices[k - 1]].nextUse) {
        os << "decisions " << indices[k - 1] << " and " << indices[k]
           << " of tensor " << tensor << " overlap";
        return message;
      }
    }
  }
  return message;
}

SwapEvents lms::swapEvents(const Graph &graph, const SwapPlan &plan) {
  SwapEvents events;
  size_t numDecisions = plan.decisions.size();
  OpIndex numOps = static_cast<OpIndex>(graph.numOps());
  std::vector<std::vector<size_t>> outs(numOps + 1), waits(numOps + 1),
      ins(numOps + 1);
  for (size_t i = 0; i < numDecisions; ++i) {
    const SwapDecision &d = plan.decisions[i];
    if (!d.reuseHostCopy) {
      outs[d.swapOutAfter + 1].push_back(i);
      if (d.releaseAfter != d.swapOutAfter)
        waits[d.releaseAfter + 1].push_back(i);
    }
    ins[d.swapInBefore].push_back(i);
  }
  auto byTensor = [&](size_t a, size_t b) {
    return std::make_pair(plan.decisions[a].tensor, a) <
           std::make_pair(plan.decisions[b].tensor, b);
  };
  events.atPosition.resize(numOps + 1);
  for (OpIndex p = 0; p <= numOps; ++p) {
    std::vector<SwapEvent> &at = events.atPosition[p];
    for (auto [kind, list] : {std::make_pair(OpKind::SwapOut, &outs[p]),
                              std::make_pair(OpKind::SwapWait, &waits[p]),
                              std::make_pair(OpKind::SwapIn, &ins[p])}) {
      std::sort(list->begin(), list->end(), byTensor);
      for (size_t i : *list)
        at.push_back({kind, i});
    }
  }
  events.copyOf.assign(numDecisions, numDecisions);
  for (auto &[tensor, indices] : decisionsByTensor(plan)) {
    if (graph.tensor(tensor).hostBacked)
      continue;
    for (size_t k = 1; k < indices.size(); ++k)
      if (plan.decisions[indices[k]].reuseHostCopy)
        events.copyOf[indices[k]] = indices[k - 1];
  }
  return events;
}

SwappedGraph lms::applySwapPlan(const Graph &graph, const SwapPlan &plan) {
  SwappedGraph result;
  Graph &g = result.graph;
  size_t numTensors = graph.numTensors();
  for (const Tensor &t : graph.getTensors()) {
    TensorIndex copy = g.addTensor(t.name, t.bytes, t.space);
    g.tensor(copy).rank = t.rank;
    g.tensor(copy).liveOut = t.liveOut;
    g.tensor(copy).hostBacked = t.hostBacked;
  }
  // Per decision: the host tensor it swaps out to (or reuses) and the device
  // tensor it swaps in.
  size_t numDecisions = plan.decisions.size();
  std::vector<TensorIndex> hostOf(numDecisions, -1), deviceOf(numDecisions, -1);
  result.decisionOps.assign(numDecisions, {-1, -1, -1});
  std::map<TensorIndex, std::vector<size_t>> byTensor = decisionsByTensor(plan);
  SwapEvents events = swapEvents(graph, plan);
  for (auto &[tensor, indices] : byTensor) {
    const Tensor &t = graph.tensor(tensor);
    // A host-backed tensor is brought back from its host data (a global,
    // host memory from the start) by every decision.
    TensorIndex hostData = -1;
    if (t.hostBacked)
      hostData = g.addTensor(t.name + ".global", t.bytes, MemorySpace::Host);
    for (size_t k = 0; k < indices.size(); ++k) {
      size_t i = indices[k];
      if (t.hostBacked && plan.decisions[i].reuseHostCopy)
        hostOf[i] = hostData;
      else if (plan.decisions[i].reuseHostCopy)
        hostOf[i] = hostOf[events.copyOf[i]];
      else
        hostOf[i] = g.addTensor(t.name + ".host", t.bytes, MemorySpace::Host);
      deviceOf[i] = g.addTensor(t.name + ".in", t.bytes, MemorySpace::Device);
      g.tensor(deviceOf[i]).rank = t.rank;
    }
  }
  (void)numTensors;

  // The version of tensor t that op `at` reads: the swap-in of the last
  // decision whose nextUse <= at, else t itself.
  auto versionAt = [&](TensorIndex t, OpIndex at) -> TensorIndex {
    auto it = byTensor.find(t);
    if (it == byTensor.end())
      return t;
    TensorIndex version = t;
    for (size_t i : it->second) {
      if (plan.decisions[i].nextUse > at)
        break;
      version = deviceOf[i];
    }
    return version;
  };

  // The swap ops at position p (before original op p; numOps: the end).
  OpIndex numOps = static_cast<OpIndex>(graph.numOps());
  auto emitPosition = [&](OpIndex p) {
    for (SwapEvent event : events.atPosition[p]) {
      size_t i = event.decision;
      const SwapDecision &d = plan.decisions[i];
      TensorIndex source = versionAt(d.tensor, d.lastUse);
      switch (event.kind) {
      case OpKind::SwapOut:
        result.decisionOps[i].swapOut =
            g.addOp("lms.swap_out", {source}, {hostOf[i]}, {}, OpKind::SwapOut);
        break;
      case OpKind::SwapWait:
        result.decisionOps[i].wait = g.addOp(
            "lms.swap_wait", {hostOf[i], source}, {}, {}, OpKind::SwapWait);
        break;
      case OpKind::SwapIn:
      case OpKind::Compute:
        result.decisionOps[i].swapIn = g.addOp(
            "lms.swap_in", {hostOf[i]}, {deviceOf[i]}, {}, OpKind::SwapIn);
        break;
      }
      result.originalOp.push_back(-1);
    }
  };

  for (OpIndex op = 0; op < numOps; ++op) {
    emitPosition(op);
    const Op &original = graph.op(op);
    llvm::SmallVector<TensorIndex, 4> inputs;
    for (TensorIndex t : original.inputs)
      inputs.push_back(versionAt(t, op));
    OpIndex added = g.addOp(original.name, inputs, original.outputs,
                            original.cost, original.kind);
    g.setTransientBytes(added, original.transientBytes);
    for (TensorIndex t : original.updates)
      g.addUpdate(added, versionAt(t, op));
    result.originalOp.push_back(op);
  }
  emitPosition(numOps);
  return result;
}

SwapResult lms::unswapped(const Graph &graph, const DeviceSpec &device) {
  MemoryProfile profile = evaluateSchedule(graph, {false});
  SwapResult none;
  none.peakBytes = profile.peakBytes;
  none.hostPeakBytes = profile.hostPeakBytes;
  none.timeline = simulate(graph, device);
  return none;
}

Timeline lms::simulate(const Graph &graph, const DeviceSpec &device) {
  std::vector<OpIndex> order(graph.numOps());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<OpIndex>(i);
  return simulateOrder(graph, order, device);
}

Timeline lms::simulateOrder(const Graph &graph, llvm::ArrayRef<OpIndex> order,
                            const DeviceSpec &device) {
  Timeline tl;
  size_t numOps = graph.numOps();
  tl.start.assign(numOps, 0);
  tl.end.assign(numOps, 0);
  std::vector<double> ready(graph.numTensors(), 0);
  // A swap-out whose host copy nobody waits for is synchronous.
  std::vector<uint8_t> awaited(graph.numTensors(), 0);
  for (const Op &op : graph.getOps())
    if (op.kind == OpKind::SwapWait)
      for (TensorIndex t : op.inputs)
        if (graph.tensor(t).space == MemorySpace::Host)
          awaited[t] = 1;

  double computeFree = 0, d2hFree = 0, h2dFree = 0;
  for (OpIndex i : order) {
    const Op &op = graph.op(i);
    switch (op.kind) {
    case OpKind::Compute: {
      double start = computeFree;
      for (TensorIndex t : op.inputs)
        start = std::max(start, ready[t]);
      double duration = device.computeSeconds(op.cost);
      tl.start[i] = start;
      tl.end[i] = start + duration;
      computeFree = tl.end[i];
      tl.computeSeconds += duration;
      for (TensorIndex t : op.outputs)
        ready[t] = tl.end[i];
      break;
    }
    case OpKind::SwapOut: {
      uint64_t bytes = 0;
      double start = std::max(computeFree, d2hFree);
      for (TensorIndex t : op.inputs) {
        start = std::max(start, ready[t]);
        bytes += graph.tensor(t).bytes;
      }
      double duration = device.d2hSeconds(bytes);
      tl.start[i] = start;
      tl.end[i] = start + duration;
      d2hFree = tl.end[i];
      tl.d2hBusySeconds += duration;
      tl.d2hBytes += bytes;
      bool synchronous = false;
      for (TensorIndex t : op.outputs) {
        ready[t] = tl.end[i];
        synchronous |= !awaited[t];
      }
      if (synchronous)
        computeFree = std::max(computeFree, tl.end[i]);
      break;
    }
    case OpKind::SwapWait: {
      tl.start[i] = computeFree;
      for (TensorIndex t : op.inputs)
        if (graph.tensor(t).space == MemorySpace::Host)
          computeFree = std::max(computeFree, ready[t]);
      tl.end[i] = computeFree;
      break;
    }
    case OpKind::SwapIn: {
      uint64_t bytes = 0;
      double start = std::max(computeFree, h2dFree);
      for (TensorIndex t : op.inputs)
        start = std::max(start, ready[t]);
      for (TensorIndex t : op.outputs)
        bytes += graph.tensor(t).bytes;
      double duration = device.h2dSeconds(bytes);
      tl.start[i] = start;
      tl.end[i] = start + duration;
      h2dFree = tl.end[i];
      tl.h2dBusySeconds += duration;
      tl.h2dBytes += bytes;
      for (TensorIndex t : op.outputs)
        ready[t] = tl.end[i];
      break;
    }
    }
  }
  tl.totalSeconds = computeFree;
  tl.stallSeconds = std::max(0.0, tl.totalSeconds - tl.computeSeconds);
  return tl;
}
