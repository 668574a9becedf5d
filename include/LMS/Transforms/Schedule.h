//===- Schedule.h - Reordering ops for a smaller peak -----------*- C++ -*-===//
//
// The IR side of memory-aware scheduling (LMS/Graph/Schedule.h): the
// ordering constraints a function body imposes (SSA uses, also from nested
// regions; side effects; the terminator last), and the reordering of its
// ops in the order the graph core finds, kept only when the re-analysed
// peak is smaller.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_SCHEDULE_H
#define LMS_TRANSFORMS_SCHEDULE_H

#include "LMS/Analysis/FunctionGraph.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace lms {

/// The limits of the scheduling search.
struct ScheduleKnobs {
  /// Work limit in evaluated orders (0: chosen from the function's size).
  uint64_t iterations = 0;
  uint64_t seed = 1;
  /// Stop searching once the peak is at most this (0: the smallest found).
  uint64_t targetBytes = 0;
  /// Namespaces of unregistered dialects whose ops are free of side effects
  /// (mhlo, stablehlo, ...): without it an unregistered op may do anything
  /// and keeps its place among the ops with effects. Their collectives,
  /// host transfers and custom calls keep their place all the same.
  std::vector<std::string> pureDialects;
};

/// What scheduling did to one function.
struct FunctionSchedule {
  /// The peak (what a budget bounds: budgetedBytes) before and after.
  uint64_t peakBefore = 0;
  uint64_t peakAfter = 0;
  /// Whether the ops were reordered (only when the peak dropped).
  bool changed = false;
  /// The construction the order came from (ScheduleResult::method).
  std::string method;
};

/// The pairs (before, after) of graph ops of `graph` whose order the IR
/// fixes beyond the buffers the graph already relates: every SSA use (also
/// from inside a nested region) after its definition; ops with memory
/// effects in their order where one of them writes (reads commute;
/// allocation alone is no effect; an op of unknown effects writes; an
/// unregistered op marked `lms.recomputable`, or of a dialect in
/// `pureDialects`, has none); the terminator last.
std::vector<std::pair<::lms::OpIndex, ::lms::OpIndex>>
orderingConstraints(const FunctionGraph &graph,
                    ArrayRef<std::string> pureDialects = {});

/// Reorders the ops of the body of `func` (one block) for a smaller peak
/// and keeps the new order only when the analysis of the rewritten body
/// (bufferization's decisions included) confirms a smaller peak. Fails
/// with a diagnostic when the body cannot be analysed.
FailureOr<FunctionSchedule> scheduleFunction(FunctionOpInterface func,
                                             const GraphOptions &options,
                                             const ScheduleKnobs &knobs);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_SCHEDULE_H
