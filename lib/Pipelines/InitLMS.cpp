//===- InitLMS.cpp - Register the LMS dialect, passes and pipelines -------===//

#include "LMS/InitLMS.h"
#include "LMS/Conversion/Passes.h"
#include "LMS/Dialect/LMS/IR/LMSBufferization.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/TransformOps/LMSTransformOps.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

void mlir::lms::registerLMSDialect(DialectRegistry &registry) {
  registry.insert<LMSDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerLMSTransformDialectExtension(registry);
}

void mlir::lms::registerLMSPasses() {
  registerLMSTransformsPasses();
  registerLMSConversionPasses();
}

void mlir::lms::registerLMSGPUTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

void mlir::lms::registerAllLMS(DialectRegistry &registry) {
  registerLMSDialect(registry);
  registerLMSGPUTranslations(registry);
  registerLMSPasses();
  registerLMSPipelines();
  registerLMSGlobalOptions();
}
