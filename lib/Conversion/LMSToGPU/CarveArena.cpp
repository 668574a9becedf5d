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
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
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
#include "llvm/ADT/BitVector.h"

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
  /// Its life in the placement.
  size_t life = 0;
};

/// An argument the host places in the arena (`lms.arena_arguments`).
struct PlacedArgument {
  unsigned index = 0;
  gpu::DeallocOp dealloc;
  uint64_t bytes = 0;
  size_t life = 0;
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

/// The deallocations of `buffer` (or of a view or loop result of it):
/// the last one found and how many there are.
std::pair<gpu::DeallocOp, unsigned> deallocsOf(ArrayRef<Value> sameBuffer) {
  gpu::DeallocOp dealloc;
  unsigned count = 0;
  for (Value value : sameBuffer)
    for (Operation *user : value.getUsers())
      if (auto free = dyn_cast<gpu::DeallocOp>(user)) {
        dealloc = free;
        ++count;
      }
  return {dealloc, count};
}

/// Replaces `alloc` by `view` (of an arena, a frame or a slot): what waited
/// for the allocation waits for its dependency (the lowering gives each
/// async op one), or for nothing.
void replaceAllocation(OpBuilder &b, gpu::AllocOp alloc, Value view) {
  if (Value token = alloc.getAsyncToken()) {
    ValueRange deps = alloc.getAsyncDependencies();
    token.replaceAllUsesWith(
        deps.size() == 1 ? deps.front()
                         : gpu::WaitOp::create(
                               b, alloc.getLoc(),
                               gpu::AsyncTokenType::get(b.getContext()), deps)
                               .getAsyncToken());
  }
  alloc.getMemref().replaceAllUsesWith(view);
  alloc.erase();
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
      bool hostArena = func->hasAttr(LMSDialect::getArenaArgumentsAttrName());
      if (hostArena && called.count(func)) {
        func.emitError() << "'" << LMSDialect::getArenaArgumentsAttrName()
                         << "' on a function the module calls: its host "
                            "places its arguments in its arena, which a "
                            "call in the module does not";
        failedAny = true;
        continue;
      }
      if (hostArena) {
        if (failed(carve(func, symbols, limit, /*frame=*/true,
                         /*hostArguments=*/true)))
          failedAny = true;
        continue;
      }
      if (called.count(func)) {
        // The variant starts as a copy of the function before carving.
        auto variant = cast<func::FuncOp>(func->clone());
        variant.setSymName((func.getSymName() + "_lms_frame").str());
        variant.setPrivate();
        OpBuilder(func).insert(variant);
        symbols.insert(variant);
        if (failed(carve(variant, symbols, std::nullopt, /*frame=*/true))) {
          failedAny = true;
        } else {
          Frame frame;
          if (auto bytes =
                  variant->getAttrOfType<IntegerAttr>("lms.arena_bytes"))
            frame = {variant, static_cast<uint64_t>(bytes.getInt())};
          makeSlotted(func, variant, frame, symbols);
          if (!frame.variant)
            variant.erase(); // nothing to carve: callers call the function
          if (frame.variant || frame.slotted)
            frames[func] = frame;
        }
      }
      if (failed(carve(func, symbols, limit, /*frame=*/false)))
        failedAny = true;
    }
    // The marks are read: the functions keep none (their lowering packs
    // several results into one).
    for (auto func : module.getOps<func::FuncOp>())
      func->removeAttr(LMSDialect::getResultSlotsAttrName());
    // Variants no carved caller calls.
    for (auto &[func, frame] : frames)
      for (func::FuncOp variant : {frame.variant, frame.slotted})
        if (variant && SymbolTable::symbolKnownUseEmpty(variant, module))
          variant.erase();
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
    /// Null when the function carves nothing.
    func::FuncOp variant;
    uint64_t bytes = 0;
    /// The variant that also takes the results in `slots` from slots of the
    /// caller's arena (after the frame, one argument each), or null.
    func::FuncOp slotted;
    SmallVector<unsigned> slots;
  };

  /// The gpu.alloc in `block` whose buffer `value` is (the allocation
  /// itself, a loop's result carrying it, a view of all of it), or null.
  static gpu::AllocOp allocationOf(Value value, Block &block) {
    while (value) {
      if (auto alloc = value.getDefiningOp<gpu::AllocOp>())
        return alloc->getBlock() == &block ? alloc : gpu::AllocOp();
      if (auto result = dyn_cast<OpResult>(value)) {
        Operation *op = result.getOwner();
        if (auto loop = dyn_cast<LoopLikeOpInterface>(op)) {
          OpOperand *init = loop.getTiedLoopInit(result);
          value = init ? init->get() : Value();
          continue;
        }
        if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
          value = view.getViewSource();
          continue;
        }
      }
      return gpu::AllocOp();
    }
    return gpu::AllocOp();
  }

  /// Result `k` of `ret` as a buffer its function allocates whole to return
  /// it (static shape, not freed, not already in `taken`) and its bytes: a
  /// result a slot of the caller's arena or the host's arena can hold.
  /// Otherwise warns at `func` that the result stays an allocation of its
  /// own, though the arena model counted it in `where`.
  static std::optional<std::pair<gpu::AllocOp, uint64_t>>
  returnedAllocation(func::FuncOp func, func::ReturnOp ret, unsigned k,
                     ArrayRef<gpu::AllocOp> taken, StringRef where) {
    Block &body = *ret->getBlock();
    Value returned = ret.getOperand(k);
    gpu::AllocOp alloc = allocationOf(returned, body);
    auto type = dyn_cast<MemRefType>(returned.getType());
    std::optional<uint64_t> bytes = type ? staticBytes(type) : std::nullopt;
    if (alloc && bytes && !alloc.getHostShared() &&
        alloc.getDynamicSizes().empty() &&
        staticBytes(alloc.getType()) == bytes &&
        !deallocsOf(sameBuffer(alloc.getMemref())).second &&
        !llvm::is_contained(taken, alloc))
      return std::make_pair(alloc, *bytes);
    func.emitWarning() << "result " << k
                       << " is not a buffer the function allocates to return "
                          "it: it stays an allocation of its own (the arena "
                          "model counted it in "
                       << where << ")";
    return std::nullopt;
  }

  /// With `lms.result_slots` on `func` (--lms-mark-arena-slots: the results
  /// the arena model counts in its caller's arena), a copy of `variant`
  /// (carved with a frame, or carving nothing) that takes those results
  /// from slots its caller passes: each result's allocation becomes a view
  /// of its slot. Warns and makes none when a marked result is not a buffer
  /// the function allocates whole for returning it.
  void makeSlotted(func::FuncOp func, func::FuncOp variant, Frame &frame,
                   SymbolTable &symbols) {
    auto marks = func->getAttrOfType<DenseBoolArrayAttr>(
        LMSDialect::getResultSlotsAttrName());
    if (!marks || !variant.getBody().hasOneBlock() ||
        static_cast<unsigned>(marks.size()) != variant.getNumResults())
      return;
    Block &body = variant.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return;
    SmallVector<unsigned> slots;
    SmallVector<gpu::AllocOp> allocs;
    for (auto [k, marked] : llvm::enumerate(marks.asArrayRef())) {
      if (!marked)
        continue;
      auto found =
          returnedAllocation(func, ret, k, allocs, "the caller's arena");
      if (!found)
        return;
      slots.push_back(static_cast<unsigned>(k));
      allocs.push_back(found->first);
    }
    if (slots.empty())
      return;
    auto slotted = cast<func::FuncOp>(variant->clone());
    slotted.setSymName((func.getSymName() + "_lms_frame_slots").str());
    slotted.setPrivate();
    OpBuilder(variant).insert(slotted);
    symbols.insert(slotted);
    // The allocations of the copy, by position in the body.
    Block &copy = slotted.getBody().front();
    DenseMap<Operation *, Operation *> cloned;
    for (auto [original, clone] : llvm::zip(body, copy))
      cloned[&original] = &clone;
    OpBuilder b(func.getContext());
    for (gpu::AllocOp original : allocs) {
      auto alloc = cast<gpu::AllocOp>(cloned[original]);
      uint64_t bytes = *staticBytes(alloc.getType());
      unsigned index = slotted.getNumArguments();
      auto slotType =
          MemRefType::get({static_cast<int64_t>(bytes)}, b.getIntegerType(8));
      if (failed(slotted.insertArgument(index, slotType, DictionaryAttr(),
                                        alloc.getLoc()))) {
        slotted.erase();
        return;
      }
      b.setInsertionPoint(alloc);
      Location at = alloc.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, at, 0);
      replaceAllocation(b, alloc,
                        memref::ViewOp::create(b, at, alloc.getType(),
                                               slotted.getArgument(index), zero,
                                               ValueRange{}));
    }
    frame.slotted = slotted;
    frame.slots = std::move(slots);
  }
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
  /// control: returned, passed to a function of the module that may free
  /// it, or freed anywhere but by `dealloc`. A function of the module frees
  /// its arguments (the ownership rules of --lms-deallocate) except those it
  /// borrows (`lms.borrowed`): a borrowed argument that does not leave the
  /// callee's control either (checked the same way, through the calls it
  /// makes) stays the caller's buffer, which it frees after the call.
  static bool escapes(Value value, gpu::DeallocOp dealloc,
                      SymbolTable &symbols) {
    DenseSet<Value> checking;
    return escapes(value, dealloc, symbols, checking);
  }
  static bool escapes(Value value, gpu::DeallocOp dealloc, SymbolTable &symbols,
                      DenseSet<Value> &checking) {
    if (!checking.insert(value).second)
      return false; // on a cycle of calls: checked where it started
    SmallVector<Value> worklist = {value};
    while (!worklist.empty()) {
      Value current = worklist.pop_back_val();
      for (OpOperand &use : current.getUses()) {
        Operation *user = use.getOwner();
        if (dealloc && user == dealloc.getOperation())
          continue;
        if (isa<func::ReturnOp, gpu::DeallocOp, memref::DeallocOp>(user))
          return true;
        if (auto call = dyn_cast<CallOpInterface>(user)) {
          auto symbol =
              dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
          auto callee =
              symbol ? symbols.lookup<func::FuncOp>(symbol.getRootReference())
                     : func::FuncOp();
          // An unknown callee may do anything.
          if (!callee)
            return true;
          // An external function (printMemrefF32) only reads.
          if (!callee.isExternal()) {
            unsigned first = call.getArgOperands().getBeginOperandIndex();
            unsigned index = use.getOperandNumber() - first;
            if (use.getOperandNumber() < first ||
                index >= callee.getNumArguments() ||
                !callee.getArgAttr(index, LMSDialect::getBorrowedAttrName()) ||
                !callee.getBody().hasOneBlock() ||
                escapes(callee.getArgument(index), gpu::DeallocOp(), symbols,
                        checking))
              return true;
            // Its results are not the argument (a borrowed argument is
            // returned as a copy).
            continue;
          }
        }
        // A loop's init: the loop carries it in its iteration argument
        // and gives it back as the tied result, not as its other results
        // (which a loop may well return).
        if (auto loop = dyn_cast<LoopLikeOpInterface>(user)) {
          if (OpResult result = loop.getTiedLoopResult(&use)) {
            worklist.push_back(result);
            if (BlockArgument arg = loop.getTiedLoopRegionIterArg(&use))
              worklist.push_back(arg);
            continue;
          }
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
  /// or with `frame` into a frame its caller passes as a last argument. With
  /// `hostArguments` (and a frame: the host's arena), the arguments the
  /// function frees itself are in the arena too, from entry, at offsets the
  /// host reads in `lms.argument_offsets`; they leave the signature.
  LogicalResult carve(func::FuncOp func, SymbolTable &symbols,
                      std::optional<uint64_t> limit, bool frame,
                      bool hostArguments = false) {
    if (!func.getBody().hasOneBlock())
      return success();
    Block &body = func.getBody().front();
    DenseMap<Operation *, uint32_t> position;
    for (Operation &op : body)
      position[&op] = static_cast<uint32_t>(position.size());

    std::vector<Carved> carved;
    std::vector<::lms::BufferLife> lives;
    // The host's arguments first: allocated before anything else, in
    // argument order (as the arena model counts them, kHostPlaced).
    std::vector<PlacedArgument> arguments;
    if (hostArguments) {
      for (BlockArgument arg : body.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        std::optional<uint64_t> bytes = type ? staticBytes(type) : std::nullopt;
        if (!bytes)
          continue;
        auto [dealloc, deallocs] = deallocsOf(sameBuffer(arg));
        if (deallocs != 1 || dealloc->getBlock() != &body ||
            escapes(arg, dealloc, symbols))
          continue;
        arguments.push_back(
            {arg.getArgNumber(), dealloc, *bytes, lives.size()});
        // In the arena at entry, as the arena model counts it.
        lives.push_back(
            {-1, -1, *bytes, 0, ::lms::hostPlacedEnd(position[dealloc])});
      }
    }
    // And the results the arena model counted in the host's arena (marked
    // as for slots: buffers the function allocates to return them), from
    // their allocation to the end.
    SmallVector<Carved> results;
    SmallVector<unsigned> resultIndices;
    if (hostArguments)
      if (auto marks = func->getAttrOfType<DenseBoolArrayAttr>(
              LMSDialect::getResultSlotsAttrName());
          marks && static_cast<unsigned>(marks.size()) == func.getNumResults())
        if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator()))
          for (auto [k, marked] : llvm::enumerate(marks.asArrayRef())) {
            if (!marked)
              continue;
            SmallVector<gpu::AllocOp> taken;
            for (const Carved &result : results)
              taken.push_back(result.alloc);
            auto found =
                returnedAllocation(func, ret, k, taken, "the host's arena");
            if (!found)
              continue;
            auto [alloc, bytes] = *found;
            lives.push_back({-1, -1, bytes, position[alloc],
                             static_cast<uint32_t>(position.size())});
            results.push_back(
                {alloc, gpu::DeallocOp(), bytes, lives.size() - 1});
            resultIndices.push_back(static_cast<unsigned>(k));
          }
    for (Operation &op : body) {
      auto alloc = dyn_cast<gpu::AllocOp>(&op);
      if (!alloc || alloc.getHostShared() || !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty())
        continue;
      std::optional<uint64_t> bytes = staticBytes(alloc.getType());
      if (!bytes)
        continue;
      auto [dealloc, deallocs] = deallocsOf(sameBuffer(alloc.getMemref()));
      if (deallocs != 1 || dealloc->getBlock() != &body ||
          position[dealloc] < position[alloc] ||
          escapes(alloc.getMemref(), dealloc, symbols))
        continue;
      lives.push_back({static_cast<::lms::TensorIndex>(carved.size()), -1,
                       *bytes, position[alloc], position[dealloc]});
      carved.push_back({alloc, dealloc, *bytes, lives.size() - 1});
    }
    // Calls to carved functions: their frames live while the call runs. A
    // call whose callee takes its results from slots of this arena does so
    // when this function frees each of them itself (as a buffer it
    // allocated); the slots are allocated with the call, before its frame.
    struct CarvedCall {
      func::CallOp call;
      Frame callee;
      int frameLife = -1;
      /// Per slot of the callee: its life and the release.
      SmallVector<std::pair<unsigned, gpu::DeallocOp>> slots;
    };
    SmallVector<CarvedCall> calls;
    for (Operation &op : body) {
      auto call = dyn_cast<func::CallOp>(&op);
      auto callee =
          call ? symbols.lookup<func::FuncOp>(call.getCallee()) : nullptr;
      auto it = callee ? frames.find(callee) : frames.end();
      if (it == frames.end())
        continue;
      CarvedCall carvedCall{call, it->second, -1, {}};
      SmallVector<gpu::DeallocOp> releases;
      // The calls --lms-mark-arena-slots marked, as the arena model chose.
      bool marked = call->hasAttr(LMSDialect::getSlottedAttrName());
      bool slotted = marked && static_cast<bool>(it->second.slotted);
      for (unsigned k : it->second.slots) {
        if (!slotted)
          break;
        Value result = call.getResult(k);
        auto [dealloc, deallocs] = deallocsOf(sameBuffer(result));
        slotted = deallocs == 1 && dealloc->getBlock() == &body &&
                  position[dealloc] > position[call] &&
                  staticBytes(cast<MemRefType>(result.getType())) &&
                  !escapes(result, dealloc, symbols);
        releases.push_back(dealloc);
      }
      if (marked && !slotted)
        call.emitWarning() << "the results of the call stay allocations of "
                              "their own (the arena model counted them in "
                              "slots of this function's arena)";
      if (slotted) {
        for (auto [k, dealloc] : llvm::zip(it->second.slots, releases)) {
          carvedCall.slots.push_back(
              {static_cast<unsigned>(lives.size()), dealloc});
          lives.push_back(
              {-1, static_cast<::lms::OpIndex>(calls.size()),
               *staticBytes(cast<MemRefType>(call.getResult(k).getType())),
               position[call], position[dealloc]});
        }
      } else if (!it->second.variant) {
        continue; // the function itself: nothing to pass
      }
      if (it->second.variant) {
        carvedCall.frameLife = static_cast<int>(lives.size());
        lives.push_back({-1, static_cast<::lms::OpIndex>(calls.size()),
                         it->second.bytes, position[call], position[call] + 1});
      }
      calls.push_back(std::move(carvedCall));
    }
    if (carved.empty() && calls.empty() && arguments.empty() && results.empty())
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
    // In place of `dealloc` (at the builder's point): what it was ordered
    // after is done on the host before the bytes can be reused, and its
    // token is a completed one.
    auto release = [&](gpu::DeallocOp dealloc, Value offset, uint64_t bytes) {
      Location at = dealloc.getLoc();
      if (!dealloc.getAsyncDependencies().empty())
        gpu::WaitOp::create(b, at, Type(), dealloc.getAsyncDependencies());
      notify("lmsArenaRelease", at, offset, bytes);
      if (Value token = dealloc.getAsyncToken())
        token.replaceAllUsesWith(
            gpu::WaitOp::create(b, at, tokenType, ValueRange{})
                .getAsyncToken());
      dealloc.erase();
    };
    // The host's arguments: views of the arena at their offsets, carved at
    // entry, released where the function freed them.
    SmallVector<int64_t> argumentOffsets;
    if (hostArguments) {
      argumentOffsets.assign(func.getNumArguments() - 1, -1);
      llvm::BitVector placedArguments(func.getNumArguments());
      for (PlacedArgument &argument : arguments) {
        BlockArgument arg = func.getArgument(argument.index);
        Location at = arg.getLoc();
        uint64_t argumentOffset = placement->offsets[argument.life];
        argumentOffsets[argument.index] = static_cast<int64_t>(argumentOffset);
        Value offset = arith::ConstantIndexOp::create(
            b, at, static_cast<int64_t>(argumentOffset));
        Value view = memref::ViewOp::create(b, at, arg.getType(), arena, offset,
                                            ValueRange{});
        notify("lmsArenaAcquire", at, offset, argument.bytes);
        arg.replaceAllUsesWith(view);
        placedArguments.set(argument.index);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(argument.dealloc);
        release(argument.dealloc,
                arith::ConstantIndexOp::create(
                    b, argument.dealloc.getLoc(),
                    static_cast<int64_t>(argumentOffset)),
                argument.bytes);
      }
      if (failed(func.eraseArguments(placedArguments)))
        return func.emitError() << "cannot drop the arguments placed in "
                                   "the arena from the signature";
    }
    // Each carved allocation becomes a view of the arena at its offset;
    // returns the offset.
    auto carveAllocation = [&](const Carved &buffer) {
      gpu::AllocOp alloc = buffer.alloc;
      b.setInsertionPoint(alloc);
      Location at = alloc.getLoc();
      Value offset = arith::ConstantIndexOp::create(
          b, at, static_cast<int64_t>(placement->offsets[buffer.life]));
      Value view = memref::ViewOp::create(b, at, alloc.getType(), arena, offset,
                                          ValueRange{});
      notify("lmsArenaAcquire", at, offset, buffer.bytes);
      replaceAllocation(b, alloc, view);
      return offset;
    };
    // The results the host reads stay carved after the return.
    for (Carved &result : results)
      carveAllocation(result);
    for (Carved &buffer : carved) {
      Value offset = carveAllocation(buffer);
      b.setInsertionPoint(buffer.dealloc);
      release(buffer.dealloc, offset, buffer.bytes);
    }
    // Each call to a carved function passes its frame, and its slots when
    // it takes them: acquired before the call, released where this
    // function freed the result.
    for (CarvedCall &entry : calls) {
      func::CallOp call = entry.call;
      Location at = call.getLoc();
      b.setInsertionPoint(call);
      SmallVector<Value> operands(call.getOperands());
      if (entry.frameLife >= 0) {
        Value offset = arith::ConstantIndexOp::create(
            b, at, static_cast<int64_t>(placement->offsets[entry.frameLife]));
        auto frameType = MemRefType::get(
            {static_cast<int64_t>(entry.callee.bytes)}, b.getIntegerType(8));
        operands.push_back(memref::ViewOp::create(b, at, frameType, arena,
                                                  offset, ValueRange{}));
      }
      for (auto [life, dealloc] : entry.slots) {
        uint64_t bytes = lives[life].bytes;
        Value offset = arith::ConstantIndexOp::create(
            b, at, static_cast<int64_t>(placement->offsets[life]));
        auto slotType =
            MemRefType::get({static_cast<int64_t>(bytes)}, b.getIntegerType(8));
        operands.push_back(memref::ViewOp::create(b, at, slotType, arena,
                                                  offset, ValueRange{}));
        notify("lmsArenaAcquire", at, offset, bytes);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(dealloc);
        release(dealloc,
                arith::ConstantIndexOp::create(
                    b, dealloc.getLoc(),
                    static_cast<int64_t>(placement->offsets[life])),
                bytes);
      }
      func::FuncOp target =
          entry.slots.empty() ? entry.callee.variant : entry.callee.slotted;
      auto replacement = func::CallOp::create(b, at, target, operands);
      call.replaceAllUsesWith(replacement.getResults());
      call.erase();
    }
    func->setAttr("lms.arena_bytes",
                  b.getI64IntegerAttr(static_cast<int64_t>(arenaBytes)));
    if (hostArguments) {
      func->setAttr(LMSDialect::getArgumentOffsetsAttrName(),
                    b.getDenseI64ArrayAttr(argumentOffsets));
      SmallVector<int64_t> resultOffsets(func.getNumResults(), -1);
      for (auto [k, result] : llvm::zip(resultIndices, results))
        resultOffsets[k] =
            static_cast<int64_t>(placement->offsets[result.life]);
      func->setAttr(LMSDialect::getResultOffsetsAttrName(),
                    b.getDenseI64ArrayAttr(resultOffsets));
    }
    func->setAttr(
        "lms.arena_live_bytes",
        b.getI64IntegerAttr(static_cast<int64_t>(placement->livePeakBytes)));
    return success();
  }
};

} // namespace
