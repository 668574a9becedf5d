//===- FunctionPlanning.h - Plan and rewrite one function -------*- C++ -*-===//
//
// The per-function work of --lms-insert-swaps, --lms-rematerialize and
// --lms-plan: translate the function into the graph core, plan there, write
// the plan back, and check that the memory analysis of the result fits.
// Errors are emitted as diagnostics (at the op that needs more memory where
// there is one).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_FUNCTIONPLANNING_H
#define LMS_TRANSFORMS_FUNCTIONPLANNING_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Swap.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace mlir {
namespace lms {

class SwapCandidates;

struct SwapKnobs {
  ::lms::SwapMethod planner = ::lms::SwapMethod::LMS;
  int swapoutThreshold = -1, swapinAhead = -1, swapinGroupby = -1;
  /// Most bytes a plan may hold in host memory at once (0: no limit).
  uint64_t hostLimit = 0;
};

/// The host budget in bytes: `option` (a pass's host-budget=), else
/// `--lms-host-budget`, else the device's host memory. Emits an error at
/// `scope` naming the text and fails on a malformed size or a percentage.
FailureOr<uint64_t> resolveHostBudget(Operation *scope, StringRef option,
                                      const ::lms::DeviceSpec &device);

/// The swap planner of a name, as the transform ops spell it (the passes'
/// options are enums); emits "invalid <plannerOption> '...': expected lms,
/// tflms, swap-all or save-on-cpu" at `at` and fails for an unknown one.
FailureOr<::lms::SwapMethod>
parseSwapPlanner(Operation *at, StringRef name,
                 StringRef plannerOption = "planner");

/// The recomputation planner of a name (any but checkpoint-all); emits an
/// error naming the planners at `at` and fails for an unknown one.
FailureOr<::lms::RematMethod>
parseRematPlanner(Operation *at, StringRef name,
                  StringRef plannerOption = "planner");

struct SwapStats {
  uint64_t tensors = 0, swapOuts = 0, swapIns = 0, toHost = 0, toDevice = 0;
  double stallSeconds = 0;
  /// With arena=true: plans made again for a lower budget because the
  /// arena of the rewritten function exceeded it (the placement adds bytes
  /// the plan does not see). Without an arena the rewrite realizes its plan
  /// exactly, and there are none.
  unsigned replans = 0;
};

/// Offloads tensors of `func` until its peak is at most `limit` bytes (does
/// nothing when it fits).
FailureOr<SwapStats> insertSwapsInFunction(FunctionOpInterface func,
                                           const GraphOptions &graphOptions,
                                           const ::lms::DeviceSpec &device,
                                           uint64_t limit,
                                           const SwapKnobs &knobs);

/// The backward ops of `graph`, the graph of `fg` or one with the same
/// tensors, from the function's first result (a training step's loss): by
/// time, the ops after it is computed (::lms::opsAfterLoss), else the ops
/// it does not depend on (::lms::backwardOpsOf). Empty when the function
/// returns nothing the graph holds. For the baselines that need the
/// forward/backward split (Chen's and PyTorch's checkpointing, by
/// dependence; save-on-cpu, by time).
std::vector<uint8_t> backwardOpsOfLoss(FunctionOpInterface func,
                                       const FunctionGraph &fg,
                                       const ::lms::Graph &graph, bool byTime);

/// The offloading planner's options: the knobs, and the gaps and host
/// copies the IR can rewrite (`candidates` must outlive them).
::lms::SwapOptions swapOptionsOf(const SwapKnobs &knobs,
                                 const SwapCandidates &candidates);

/// The offloading step of a trial of --lms-plan's joint planner, as the
/// rewrite of that trial will make it: the recomputation plan `plan` (of
/// the function's RematGraph) written into `func`, then the plan that
/// insertSwapsInFunction (without an arena) would make there for `limit`,
/// with the rewritten function's peak and simulated time; a result with no
/// decisions when the function fits once recomputed. `func` is restored.
llvm::Expected<::lms::SwapResult>
offloadAfterRecompute(FunctionOpInterface func,
                      const GraphOptions &graphOptions,
                      const ::lms::DeviceSpec &device, const ::lms::Plan &plan,
                      uint64_t limit, const SwapKnobs &knobs);

struct RematKnobs {
  /// Any but checkpoint-all (which cannot fit a budget).
  ::lms::RematMethod planner = ::lms::RematMethod::Heuristic;
  /// Wall-clock cap (0: none, except 60 s for the exact planner).
  double timeLimitSeconds = 0;
  /// Search iterations (0: automatic).
  uint64_t iterations = 0;
  uint64_t seed = 1;
  /// Ops of the function (indices of its FunctionGraph) whose units must
  /// not be recomputed (the joint planner keeps them for offloading).
  std::vector<::lms::OpIndex> keptOps;
};

/// Fails, with the error at `at`, for checkpoint-all, planner=exact in a
/// build without CBC, planner=moccasin without Gecode, or a negative time
/// limit; the messages name the options as the caller spells them.
LogicalResult verifyRematKnobs(Operation *at, const RematKnobs &knobs,
                               StringRef plannerOption = "planner",
                               StringRef timeLimitOption = "time-limit");

struct RematStats {
  uint64_t recomputes = 0;
  uint64_t opsCloned = 0;
  double extraSeconds = 0;
  /// As SwapStats::replans.
  uint64_t replans = 0;
};

/// The tail of a pass's statistics line on its replans: ", N replans" when
/// there were any (only with arena=true).
std::string fidelityStatistics(uint64_t replans);

/// Inserts lms.recompute regions into `func` until its peak is at most
/// `limit` bytes (does nothing when it fits).
FailureOr<RematStats> rematerializeFunction(FunctionOpInterface func,
                                            const GraphOptions &graphOptions,
                                            const ::lms::DeviceSpec &device,
                                            uint64_t limit,
                                            const RematKnobs &knobs);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_FUNCTIONPLANNING_H
