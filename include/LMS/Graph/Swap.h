//===- Swap.h - Swap plans, their application and simulation ----*- C++ -*-===//
//
// A swap plan offloads tensors over *gaps* in their use: after its last use
// before a gap the tensor is copied to the host, its device bytes are
// released once the copy is known to be complete, and it is copied back
// before its next use. This header has the plan, the rewritten graph it
// stands for (with SwapOut / SwapWait / SwapIn ops, exactly as the IR will
// read after the rewrite), the event simulator that times a graph, and the
// planners: LMS's own and two baselines (TFLMS v2 rules, swap everything).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_SWAP_H
#define LMS_GRAPH_SWAP_H

#include "LMS/Graph/Device.h"
#include "LMS/Graph/Graph.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lms {

/// Position "between ops": after op i and before op i+1. After(-1) is the
/// entry, before op 0.
using Position = OpIndex;

/// One offload of tensor `tensor` over the gap between its uses `lastUse`
/// and `nextUse` (lastUse < nextUse - 1; lastUse is kEntry for an argument
/// whose first use is nextUse).
struct SwapDecision {
  TensorIndex tensor = -1;
  /// The last op that uses the tensor before the gap (kEntry: the entry).
  OpIndex lastUse = kEntry;
  /// The next op that uses it; it and the later uses read the swapped-in copy.
  OpIndex nextUse = 0;
  /// The swap-out is issued after this op (lastUse by default).
  Position swapOutAfter = kEntry;
  /// The program waits for the copy and releases the bytes after this op
  /// (>= swapOutAfter; equal means a synchronous swap-out).
  Position releaseAfter = kEntry;
  /// The swap-in is issued before this op (releaseAfter < swapInBefore <=
  /// nextUse): the prefetch point.
  OpIndex swapInBefore = 0;
  /// Bring the tensor back from the host copy of the previous decision of the
  /// same tensor instead of copying it out again (valid when the value did
  /// not change in between). No swap-out and no wait: the device copy is
  /// released after its last use (releaseAfter == lastUse).
  bool reuseHostCopy = false;
};

/// A set of decisions; at most one per gap.
struct SwapPlan {
  std::vector<SwapDecision> decisions;
};

/// One swap op that a plan inserts: its kind and its decision.
struct SwapEvent {
  OpKind kind = OpKind::SwapOut; ///< SwapOut, SwapWait or SwapIn
  size_t decision = 0;
};

/// Where and in which order a plan's swap ops go, and which host copy each
/// swap-in reads: the one description that both rewrites of a plan (the
/// graph's, applySwapPlan, and the IR's, rewriteWithSwaps) carry out.
struct SwapEvents {
  /// Per position p (before original op p; numOps: after the last op):
  /// swap-outs, then waits, then swap-ins, each kind by tensor index. A
  /// decision that reuses a host copy has no swap-out and no wait.
  std::vector<std::vector<SwapEvent>> atPosition;
  /// Per decision that reuses a host copy: the decision that made the copy
  /// (the previous decision of its tensor); the number of decisions for the
  /// others, and for a host-backed tensor (its host data is the copy).
  std::vector<size_t> copyOf;
};

/// The events of a (verified) plan on a graph.
SwapEvents swapEvents(const Graph &graph, const SwapPlan &plan);

/// The graph after the rewrite: the original ops in order with SwapOut,
/// SwapWait and SwapIn ops inserted where swapEvents puts them. The uses of
/// a swapped tensor from `nextUse` until the next decision's `nextUse` read
/// the swapped-in tensor.
struct SwappedGraph {
  Graph graph;
  /// For each op of `graph`: the original op index, or -1 for a swap op.
  std::vector<OpIndex> originalOp;
  /// For each decision: the indices of its swap-out, wait and swap-in ops.
  struct DecisionOps {
    OpIndex swapOut, wait, swapIn;
  };
  std::vector<DecisionOps> decisionOps;
};

/// Checks a plan against a graph: positions in order, one decision per gap,
/// the gap really free of uses, device tensors only. Returns an error message
/// naming the first bad decision, or an empty string.
std::string verifySwapPlan(const Graph &graph, const SwapPlan &plan);

/// The rewritten graph of a (verified) plan.
SwappedGraph applySwapPlan(const Graph &graph, const SwapPlan &plan);

/// Timing of a graph on a device: one compute stream running the Compute ops
/// in order, one copy stream per direction. A swap-out's copy starts when the
/// compute stream reaches it (and its stream is free); a wait stalls the
/// compute stream until that copy is done; a swap-in's copy starts when the
/// compute stream reaches it (its memory is allocated there) and the ops that
/// read the tensor wait for it.
struct Timeline {
  /// End of the last compute op (and of every awaited copy).
  double totalSeconds = 0;
  /// Sum of the compute op times: the time with unlimited memory.
  double computeSeconds = 0;
  /// totalSeconds - computeSeconds.
  double stallSeconds = 0;
  double d2hBusySeconds = 0;
  double h2dBusySeconds = 0;
  uint64_t d2hBytes = 0;
  uint64_t h2dBytes = 0;
  /// Per op: when it starts and ends (copy ops: their copy).
  std::vector<double> start, end;
};
Timeline simulate(const Graph &graph, const DeviceSpec &device);

/// The same timing for ops run in `order`, where an op may run more than
/// once (a recomputation): each run is timed; `start` and `end` hold an
/// op's last run.
Timeline simulateOrder(const Graph &graph, llvm::ArrayRef<OpIndex> order,
                       const DeviceSpec &device);

/// Knobs of the planners. Negative means automatic.
struct SwapOptions {
  /// A gap is a candidate only when more than this many ops lie in it.
  int swapoutThreshold = -1;
  /// Prefetch exactly this many ops before the next use (automatic: from the
  /// copy time and the compute in between).
  int swapinAhead = -1;
  /// Uses closer than this many ops share one swap-in (their gap is never a
  /// candidate).
  int swapinGroupby = -1;
  /// The value read after the gap (lastUse, nextUse) of tensor t, as an id:
  /// -1 when the gap cannot be offloaded (the IR layer rules out buffers it
  /// cannot rewrite). Two gaps of a tensor with the same id read the same
  /// value, so the second may reuse the first's host copy. Null: every gap
  /// can be offloaded and every tensor holds one value (SSA graphs).
  std::function<int(TensorIndex, OpIndex, OpIndex)> valueAfterGap;
  /// Whether an offload of tensor t over a gap that starts after op `a` may
  /// reuse an earlier host copy. Reuse makes `a` the last use of the device
  /// copy, which must not change what `a` does (an op that writes into an
  /// alias of t out of place would then write in place). Null: always.
  std::function<bool(TensorIndex, OpIndex)> canReuseAfter;
  /// Per op, whether it belongs to the backward pass (save-on-cpu offloads
  /// what the forward saves for it). Empty: no backward pass.
  std::vector<uint8_t> backwardOps;
};

/// What a planner produced.
struct SwapResult {
  SwapPlan plan;
  /// Peak of the rewritten graph.
  uint64_t peakBytes = 0;
  /// Most bytes the rewritten graph holds in host memory at once (its
  /// swapped-out copies, and host tensors of its own).
  uint64_t hostPeakBytes = 0;
  /// Simulated timing of the rewritten graph.
  Timeline timeline;
};

/// The result of offloading nothing: `graph` as it is, its peaks and its
/// timing.
SwapResult unswapped(const Graph &graph, const DeviceSpec &device);

/// Why a budget cannot be met: the smallest budget offloading can reach and
/// the op that needs it.
struct Infeasible {
  uint64_t smallestBudget = 0;
  /// The op that needs it, or kEntry for the function's arguments.
  OpIndex op = -1;
  /// Bytes at `op` that no offload can release (its operands, results and
  /// transient bytes, and tensors that cannot be swapped).
  std::string reason;
};

/// Device bytes of the arguments when the function starts: a floor for every
/// plan.
uint64_t entryBytes(const Graph &graph);

/// The smallest peak any swap plan reaches on `graph` (every allowed gap
/// offloaded at once), and the op where it is reached (kEntry when the
/// arguments alone set it).
std::pair<uint64_t, OpIndex> smallestSwapPeak(const Graph &graph,
                                              const SwapOptions &options);

/// LMS's planner: meets `budget` with the least simulated stall it can find.
/// Fails with Infeasible when no plan meets the budget.
llvm::Expected<SwapResult> planSwaps(const Graph &graph,
                                     const DeviceSpec &device, uint64_t budget,
                                     const SwapOptions &options = {},
                                     Infeasible *infeasible = nullptr);

/// TFLMS v2 (Le et al., ISMM'19): candidates by topological-level distance,
/// swap-ins grouped and triggered `ahead` levels early, and its auto-tuning
/// (the largest threshold that fits, then the largest ahead, then groupby),
/// checked here against the exact peak. Fails when no setting fits.
llvm::Expected<SwapResult> planSwapsTFLMS(const Graph &graph,
                                          const DeviceSpec &device,
                                          uint64_t budget,
                                          const SwapOptions &options = {});

/// Offloads every tensor over every gap of at least one op: swap-out after
/// the last use, release once the copy is done (or before the first op the
/// tensor would otherwise be held over), swap-in one op ahead.
SwapResult planSwapEverything(const Graph &graph, const DeviceSpec &device,
                              const SwapOptions &options = {});

/// PyTorch's torch.autograd.graph.save_on_cpu on the same graph, as a
/// baseline: every tensor a forward op makes (options.backwardOps says which
/// ops are backward) and a backward op reads is copied to the host after
/// its last forward use and released at once, and copied back right before
/// its first backward read, which waits for it. PyTorch issues both copies
/// on the compute stream, so nothing overlaps them (the plan's time is
/// compute plus every copy); it also packs the parameters it saves, which
/// is not modelled here (in PyTorch's favour). Ignores the budget.
SwapResult planSaveOnCpu(const Graph &graph, const DeviceSpec &device,
                         const SwapOptions &options = {});

/// The swap planners, for the one entry point below.
enum class SwapMethod {
  LMS,       ///< planSwaps
  TFLMS,     ///< planSwapsTFLMS
  SwapAll,   ///< planSwapEverything
  SaveOnCpu, ///< planSaveOnCpu
};

/// The name options and reports use: lms, tflms, swap-all, save-on-cpu.
llvm::StringRef swapMethodName(SwapMethod method);
/// The method of a name; nullopt for an unknown one.
std::optional<SwapMethod> parseSwapMethod(llvm::StringRef name);

/// Runs the planner `method`. `infeasible` is filled only by LMS's planner
/// (the baselines fail with a message); swap-all ignores the budget, so its
/// plan may exceed it (the caller checks peakBytes).
llvm::Expected<SwapResult> planSwapsWith(SwapMethod method, const Graph &graph,
                                         const DeviceSpec &device,
                                         uint64_t budget,
                                         const SwapOptions &options = {},
                                         Infeasible *infeasible = nullptr);

} // namespace lms

#endif // LMS_GRAPH_SWAP_H
