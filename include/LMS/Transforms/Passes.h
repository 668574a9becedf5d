//===- Passes.h - LMS transformation passes ---------------------*- C++ -*-===//
//
// Declarations and registration of the LMS passes.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_PASSES_H
#define LMS_TRANSFORMS_PASSES_H

#include "LMS/Dialect/LMS/IR/LMSDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lms {

#define GEN_PASS_DECL
#include "LMS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "LMS/Transforms/Passes.h.inc"

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_PASSES_H
