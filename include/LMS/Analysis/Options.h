//===- Options.h - Budgets and analysis options from IR, text -*- C++ -*-===//

#ifndef LMS_ANALYSIS_OPTIONS_H
#define LMS_ANALYSIS_OPTIONS_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Units.h"

#include "mlir/IR/Operation.h"

namespace mlir {
namespace lms {

/// The budget of `func`: its `lms.budget` attribute (a string such as
/// "12GiB" or "60%", or an integer number of bytes) when it has one, else
/// `option` when it is not empty, else none. Emits an error at `func` naming
/// the bad text and fails when either is malformed.
FailureOr<std::optional<::lms::ByteSize>> getBudget(Operation *func,
                                                    StringRef option);

/// The granularity the arena lowering carves buffers at
/// (--lms-carve-arena in --lms-host-pipeline and --lms-gpu-pipeline, and the
/// emulated and CUDA runtimes' allocations): 256 bytes. A pipeline that
/// lowers plans with it, so that what the planner counts is what the
/// runtime allocates.
constexpr uint64_t kArenaAlignment = 256;

/// The alignment the planning passes count with: `alignment` when given,
/// and for 0 (their default) kArenaAlignment with an arena (a plan that
/// fits then fits as lowered), else 1 (exact bytes).
inline uint64_t planningAlignment(uint64_t alignment, bool arena) {
  if (alignment)
    return alignment;
  return arena ? kArenaAlignment : 1;
}

/// GraphOptions from the textual pass options; emits an error at `scope` and
/// fails for a malformed `dynamicBytes` size or a zero alignment.
FailureOr<GraphOptions> makeGraphOptions(Operation *scope, uint64_t alignment,
                                         StringRef dynamicBytes,
                                         bool keepArguments);

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_OPTIONS_H
