//===- Memory.cpp - Plans and their peak memory ---------------------------===//

#include "LMS/Graph/Memory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace lms;

/// Releases `t` in its own memory space.
static Step freeStep(const Graph &graph, TensorIndex t) {
  return graph.tensor(t).space == MemorySpace::Host ? Step::freeHost(t)
                                                    : Step::free(t);
}

Plan lms::referencePlan(const Graph &graph) {
  size_t numOps = graph.numOps();
  // Tensors to free after each op; unused arguments before the first.
  std::vector<llvm::SmallVector<TensorIndex, 2>> freeAfter(numOps);
  Plan plan;
  plan.reserve(numOps + graph.numTensors());
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.liveOut)
      continue;
    OpIndex last = graph.lastUse(t);
    if (last == kEntry)
      plan.push_back(freeStep(graph, t));
    else
      freeAfter[last].push_back(t);
  }
  for (OpIndex op = 0; op < static_cast<OpIndex>(numOps); ++op) {
    plan.push_back(Step::compute(op));
    for (TensorIndex t : freeAfter[op])
      plan.push_back(freeStep(graph, t));
  }
  return plan;
}

namespace {
/// Residency and byte counts while a plan runs.
struct State {
  std::vector<uint8_t> resident;
  std::vector<uint8_t> hostCopy;
  uint64_t device = 0;
  uint64_t host = 0;
};
} // namespace

llvm::Expected<MemoryProfile> lms::evaluatePlan(const Graph &graph,
                                                const Plan &plan,
                                                const EvalOptions &options) {
  size_t numTensors = graph.numTensors();
  State state;
  state.resident.assign(numTensors, 0);
  state.hostCopy.assign(numTensors, 0);
  // The swap-wait op that released each tensor's device bytes (-1: none
  // since it was last made resident). A swap-wait is where the program
  // gives up the offloaded buffer (lms.swap_wait): no op may read that
  // buffer after it, even where a plan would keep it counted as resident
  // (a recomputation reading it must read a copy made again).
  std::vector<OpIndex> releasedBy(numTensors, -1);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(numTensors); ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.producer != kEntry)
      continue;
    if (tensor.space == MemorySpace::Host) {
      state.hostCopy[t] = 1;
      state.host += tensor.bytes;
    } else {
      state.resident[t] = 1;
      state.device += tensor.bytes;
    }
  }

  MemoryProfile profile;
  profile.hostPeakBytes = state.host;
  bool havePeak = false;
  if (options.recordSteps) {
    profile.stepBytes.reserve(plan.size());
    profile.computeSteps.reserve(graph.numOps());
  }
  auto fail = [&](size_t step, const llvm::Twine &message) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("step {0}: {1}", step, message.str()).str());
  };
  auto tensorName = [&](TensorIndex t) {
    return llvm::formatv("tensor {0} ('{1}')", t, graph.tensor(t).name).str();
  };
  auto checkTensor = [&](size_t step, int32_t t) -> llvm::Error {
    if (t < 0 || t >= static_cast<int32_t>(numTensors))
      return fail(step, llvm::formatv("tensor index {0} out of range", t));
    return llvm::Error::success();
  };

  for (size_t s = 0; s < plan.size(); ++s) {
    const Step &step = plan[s];
    uint64_t during = state.device;
    switch (step.kind) {
    case Step::Compute: {
      if (step.index < 0 || step.index >= static_cast<int32_t>(graph.numOps()))
        return fail(s, llvm::formatv("op index {0} out of range", step.index));
      const Op &op = graph.op(step.index);
      for (TensorIndex t : op.inputs) {
        bool available = graph.tensor(t).space == MemorySpace::Host
                             ? state.hostCopy[t]
                             : state.resident[t];
        if (!available)
          return fail(s, llvm::formatv("op {0} ('{1}') needs {2}, which is "
                                       "not resident",
                                       step.index, op.name, tensorName(t)));
        if (releasedBy[t] >= 0)
          return fail(s, llvm::formatv("op {0} ('{1}') reads {2} after "
                                       "swap-wait op {3} released it",
                                       step.index, op.name, tensorName(t),
                                       releasedBy[t]));
      }
      if (op.kind == OpKind::SwapWait)
        for (TensorIndex t : op.inputs)
          if (graph.tensor(t).space == MemorySpace::Device)
            releasedBy[t] = step.index;
      uint64_t before = state.device;
      for (TensorIndex t : op.outputs) {
        const Tensor &tensor = graph.tensor(t);
        if (tensor.space == MemorySpace::Host) {
          if (!state.hostCopy[t]) {
            state.hostCopy[t] = 1;
            state.host += tensor.bytes;
          }
        } else if (!state.resident[t]) {
          state.resident[t] = 1;
          state.device += tensor.bytes;
        }
        releasedBy[t] = -1;
      }
      // A negative transient (a call) never goes below what was held.
      during = op.transientBytes >= 0
                   ? state.device + op.transientBytes
                   : std::max<int64_t>(static_cast<int64_t>(before),
                                       static_cast<int64_t>(state.device) +
                                           op.transientBytes);
      if (options.recordSteps) {
        // The "after" of the previous compute step is its state before this.
        if (!profile.computeSteps.empty())
          profile.computeSteps.back().second.after = before;
        profile.computeSteps.push_back({step.index, {before, during, 0}});
      }
      break;
    }
    case Step::Free: {
      if (llvm::Error err = checkTensor(s, step.index))
        return std::move(err);
      if (!state.resident[step.index])
        return fail(s, llvm::formatv("free of {0}, which is not resident",
                                     tensorName(step.index)));
      state.resident[step.index] = 0;
      state.device -= graph.tensor(step.index).bytes;
      during = state.device;
      break;
    }
    case Step::SwapOut: {
      if (llvm::Error err = checkTensor(s, step.index))
        return std::move(err);
      if (!state.resident[step.index])
        return fail(s, llvm::formatv("swap-out of {0}, which is not resident",
                                     tensorName(step.index)));
      if (!state.hostCopy[step.index]) {
        state.hostCopy[step.index] = 1;
        state.host += graph.tensor(step.index).bytes;
      }
      break;
    }
    case Step::SwapIn: {
      if (llvm::Error err = checkTensor(s, step.index))
        return std::move(err);
      if (!state.hostCopy[step.index])
        return fail(s, llvm::formatv("swap-in of {0}, which has no host copy",
                                     tensorName(step.index)));
      if (state.resident[step.index])
        return fail(s, llvm::formatv("swap-in of {0}, which is resident",
                                     tensorName(step.index)));
      state.resident[step.index] = 1;
      state.device += graph.tensor(step.index).bytes;
      releasedBy[step.index] = -1;
      during = state.device;
      break;
    }
    case Step::FreeHost: {
      if (llvm::Error err = checkTensor(s, step.index))
        return std::move(err);
      if (!state.hostCopy[step.index])
        return fail(s, llvm::formatv("host free of {0}, which has no host copy",
                                     tensorName(step.index)));
      state.hostCopy[step.index] = 0;
      state.host -= graph.tensor(step.index).bytes;
      break;
    }
    default:
      return fail(s, "unknown step kind");
    }
    if (options.recordSteps)
      profile.stepBytes.push_back(during);
    profile.hostPeakBytes = std::max(profile.hostPeakBytes, state.host);
    // Free steps take no memory of their own; the first maximum wins.
    if (step.kind != Step::Free && (!havePeak || during > profile.peakBytes)) {
      havePeak = true;
      profile.peakBytes = during;
      profile.peakStep = s;
      profile.peakOp = step.kind == Step::Compute ? step.index : -1;
    }
  }
  if (options.recordSteps && !profile.computeSteps.empty())
    profile.computeSteps.back().second.after = state.device;

  // The resident set at the peak: replay up to the peak step. This costs one
  // more pass but keeps the main loop free of per-step set copies.
  if (havePeak) {
    std::vector<uint8_t> resident(numTensors, 0);
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(numTensors); ++t)
      resident[t] = graph.tensor(t).producer == kEntry &&
                    graph.tensor(t).space == MemorySpace::Device;
    for (size_t s = 0; s <= profile.peakStep; ++s) {
      const Step &step = plan[s];
      if (step.kind == Step::Compute) {
        for (TensorIndex t : graph.op(step.index).outputs)
          if (graph.tensor(t).space == MemorySpace::Device)
            resident[t] = 1;
      } else if (step.kind == Step::Free) {
        resident[step.index] = 0;
      } else if (step.kind == Step::SwapIn) {
        resident[step.index] = 1;
      }
    }
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(numTensors); ++t)
      if (resident[t] && graph.tensor(t).bytes > 0)
        profile.residentAtPeak.push_back(t);
    std::stable_sort(profile.residentAtPeak.begin(),
                     profile.residentAtPeak.end(),
                     [&](TensorIndex a, TensorIndex b) {
                       return graph.tensor(a).bytes > graph.tensor(b).bytes;
                     });
  }
  return profile;
}

MemoryProfile lms::evaluateSchedule(const Graph &graph,
                                    const EvalOptions &options) {
  llvm::Expected<MemoryProfile> profile =
      evaluatePlan(graph, referencePlan(graph), options);
  if (!profile) {
    // The reference plan of a verified graph is always valid: this is a bug.
    llvm::report_fatal_error(
        llvm::Twine("lms: internal error: the schedule order is not a valid "
                    "plan: ") +
        llvm::toString(profile.takeError()));
  }
  return std::move(*profile);
}

LiveIntervals lms::computeLiveIntervals(const Graph &graph) {
  LiveIntervals intervals;
  size_t n = graph.numTensors();
  intervals.start.resize(n);
  intervals.end.resize(n);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(n); ++t) {
    intervals.start[t] = graph.tensor(t).producer;
    // Live-out tensors stay resident past the last op.
    intervals.end[t] = graph.tensor(t).liveOut
                           ? static_cast<OpIndex>(graph.numOps())
                           : graph.lastUse(t);
  }
  return intervals;
}

uint64_t lms::feasibleBytesOf(const Graph &graph, OpIndex i) {
  const Op &op = graph.op(i);
  int64_t bytes = op.transientBytes;
  int64_t largestSide = 0;
  for (auto side : {llvm::ArrayRef<TensorIndex>(op.inputs),
                    llvm::ArrayRef<TensorIndex>(op.outputs)}) {
    int64_t sideBytes = 0;
    for (TensorIndex t : side)
      if (graph.tensor(t).space == MemorySpace::Device)
        sideBytes += static_cast<int64_t>(graph.tensor(t).bytes);
    bytes += sideBytes;
    largestSide = std::max(largestSide, sideBytes);
  }
  return static_cast<uint64_t>(std::max(bytes, largestSide));
}

std::pair<uint64_t, OpIndex> lms::minimumFeasibleBytes(const Graph &graph) {
  uint64_t best = 0;
  OpIndex at = -1;
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    uint64_t bytes = feasibleBytesOf(graph, i);
    if (at < 0 || bytes > best) {
      best = bytes;
      at = i;
    }
  }
  return {best, at};
}
