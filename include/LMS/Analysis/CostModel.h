//===- CostModel.h - Per-op cost of MLIR ops --------------------*- C++ -*-===//
//
// FLOPs and bytes moved of one op, for the device model to turn into time:
//
// * an `lms.cost` attribute overrides everything: a number is FLOPs; a
//   dictionary may give `flops`, `bytes` and `seconds`;
// * linalg ops (named and generic): the iteration domain times the number of
//   payload ops per point (matmul: 2 x M x N x K); bytes: every shaped operand
//   and result;
// * tosa ops from their shapes (convolutions, matmul, pooling, reductions,
//   elementwise);
// * data movement (copies, slices, pads, concatenations, transposes, swaps):
//   zero FLOPs, the bytes they move;
// * views, constants, terminators, allocations and ops on scalars: free (a
//   fixed time of zero: they launch nothing, so not even the launch
//   overhead applies);
// * any other op with shaped results (the fallback): one FLOP per result
//   element and every shaped operand and result moved once.
//
// Ops with regions and calls add the cost of what they run (in FunctionGraph).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_ANALYSIS_COSTMODEL_H
#define LMS_ANALYSIS_COSTMODEL_H

#include "LMS/Graph/Graph.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace lms {

/// The cost of `op` alone (not of its regions). `bytesOf` gives the size of a
/// shaped value (0 when unknown).
::lms::OpCost estimateOpCost(Operation *op,
                             llvm::function_ref<uint64_t(Value)> bytesOf);

/// Whether `op` only reinterprets its operand (cast, reshape, slice view):
/// its result aliases operand 0. Not a reshape that bufferization copies
/// (bufferizationCopies).
bool isViewLikeOp(Operation *op);

/// Whether One-Shot Bufferize lowers the reshape `op` to a copy into a new
/// buffer: a tensor.collapse_shape whose source buffer's strides do not
/// collapse (a slice across the inner dimension), a tensor.reshape of a
/// source without the identity layout. The source layouts follow the view
/// chain (slices, reshapes, casts, an lms.recompute's body) from buffers
/// with the identity layout, as the lowering bufferizes them.
bool bufferizationCopies(Operation *op);

/// Whether `op` reads host-backed data into a tensor: a constant tensor
/// (`arith.constant`, any ConstantLike op with a tensor result) or a load of
/// an `ml_program` global. Its device copy is uploaded before its first use
/// and may be dropped and uploaded again; a splat can be refilled on the
/// device instead.
bool isHostConstant(Operation *op);

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_COSTMODEL_H
