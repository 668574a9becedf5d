//===- LMSTransformOps.h - transform.lms.* ops ------------------*- C++ -*-===//
//
// Transform dialect ops that run the LMS planners from transform scripts:
// transform.lms.insert_swaps, transform.lms.rematerialize,
// transform.lms.report_peak. Register them with
// registerLMSTransformDialectExtension (registerLMSDialect does).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMOPS_LMSTRANSFORMOPS_H
#define LMS_TRANSFORMOPS_LMSTRANSFORMOPS_H

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#define GET_OP_CLASSES
#include "LMS/TransformOps/LMSTransformOps.h.inc"

namespace mlir {
class DialectRegistry;
namespace lms {
/// Adds the transform.lms.* ops to the transform dialect.
void registerLMSTransformDialectExtension(DialectRegistry &registry);
} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMOPS_LMSTRANSFORMOPS_H
