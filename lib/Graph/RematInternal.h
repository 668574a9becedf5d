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

/// The retention-interval search (RematIntervals.cpp).
llvm::Expected<RematResult> planRematIntervals(const Graph &graph,
                                               uint64_t budget,
                                               const RematOptions &options);

} // namespace lms::detail

#endif // LMS_LIB_GRAPH_REMATINTERNAL_H
