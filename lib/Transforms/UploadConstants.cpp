//===- UploadConstants.cpp - Device copies of host globals ----------------===//
//
// The --lms-upload-constants pass: every `memref.get_global` of a block gets
// a device copy right before its first user, which is where the memory
// analyses count a constant (FunctionGraph's schedule order).
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSUPLOADCONSTANTS
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

/// Marks the ops that upload resident constants at function entry, so that
/// later uploads go after them.
constexpr StringLiteral kUploadedAtEntryAttr = "lms.uploaded_at_entry";

/// The splat value of a global's initial value, if it is a splat.
TypedAttr splatValue(memref::GetGlobalOp getGlobal,
                     SymbolTableCollection &symbols) {
  auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  // A mutable global's initial value is not its value after a store.
  if (!global || !global.getConstant() || !global.getInitialValue())
    return {};
  auto elements = dyn_cast<DenseElementsAttr>(*global.getInitialValue());
  if (!elements || !elements.isSplat())
    return {};
  return dyn_cast<TypedAttr>(elements.getSplatValue<Attribute>());
}

struct LMSUploadConstantsPass
    : public mlir::lms::impl::LMSUploadConstantsBase<LMSUploadConstantsPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    SmallVector<memref::GetGlobalOp> globals;
    getOperation()->walk(
        [&](memref::GetGlobalOp getGlobal) { globals.push_back(getGlobal); });
    for (memref::GetGlobalOp getGlobal : globals)
      if (failed(upload(getGlobal, symbols)))
        return signalPassFailure();
  }

  LogicalResult upload(memref::GetGlobalOp getGlobal,
                       SymbolTableCollection &symbols) {
    MemRefType type = getGlobal.getType();
    // Globals already placed in another memory space are not host data.
    if (type.getMemorySpace() || getGlobal->use_empty())
      return success();
    // A mutable global that is written (an ml_program.global_store,
    // bufferized to a copy into it), or passed where it may be, is the host
    // data itself: the write goes there. A constant global is only read.
    auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
        getGlobal, getGlobal.getNameAttr());
    bool readOnly = global && global.getConstant();
    for (OpOperand &use : getGlobal->getUses()) {
      if (readOnly)
        break;
      // Unknown users (no effects to ask, a call) may write.
      auto effects = dyn_cast<MemoryEffectOpInterface>(use.getOwner());
      if (!effects)
        return success();
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffectsOnValue(use.get(), instances);
      if (llvm::any_of(instances, [](MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Write>(e.getEffect());
          }))
        return success();
    }
    if (!type.hasStaticShape())
      return getGlobal.emitOpError(
          "reads a global of dynamic shape, which cannot be uploaded");
    Block *block = getGlobal->getBlock();
    Operation *first = nullptr;
    for (Operation *user : getGlobal->getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    if (!first)
      return success();
    // Resident constants (`lms.resident_constants` on the module): uploaded
    // at function entry, freed at its end (--lms-deallocate).
    Operation *module = getGlobal->getParentOp();
    while (module->getParentOp())
      module = module->getParentOp();
    bool resident = readOnly && module->hasAttr(kResidentConstantsAttr) &&
                    isa<FunctionOpInterface>(block->getParentOp());
    OpBuilder builder(first);
    if (resident) {
      // After the constants uploaded at entry before it (the walk visits
      // them in order).
      Operation *after = nullptr;
      for (Operation &op : *block) {
        if (!op.hasAttr(kUploadedAtEntryAttr))
          break;
        after = &op;
      }
      if (after)
        getGlobal->moveAfter(after);
      else
        getGlobal->moveBefore(&block->front());
      builder.setInsertionPointAfter(getGlobal);
      getGlobal->setAttr(kUploadedAtEntryAttr, builder.getUnitAttr());
    }
    Location loc = getGlobal.getLoc();
    auto deviceType = MemRefType::get(type.getShape(), type.getElementType(),
                                      MemRefLayoutAttrInterface());
    auto alloc = memref::AllocOp::create(builder, loc, deviceType);
    if (resident) {
      alloc->setAttr(kResidentConstantsAttr, builder.getUnitAttr());
      alloc->setAttr(kUploadedAtEntryAttr, builder.getUnitAttr());
    }
    Value device = alloc;
    Value replacement = device;
    if (deviceType != type)
      replacement = memref::CastOp::create(builder, loc, type, device);
    // Every use reads the device copy; then the copy reads the global.
    getGlobal.getResult().replaceAllUsesWith(replacement);
    SmallVector<Operation *> upload;
    if (TypedAttr splat = splatValue(getGlobal, symbols)) {
      upload.push_back(arith::ConstantOp::create(builder, loc, splat));
      upload.push_back(linalg::FillOp::create(
          builder, loc, ValueRange{upload.back()->getResult(0)},
          ValueRange{device}));
      getGlobal.erase();
    } else {
      upload.push_back(
          memref::CopyOp::create(builder, loc, getGlobal.getResult(), device));
    }
    if (resident)
      for (Operation *op : upload)
        op->setAttr(kUploadedAtEntryAttr, builder.getUnitAttr());
    return success();
  }
};

} // namespace
