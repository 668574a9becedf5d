//===- Memory.h - Plans and their peak memory -------------------*- C++ -*-===//
//
// A plan is a sequence of steps over a Graph: compute an op (again, for a
// recomputation), free a tensor, copy it to host, bring it back. Evaluating a
// plan checks it (every input resident when an op runs) and measures the
// device and host bytes at every step. The schedule order itself is the
// reference plan: each op once, each tensor freed after its last use.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_MEMORY_H
#define LMS_GRAPH_MEMORY_H

#include "LMS/Graph/Graph.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace lms {

/// One step of a plan.
struct Step {
  enum Kind : uint8_t {
    /// Run op `index`: every input must be resident; its outputs are
    /// allocated (those already resident are not allocated again).
    Compute,
    /// Release the device bytes of tensor `index` (after a SwapOut, this is
    /// the point where the program waits for the copy).
    Free,
    /// Start copying resident tensor `index` to host; it stays resident
    /// until a Free.
    SwapOut,
    /// Allocate tensor `index` on the device and copy it back from host.
    SwapIn,
    /// Release the host copy of tensor `index`.
    FreeHost,
  };
  Kind kind;
  int32_t index;

  static Step compute(OpIndex op) { return {Compute, op}; }
  static Step free(TensorIndex t) { return {Free, t}; }
  static Step swapOut(TensorIndex t) { return {SwapOut, t}; }
  static Step swapIn(TensorIndex t) { return {SwapIn, t}; }
  static Step freeHost(TensorIndex t) { return {FreeHost, t}; }
  bool operator==(const Step &other) const {
    return kind == other.kind && index == other.index;
  }
};

using Plan = std::vector<Step>;

/// The schedule order as a plan: tensors live on entry are resident at the
/// start, each op is computed once in order, and each tensor is freed right
/// after its last use (live-out tensors never are; an unused argument is
/// freed before the first op).
Plan referencePlan(const Graph &graph);

/// Device bytes around one Compute step.
struct OpMemory {
  /// Resident before the op starts.
  uint64_t before = 0;
  /// While it runs: before + its new outputs + its transient bytes.
  uint64_t during = 0;
  /// Resident after the frees that follow it, before the next op.
  uint64_t after = 0;
};

/// The result of evaluating a plan.
struct MemoryProfile {
  /// Maximum device bytes over all steps (Free steps take no memory).
  uint64_t peakBytes = 0;
  /// The step at the peak, and the op it computes (-1 when the peak is a
  /// swap-in or the plan is empty).
  size_t peakStep = 0;
  OpIndex peakOp = -1;
  /// Device tensors resident at the peak step, largest first.
  std::vector<TensorIndex> residentAtPeak;
  /// Maximum host bytes held by copies and host tensors.
  uint64_t hostPeakBytes = 0;
  /// Device bytes during every step.
  std::vector<uint64_t> stepBytes;
  /// For each Compute step in plan order: the op and its memory.
  std::vector<std::pair<OpIndex, OpMemory>> computeSteps;
};

/// Options of the evaluation.
struct EvalOptions {
  /// Record stepBytes and computeSteps (costs O(steps) memory).
  bool recordSteps = true;
};

/// Evaluates `plan` on `graph`. Fails with a message naming the first
/// offending step if the plan is invalid: an op computed while an input is
/// not resident, a free of a tensor that is not resident, a swap-in without a
/// host copy, an index out of range.
llvm::Expected<MemoryProfile> evaluatePlan(const Graph &graph, const Plan &plan,
                                           const EvalOptions &options = {});

/// Evaluates the reference plan (cannot fail on a verified graph).
MemoryProfile evaluateSchedule(const Graph &graph,
                               const EvalOptions &options = {});

/// Liveness in the schedule order, as intervals: tensor t is resident while
/// ops start(t)..end(t) run (inclusive). Tensors that are never resident
/// (unused arguments) have end < start; live-out tensors end at numOps().
struct LiveIntervals {
  std::vector<OpIndex> start;
  std::vector<OpIndex> end;
  bool isLiveDuring(TensorIndex t, OpIndex op) const {
    return start[t] <= op && op <= end[t];
  }
  /// Live before op starts (defined earlier, used at or after it).
  bool isLiveIn(TensorIndex t, OpIndex op) const {
    return start[t] < op && op <= end[t];
  }
  /// Live after op ends (defined at or before it, used after it).
  bool isLiveOut(TensorIndex t, OpIndex op) const {
    return start[t] <= op && op < end[t];
  }
};
LiveIntervals computeLiveIntervals(const Graph &graph);

/// The smallest budget any plan can meet without recomputing or changing the
/// order: the largest, over ops, of its inputs + outputs + transient bytes.
/// Returns the bytes and the op that needs them.
std::pair<uint64_t, OpIndex> minimumFeasibleBytes(const Graph &graph);

/// What op `op` alone needs of that bound: its device inputs + outputs +
/// transient bytes.
uint64_t feasibleBytesOf(const Graph &graph, OpIndex op);

} // namespace lms

#endif // LMS_GRAPH_MEMORY_H
