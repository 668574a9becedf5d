//===- LMSBufferization.h - Bufferization of the lms ops --------*- C++ -*-===//
//
// BufferizableOpInterface models of the lms ops, so that one-shot
// bufferization turns a swapped tensor program into buffers:
//
// * `lms.swap_out %t` reads the buffer of %t and becomes
//   `lms.swap_out %buf : memref<...> -> !lms.host<memref<...>>` (a contiguous
//   host copy of the same shape);
// * `lms.swap_in %h` allocates a new contiguous device buffer;
// * `lms.swap_wait` has no tensors and is left as it is;
// * `lms.recompute` has no model: the pipelines inline recomputations before
//   bufferization (`--lms-inline-recomputes`).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_DIALECT_LMS_IR_LMSBUFFERIZATION_H
#define LMS_DIALECT_LMS_IR_LMSBUFFERIZATION_H

namespace mlir {
class DialectRegistry;
namespace lms {

void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace lms
} // namespace mlir

#endif // LMS_DIALECT_LMS_IR_LMSBUFFERIZATION_H
