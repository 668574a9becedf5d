//===- LMSDialectPlugin.cpp - The lms dialect as an mlir-opt plugin -------===//
//
//   mlir-opt --load-dialect-plugin=<prefix>/lib/LMSDialectPlugin.so
//
// adds the `lms` dialect and its bufferization models to mlir-opt's
// registry, so that programs with lms ops parse, verify and bufferize.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"

#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LMSDialect", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::lms::registerLMSDialect(*registry);
          }};
}
