//===- Passes.h - LMS conversion passes -------------------------*- C++ -*-===//

#ifndef LMS_CONVERSION_PASSES_H
#define LMS_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lms {

#define GEN_PASS_DECL
#include "LMS/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "LMS/Conversion/Passes.h.inc"

} // namespace lms
} // namespace mlir

#endif // LMS_CONVERSION_PASSES_H
