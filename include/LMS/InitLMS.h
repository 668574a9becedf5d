//===- InitLMS.h - Register the LMS dialect, passes and pipelines -*- C++ -*-//
//
// The entry points a host compiler calls to make LMS available:
//
//   mlir::DialectRegistry registry;
//   mlir::lms::registerLMSDialect(registry);   // dialect + interface models
//   mlir::lms::registerLMSPasses();            // --lms-* passes
//   mlir::lms::registerLMSPipelines();         // lms-pipeline, lms-*-pipeline
//
// and, to build the flow in C++ without textual pipelines,
// mlir::lms::buildLMSPipeline() from LMS/Pipelines/Pipelines.h.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_INITLMS_H
#define LMS_INITLMS_H

#include "LMS/Pipelines/Pipelines.h"
#include "LMS/Transforms/GlobalOptions.h"

namespace mlir {
class DialectRegistry;
namespace lms {

/// Adds the `lms` dialect and its interface models (bufferization) to
/// `registry`.
void registerLMSDialect(DialectRegistry &registry);

/// Registers every LMS pass (transformations and conversions) with the
/// global pass registry, for textual pipelines and command lines.
void registerLMSPasses();

/// The translations to LLVM IR that lowering for the GPU needs (kernels are
/// serialized to PTX inside the pipeline): builtin, LLVM, NVVM, GPU. A host
/// that already registers all translations does not need this.
void registerLMSGPUTranslations(DialectRegistry &registry);

/// Everything a standalone tool needs: the dialect into `registry`, the
/// GPU translations, the passes, the pipelines, and the `--lms-budget`
/// command-line option.
void registerAllLMS(DialectRegistry &registry);

} // namespace lms
} // namespace mlir

#endif // LMS_INITLMS_H
