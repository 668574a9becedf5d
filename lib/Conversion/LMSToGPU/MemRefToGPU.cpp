//===- MemRefToGPU.cpp - Device buffers to GPU allocations ----------------===//
//
// The --lms-memref-to-gpu pass; see Passes.td. Split from
// --convert-lms-to-gpu, which lowers the lms ops: this one makes every
// buffer of the default memory space device memory.
//
//===----------------------------------------------------------------------===//

#include "LMS/Conversion/Passes.h"
#include "Streams.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSMEMREFTOGPU
#include "LMS/Conversion/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

/// Whether a buffer comes from a global (host data: a constant or a
/// variable), through views.
bool isGlobal(Value buffer) {
  return isa_and_nonnull<memref::GetGlobalOp>(
      rootBuffer(buffer).getDefiningOp());
}

bool hasMemorySpace(Value buffer) {
  return static_cast<bool>(
      cast<BaseMemRefType>(buffer.getType()).getMemorySpace());
}

struct LMSMemRefToGPUPass
    : public mlir::lms::impl::LMSMemRefToGPUBase<LMSMemRefToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (alloc.getType().getMemorySpace())
          continue;
        Value stream = newStream(b, loc);
        auto device = gpu::AllocOp::create(
            b, loc, alloc.getType(), tokenType(b), ValueRange{stream},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        hostWait(b, loc, device.getAsyncToken());
        alloc.replaceAllUsesWith(device.getMemref());
        alloc.erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (hasMemorySpace(dealloc.getMemref()))
          continue;
        Value stream = newStream(b, loc);
        auto free = gpu::DeallocOp::create(
            b, loc, tokenType(b), ValueRange{stream}, dealloc.getMemref());
        hostWait(b, loc, free.getAsyncToken());
        dealloc.erase();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        // The upload of a constant (--lms-upload-constants): host global to
        // device buffer; or the store of a device buffer into a global.
        if (isGlobal(copy.getSource()) == isGlobal(copy.getTarget()) ||
            hasMemorySpace(copy.getTarget()) ||
            hasMemorySpace(copy.getSource()))
          continue;
        Value stream = newStream(b, loc);
        Value token =
            gpu::MemcpyOp::create(b, loc, tokenType(b), ValueRange{stream},
                                  copy.getTarget(), copy.getSource())
                .getAsyncToken();
        hostWait(b, loc, token);
        copy.erase();
      }
    }
  }
};

} // namespace
