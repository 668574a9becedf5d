//===- InitLMS.h - Register the LMS dialect and passes ----------*- C++ -*-===//
//
// The entry points a host compiler calls to make LMS available.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_INITLMS_H
#define LMS_INITLMS_H

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace lms {

/// Adds the `lms` dialect to `registry`.
inline void registerLMSDialect(DialectRegistry &registry) {
  registry.insert<LMSDialect>();
}

// `registerLMSPasses()` (from LMS/Transforms/Passes.h) registers every LMS
// pass with the global pass registry, for textual pipelines and tools.

} // namespace lms
} // namespace mlir

#endif // LMS_INITLMS_H
