//===- LMSOps.h - LMS dialect operations ------------------------*- C++ -*-===//
//
// Declarations of the `lms` operations generated from LMSOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_DIALECT_LMS_IR_LMSOPS_H
#define LMS_DIALECT_LMS_IR_LMSOPS_H

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#define GET_OP_CLASSES
#include "LMS/Dialect/LMS/IR/LMSOps.h.inc"

#endif // LMS_DIALECT_LMS_IR_LMSOPS_H
