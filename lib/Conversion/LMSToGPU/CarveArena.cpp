//===- CarveArena.cpp - Device buffers at offsets in one arena ------------===//
//
// The --lms-carve-arena pass: after --convert-lms-to-gpu, the device buffers
// a function allocates and frees itself become views of one arena allocated
// at entry, at offsets the graph core's placer chooses. The pass translates
// (lifetimes out of the IR, offsets back into it); placement is in
// lib/Graph/Placement.cpp.
//
//===----------------------------------------------------------------------===//

#include "LMS/Conversion/Passes.h"
#include "LMS/Graph/Placement.h"
#include "LMS/Graph/Units.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSCARVEARENA
#include "LMS/Conversion/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

/// A device buffer the function allocates and frees in its body.
struct Carved {
  gpu::AllocOp alloc;
  gpu::DeallocOp dealloc;
  uint64_t bytes = 0;
};

/// Bytes of a memref of static shape and identity layout in the default
/// memory space whose elements are integers or floats; nullopt otherwise.
std::optional<uint64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  uint64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  uint64_t bytes = elementBytes;
  for (int64_t dim : type.getShape())
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return std::nullopt;
  return bytes;
}

struct LMSCarveArenaPass
    : public mlir::lms::impl::LMSCarveArenaBase<LMSCarveArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (alignment == 0) {
      module.emitError() << "invalid alignment 0: expected a positive number "
                            "of bytes";
      return signalPassFailure();
    }
    std::optional<uint64_t> limit;
    if (!budget.empty()) {
      llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(budget);
      if (!size || size->isPercent) {
        if (!size)
          llvm::consumeError(size.takeError());
        module.emitError() << "invalid budget '" << budget
                           << "': expected bytes or a size with a unit";
        return signalPassFailure();
      }
      limit = size->bytes;
    }
    SymbolTable symbols(module);
    declareRuntime(module, symbols);

    // Callees first. A function called by another (and not on a cycle of
    // calls) gets a variant that takes its frame, a slice of the caller's
    // arena at the call, instead of allocating an arena of its own; calls
    // from carved functions go to the variant.
    SmallVector<func::FuncOp> order;
    DenseSet<Operation *> visited, onStack, recursive;
    std::function<void(func::FuncOp)> visit = [&](func::FuncOp func) {
      visited.insert(func);
      onStack.insert(func);
      for (func::FuncOp callee : calleesOf(func, symbols)) {
        if (onStack.count(callee)) {
          recursive.insert(callee);
          continue;
        }
        if (!visited.count(callee))
          visit(callee);
      }
      onStack.erase(func);
      order.push_back(func);
    };
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !visited.count(func))
        visit(func);
    DenseSet<Operation *> called;
    for (func::FuncOp func : order)
      for (func::FuncOp callee : calleesOf(func, symbols))
        if (!recursive.count(callee) && callee != func)
          called.insert(callee);

    bool failedAny = false;
    for (func::FuncOp func : order) {
      if (called.count(func)) {
        // The variant starts as a copy of the function before carving.
        auto variant = cast<func::FuncOp>(func->clone());
        variant.setSymName((func.getSymName() + "_lms_frame").str());
        variant.setPrivate();
        OpBuilder(func).insert(variant);
        symbols.insert(variant);
        if (failed(carve(variant, symbols, std::nullopt, /*frame=*/true)))
          failedAny = true;
        else if (auto bytes =
                     variant->getAttrOfType<IntegerAttr>("lms.arena_bytes"))
          frames[func] = {variant, static_cast<uint64_t>(bytes.getInt())};
        else
          variant.erase(); // nothing to carve: callers call the function
      }
      if (failed(carve(func, symbols, limit, /*frame=*/false)))
        failedAny = true;
    }
    // Variants no carved caller calls.
    for (auto &[func, frame] : frames)
      if (SymbolTable::symbolKnownUseEmpty(frame.variant, module))
        frame.variant.erase();
    if (failedAny)
      signalPassFailure();
  }

  /// The functions with bodies that `func` calls directly.
  static SmallVector<func::FuncOp> calleesOf(func::FuncOp func,
                                             SymbolTable &symbols) {
    SmallVector<func::FuncOp> callees;
    func.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() &&
          !llvm::is_contained(callees, callee))
        callees.push_back(callee);
    });
    return callees;
  }

  /// A function's frame variant and the frame it takes.
  struct Frame {
    func::FuncOp variant;
    uint64_t bytes = 0;
  };
  DenseMap<Operation *, Frame> frames;

  /// The runtime's notifications (lib/Runtime): (arena address, offset,
  /// bytes), declared unless the module has them.
  static void declareRuntime(ModuleOp module, SymbolTable &symbols) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type index = b.getIndexType();
    for (StringRef name : {"lmsArenaAcquire", "lmsArenaRelease"}) {
      if (symbols.lookup(name))
        continue;
      auto decl =
          func::FuncOp::create(b, module.getLoc(), name,
                               b.getFunctionType({index, index, index}, {}));
      decl.setPrivate();
      symbols.insert(decl);
    }
  }

  /// Whether `value` (a buffer, or a view of one) leaves the function's
  /// control: returned, passed to a function of the module (which may free
  /// its arguments), or freed anywhere but by `dealloc`.
  static bool escapes(Value value, gpu::DeallocOp dealloc,
                      SymbolTable &symbols) {
    SmallVector<Value> worklist = {value};
    while (!worklist.empty()) {
      Value current = worklist.pop_back_val();
      for (OpOperand &use : current.getUses()) {
        Operation *user = use.getOwner();
        if (user == dealloc.getOperation())
          continue;
        if (isa<func::ReturnOp, gpu::DeallocOp, memref::DeallocOp>(user))
          return true;
        if (auto call = dyn_cast<CallOpInterface>(user)) {
          auto symbol =
              dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
          auto callee =
              symbol ? symbols.lookup<func::FuncOp>(symbol.getRootReference())
                     : func::FuncOp();
          // An external function (printMemrefF32) only reads; a function
          // with a body follows the ownership rules and may free it.
          if (!callee || !callee.isExternal())
            return true;
        }
        // Whatever aliases it (views, casts) must not escape either.
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
      }
    }
    return false;
  }

  /// The values that are `buffer` or a view of it: it, its views (reshapes,
  /// subviews), and the results of the loops that carry one of them (a
  /// bufferized loop's result tied to an init is the init's buffer),
  /// transitively. A swap-out of a loop's result frees the root of what
  /// the loop carries: the allocation.
  static SmallVector<Value> sameBuffer(Value buffer) {
    SmallVector<Value> values = {buffer};
    auto add = [&](Value value) {
      if (!llvm::is_contained(values, value))
        values.push_back(value);
    };
    for (size_t i = 0; i < values.size(); ++i)
      for (OpOperand &use : values[i].getUses()) {
        Operation *user = use.getOwner();
        if (auto loop = dyn_cast<LoopLikeOpInterface>(user)) {
          if (OpResult result = loop.getTiedLoopResult(&use))
            add(result);
        } else if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
          if (view.getViewSource() == values[i])
            for (Value result : user->getResults())
              if (isa<BaseMemRefType>(result.getType()))
                add(result);
        }
      }
    return values;
  }

  /// Places and carves the buffers of `func`: into an arena it allocates,
  /// or with `frame` into a frame its caller passes as a last argument.
  LogicalResult carve(func::FuncOp func, SymbolTable &symbols,
                      std::optional<uint64_t> limit, bool frame) {
    if (!func.getBody().hasOneBlock())
      return success();
    Block &body = func.getBody().front();
    DenseMap<Operation *, uint32_t> position;
    for (Operation &op : body)
      position[&op] = static_cast<uint32_t>(position.size());

    std::vector<Carved> carved;
    std::vector<::lms::BufferLife> lives;
    for (Operation &op : body) {
      auto alloc = dyn_cast<gpu::AllocOp>(&op);
      if (!alloc || alloc.getHostShared() || !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty())
        continue;
      std::optional<uint64_t> bytes = staticBytes(alloc.getType());
      if (!bytes)
        continue;
      gpu::DeallocOp dealloc;
      unsigned deallocs = 0;
      for (Value value : sameBuffer(alloc.getMemref()))
        for (Operation *user : value.getUsers())
          if (auto free = dyn_cast<gpu::DeallocOp>(user)) {
            dealloc = free;
            ++deallocs;
          }
      if (deallocs != 1 || dealloc->getBlock() != &body ||
          position[dealloc] < position[alloc] ||
          escapes(alloc.getMemref(), dealloc, symbols))
        continue;
      lives.push_back({static_cast<::lms::TensorIndex>(carved.size()), -1,
                       *bytes, position[alloc], position[dealloc]});
      carved.push_back({alloc, dealloc, *bytes});
    }
    // Calls to carved functions: their frames live while the call runs.
    SmallVector<std::pair<func::CallOp, Frame>> calls;
    for (Operation &op : body) {
      auto call = dyn_cast<func::CallOp>(&op);
      auto callee =
          call ? symbols.lookup<func::FuncOp>(call.getCallee()) : nullptr;
      auto it = callee ? frames.find(callee) : frames.end();
      if (it == frames.end())
        continue;
      lives.push_back({-1, static_cast<::lms::OpIndex>(calls.size()),
                       it->second.bytes, position[call], position[call] + 1});
      calls.push_back({call, it->second});
    }
    if (carved.empty() && calls.empty())
      return success();

    ::lms::PlacementOptions options;
    options.alignment = alignment;
    llvm::Expected<::lms::Placement> placement =
        ::lms::placeBuffers(lives, options);
    if (!placement)
      return func.emitError() << "cannot place the device buffers in an "
                                 "arena: "
                              << llvm::toString(placement.takeError());
    uint64_t arenaBytes = std::max<uint64_t>(placement->arenaBytes, 1);
    if (limit && arenaBytes > *limit)
      return func.emitError()
             << "the device buffers need an arena of "
             << ::lms::formatBytes(arenaBytes) << " (" << arenaBytes
             << " bytes; " << placement->livePeakBytes
             << " bytes alive at most), over the budget of "
             << ::lms::formatBytes(*limit) << " (" << *limit << " bytes)";

    OpBuilder b(func.getContext());
    Location loc = func.getLoc();
    Type tokenType = gpu::AsyncTokenType::get(func.getContext());
    auto arenaType = MemRefType::get({static_cast<int64_t>(arenaBytes)},
                                     b.getIntegerType(8));
    Value arena;
    if (frame) {
      // The caller's slice: a last argument.
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, arenaType, DictionaryAttr(), loc)))
        return func.emitError() << "cannot add the frame argument";
      arena = func.getArgument(index);
      b.setInsertionPointToStart(&body);
    } else {
      // The arena, held from entry to every return.
      b.setInsertionPointToStart(&body);
      Value start =
          gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
      auto alloc =
          gpu::AllocOp::create(b, loc, arenaType, tokenType, ValueRange{start},
                               ValueRange{}, ValueRange{});
      gpu::WaitOp::create(b, loc, Type(), ValueRange{alloc.getAsyncToken()});
      arena = alloc.getMemref();
      for (Operation &op : body) {
        if (!isa<func::ReturnOp>(&op))
          continue;
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(&op);
        Value before =
            gpu::WaitOp::create(b, op.getLoc(), tokenType, ValueRange{})
                .getAsyncToken();
        auto free = gpu::DeallocOp::create(b, op.getLoc(), tokenType,
                                           ValueRange{before}, arena);
        gpu::WaitOp::create(b, op.getLoc(), Type(),
                            ValueRange{free.getAsyncToken()});
      }
    }

    // The runtime is told where each carved buffer begins and ends (the
    // emulated device checks and poisons them as allocations); a frame's
    // address lies inside its caller's arena, which the runtime finds.
    Value arenaAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, arena);
    auto notify = [&](StringRef name, Location at, Value offset,
                      uint64_t bytes) {
      Value size =
          arith::ConstantIndexOp::create(b, at, static_cast<int64_t>(bytes));
      func::CallOp::create(b, at, name, TypeRange{},
                           ValueRange{arenaAddress, offset, size});
    };
    for (auto [i, buffer] : llvm::enumerate(carved)) {
      gpu::AllocOp alloc = buffer.alloc;
      b.setInsertionPoint(alloc);
      Location at = alloc.getLoc();
      Value offset = arith::ConstantIndexOp::create(
          b, at, static_cast<int64_t>(placement->offsets[i]));
      Value view = memref::ViewOp::create(b, at, alloc.getType(), arena, offset,
                                          ValueRange{});
      notify("lmsArenaAcquire", at, offset, buffer.bytes);
      // What waited for the allocation waits for its dependency (the
      // lowering gives each async op one), or for nothing.
      if (Value token = alloc.getAsyncToken()) {
        ValueRange deps = alloc.getAsyncDependencies();
        token.replaceAllUsesWith(
            deps.size() == 1
                ? deps.front()
                : gpu::WaitOp::create(b, at, tokenType, deps).getAsyncToken());
      }
      alloc.getMemref().replaceAllUsesWith(view);
      alloc.erase();

      // The release: what the dealloc was ordered after is done on the host
      // before the bytes can be reused; its token is a completed one.
      gpu::DeallocOp dealloc = buffer.dealloc;
      b.setInsertionPoint(dealloc);
      if (!dealloc.getAsyncDependencies().empty())
        gpu::WaitOp::create(b, dealloc.getLoc(), Type(),
                            dealloc.getAsyncDependencies());
      notify("lmsArenaRelease", dealloc.getLoc(), offset, buffer.bytes);
      if (Value token = dealloc.getAsyncToken())
        token.replaceAllUsesWith(
            gpu::WaitOp::create(b, dealloc.getLoc(), tokenType, ValueRange{})
                .getAsyncToken());
      dealloc.erase();
    }
    // Each call to a carved function passes its frame.
    for (auto [k, entry] : llvm::enumerate(calls)) {
      auto [call, callee] = entry;
      b.setInsertionPoint(call);
      Value offset = arith::ConstantIndexOp::create(
          b, call.getLoc(),
          static_cast<int64_t>(placement->offsets[carved.size() + k]));
      auto frameType = MemRefType::get({static_cast<int64_t>(callee.bytes)},
                                       b.getIntegerType(8));
      Value slice = memref::ViewOp::create(b, call.getLoc(), frameType, arena,
                                           offset, ValueRange{});
      SmallVector<Value> operands(call.getOperands());
      operands.push_back(slice);
      auto replacement =
          func::CallOp::create(b, call.getLoc(), callee.variant, operands);
      call.replaceAllUsesWith(replacement.getResults());
      call.erase();
    }
    func->setAttr("lms.arena_bytes",
                  b.getI64IntegerAttr(static_cast<int64_t>(arenaBytes)));
    func->setAttr(
        "lms.arena_live_bytes",
        b.getI64IntegerAttr(static_cast<int64_t>(placement->livePeakBytes)));
    return success();
  }
};

} // namespace
