//===- lms-opt.cpp - LMS optimizer driver ---------------------------------===//
//
// mlir-opt with the `lms` dialect and passes, and the upstream dialects,
// extensions and passes a pipeline from tensors to LLVM needs.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::lms::registerAllLMS(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Serializing GPU kernels (lms-gpu-pipeline) translates them to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "LMS (large model support) optimizer driver\n", registry));
}
