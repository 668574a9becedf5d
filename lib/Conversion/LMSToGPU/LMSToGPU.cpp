//===- LMSToGPU.cpp - lms ops to GPU async copies -------------------------===//
//
// The --convert-lms-to-gpu pass; see Passes.td for what it emits (the
// device buffers themselves are --lms-memref-to-gpu's). It walks
// each block in order, so that the state of every host handle (its staging
// buffer, the token of its copy-out, whether the release has happened) is
// known when its users are reached.
//
// Host staging buffers are the runtime's own (`lmsStagingAlloc` /
// `lmsStagingFree`, pinned and pooled; LMS/Runtime/Runtime.h), not
// `gpu.alloc host_shared`, which upstream's runtime serves as managed memory.
//
//===----------------------------------------------------------------------===//

#include "LMS/Conversion/Passes.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "Streams.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_CONVERTLMSTOGPU
#include "LMS/Conversion/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

/// What is known about a host handle while its block is lowered.
struct Handle {
  Value staging;        ///< host staging buffer
  Value stagingAddress; ///< its address, for lmsStagingFree
  Value copyOut;        ///< token of the device-to-host copy
  Value source;         ///< root device buffer released at the wait
  bool released = false;
  unsigned swapInsLeft = 0;
  /// Ops of the block (loops, conditionals) whose regions still hold
  /// swap-ins of the handle: each iteration fetches it again, so the
  /// staging buffer lives until the last of them is done.
  unsigned nestedLeft = 0;
};

/// What lmsStagingAlloc returns: raw bytes, viewed as the staged type.
MemRefType rawStagingType(MLIRContext *context) {
  return MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8));
}

/// The dynamic sizes of `buffer`, for allocating one of the same shape.
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(memref::DimOp::create(b, loc, buffer, dim));
  return sizes;
}

struct ConvertLMSToGPUPass
    : public mlir::lms::impl::ConvertLMSToGPUBase<ConvertLMSToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    stagingDeclared = false;
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      if (failed(lowerBlock(*block)))
        return signalPassFailure();
    if (failed(checkLegality()))
      return signalPassFailure();
  }

  /// No lms op is left: each is lowered or an error names it (an
  /// lms.recompute that --lms-inline-recomputes did not inline).
  LogicalResult checkLegality() {
    ConversionTarget target(getContext());
    target.addIllegalDialect<LMSDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    WalkResult result =
        getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!target.isIllegal(op))
            return WalkResult::advance();
          op->emitOpError("has no lowering to the GPU dialect")
              << (isa<RecomputeOp>(op)
                      ? " (inline it first: --lms-inline-recomputes)"
                      : "");
          return WalkResult::interrupt();
        });
    return failure(result.wasInterrupted());
  }

  /// The runtime's staging calls, declared unless the module has them.
  LogicalResult declareStagingRuntime(Operation *at) {
    if (stagingDeclared)
      return success();
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type index = b.getIndexType();
    MemRefType raw = rawStagingType(b.getContext());
    struct Decl {
      StringRef name;
      FunctionType type;
    } decls[] = {{kStagingAlloc, b.getFunctionType({index}, {raw})},
                 {kStagingFree, b.getFunctionType({index}, {})}};
    for (const Decl &decl : decls) {
      if (auto existing = module.lookupSymbol<func::FuncOp>(decl.name)) {
        if (existing.getFunctionType() != decl.type)
          return at->emitOpError("needs the runtime function @")
                 << decl.name << " of type " << decl.type
                 << ", but the module declares it as "
                 << existing.getFunctionType();
        continue;
      }
      if (module.lookupSymbol(decl.name))
        return at->emitOpError("needs the runtime function @")
               << decl.name << ", but the module has another symbol of that "
               << "name";
      auto func =
          func::FuncOp::create(b, module.getLoc(), decl.name, decl.type);
      func.setPrivate();
      // lmsStagingAlloc returns a memref: through its C interface.
      if (decl.name == kStagingAlloc)
        func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    }
    stagingDeclared = true;
    return success();
  }

  static constexpr StringLiteral kStagingAlloc = "lmsStagingAlloc";
  static constexpr StringLiteral kStagingFree = "lmsStagingFree";
  bool stagingDeclared = false;

  /// A pinned host staging buffer of `type` (with `sizes` for its dynamic
  /// dimensions) from the runtime's pool: `lmsStagingAlloc(bytes)` viewed
  /// as `type`. Returns the buffer and its address (for `freeStaging`).
  FailureOr<std::pair<Value, Value>> allocateStaging(OpBuilder &b, Location loc,
                                                     Operation *at,
                                                     MemRefType type,
                                                     ValueRange sizes) {
    if (!type.getLayout().isIdentity() || type.getMemorySpace())
      return at->emitOpError("needs a host staging buffer of type ")
             << type
             << ", but staging buffers have the identity layout and the "
                "default memory space";
    if (failed(declareStagingRuntime(at)))
      return failure();
    // An element takes its data-layout size rounded up to a power of two:
    // what the LLVM lowering's copies stride by for odd widths (i24 takes 4
    // bytes, f80 16), never less, so a copy never runs past the buffer.
    uint64_t elementBytes = llvm::PowerOf2Ceil(
        DataLayout::closest(at).getTypeSize(type.getElementType()));
    // Checked: a shape whose bytes do not fit in an index is an error here,
    // not a staging buffer of a wrapped size.
    uint64_t staticBytes = elementBytes;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim) &&
          (__builtin_mul_overflow(staticBytes, static_cast<uint64_t>(dim),
                                  &staticBytes) ||
           staticBytes > static_cast<uint64_t>(INT64_MAX)))
        return at->emitOpError("needs a host staging buffer of type ")
               << type << ", whose size in bytes overflows 64 bits";
    Value bytes = arith::ConstantIndexOp::create(
        b, loc, static_cast<int64_t>(staticBytes));
    for (Value size : sizes)
      bytes = arith::MulIOp::create(b, loc, bytes, size);
    Value buffer =
        func::CallOp::create(b, loc, kStagingAlloc,
                             TypeRange{rawStagingType(b.getContext())}, bytes)
            .getResult(0);
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value view = memref::ViewOp::create(b, loc, type, buffer, zero, sizes);
    return std::make_pair(view, address);
  }

  /// Returns a staging buffer to the pool once the copies issued on it are
  /// done (the runtime orders it; the host does not wait).
  static void freeStaging(OpBuilder &b, Location loc, Value address) {
    func::CallOp::create(b, loc, kStagingFree, TypeRange{}, address);
  }

  LogicalResult lowerBlock(Block &block) {
    DenseMap<Value, Handle> handles;
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : ops) {
      // Replaced while lowering an earlier op (a launch made to wait for a
      // copy): erased once the walk is done.
      if (replaced.contains(op))
        continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto swapOut = dyn_cast<SwapOutOp>(op)) {
        if (failed(lowerSwapOut(swapOut, handles)))
          return failure();
      } else if (auto wait = dyn_cast<SwapWaitOp>(op)) {
        auto it = handles.find(wait.getHandle());
        if (it == handles.end())
          return wait.emitOpError("has no lowered swap-out in its block");
        release(b, loc, it->second);
        wait.erase();
      } else if (auto swapIn = dyn_cast<SwapInOp>(op)) {
        // A fetch inside a loop of a handle offloaded before the loop: the
        // block of the swap-out lowers it.
        if (swapIn.getHandle().getParentBlock() != &block)
          continue;
        if (failed(lowerSwapIn(swapIn, handles)))
          return failure();
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        if (copyHostCallOperands && failed(copyOperandsToHost(call)))
          return failure();
      } else if (op->getNumRegions() > 0) {
        if (failed(lowerNestedSwapIns(op, handles)))
          return failure();
      }
    }
    for (SwapOutOp swapOut : loweredSwapOuts) {
      if (!swapOut->use_empty())
        return swapOut.emitOpError("has a use the lowering did not replace");
      swapOut.erase();
    }
    loweredSwapOuts.clear();
    for (Operation *op : replaced)
      op->erase();
    replaced.clear();
    return success();
  }

  SmallVector<SwapOutOp> loweredSwapOuts;
  /// Ops of the block being lowered that were replaced by new ones; erased
  /// after the walk over the block (which still holds them).
  llvm::SetVector<Operation *> replaced;

  /// A call of an external (host) function gets host copies of its buffer
  /// operands, freed after the call.
  LogicalResult copyOperandsToHost(func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || !callee.isExternal())
      return success();
    OpBuilder b(call);
    Location loc = call.getLoc();
    SmallVector<Value> copies;
    for (OpOperand &operand : call->getOpOperands()) {
      Value value = operand.get();
      if (!isa<BaseMemRefType>(value.getType()))
        continue;
      Value ranked = value;
      if (isa<UnrankedMemRefType>(value.getType())) {
        auto cast = value.getDefiningOp<memref::CastOp>();
        if (!cast || !isa<MemRefType>(cast.getSource().getType()))
          return call.emitOpError(
              "passes an unranked buffer whose ranked source is unknown to a "
              "host function");
        ranked = cast.getSource();
      }
      auto rankedType = cast<MemRefType>(ranked.getType());
      if (!rankedType.getLayout().isIdentity())
        return call.emitOpError("passes a strided view to a host function");
      FailureOr<std::pair<Value, Value>> staging = allocateStaging(
          b, loc, call, rankedType, dynamicSizes(b, loc, ranked));
      if (failed(staging))
        return failure();
      Value host = staging->first;
      Value stream = newStream(b, loc);
      Value copied = gpu::MemcpyOp::create(b, loc, tokenType(b),
                                           ValueRange{stream}, host, ranked)
                         .getAsyncToken();
      hostWait(b, loc, copied);
      Value replacement = host;
      if (value.getType() != host.getType())
        replacement = memref::CastOp::create(b, loc, value.getType(), host);
      operand.set(replacement);
      copies.push_back(staging->second);
    }
    b.setInsertionPointAfter(call);
    for (Value address : copies)
      freeStaging(b, loc, address);
    return success();
  }

  LogicalResult lowerSwapOut(SwapOutOp swapOut,
                             DenseMap<Value, Handle> &handles) {
    auto sourceType = dyn_cast<MemRefType>(swapOut.getSource().getType());
    if (!sourceType)
      return swapOut.emitOpError(
          "must be bufferized before it is lowered to the GPU dialect");
    if (!sourceType.getLayout().isIdentity())
      return swapOut.emitOpError(
          "cannot offload a strided view: the lowering copies contiguous "
          "buffers");
    auto stagingType =
        cast<MemRefType>(cast<HostType>(swapOut.getType()).getValueType());
    OpBuilder b(swapOut);
    Location loc = swapOut.getLoc();
    Handle handle;
    handle.source = rootBuffer(swapOut.getSource());
    if (isa_and_nonnull<memref::GetGlobalOp>(handle.source.getDefiningOp()))
      return swapOut.emitOpError("cannot offload a global buffer");
    FailureOr<std::pair<Value, Value>> staging =
        allocateStaging(b, loc, swapOut, stagingType,
                        dynamicSizes(b, loc, swapOut.getSource()));
    if (failed(staging))
      return failure();
    std::tie(handle.staging, handle.stagingAddress) = *staging;
    Value stream = newStream(b, loc);
    handle.copyOut =
        gpu::MemcpyOp::create(b, loc, tokenType(b), ValueRange{stream},
                              handle.staging, swapOut.getSource())
            .getAsyncToken();
    bool hasWait = false;
    Block *block = swapOut->getBlock();
    llvm::SmallPtrSet<Operation *, 2> nestedIn;
    for (Operation *user : swapOut.getResult().getUsers()) {
      hasWait |= isa<SwapWaitOp>(user);
      if (!isa<SwapInOp>(user))
        continue;
      if (user->getBlock() == block)
        ++handle.swapInsLeft;
      else if (Operation *top = block->findAncestorOpInBlock(*user))
        nestedIn.insert(top);
    }
    handle.nestedLeft = nestedIn.size();
    for (Operation *user : swapOut.getResult().getUsers())
      if (!isa<SwapWaitOp, SwapInOp>(user))
        return user->emitOpError("uses an offloaded handle in a way the "
                                 "lowering does not support");
    // Without a wait the swap-out is synchronous.
    if (!hasWait)
      release(b, loc, handle);
    handles[swapOut.getResult()] = handle;
    // Erased once its users are lowered.
    loweredSwapOuts.push_back(swapOut);
    return success();
  }

  /// The release point: free the offloaded buffer after its copy-out; the
  /// host waits; then the staging buffer too when nothing will read it.
  void release(OpBuilder &b, Location loc, Handle &handle) {
    Value token =
        gpu::DeallocOp::create(b, loc, tokenType(b), ValueRange{handle.copyOut},
                               handle.source)
            .getAsyncToken();
    hostWait(b, loc, token);
    if (handle.swapInsLeft == 0 && handle.nestedLeft == 0)
      freeStaging(b, loc, handle.stagingAddress);
    handle.released = true;
  }

  /// The swap-ins inside the regions of `op` (an op of the block being
  /// lowered) of handles offloaded in this block: lowered as any swap-in,
  /// except that the staging buffer is freed after `op`, once no later op
  /// of the block fetches from it.
  LogicalResult lowerNestedSwapIns(Operation *op,
                                   DenseMap<Value, Handle> &handles) {
    SmallVector<SwapInOp> nested;
    op->walk([&](SwapInOp swapIn) {
      if (handles.count(swapIn.getHandle()))
        nested.push_back(swapIn);
    });
    SetVector<Value> fetched;
    for (SwapInOp swapIn : nested) {
      fetched.insert(swapIn.getHandle());
      if (failed(lowerSwapIn(swapIn, handles, /*nested=*/true)))
        return failure();
    }
    for (Value value : fetched) {
      Handle &handle = handles[value];
      if (--handle.nestedLeft == 0 && handle.swapInsLeft == 0) {
        OpBuilder after(op->getContext());
        after.setInsertionPointAfter(op);
        freeStaging(after, op->getLoc(), handle.stagingAddress);
      }
    }
    return success();
  }

  LogicalResult lowerSwapIn(SwapInOp swapIn, DenseMap<Value, Handle> &handles,
                            bool nested = false) {
    auto it = handles.find(swapIn.getHandle());
    if (it == handles.end())
      return swapIn.emitOpError("has no lowered swap-out in its block");
    Handle &handle = it->second;
    auto type = dyn_cast<MemRefType>(swapIn.getType());
    if (!type)
      return swapIn.emitOpError(
          "must be bufferized before it is lowered to the GPU dialect");
    if (!handle.released)
      return swapIn.emitOpError(
          "comes before the release point of its handle (its lms.swap_wait); "
          "the lowering needs the wait first");
    OpBuilder b(swapIn);
    Location loc = swapIn.getLoc();
    // The host waited for the copy-out at the release: a fresh stream.
    Value stream = newStream(b, loc);
    auto device =
        gpu::AllocOp::create(b, loc, type, tokenType(b), ValueRange{stream},
                             dynamicSizes(b, loc, handle.staging), ValueRange{},
                             /*hostShared=*/false);
    Value token = gpu::MemcpyOp::create(b, loc, tokenType(b),
                                        ValueRange{device.getAsyncToken()},
                                        device.getMemref(), handle.staging)
                      .getAsyncToken();
    // After the last copy-in the staging buffer goes back to the pool once
    // that copy is done.
    if (!nested && --handle.swapInsLeft == 0 && handle.nestedLeft == 0)
      freeStaging(b, loc, handle.stagingAddress);
    // The first user waits for the copy-in.
    Block *block = swapIn->getBlock();
    Operation *firstUser = nullptr;
    for (Operation *user : swapIn.getResult().getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (top && (!firstUser || top->isBeforeInBlock(firstUser)))
        firstUser = top;
    }
    swapIn.getResult().replaceAllUsesWith(device.getMemref());
    swapIn.erase();
    if (skipConsumerWaits)
      return success();
    // A kernel waits on its own (compute) stream; the host does not.
    if (auto launch = dyn_cast_or_null<gpu::LaunchOp>(firstUser))
      if (!launch.getAsyncToken() && launch.getAsyncDependencies().empty()) {
        launchAfter(launch, token);
        return success();
      }
    OpBuilder waitBuilder(b.getContext());
    if (firstUser)
      waitBuilder.setInsertionPoint(firstUser);
    else
      waitBuilder.setInsertionPointAfterValue(token);
    hostWait(waitBuilder, loc, token);
    return success();
  }

  /// Makes the synchronous `launch` wait for `token` on its stream: it
  /// becomes `gpu.launch async [token]` (the kernel's stream waits for the
  /// copy-in's event on the device), followed by the host wait for the
  /// kernel that the synchronous launch implied.
  void launchAfter(gpu::LaunchOp launch, Value token) {
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    SmallVector<Type> workgroup, privates;
    for (BlockArgument arg : launch.getWorkgroupAttributions())
      workgroup.push_back(arg.getType());
    for (BlockArgument arg : launch.getPrivateAttributions())
      privates.push_back(arg.getType());
    auto async = gpu::LaunchOp::create(
        b, loc, launch.getGridSizeX(), launch.getGridSizeY(),
        launch.getGridSizeZ(), launch.getBlockSizeX(), launch.getBlockSizeY(),
        launch.getBlockSizeZ(), launch.getDynamicSharedMemorySize(),
        tokenType(b), ValueRange{token}, workgroup, privates,
        launch.getClusterSizeX(), launch.getClusterSizeY(),
        launch.getClusterSizeZ(), launch.getModuleAttr(),
        launch.getFunctionAttr());
    async.getBody().takeBody(launch.getBody());
    for (NamedAttribute attr : launch->getDiscardableAttrs())
      async->setAttr(attr.getName(), attr.getValue());
    b.setInsertionPointAfter(async);
    hostWait(b, loc, async.getAsyncToken());
    replaced.insert(launch);
  }
};

} // namespace
