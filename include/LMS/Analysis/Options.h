//===- Options.h - Budgets and analysis options from IR and text -*- C++
//-*-===//

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
/// emulated and CUDA runtimes' allocations): 256 bytes.
constexpr uint64_t kArenaAlignment = 256;

/// GraphOptions from the textual pass options; emits an error at `scope` and
/// fails for a malformed `dynamicBytes` size or a zero alignment.
FailureOr<GraphOptions> makeGraphOptions(Operation *scope, uint64_t alignment,
                                         StringRef dynamicBytes,
                                         bool keepArguments);

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_OPTIONS_H
