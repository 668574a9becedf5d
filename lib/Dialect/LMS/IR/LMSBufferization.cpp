//===- LMSBufferization.cpp - Bufferization of the lms ops ----------------===//

#include "LMS/Dialect/LMS/IR/LMSBufferization.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::lms;

/// The contiguous memref that holds a value of `type` (a ranked tensor).
static MemRefType contiguousBufferType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

namespace {

struct SwapOutOpInterface
    : public BufferizableOpInterface::ExternalModel<SwapOutOpInterface,
                                                    SwapOutOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &state) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &state) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto swapOut = cast<SwapOutOp>(op);
    if (!isa<TensorType>(swapOut.getSource().getType()))
      return success();
    FailureOr<Value> buffer =
        getBuffer(rewriter, swapOut.getSource(), options, state);
    if (failed(buffer))
      return failure();
    auto hostType =
        HostType::get(contiguousBufferType(swapOut.getSource().getType()));
    replaceOpWithNewBufferizedOp<SwapOutOp>(rewriter, op, hostType, *buffer);
    return success();
  }
};

struct SwapInOpInterface
    : public BufferizableOpInterface::ExternalModel<SwapInOpInterface,
                                                    SwapInOp> {
  bool bufferizesToAllocation(Operation *op, Value value) const { return true; }
  bool resultBufferizesToMemoryWrite(Operation *op, OpResult result,
                                     const AnalysisState &state) const {
    return true;
  }
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &state) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &state) const {
    return {};
  }
  AliasingOpOperandList
  getAliasingOpOperands(Operation *op, Value value,
                        const AnalysisState &state) const {
    return {};
  }
  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    return cast<BufferLikeType>(contiguousBufferType(value.getType()));
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto swapIn = cast<SwapInOp>(op);
    if (!isa<TensorType>(swapIn.getType()))
      return success();
    auto held = swapIn.getHandle().getType().getValueType();
    if (!isa<MemRefType>(held))
      return swapIn.emitOpError(
          "cannot be bufferized: its handle is not the result of a bufferized "
          "'lms.swap_out' (a handle crossing a function boundary?)");
    replaceOpWithNewBufferizedOp<SwapInOp>(
        rewriter, op, contiguousBufferType(swapIn.getType()),
        swapIn.getHandle());
    return success();
  }
};

} // namespace

void mlir::lms::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, LMSDialect *dialect) {
    SwapOutOp::attachInterface<SwapOutOpInterface>(*context);
    SwapInOp::attachInterface<SwapInOpInterface>(*context);
  });
}
