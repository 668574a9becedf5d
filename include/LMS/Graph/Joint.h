//===- Joint.h - Recompute and offload, decided per tensor ------*- C++ -*-===//
//
// The joint planner of --lms-plan: for every tensor, keep it, recompute it,
// or offload it over gaps in its use (with a prefetch point), decided
// together under the device model's time, where copies hide behind compute
// and recomputation takes what the links cannot carry.
//
// A joint plan is a recomputation plan on the graph with its in-place chains
// contracted, for a budget between the peak and the device budget (one for
// the whole step, or one per stage: linkProfile), and then
// a swap plan on the graph that recomputation plan stands for (its ops in
// plan order, a recomputation as an op of its own), for the device budget:
// the order the IR is rewritten in (--lms-rematerialize, then
// --lms-insert-swaps). The pass plans that offloading on the rewritten IR
// itself (JointOptions::offloadAfter), so that a trial's time is its
// rewrite's. Recomputing first lets the offloading planner move any
// tensor, recomputed ones included. The search:
//
//  1. Levels: recomputation brings the peak down by a share of the excess
//     (none, a quarter, ... all of it) and offloading does the rest; link
//     levels: recomputation removes all of the excess but what the links
//     can carry out since the start of the step and back before its end in
//     half, a quarter or an eighth of their time (linkProfile). Then around
//     the fastest in halving steps: link levels (a quarter of it down to a
//     sixteenth), or shares (an eighth down to a sixty-fourth, from
//     recomputation alone too, where the links carry only a small share).
//  2. Per unit: from the fastest, the units whose recomputation costs most
//     are kept from recomputation one at a time (offloading then takes their
//     bytes if the links have room); a change is kept when the simulated
//     step is faster; two failed trials in a row end this step.
//  3. The two fastest trials again with the recomputation planner's whole
//     work limit (trials get a quarter); the fastest of all is chosen.
//
// Every trial is timed by the event simulator of Swap.h (compute stream, one
// copy stream each way). The search is bounded by a number of trials, never
// by time: the same graph and options give the same plan.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_JOINT_H
#define LMS_GRAPH_JOINT_H

#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Swap.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lms {

struct JointOptions {
  /// The offloading planner and its options on the input graph (gaps the
  /// IR cannot rewrite, reuse), used when nothing is recomputed.
  SwapMethod swapMethod = SwapMethod::LMS;
  SwapOptions swap;
  /// The recomputation planner and its options (the device is set by the
  /// joint planner). Trials use a quarter of its work limit.
  RematMethod rematMethod = RematMethod::Heuristic;
  RematOptions remat;
  /// Most bytes a plan may hold in host memory at once (0: no limit).
  uint64_t hostLimit = 0;
  /// Per op of the graph: the contraction of contractChains (empty: no op
  /// joins; Op::recomputable decides).
  std::vector<uint8_t> joinsPrevious;
  std::vector<uint8_t> recomputable;
  /// Trials of the per-unit search (0: 8).
  unsigned perUnitTrials = 0;
  /// The offloading step of a trial: what fitting `budget` by offloading
  /// gives on the program that the recomputation plan `plan` (of
  /// `contracted`, the graph with its in-place chains contracted) stands
  /// for; a result with no decisions when that program fits as it is. The
  /// MLIR pass gives one that writes the plan into the function and plans
  /// on the rewritten IR as its offloading rewrite will, so that the time
  /// of a trial is the time of the rewrite of that trial. Null:
  /// offloadRecomputed.
  std::function<llvm::Expected<SwapResult>(const Graph &contracted,
                                           const Plan &plan, uint64_t budget)>
      offloadAfter;
};

/// One trial of the search, for reports.
struct JointTrial {
  /// The share of the excess recomputation removed.
  double rematShare = 0;
  /// Units kept from recomputation.
  size_t kept = 0;
  /// > 0: recomputation left to offloading what the links carry in this
  /// share of their time (linkProfile), instead of a share of the excess.
  double link = 0;
  /// The simulated step, or why there is no plan.
  std::optional<double> seconds;
  std::string failure;
};

/// What the IR is told to write: recomputation for a budget (with some units
/// kept from it), then offloading for the device budget.
struct JointChoice {
  /// The budget of the recomputation step (the peak when nothing is
  /// recomputed), and the share of the excess it removes.
  uint64_t rematBudget = 0;
  double rematShare = 0;
  /// > 0: recomputation meets linkProfile(units, device, budget, excess,
  /// link) instead of one budget (rematBudget is then its largest entry).
  double link = 0;
  /// Ops of the input graph whose units must not be recomputed.
  std::vector<OpIndex> keptOps;
  /// The simulated step.
  double seconds = 0;
  /// The recomputation planner's work limit (RematOptions::searchIterations)
  /// the choice was planned with; 0: its whole limit. A rewrite that plans
  /// the recomputation again with it gets the same plan.
  uint64_t rematIterations = 0;
};

struct JointResult : JointChoice {
  /// The next fastest trials (at most three, fastest first), for a caller
  /// whose rewrite of the choice fails (the IR may bufferize a rewrite
  /// differently than the graph says).
  std::vector<JointChoice> alternatives;
  /// The joint plan's device and host peaks.
  uint64_t peakBytes = 0;
  uint64_t hostPeakBytes = 0;
  /// Distinct tensors offloaded and recomputations in the plan.
  size_t offloadedTensors = 0;
  size_t recomputes = 0;
  std::vector<JointTrial> trials;
};

/// The op sequence of a plan's Compute steps.
std::vector<OpIndex> computeOrder(const Plan &plan);

/// The graph a recomputation plan stands for: its Compute steps in order,
/// each an op; a computation after the first makes new tensors, which the
/// later uses read. Live-out tensors are live-out in their last version.
Graph graphOfPlan(const Graph &graph, const Plan &plan);

/// The default offloading step of the joint planner: the offloading
/// planner on graphOfPlan(contracted, plan), buffers written in place left
/// on the device (the graph cannot tell which of their values a gap holds).
llvm::Expected<SwapResult> offloadRecomputed(const Graph &contracted,
                                             const Plan &plan,
                                             const DeviceSpec &device,
                                             uint64_t budget);

/// Per op of `units` (a contracted graph, in schedule order), the budget of
/// a recomputation step that leaves offloading what the links can carry:
/// `budget` plus what the slower link moves in `link` of the compute time
/// before the op (out, in the forward) or after it (back, in the
/// backward), at most `cap`. Memory far from both ends of the step can go
/// to the host and back; near either end it must not be there to begin
/// with.
std::vector<uint64_t> linkProfile(const Graph &units, const DeviceSpec &device,
                                  uint64_t budget, uint64_t cap, double link);

/// A mix of a trial or choice in words: " 98% of the excess", or "all but
/// what the links carry in 25.0% of their time".
std::string describeMix(double share, double link);

/// Plans `graph` for `budget` with recomputation and offloading together.
/// Fails with a message when no trial fits (the device budget, or the host
/// limit with the device budget).
llvm::Expected<JointResult> planJoint(const Graph &graph,
                                      const DeviceSpec &device, uint64_t budget,
                                      const JointOptions &options);

} // namespace lms

#endif // LMS_GRAPH_JOINT_H
