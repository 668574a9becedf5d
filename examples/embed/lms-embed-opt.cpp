//===- lms-embed-opt.cpp - An mlir-opt of a host, with LMS registered -----===//
//
// A host's own optimizer driver: a handful of upstream dialects and passes,
// and everything of LMS through its registration entry points. Then
//
//   lms-embed-opt model.mlir --lms-insert-swaps --lms-budget=12GiB
//
// works as in lms-opt.
//
//===----------------------------------------------------------------------===//

#include "LMS/InitLMS.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();

  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  // The lms dialect, passes, pipelines and --lms-budget.
  mlir::lms::registerAllLMS(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "A host's optimizer with LMS\n", registry));
}
