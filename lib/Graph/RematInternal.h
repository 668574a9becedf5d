//===- RematInternal.h - Shared pieces of the remat planners ----*- C++ -*-===//

#ifndef LMS_LIB_GRAPH_REMATINTERNAL_H
#define LMS_LIB_GRAPH_REMATINTERNAL_H

#include "LMS/Graph/Remat.h"

#include "llvm/ADT/SmallVector.h"

#include <chrono>

namespace lms::detail {

/// Validates `plan` by evaluation, fills peak and cost, and fails when the
/// plan is invalid or over the budget (with `stageBudgets`, one per op:
/// over the budget of the stage of any computation, the stage being the op
/// computed for the first time at or after it).
llvm::Expected<RematResult>
finishPlan(const Graph &graph, Plan plan, uint64_t budget,
           const DeviceSpec *device, std::string method,
           const std::vector<uint64_t> &stageBudgets = {});

/// The error of a search that its time limit stopped before it had a plan
/// (the limit is a hard cap: no search runs past it for a first plan).
llvm::Error noPlanInTime(double seconds);

/// Per op, whether the planners may compute it again: a compute op marked
/// recomputable that writes nothing in place and neither reads nor defines
/// a tensor some op writes in place (such tensors hold different values
/// over time). The one rule of every remat planner.
std::vector<uint8_t> recomputableOps(const Graph &graph);

/// Seconds since construction (the planners' time limits and progress).
class Stopwatch {
public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

private:
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

/// The limits of an improving search: a number of iterations (the work
/// limit that makes plans reproducible) and a wall-clock cap that, once
/// reached, stays reached and is reported (RematResult::stoppedByTimeLimit).
class SearchLimits {
public:
  /// `defaultIterations` applies when the options give none.
  SearchLimits(const RematOptions &options, uint64_t defaultIterations)
      : cap(options.timeLimitSeconds),
        iterations(options.searchIterations ? options.searchIterations
                                            : defaultIterations) {}

  double elapsed() const { return stopwatch.seconds(); }
  /// Whether the wall-clock cap has been reached (checks the clock).
  bool expired() {
    capped |= elapsed() > cap;
    return capped;
  }
  /// Whether iteration `i` may run.
  bool allows(uint64_t i) { return i < iterations && !expired(); }
  /// Whether the cap is reached, or would be within `stepSeconds` (the
  /// last step's time): a step that would end past the cap is not started,
  /// and counts as stopped by it.
  bool expired(double stepSeconds) {
    capped |= elapsed() + stepSeconds > cap;
    return capped;
  }
  /// Whether iteration `i`, expected to take `stepSeconds`, may run.
  bool allows(uint64_t i, double stepSeconds) {
    return i < iterations && !expired(stepSeconds);
  }
  /// Annealing temperature in [0, 1]: 1 at the start, 0 at the work limit.
  double remaining(uint64_t i) const {
    return std::max(0.0, 1.0 - static_cast<double>(i) /
                                   static_cast<double>(iterations));
  }
  bool stoppedByCap() const { return capped; }

private:
  Stopwatch stopwatch;
  double cap;
  uint64_t iterations;
  bool capped = false;
};

/// Moccasin's retention-interval model of a graph, as the interval search
/// and the constraint program see it: one item per op (its device outputs)
/// and one per device argument; stages are the schedule positions.
struct RetentionItem {
  uint64_t mem = 0;
  double cost = 0;
  /// The stage of its first computation (-1: an argument, resident at
  /// entry).
  int pos = -1;
  bool recomputable = false;
  /// Live-out: resident to the end, never freed.
  bool pinned = false;
  int64_t transient = 0;
  /// The items it reads.
  llvm::SmallVector<int, 4> inputs;
};

/// Per item, its retention intervals [start, end] of stages, ordered by
/// start: it is computed at each start (the first at its own position;
/// arguments start at -1) and resident through the end stage. Empty: an
/// argument nobody reads (freed at entry).
using RetentionIntervals = std::vector<std::vector<std::pair<int, int>>>;

/// The items of `graph` (indices as in RetentionIntervals).
std::vector<RetentionItem> retentionItems(const Graph &graph,
                                          const DeviceSpec *device);

/// The retention-interval search (RematIntervals.cpp); its plan's
/// intervals in `intervals` when given.
llvm::Expected<RematResult>
planRematIntervals(const Graph &graph, uint64_t budget,
                   const RematOptions &options,
                   RetentionIntervals *intervals = nullptr);

/// The heuristic's polish (RematOptions::polishWindows): the moccasin
/// planner's windows, re-solved exactly by the constraint solver, from
/// `warm`, a plan of the interval search, and its `intervals`. Returns
/// `warm` where its intervals are no solution of the constraint program
/// near them, or where the build has no constraint solver, or no window
/// improves it; else the better plan.
llvm::Expected<RematResult>
polishRematMoccasin(const Graph &graph, uint64_t budget,
                    const RematOptions &options, RematResult warm,
                    const RetentionIntervals &intervals);

/// The plan of `intervals` (each stage's computations in schedule order,
/// frees after the last use), validated like every planner's.
llvm::Expected<RematResult> planOfIntervals(const Graph &graph, uint64_t budget,
                                            const DeviceSpec *device,
                                            const RetentionIntervals &intervals,
                                            std::string method);

} // namespace lms::detail

#endif // LMS_LIB_GRAPH_REMATINTERNAL_H
