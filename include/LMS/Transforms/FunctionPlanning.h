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
  /// Bodies of loops (and other ops with regions) planned on their own
  /// because the op's bound was over the budget (planRegionBodies), and
  /// values read inside them offloaded before them and fetched in each
  /// iteration.
  unsigned bodies = 0, fetched = 0;
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
  /// The budget per unit of the graph the planner plans on (the joint
  /// planner's linkProfile), instead of one; null: the limit everywhere.
  /// The limit passed with it is its largest entry; the heuristic meets
  /// the profile, other planners its smallest entry.
  std::function<std::vector<uint64_t>(const ::lms::Graph &units)> stageBudgets;
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
  /// As SwapStats::bodies.
  unsigned bodies = 0;
};

/// The tail of a pass's statistics line on its replans: ", N replans" when
/// there were any (only with arena=true).
std::string fidelityStatistics(uint64_t replans);

/// The tail of a pass's statistics line on the bodies planned on their
/// own: ", N bodies-planned" and ", M fetched-per-iteration" when there
/// were any.
std::string bodyStatistics(uint64_t bodies, uint64_t fetched = 0);

/// How one body is planned by planRegionBodies: `graph` is the graph of
/// `body` (FunctionGraph::buildNested), over `room` bytes; the planner
/// rewrites the body so that its peak is at most `room`, or emits an error
/// and fails.
using BodyPlanner = llvm::function_ref<LogicalResult(
    Block &body, const FunctionGraph &graph, uint64_t room)>;

/// What planRegionBodies did: bodies planned, values fetched per
/// iteration.
struct RegionPlanning {
  unsigned bodies = 0, fetched = 0;
  /// The lms.swap_in ops those fetches wrote (one in each region that
  /// reads the value, and one after the op where the program reads it
  /// there too).
  unsigned fetchedIns = 0;
};

/// Plans inside the ops with regions (loops, conditionals) of `block`
/// (whose graph `build` makes) whose bound — operands, results and the
/// peak of their body — is over `limit`: the planners see such an op as
/// one op holding its body's peak, so no plan of the block alone fits.
/// Each body is given what the budget leaves beside the op's operands and
/// results (ops with regions inside it first, the same way), and
/// `planBody` rewrites it to fit that. With `fetchInside`, when that is
/// not enough (the operands and results alone over the budget, or a body
/// that cannot fit what they leave), the largest value the op reads from
/// outside as its last use is offloaded before it and fetched inside each
/// iteration (an `lms.swap_in` in the body from an `lms.swap_out` before
/// the op), and the op is planned again.
FailureOr<RegionPlanning>
planRegionBodies(Block &block,
                 llvm::function_ref<FailureOr<FunctionGraph>()> build,
                 uint64_t limit, const GraphOptions &graphOptions,
                 BodyPlanner planBody, bool fetchInside);

/// The bodies of `op` planned to fit `room` each (planRegionBodies inside
/// them first).
FailureOr<RegionPlanning> planBodiesOf(Operation *op, uint64_t room,
                                       const GraphOptions &graphOptions,
                                       BodyPlanner planBody, bool fetchInside);

/// planRegionBodies on the body of `func`.
FailureOr<RegionPlanning>
planFunctionBodies(FunctionOpInterface func, const GraphOptions &graphOptions,
                   uint64_t limit, BodyPlanner planBody, bool fetchInside);

/// The body planners of --lms-insert-swaps and --lms-rematerialize:
/// offloading (the LMS planner for save-on-cpu, which needs a training
/// step's loss) and recomputation inside `body`, with the device's time.
LogicalResult offloadInBody(Block &body, const FunctionGraph &graph,
                            uint64_t room, const GraphOptions &graphOptions,
                            const ::lms::DeviceSpec &device,
                            const SwapKnobs &knobs, SwapStats *stats);
LogicalResult recomputeInBody(Block &body, const FunctionGraph &graph,
                              uint64_t room, const GraphOptions &graphOptions,
                              const ::lms::DeviceSpec &device,
                              const RematKnobs &knobs, RematStats *stats);

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
