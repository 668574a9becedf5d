//===- LMSDialect.h - LMS dialect -------------------------------*- C++ -*-===//
//
// The `lms` dialect, its types and the memory resources its ops act on.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_DIALECT_LMS_IR_LMSDIALECT_H
#define LMS_DIALECT_LMS_IR_LMSDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lms {

/// Device memory, as the effects of the `lms` ops name it.
struct DeviceMemoryResource
    : public SideEffects::Resource::Base<DeviceMemoryResource> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DeviceMemoryResource)
  llvm::StringRef getName() final { return "lms::DeviceMemory"; }
};

/// Host (staging) memory that holds offloaded tensors.
struct HostMemoryResource
    : public SideEffects::Resource::Base<HostMemoryResource> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HostMemoryResource)
  llvm::StringRef getName() final { return "lms::HostMemory"; }
};

} // namespace lms
} // namespace mlir

#include "LMS/Dialect/LMS/IR/LMSOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "LMS/Dialect/LMS/IR/LMSOpsTypes.h.inc"

#endif // LMS_DIALECT_LMS_IR_LMSDIALECT_H
