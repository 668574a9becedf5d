//===- RematInternal.h - Shared pieces of the remat planners ----*- C++ -*-===//

#ifndef LMS_LIB_GRAPH_REMATINTERNAL_H
#define LMS_LIB_GRAPH_REMATINTERNAL_H

#include "LMS/Graph/Remat.h"

#include <chrono>

namespace lms::detail {

/// Validates `plan` by evaluation, fills peak and cost, and fails when the
/// plan is invalid or over the budget.
llvm::Expected<RematResult> finishPlan(const Graph &graph, Plan plan,
                                       uint64_t budget,
                                       const DeviceSpec *device,
                                       std::string method);

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

/// The retention-interval search (RematIntervals.cpp).
llvm::Expected<RematResult> planRematIntervals(const Graph &graph,
                                               uint64_t budget,
                                               const RematOptions &options);

} // namespace lms::detail

#endif // LMS_LIB_GRAPH_REMATINTERNAL_H
