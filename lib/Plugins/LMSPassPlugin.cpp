//===- LMSPassPlugin.cpp - The LMS passes as an mlir-opt plugin -----------===//
//
//   mlir-opt --load-pass-plugin=<prefix>/lib/LMSPassPlugin.so
//
// registers every LMS pass, the lms-* pipelines and the `--lms-budget`
// option. Load LMSDialectPlugin.so too when the input already holds lms ops
// or is bufferized by mlir-opt after the rewrite.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"

#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LMSPasses", LLVM_VERSION_STRING, []() {
            mlir::lms::registerLMSPasses();
            mlir::lms::registerLMSPipelines();
            mlir::lms::registerLMSGlobalOptions();
          }};
}
