//===- InitLMS.h - Register the LMS dialect and passes ----------*- C++ -*-===//
//
// The entry points a host compiler calls to make LMS available.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_INITLMS_H
#define LMS_INITLMS_H

#include "LMS/Conversion/Passes.h"
#include "LMS/Dialect/LMS/IR/LMSBufferization.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Pipelines/Pipelines.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace lms {

/// Adds the `lms` dialect and its interface models (bufferization) to
/// `registry`.
inline void registerLMSDialect(DialectRegistry &registry) {
  registry.insert<LMSDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

/// Registers every LMS pass (transformations and conversions) with the
/// global pass registry, for textual pipelines and tools.
inline void registerAllLMSPasses() {
  registerLMSPasses();
  registerLMSConversionPasses();
}

} // namespace lms
} // namespace mlir

#endif // LMS_INITLMS_H
