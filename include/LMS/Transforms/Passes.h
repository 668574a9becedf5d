//===- Passes.h - LMS transformation passes ---------------------*- C++ -*-===//
//
// Declarations and registration of the LMS passes.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_PASSES_H
#define LMS_TRANSFORMS_PASSES_H

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Swap.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lms {

/// --lms-plan's strategy= option: which plans it makes and compares.
enum class PlanStrategy { Auto, Joint, Swap, Recompute };

/// --lms-report-memory's format= option.
enum class ReportFormat { Text, Json, Svg };

#define GEN_PASS_DECL
#include "LMS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "LMS/Transforms/Passes.h.inc"

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_PASSES_H
