//===- lms-opt.cpp - LMS optimizer driver ---------------------------------===//
//
// mlir-opt with the `lms` dialect and passes, and the upstream dialects,
// extensions and passes a pipeline from tensors to LLVM needs.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"
#include "LMS/Transforms/GlobalOptions.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::lms::registerAllLMSPasses();
  mlir::lms::registerLMSGlobalOptions();
  mlir::lms::registerLMSPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Serializing GPU kernels (lms-gpu-pipeline) translates them to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::lms::registerLMSDialect(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "LMS (large model support) optimizer driver\n", registry));
}
