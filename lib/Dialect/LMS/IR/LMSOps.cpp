//===- LMSOps.cpp - LMS dialect operations --------------------------------===//
//
// Verifiers, builders and memory effects of the `lms` operations.
//
//===----------------------------------------------------------------------===//

#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::lms;

/// Checks that `hostType` holds `deviceType`: the same tensor type, or, after
/// bufferization, a memref of the same shape and element type (layouts may
/// differ: the host copy is contiguous). `what` names the device side in the
/// diagnostic ("source" or "result").
static LogicalResult verifyHostHolds(Operation *op, HostType hostType,
                                     Type deviceType, StringRef what) {
  ShapedType held = hostType.getValueType();
  auto device = cast<ShapedType>(deviceType);
  if (isa<TensorType>(held) != isa<TensorType>(device))
    return op->emitOpError("expects a host type that holds a ")
           << (isa<TensorType>(device) ? "ranked tensor" : "memref")
           << " like its " << what << ", got " << hostType;
  if (held.getElementType() != device.getElementType())
    return op->emitOpError("element type of the host value (")
           << held.getElementType() << ") differs from the " << what << " ("
           << device.getElementType() << ")";
  if (held.getShape() != device.getShape())
    return op->emitOpError("shape of the host value (")
           << held << ") differs from the " << what << " (" << device << ")";
  if (auto heldTensor = dyn_cast<RankedTensorType>(held))
    if (heldTensor.getEncoding() !=
        cast<RankedTensorType>(device).getEncoding())
      return op->emitOpError("encoding of the host value differs from the ")
             << what;
  return success();
}

//===----------------------------------------------------------------------===//
// SwapOutOp
//===----------------------------------------------------------------------===//

LogicalResult SwapOutOp::verify() {
  if (failed(verifyHostHolds(*this, getResult().getType(),
                             getSource().getType(), "source")))
    return failure();
  SmallVector<Operation *> waits;
  for (Operation *user : getResult().getUsers())
    if (isa<SwapWaitOp>(user))
      waits.push_back(user);
  if (waits.size() <= 1)
    return success();
  // Name the waits in program order where they share a block.
  llvm::sort(waits, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() && a->isBeforeInBlock(b);
  });
  InFlightDiagnostic diag = emitOpError("has more than one 'lms.swap_wait'");
  diag.attachNote(waits[0]->getLoc()) << "first wait here";
  diag.attachNote(waits[1]->getLoc()) << "second wait here";
  return diag;
}

SwapWaitOp SwapOutOp::getWaitOp() {
  for (Operation *user : getResult().getUsers())
    if (auto wait = dyn_cast<SwapWaitOp>(user))
      return wait;
  return {};
}

//===----------------------------------------------------------------------===//
// SwapWaitOp
//===----------------------------------------------------------------------===//

LogicalResult SwapWaitOp::verify() {
  SwapOutOp swapOut = getSwapOut();
  if (!swapOut)
    return emitOpError("expects its handle to be the result of an "
                       "'lms.swap_out'");
  if (swapOut->getBlock() != (*this)->getBlock())
    return emitOpError("must be in the same block as its 'lms.swap_out'")
               .attachNote(swapOut.getLoc())
           << "swap-out here";
  // The wait releases the offloaded value's device bytes: nothing after it
  // may read the value (a later use reads a fetched copy, lms.swap_in).
  Block *block = (*this)->getBlock();
  for (OpOperand &use : swapOut.getSource().getUses()) {
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    if (user && (*this)->isBeforeInBlock(user))
      return emitOpError("releases the device bytes of a value that is used "
                         "after it (use a fetched copy, 'lms.swap_in')")
                 .attachNote(use.getOwner()->getLoc())
             << "used here";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SwapInOp
//===----------------------------------------------------------------------===//

LogicalResult SwapInOp::verify() {
  return verifyHostHolds(*this, getHandle().getType(), getResult().getType(),
                         "result");
}

//===----------------------------------------------------------------------===//
// RecomputeOp
//===----------------------------------------------------------------------===//

void RecomputeOp::build(OpBuilder &builder, OperationState &state,
                        TypeRange resultTypes, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

YieldOp RecomputeOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult RecomputeOp::verify() {
  Block &entry = getBody().front();
  if (entry.getNumArguments() != getInputs().size())
    return emitOpError("has ")
           << getInputs().size() << " inputs but its body has "
           << entry.getNumArguments() << " arguments";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getInputs(), entry.getArguments()))) {
    auto [input, arg] = pair;
    if (input.getType() != arg.getType())
      return emitOpError("input #") << index << " has type " << input.getType()
                                    << " but body argument #" << index
                                    << " has type " << arg.getType();
  }
  return success();
}

LogicalResult RecomputeOp::verifyRegions() {
  Block &entry = getBody().front();
  auto yield =
      dyn_cast_or_null<YieldOp>(entry.empty() ? nullptr : &entry.back());
  if (!yield)
    return emitOpError("expects its body to end with 'lms.yield'");
  if (yield.getValues().size() != getNumResults()) {
    InFlightDiagnostic diag = emitOpError("has ")
                              << getNumResults()
                              << " results but its body yields "
                              << yield.getValues().size() << " values";
    diag.attachNote(yield.getLoc()) << "yield here";
    return diag;
  }
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getResultTypes(), yield.getValues()))) {
    auto [type, value] = pair;
    if (type == value.getType())
      continue;
    InFlightDiagnostic diag = emitOpError("result #")
                              << index << " has type " << type
                              << " but the body yields " << value.getType();
    diag.attachNote(yield.getLoc()) << "yield here";
    return diag;
  }
  return success();
}

void RecomputeOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // The results are fresh device allocations: this keeps CSE from merging two
  // recomputations (or a recomputation with anything else), while an unused
  // recomputation is still dead code.
  for (OpResult result : getOperation()->getResults())
    effects.emplace_back(MemoryEffects::Allocate::get(), result,
                         DeviceMemoryResource::get());
  // The effects of the body (ops on tensors usually have none), except the
  // allocations and frees of values that never leave it.
  for (Operation &nested : getBody().front()) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> nestedEffects =
        getEffectsRecursively(&nested);
    if (!nestedEffects) {
      effects.emplace_back(MemoryEffects::Read::get());
      effects.emplace_back(MemoryEffects::Write::get());
      return;
    }
    for (const MemoryEffects::EffectInstance &effect : *nestedEffects) {
      Value value = effect.getValue();
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(
              effect.getEffect()) &&
          value && getBody().isAncestor(value.getParentRegion()))
        continue;
      effects.push_back(effect);
    }
  }
}

#define GET_OP_CLASSES
#include "LMS/Dialect/LMS/IR/LMSOps.cpp.inc"
