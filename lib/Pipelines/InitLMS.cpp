//===- InitLMS.cpp - Register the LMS dialect, passes and pipelines -------===//

#include "LMS/InitLMS.h"
#include "LMS/Conversion/Passes.h"
#include "LMS/Dialect/LMS/IR/LMSBufferization.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/TransformOps/LMSTransformOps.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

void mlir::lms::registerLMSDialect(DialectRegistry &registry) {
  registry.insert<LMSDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerLMSTransformDialectExtension(registry);
}

void mlir::lms::registerLMSPasses() {
  registerLMSTransformsPasses();
  registerLMSConversionPasses();
}

void mlir::lms::registerAllLMS(DialectRegistry &registry) {
  registerLMSDialect(registry);
  registerLMSPasses();
  registerLMSPipelines();
  registerLMSGlobalOptions();
}
