//===- Schedule.h - Memory-aware op scheduling ------------------*- C++ -*-===//
//
// The peak of a program depends on the order its ops run in, not only on
// what it keeps: an order that finishes one branch before starting the next
// frees its tensors earlier. This file finds an order of a Graph's ops, each
// run once, that respects every dependence (a tensor's producer before its
// users, an op that writes a tensor in place after the earlier readers of
// the old contents and before the later ones, and any constraints the caller
// adds, such as the IR's side effects), with the smallest peak it can find:
//
//  1. constructive orders: the given order; a list scheduler that runs the
//     ready op that grows memory least (frees most), as XLA's list scheduler;
//     a depth-first order that finishes the most memory-hungry operand first,
//     as XLA's DFS scheduler;
//  2. simulated annealing over the best of them: moves of one op within the
//     window its dependences allow, most of them around the peak (a producer
//     of a tensor live there moved later, a consumer moved earlier), under a
//     work limit (evaluations, never seconds), from a seed.
//
// Deterministic: the same graph and options give the same order on any
// machine. The result is never worse than the given order.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_SCHEDULE_H
#define LMS_GRAPH_SCHEDULE_H

#include "LMS/Graph/Graph.h"

#include "llvm/Support/Error.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace lms {

/// What the search minimizes.
enum class ScheduleGoal {
  /// The peak (stopping once it is at most targetBytes, when given).
  SmallestPeak,
  /// The bytes above targetBytes summed over the ops, then the peak: the
  /// order that leaves the least to offload or recompute when no order
  /// fits (a recompute planner's best start is often this one).
  LeastExcess,
};

struct ScheduleOptions {
  /// Extra precedence constraints (before, after) on top of the graph's own
  /// dependences: the IR's side effects and region uses, say.
  std::vector<std::pair<OpIndex, OpIndex>> edges;
  /// Work limit of the annealing in evaluations of an order; 0 chooses one
  /// from the graph's size (autoScheduleIterations).
  uint64_t searchIterations = 0;
  /// Wall-clock cap in seconds on top of the work limit (infinite: none).
  double timeLimitSeconds = std::numeric_limits<double>::infinity();
  uint64_t seed = 1;
  /// Stop as soon as an order peaks at or below this many bytes (0: search
  /// for the smallest peak until the work limit).
  uint64_t targetBytes = 0;
  ScheduleGoal goal = ScheduleGoal::SmallestPeak;
};

struct ScheduleResult {
  /// order[k] is the op run k-th.
  std::vector<OpIndex> order;
  /// The peak of `order` (as evaluateSchedule of reorderGraph computes it).
  uint64_t peakBytes = 0;
  /// The peak of the given order.
  uint64_t originalPeakBytes = 0;
  /// Which construction the result came from: "given", "list", "dfs", and
  /// "+anneal" when the annealing improved it.
  std::string method;
  /// Orders evaluated.
  uint64_t evaluations = 0;
  /// Whether the wall-clock cap stopped the search before its work limit.
  bool stoppedByTimeLimit = false;
  bool changed() const {
    for (size_t k = 0; k < order.size(); ++k)
      if (order[k] != static_cast<OpIndex>(k))
        return true;
    return false;
  }
};

/// The default work limit of scheduleForMemory for `graph`.
uint64_t autoScheduleIterations(const Graph &graph);

/// Finds an order of the ops of `graph` with a small peak. Fails when an
/// extra edge is out of range or the constraints have a cycle.
llvm::Expected<ScheduleResult>
scheduleForMemory(const Graph &graph, const ScheduleOptions &options = {});

/// Whether `order` is a permutation of the ops that respects the graph's
/// dependences and `edges`; the message names the first violation.
llvm::Error verifyOrder(const Graph &graph, llvm::ArrayRef<OpIndex> order,
                        llvm::ArrayRef<std::pair<OpIndex, OpIndex>> edges = {});

/// The graph with its ops in `order` (op k of the result is op order[k] of
/// `graph`); tensors keep their indices. `order` must pass verifyOrder.
Graph reorderGraph(const Graph &graph, llvm::ArrayRef<OpIndex> order);

} // namespace lms

#endif // LMS_GRAPH_SCHEDULE_H
