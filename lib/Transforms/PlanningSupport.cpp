//===- PlanningSupport.cpp - What the planning passes share ---------------===//

#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Graph/Placement.h"

#include "LMS/Analysis/CostModel.h"
#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Strip.h"
#include <functional>
#include <limits>
#include <utility>

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::TensorIndex;

namespace {
/// The functions of a module with a body, callees before their callers (a
/// depth-first walk of the call graph), and whether a call closes a cycle
/// (it reaches a function still on the walk's path).
struct CallGraphOrder {
  SmallVector<FunctionOpInterface> order;
  bool cycle = false;
};
} // namespace

static CallGraphOrder orderCallGraph(ModuleOp module) {
  CallGraphOrder result;
  DenseMap<Operation *, bool> onPath; // false once finished
  SymbolTableCollection symbols;
  std::function<void(FunctionOpInterface)> visit =
      [&](FunctionOpInterface func) {
        auto [it, fresh] = onPath.try_emplace(func.getOperation(), true);
        if (!fresh) {
          result.cycle |= it->second;
          return;
        }
        func.walk([&](CallOpInterface call) {
          if (auto callee = dyn_cast_or_null<FunctionOpInterface>(
                  call.resolveCallableInTable(&symbols)))
            if (!callee.isExternal())
              visit(callee);
        });
        onPath[func.getOperation()] = false;
        result.order.push_back(func);
      };
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      visit(func);
  return result;
}

SmallVector<FunctionOpInterface>
mlir::lms::functionsCalleesFirst(ModuleOp module) {
  return orderCallGraph(module).order;
}

BodySnapshot::BodySnapshot(FunctionOpInterface func)
    : func(func), backup(func->clone()) {
  record();
}

BodySnapshot::~BodySnapshot() { backup->destroy(); }

void BodySnapshot::record() {
  ops.clear();
  blocks.clear();
  SmallVector<Operation *> mine, copies;
  func->walk<WalkOrder::PreOrder>([&](Operation *op) { mine.push_back(op); });
  backup->walk<WalkOrder::PreOrder>(
      [&](Operation *op) { copies.push_back(op); });
  for (auto [op, copy] : llvm::zip_equal(mine, copies)) {
    ops.emplace_back(op, copy);
    for (auto [region, copyRegion] :
         llvm::zip_equal(op->getRegions(), copy->getRegions()))
      for (auto [block, copyBlock] : llvm::zip_equal(region, copyRegion))
        blocks.emplace_back(&block, &copyBlock);
  }
}

void BodySnapshot::restore() {
  // What the function holds now; an op of the snapshot missing (or another
  // op where it was) means a rewrite erased it: replace the body instead.
  DenseSet<Operation *> present;
  DenseSet<Block *> presentBlocks;
  func->walk([&](Operation *op) {
    present.insert(op);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        presentBlocks.insert(&block);
  });
  DenseSet<Operation *> own;
  bool intact = true;
  for (auto [op, copy] : ops) {
    own.insert(op);
    intact &= present.contains(op) && op->getName() == copy->getName() &&
              op->getNumRegions() == copy->getNumRegions() &&
              op->getNumResults() == copy->getNumResults();
  }
  for (auto [block, copyBlock] : blocks)
    intact &= presentBlocks.contains(block) &&
              block->getNumArguments() == copyBlock->getNumArguments();
  for (auto [op, copy] : ops)
    if (intact)
      for (auto [region, copyRegion] :
           llvm::zip_equal(op->getRegions(), copy->getRegions()))
        intact &= region.getBlocks().size() == copyRegion.getBlocks().size();
  if (!intact) {
    auto copy = cast<FunctionOpInterface>(backup->clone());
    func.getFunctionBody().takeBody(copy.getFunctionBody());
    copy->destroy();
    record();
    return;
  }

  // The copy's values are the function's: results and block arguments.
  DenseMap<Value, Value> original;
  for (auto [op, copy] : ops)
    for (auto [result, copyResult] :
         llvm::zip_equal(op->getResults(), copy->getResults()))
      original[copyResult] = result;
  for (auto [block, copyBlock] : blocks)
    for (auto [arg, copyArg] :
         llvm::zip_equal(block->getArguments(), copyBlock->getArguments()))
      original[copyArg] = arg;

  // Operands first: then the inserted ops are used by inserted ops alone.
  for (auto [op, copy] : ops) {
    SmallVector<Value> operands;
    for (Value operand : copy->getOperands())
      operands.push_back(original.lookup(operand) ? original.lookup(operand)
                                                  : operand);
    if (!llvm::equal(op->getOperands(), operands))
      op->setOperands(operands);
  }
  SmallVector<Operation *> inserted;
  func->walk([&](Operation *op) {
    if (!own.contains(op)) {
      op->dropAllReferences();
      if (own.contains(op->getParentOp()))
        inserted.push_back(op);
    }
  });
  for (Operation *op : inserted) {
    op->dropAllUses();
    op->erase();
  }
  // Order, attributes and properties as they were.
  DenseMap<Operation *, Operation *> ownOf;
  for (auto [op, copy] : ops)
    ownOf[copy] = op;
  for (auto [block, copyBlock] : blocks)
    for (Operation &copy : *copyBlock)
      ownOf.lookup(&copy)->moveBefore(block, block->end());
  for (auto [op, copy] : ops) {
    if (op->getDiscardableAttrDictionary() !=
        copy->getDiscardableAttrDictionary())
      op->setDiscardableAttrs(copy->getDiscardableAttrDictionary());
    if (op->getPropertiesStorageSize() &&
        op->hashProperties() != copy->hashProperties())
      op->copyProperties(copy->getPropertiesStorage());
  }
}

std::shared_ptr<CallSummaryCache>
mlir::lms::makeCalleesFirstCache(ModuleOp module) {
  return orderCallGraph(module).cycle ? nullptr : makeCallSummaryCache();
}

/// The peak of `func` without LMS ops: of a stripped copy when it has some.
static FailureOr<uint64_t> peakWithoutLMS(FunctionOpInterface func,
                                          const GraphOptions &options,
                                          const FunctionGraph &graph) {
  bool hasLMS = false;
  func.walk([&](Operation *op) {
    hasLMS |= isa_and_nonnull<LMSDialect>(op->getDialect());
  });
  if (!hasLMS)
    return ::lms::evaluateSchedule(graph.getGraph(),
                                   ::lms::EvalOptions{/*recordSteps=*/false})
        .peakBytes;
  // A stripped copy next to the function, so that its calls still resolve.
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  Operation *copy = builder.clone(*func);
  copy->setAttr(
      SymbolTable::getSymbolAttrName(),
      builder.getStringAttr("__lms_reference_" + func.getName().str()));
  stripLMSOps(copy);
  // The copy changes the module: not under the caller's cache (read-only
  // while budgets are resolved), under one that knows it is new.
  GraphOptions copyOptions = options;
  copyOptions.callSummaries =
      makeCallSummaryCache(ModuleAccess::RewritesFunctions);
  copyOptions.arenaModels = nullptr;
  FailureOr<FunctionGraph> stripped = FunctionGraph::build(copy, copyOptions);
  FailureOr<uint64_t> peak = failure();
  if (succeeded(stripped))
    peak = ::lms::evaluateSchedule(stripped->getGraph(),
                                   ::lms::EvalOptions{/*recordSteps=*/false})
               .peakBytes;
  copy->erase();
  return peak;
}

FailureOr<uint64_t> mlir::lms::resolveBudgetBytes(
    FunctionOpInterface func, StringRef option, const ::lms::DeviceSpec &device,
    const GraphOptions &graphOptions, const FunctionGraph &graph) {
  FailureOr<std::optional<::lms::ByteSize>> size = getBudget(func, option);
  if (failed(size))
    return failure();
  if (!*size)
    return device.capacityBytes;
  if (!(*size)->isPercent)
    return (*size)->bytes;
  FailureOr<uint64_t> peak = peakWithoutLMS(func, graphOptions, graph);
  if (failed(peak))
    return failure();
  return (*size)->resolve(*peak);
}

LogicalResult mlir::lms::reportInfeasible(
    FunctionOpInterface func, const FunctionGraph &graph, uint64_t budget,
    const ::lms::Infeasible &infeasible, std::optional<uint64_t> ownPeakBytes) {
  Operation *at =
      infeasible.op >= 0 ? graph.getOp(infeasible.op) : func.getOperation();
  InFlightDiagnostic diag = emitError(at->getLoc());
  diag << "budget " << ::lms::formatBytes(budget) << " (" << budget
       << " bytes) is below the smallest feasible budget "
       << ::lms::formatBytes(infeasible.smallestBudget) << " ("
       << infeasible.smallestBudget << " bytes) ";
  if (infeasible.op >= 0)
    diag << "of this op: " << infeasible.reason;
  else
    diag << "of @" << func.getName() << ": " << infeasible.reason;
  if (ownPeakBytes)
    noteOwnAllocations(diag, func, *ownPeakBytes);
  return diag;
}

void mlir::lms::noteOwnAllocations(InFlightDiagnostic &diag,
                                   FunctionOpInterface func,
                                   uint64_t ownPeakBytes) {
  diag.attachNote(func.getLoc())
      << "with arena=true the budget holds the arena and, beside it, "
      << ::lms::formatBytes(ownPeakBytes) << " (" << ownPeakBytes
      << " bytes) of @" << func.getName()
      << "'s arguments, results and buffers that cross calls (allocations "
         "of their own, at their peak), which the plan keeps as they are";
}

SmallVector<bool> mlir::lms::resultSlots(const FunctionGraph &fg) {
  const ::lms::Graph &g = fg.getGraph();
  SmallVector<bool> slots;
  Block *block = fg.getBlock();
  ArrayRef<FunctionGraph::ReturnedBuffer> returned = fg.getReturnedBuffers();
  if (!block || returned.empty() || !isa<FunctionOpInterface>(fg.getFunction()))
    return slots;
  for (auto [operand, buffer] :
       llvm::zip_equal(block->getTerminator()->getOperands(), returned)) {
    auto type = dyn_cast<ShapedType>(operand.getType());
    if (!buffer.tensor || !type || !type.hasStaticShape() ||
        g.tensor(*buffer.tensor).bytes == 0) {
      slots.push_back(false);
      continue;
    }
    // A copy made for the return is allocated there.
    if (buffer.copy) {
      slots.push_back(true);
      continue;
    }
    ::lms::OpIndex producer = g.tensor(*buffer.tensor).producer;
    Operation *op = producer >= 0 ? fg.getOp(producer) : nullptr;
    bool own = op && !isa<CallOpInterface>(op) &&
               !op->hasTrait<OpTrait::ConstantLike>() &&
               (op->getNumRegions() == 0 || isa<linalg::LinalgOp>(op)) &&
               static_cast<uint64_t>(type.getNumElements()) *
                       ((type.getElementTypeBitWidth() + 7) / 8) ==
                   g.tensor(*buffer.tensor).bytes;
    slots.push_back(own);
  }
  return slots;
}

namespace mlir {
namespace lms {

/// What ArenaModel computes for one function.
struct ArenaModelResult {
  /// The arena and the most bytes of allocations of their own at once.
  ::lms::ArenaNeed need;
  /// What a caller counts for a call (FunctionGraph::getBoundaryBytes).
  uint64_t boundaryBytes = 0;
  /// Per tensor: whether the lowering makes it an allocation of its own.
  std::vector<uint8_t> own;
  /// Per result of the function: whether its frame variant finds it in a
  /// slot of the caller's arena (resultSlots); and what a call that passes
  /// the slots counts for the callee (ArenaCall::ownExtraBytes).
  SmallVector<bool> slots;
  int64_t ownExtraWithSlotsBytes = 0;
  /// Per op: the frame bytes of a call into a function with a model, or -1.
  std::vector<int64_t> callFrames;
  /// The calls whose results go into slots of the function's arena.
  SmallVector<Operation *> slottedCalls;
};

/// Callees' models; none for a callee on a cycle of calls or whose graph
/// could not be built.
class ArenaModelCache {
public:
  DenseMap<Operation *, std::optional<ArenaModelResult>> results;
  SymbolTableCollection symbolTables;
};

/// The device memory of a function as --lms-carve-arena lowers it: one
/// arena for the buffers the function allocates and frees itself, with a
/// frame for each call to a function of the module that carves buffers
/// (the callee's own arena, nested), allocated for the whole function; and
/// the buffers that cross calls (arguments, results, values passed to
/// callees) and those of dynamic shape as allocations of their own. The
/// function then holds its arena plus the most bytes of those at once.
class ArenaModel {
public:
  explicit ArenaModel(const GraphOptions &options)
      : options(options),
        results(options.arenaModels ? options.arenaModels->results
                                    : ownResults),
        symbolTables(options.arenaModels ? options.arenaModels->symbolTables
                                         : ownSymbolTables) {}

  using Result = ArenaModelResult;

  /// The model of `fg`'s function: its callees' first, callees first, each
  /// once (iteratively: call chains may be thousands deep).
  Result of(const FunctionGraph &fg) {
    prepareCallees(fg.getFunction());
    return compute(fg);
  }

private:
  Result compute(const FunctionGraph &fg) {
    const ::lms::Graph &g = fg.getGraph();
    Result result;
    // Which ops are calls into the module, and what their callees hold.
    std::vector<std::optional<Result>> callees(g.numOps());
    std::vector<uint8_t> crossing(g.numTensors(), 0);
    std::vector<CallOpInterface> callOps(g.numOps());
    for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i) {
      auto call = dyn_cast<CallOpInterface>(fg.getOp(i));
      auto callee = call ? dyn_cast_or_null<FunctionOpInterface>(
                               call.resolveCallableInTable(&symbolTables))
                         : FunctionOpInterface();
      if (!callee || callee.isExternal())
        continue;
      // What the callee owns (and frees) crosses the call; a buffer it
      // borrows stays the caller's, freed by it after the call, so it is
      // carved like the caller's other buffers.
      SmallVector<bool> borrowed = fg.borrowedCallOperands(call);
      for (auto [operand, isBorrowed] :
           llvm::zip_equal(call->getOperands(), borrowed))
        if (!isBorrowed)
          if (std::optional<TensorIndex> t = fg.lookupBuffer(operand))
            crossing[*t] = 1;
      callOps[i] = call;
      auto known = results.find(callee);
      if (known != results.end())
        callees[i] = known->second;
    }
    // With the host-arena convention (`lms.arena_arguments`), the host
    // places the arguments the function owns and frees in the arena it
    // passes; the other arguments stay the host's allocations.
    bool hostArena =
        fg.getFunction()->hasAttr(LMSDialect::getArenaArgumentsAttrName());
    std::vector<uint8_t> hostPlaced(g.numTensors(), 0);
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t) {
      const ::lms::Tensor &tensor = g.tensor(t);
      Value value = fg.getAllocatingValue(t);
      auto shaped = value ? dyn_cast<ShapedType>(value.getType()) : nullptr;
      bool staticShape = shaped && shaped.hasStaticShape();
      if (hostArena && tensor.producer == ::lms::kEntry && !tensor.liveOut &&
          staticShape && tensor.space == ::lms::MemorySpace::Device &&
          isa<BlockArgument>(value) && !crossing[t]) {
        hostPlaced[t] = 1;
        continue;
      }
      if (tensor.producer == ::lms::kEntry || tensor.liveOut || !staticShape)
        crossing[t] = 1;
    }
    // What it returns: the terminator's operands, and the copies it returns
    // instead of a buffer returned twice (the terminator's outputs).
    if (g.numOps() > 0) {
      for (TensorIndex t : g.op(g.numOps() - 1).inputs)
        crossing[t] = 1;
      for (TensorIndex t : g.op(g.numOps() - 1).outputs)
        crossing[t] = 1;
    }
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t)
      if (hostPlaced[t] && crossing[t])
        hostPlaced[t] = 0;

    // A call's results can go into slots of this function's arena when its
    // callee has results to slot (every one it can) and each of them is a
    // buffer of its own that this function frees; they are allocations of
    // their own otherwise. Slots are held from the call's start (the
    // callee may free its arguments before it makes its results), so they
    // are chosen where the need is smaller: from all candidate calls
    // slotted, each in turn unslotted where that lowers it.
    std::vector<SmallVector<TensorIndex, 2>> candidates(g.numOps());
    SmallVector<OpIndex> slottable;
    for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i) {
      const std::optional<Result> &callee = callees[i];
      if (!callOps[i] || !callee || !llvm::is_contained(callee->slots, true))
        continue;
      Operation *call = callOps[i].getOperation();
      if (callee->slots.size() != call->getNumResults())
        continue;
      bool eligible = true;
      for (unsigned k = 0; eligible && k < call->getNumResults(); ++k) {
        if (!callee->slots[k])
          continue;
        Value value = call->getResult(k);
        std::optional<TensorIndex> t = fg.lookupBuffer(value);
        eligible = t && !crossing[*t] && fg.getAllocatingValue(*t) == value &&
                   g.tensor(*t).space == ::lms::MemorySpace::Device;
        if (eligible)
          candidates[i].push_back(*t);
      }
      if (eligible)
        slottable.push_back(i);
      else
        candidates[i].clear();
    }
    result.slots = resultSlots(fg);
    uint64_t slottedBytes = 0;
    std::vector<uint8_t> slotMarks(g.numTensors(), 0);
    for (auto [slot, buffer] : llvm::zip(result.slots, fg.getReturnedBuffers()))
      if (slot && !slotMarks[*buffer.tensor]) {
        slotMarks[*buffer.tensor] = 1;
        slottedBytes += g.tensor(*buffer.tensor).bytes;
      }
    // With the host's arena, the results the function allocates to return
    // them (those a frame variant could take from slots) are in its arena
    // from their allocation to the end, and the host reads them there.
    if (hostArena) {
      for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t)
        if (slotMarks[t]) {
          slotMarks[t] = 0;
          hostPlaced[t] = 1;
          crossing[t] = 0;
        }
      slottedBytes = 0;
    }
    ::lms::PlacementOptions placement;
    placement.alignment = options.alignment;
    result.callFrames.assign(g.numOps(), -1);
    // Which tensors are allocations of their own with the calls of
    // `slotted` taking slots.
    auto evaluateOwn = [&](const std::vector<uint8_t> &slotted,
                           std::vector<uint8_t> &own) {
      own = crossing;
      for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i)
        if (callOps[i])
          for (TensorIndex t : g.op(i).outputs)
            if (!slotted[i] || !llvm::is_contained(candidates[i], t))
              own[t] = 1;
    };
    // The need with the calls of `slotted` taking slots.
    auto evaluate = [&](const std::vector<uint8_t> &slotted,
                        std::vector<uint8_t> *own) -> ::lms::ArenaNeed {
      std::vector<uint8_t> ownOrSlot;
      evaluateOwn(slotted, ownOrSlot);
      std::vector<std::optional<::lms::ArenaCall>> calls(g.numOps());
      for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i) {
        // What an lms.recompute allocates beside its results (a constant
        // its body fetches again, a value between two of its ops) is in
        // the arena: the lowering inlines the recomputation before it
        // carves (--lms-inline-recomputes), so those buffers are carved
        // like the function's others, after its results, and freed when
        // it ends. A block of its transient bytes over its step, as a
        // call's frame; not an allocation of its own beside the arena, as
        // a loop body's buffers are.
        if (g.op(i).transientBytes > 0 && isa<RecomputeOp>(fg.getOp(i))) {
          ::lms::ArenaCall block;
          block.frameBytes = static_cast<uint64_t>(g.op(i).transientBytes);
          calls[i] = std::move(block);
          result.callFrames[i] = g.op(i).transientBytes;
          continue;
        }
        if (!callOps[i])
          continue;
        const std::optional<Result> &callee = callees[i];
        if (!callee)
          continue;
        ::lms::ArenaCall arenaCall;
        arenaCall.frameBytes = callee->need.arenaBytes;
        arenaCall.ownExtraBytes =
            slotted[i] ? callee->ownExtraWithSlotsBytes
                       : static_cast<int64_t>(callee->need.ownPeakBytes) -
                             static_cast<int64_t>(callee->boundaryBytes);
        if (slotted[i])
          arenaCall.slots = candidates[i];
        calls[i] = std::move(arenaCall);
        result.callFrames[i] = static_cast<int64_t>(callee->need.arenaBytes);
      }
      if (own)
        *own = ownOrSlot;
      for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t)
        if (slotMarks[t])
          ownOrSlot[t] = ::lms::kCallerSlot;
        else if (hostPlaced[t])
          ownOrSlot[t] = ::lms::kHostPlaced;
      llvm::Expected<::lms::ArenaNeed> need = ::lms::arenaNeed(
          g, ::lms::referencePlan(g), ownOrSlot, calls, placement);
      if (!need) {
        // Sizes past 2^62 in all: no arena holds them.
        llvm::consumeError(need.takeError());
        ::lms::ArenaNeed none;
        none.arenaBytes = uint64_t(1) << 62;
        return none;
      }
      return *need;
    };
    std::vector<uint8_t> slotted(g.numOps(), 0);
    std::vector<uint8_t> chosenOwn;
    result.need = evaluate(slotted, &chosenOwn);
    if (!slottable.empty()) {
      std::vector<uint8_t> all = slotted;
      for (OpIndex i : slottable)
        all[i] = 1;
      ::lms::ArenaNeed withAll = evaluate(all, nullptr);
      if (withAll.totalBytes() < result.need.totalBytes()) {
        slotted = std::move(all);
        result.need = withAll;
        bool changed = false;
        // At most this many calls are tried one by one (each try places
        // the function's buffers once).
        constexpr size_t kTries = 32;
        for (OpIndex i : ArrayRef<OpIndex>(slottable).take_front(kTries)) {
          slotted[i] = 0;
          ::lms::ArenaNeed without = evaluate(slotted, nullptr);
          if (without.totalBytes() < result.need.totalBytes()) {
            result.need = without;
            changed = true;
          } else {
            slotted[i] = 1;
          }
        }
        // The need of the choice (and which tensors it leaves their own).
        if (changed)
          result.need = evaluate(slotted, &chosenOwn);
        else
          evaluateOwn(slotted, chosenOwn);
      }
    }
    crossing = std::move(chosenOwn);
    result.slottedCalls.clear();
    for (OpIndex i : slottable)
      if (slotted[i])
        result.slottedCalls.push_back(fg.getOp(i));
    result.boundaryBytes = fg.getBoundaryBytes();
    result.ownExtraWithSlotsBytes =
        static_cast<int64_t>(result.need.ownPeakWithSlotsBytes) +
        static_cast<int64_t>(slottedBytes) -
        static_cast<int64_t>(result.boundaryBytes);
    result.own = std::move(crossing);
    return result;
  }

  /// The functions with bodies `func` calls.
  SmallVector<Operation *> calleesOf(Operation *func) {
    SmallVector<Operation *> callees;
    func->walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbolTables));
      if (callee && !callee.isExternal() &&
          !llvm::is_contained(callees, callee))
        callees.push_back(callee);
    });
    return callees;
  }

  /// Computes the models of everything `root` calls, callees first, with an
  /// explicit stack. A callee on a cycle of calls gets none (the lowering
  /// gives it arenas of its own; it is counted by its live bytes).
  void prepareCallees(Operation *root) {
    struct Frame {
      Operation *func;
      SmallVector<Operation *> callees;
      size_t next = 0;
    };
    SmallVector<Frame> stack;
    DenseSet<Operation *> onStack, visited;
    stack.push_back({root, calleesOf(root)});
    onStack.insert(root);
    visited.insert(root);
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next < top.callees.size()) {
        Operation *callee = top.callees[top.next++];
        if (results.count(callee) || onStack.count(callee) ||
            !visited.insert(callee).second)
          continue;
        onStack.insert(callee);
        stack.push_back({callee, calleesOf(callee)});
        continue;
      }
      Operation *func = top.func;
      onStack.erase(func);
      stack.pop_back();
      if (func == root)
        continue;
      std::optional<Result> result;
      {
        // Diagnostics of the callee were given when it was planned.
        ScopedDiagnosticHandler quiet(func->getContext(),
                                      [](Diagnostic &) { return success(); });
        FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
        if (succeeded(graph))
          result = compute(*graph);
      }
      results[func] = result;
    }
  }

  GraphOptions options;
  SymbolTableCollection ownSymbolTables;
  DenseMap<Operation *, std::optional<Result>> ownResults;
  /// ownResults, or the cache the options share.
  DenseMap<Operation *, std::optional<Result>> &results;
  /// ownSymbolTables, or the cache's (a model per function of a module of
  /// thousands built the module's symbol table each).
  SymbolTableCollection &symbolTables;
};

} // namespace lms
} // namespace mlir

std::shared_ptr<ArenaModelCache> mlir::lms::makeArenaModelCache() {
  return std::make_shared<ArenaModelCache>();
}

BudgetedBytes::BudgetedBytes(const GraphOptions &options)
    : options(options), model(std::make_unique<ArenaModel>(options)) {}
BudgetedBytes::~BudgetedBytes() = default;

uint64_t BudgetedBytes::operator()(const FunctionGraph &graph) {
  if (!options.arena)
    return ::lms::evaluateSchedule(graph.getGraph(),
                                   ::lms::EvalOptions{/*recordSteps=*/false})
        .peakBytes;
  return model->of(graph).need.totalBytes();
}

OwnAllocations mlir::lms::ownAllocations(const FunctionGraph &graph,
                                         const GraphOptions &options) {
  ArenaModel model(options);
  ArenaModel::Result result = model.of(graph);
  return OwnAllocations{std::move(result.own), result.need.ownPeakBytes,
                        std::move(result.callFrames)};
}

ArenaSwapGraph mlir::lms::arenaSwapGraph(const FunctionGraph &graph,
                                         const GraphOptions &options) {
  OwnAllocations allocations = ownAllocations(graph, options);
  ::lms::Graph reserved = ::lms::reserveOwnAllocations(
      graph.getGraph(), allocations.own, allocations.peakBytes,
      allocations.callFrames);
  return ArenaSwapGraph{std::move(reserved), std::move(allocations)};
}

std::function<int(::lms::TensorIndex, ::lms::OpIndex, ::lms::OpIndex)>
ArenaSwapGraph::valueAfterGap(const SwapCandidates &candidates) const {
  return [own = allocations.own, &candidates](
             ::lms::TensorIndex t, ::lms::OpIndex a, ::lms::OpIndex b) {
    if (static_cast<size_t>(t) >= own.size() || own[t])
      return -1;
    return candidates.valueAfterGap(t, a, b);
  };
}

ArenaSlots mlir::lms::arenaSlots(const FunctionGraph &graph,
                                 const GraphOptions &options) {
  ArenaModel model(options);
  ArenaModel::Result result = model.of(graph);
  return ArenaSlots{std::move(result.slots), std::move(result.slottedCalls)};
}

uint64_t mlir::lms::budgetedBytes(const FunctionGraph &graph,
                                  const GraphOptions &options) {
  return BudgetedBytes(options)(graph);
}

FailureOr<PlanningContext>
mlir::lms::resolvePlanningContext(Operation *scope, uint64_t alignment,
                                  StringRef dynamicBytes, StringRef device,
                                  StringRef budget, bool arena) {
  PlanningContext context;
  FailureOr<GraphOptions> graphOptions = makeGraphOptions(
      scope, planningAlignment(alignment, arena), dynamicBytes, false);
  if (failed(graphOptions))
    return failure();
  context.graphOptions = *graphOptions;
  context.graphOptions.arena = arena;
  FailureOr<::lms::DeviceSpec> spec = resolveDevice(scope, device);
  if (failed(spec))
    return failure();
  context.device = *spec;
  // Calls are timed on the device the plans are for.
  context.graphOptions.timingDevice = *spec;
  context.budgetOption = budget.empty() ? getGlobalBudget() : budget.str();
  auto module = dyn_cast<ModuleOp>(scope);
  // A pass over the module plans each way a function is called apart, on
  // IR whose bufferization decisions are explicit (undone by
  // finishPlanning when nothing was rewritten).
  if (module &&
      failed(specializeBorrowingCallees(module, context.graphOptions)))
    return failure();
  if (module)
    (void)materializeBufferizationCopies(module);
  if (!module)
    module = scope->getParentOfType<ModuleOp>();
  if (!module)
    return context;
  llvm::Expected<::lms::ByteSize> size =
      context.budgetOption.empty()
          ? llvm::Expected<::lms::ByteSize>(::lms::ByteSize())
          : ::lms::parseByteSize(context.budgetOption);
  if (!size) {
    // Reported at the function that uses it (getBudget).
    llvm::consumeError(size.takeError());
    return context;
  }
  // The module does not change from here to the end of this function: the
  // builds share one cache of callee summaries (each callee summarized
  // once, not once per caller above it), and the module's symbol table and
  // in-place decisions.
  std::shared_ptr<CallSummaryCache> ownCache =
      std::exchange(context.graphOptions.callSummaries,
                    makeCallSummaryCache(ModuleAccess::ReadOnly));
  if (size->isPercent) {
    FailureOr<uint64_t> peak = programPeak(module, context.graphOptions);
    if (failed(peak))
      return failure();
    context.programPeakBytes = *peak;
    context.programBudgetBytes = size->resolve(*peak);
  }
  if (failed(computeCallSiteBudgets(module, context)))
    return failure();
  context.graphOptions.callSummaries = std::move(ownCache);
  return context;
}

LogicalResult mlir::lms::computeCallSiteBudgets(ModuleOp module,
                                                PlanningContext &context) {
  SmallVector<FunctionOpInterface> order = functionsCalleesFirst(module);
  SymbolTableCollection symbols;
  // Per callee: the least it needs anyway, and with an arena the most bytes
  // of its allocations of their own at once.
  struct CalleeBytes {
    uint64_t floor = 0;
    uint64_t own = 0;
  };
  DenseMap<Operation *, CalleeBytes> callees;
  // The module does not change here: the arena models of all its functions
  // are computed once.
  GraphOptions arenaOptions = context.graphOptions;
  bool arena = arenaOptions.arena;
  if (arena && !arenaOptions.arenaModels)
    arenaOptions.arenaModels = makeArenaModelCache();
  // A function's allocations of their own: from its model in the cache
  // (computed with its caller's, callees first), else computed.
  auto ownOf = [&](Operation *func, const FunctionGraph &fg) {
    auto known = arenaOptions.arenaModels->results.find(func);
    if (known == arenaOptions.arenaModels->results.end() || !known->second)
      return ownAllocations(fg, arenaOptions);
    return OwnAllocations{known->second->own, known->second->need.ownPeakBytes,
                          known->second->callFrames};
  };
  // Callers first: a caller's budget is final before its callees'.
  for (FunctionOpInterface func : llvm::reverse(order)) {
    bool hasCalls = false;
    func.walk([&](CallOpInterface) { hasCalls = true; });
    if (!hasCalls)
      continue;
    FailureOr<uint64_t> budget = resolveFunctionBudget(func, context);
    if (failed(budget))
      return failure();
    FailureOr<FunctionGraph> graph =
        FunctionGraph::build(func, context.graphOptions);
    if (failed(graph))
      return failure();
    const ::lms::Graph &g = graph->getGraph();
    ::lms::MemoryProfile profile = ::lms::evaluateSchedule(g);
    // With an arena, what the caller holds at a call is read off the graph
    // its planners plan on: its allocations of their own at their peak
    // beside the arena (from entry), and the arena's tensors live at the
    // call.
    DenseMap<::lms::OpIndex, uint64_t> arenaBefore;
    if (arena) {
      OwnAllocations own = ownOf(func.getOperation(), *graph);
      ::lms::Graph reserved = ::lms::reserveOwnAllocations(
          g, own.own, own.peakBytes, own.callFrames);
      for (auto [index, memory] :
           ::lms::evaluateSchedule(reserved).computeSteps)
        arenaBefore[index] = memory.before;
    }
    for (auto [index, memory] : profile.computeSteps) {
      auto call = dyn_cast<CallOpInterface>(graph->getOp(index));
      if (!call)
        continue;
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbols));
      if (!callee || callee.isExternal() || callee == func)
        continue;
      // What the caller holds across the call besides its operands (the
      // callee counts those from its entry).
      uint64_t operands = 0;
      for (::lms::TensorIndex t : g.op(index).inputs)
        if (g.tensor(t).space == ::lms::MemorySpace::Device)
          operands += g.tensor(t).bytes;
      uint64_t across = memory.before > operands ? memory.before - operands : 0;
      auto [calleeIt, fresh] =
          callees.try_emplace(callee.getOperation(), CalleeBytes{});
      if (fresh) {
        FailureOr<FunctionGraph> calleeGraph =
            FunctionGraph::build(callee, context.graphOptions);
        if (failed(calleeGraph))
          return failure();
        calleeIt->second.floor =
            ::lms::rematLowerBound(calleeGraph->getGraph());
        if (arena)
          calleeIt->second.own =
              ownOf(callee.getOperation(), *calleeGraph).peakBytes;
      }
      const CalleeBytes &calleeBytes = calleeIt->second;
      if (arena) {
        // The callee's budget bounds its own allocations (its arguments and
        // results among them, which the caller holds as allocations of its
        // own or in its arena) plus its frame; the caller adds its
        // allocations of their own beyond the callee's and its arena's
        // other tensors live at the call (regression: --lms-plan of IREE's
        // MNIST step at 1310000 bytes left the callee at 1309952 and its
        // driver's arena, 256 bytes more, over the budget).
        auto before = arenaBefore.find(index);
        if (before != arenaBefore.end())
          across = std::max(across, before->second > calleeBytes.own
                                        ? before->second - calleeBytes.own
                                        : 0);
      }
      uint64_t left = *budget > across ? *budget - across : 0;
      // Never below what the callee needs anyway: there the caller must
      // make room around the call instead (and says so if it cannot).
      left = std::min(*budget, std::max(left, calleeBytes.floor));
      auto [it, inserted] =
          context.callSiteBudgets.try_emplace(callee.getOperation(), left);
      if (!inserted)
        it->second = std::min(it->second, left);
    }
  }
  return success();
}

FailureOr<uint64_t> mlir::lms::programPeak(ModuleOp module,
                                           const GraphOptions &options) {
  SmallVector<FunctionOpInterface> functions = functionsCalleesFirst(module);
  DenseSet<Operation *> called;
  SymbolTableCollection symbols;
  for (FunctionOpInterface func : functions)
    func.walk([&](CallOpInterface call) {
      if (Operation *callee = call.resolveCallableInTable(&symbols))
        if (callee != func.getOperation())
          called.insert(callee);
    });
  uint64_t peak = 0;
  for (FunctionOpInterface func : functions) {
    // Entry functions: those no other function calls (all of them in a
    // module whose functions all call each other).
    if (called.contains(func.getOperation()) &&
        called.size() < functions.size())
      continue;
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
    if (failed(graph))
      return failure();
    FailureOr<uint64_t> funcPeak = peakWithoutLMS(func, options, *graph);
    if (failed(funcPeak))
      return failure();
    peak = std::max(peak, *funcPeak);
  }
  return peak;
}

FailureOr<uint64_t>
mlir::lms::resolveFunctionBudget(FunctionOpInterface func,
                                 const PlanningContext &context) {
  FailureOr<uint64_t> own = [&]() -> FailureOr<uint64_t> {
    // A percentage of the program, resolved once; a function's own
    // `lms.budget` still wins.
    if (context.programBudgetBytes &&
        !func->hasAttr(LMSDialect::getBudgetAttrName()))
      return *context.programBudgetBytes;
    FailureOr<FunctionGraph> graph =
        FunctionGraph::build(func, context.graphOptions);
    if (failed(graph))
      return failure();
    return resolveBudgetBytes(func, context.budgetOption, context.device,
                              context.graphOptions, *graph);
  }();
  if (failed(own))
    return failure();
  auto it = context.callSiteBudgets.find(func.getOperation());
  return it == context.callSiteBudgets.end() ? *own
                                             : std::min(*own, it->second);
}

/// The function a borrowing copy was made from: its name without the
/// `_lms_borrow_...` suffix.
static StringRef baseName(StringRef name) {
  size_t at = name.rfind("_lms_borrow_");
  return at == StringRef::npos ? name : name.take_front(at);
}

LogicalResult
mlir::lms::specializeBorrowingCallees(ModuleOp module,
                                      const GraphOptions &moduleOptions) {
  // One cache for the builds here: the only changes are new copies of
  // callees (added through its symbol table) and calls pointed at them
  // (summaries of their callers forgotten).
  GraphOptions options = moduleOptions;
  options.callSummaries = makeCallSummaryCache();
  options.arenaModels = nullptr;
  SymbolTableCollection &symbolTables = getSymbolTables(*options.callSummaries);
  SymbolTable &symbols = symbolTables.getSymbolTable(module);
  // Callees first: a function's calls are pointed at their copies before
  // its callers summarize it.
  SmallVector<FunctionOpInterface> worklist = functionsCalleesFirst(module);
  for (size_t i = 0; i < worklist.size(); ++i) {
    FunctionOpInterface func = worklist[i];
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
    if (failed(graph))
      return failure();
    // Each call with the graph of its block.
    SmallVector<std::pair<CallOpInterface, SmallVector<bool>>> calls;
    DenseMap<Block *, std::unique_ptr<FunctionGraph>> nested;
    WalkResult walk = func.walk([&](CallOpInterface call) {
      Block *block = call->getBlock();
      const FunctionGraph *fg = &*graph;
      if (block != graph->getBlock()) {
        std::unique_ptr<FunctionGraph> &inner = nested[block];
        if (!inner) {
          FailureOr<FunctionGraph> built =
              FunctionGraph::buildNested(*block, options);
          if (failed(built))
            return WalkResult::interrupt();
          inner = std::make_unique<FunctionGraph>(std::move(*built));
        }
        fg = inner.get();
      }
      calls.push_back({call, fg->borrowedCallOperands(call)});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (auto &[call, borrowed] : calls) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbolTables));
      if (!callee || callee.isExternal())
        continue;
      // Only buffers can be borrowed.
      std::string suffix;
      for (auto [operand, isBorrowed] :
           llvm::zip(call->getOperands(), borrowed))
        suffix += isBorrowed && isa<TensorType, MemRefType>(operand.getType())
                      ? 'b'
                      : 'o';
      StringRef base = baseName(callee.getName());
      std::string name = suffix.find('b') == std::string::npos
                             ? base.str()
                             : (base + "_lms_borrow_" + suffix).str();
      if (name == callee.getName())
        continue;
      auto target = symbols.lookup<FunctionOpInterface>(name);
      if (!target) {
        auto original = symbols.lookup<FunctionOpInterface>(base);
        if (!original)
          return call->emitOpError("calls a copy of @")
                 << base << " whose original is gone";
        target = cast<FunctionOpInterface>(original->clone());
        target.setName(name);
        SymbolTable::setSymbolVisibility(target,
                                         SymbolTable::Visibility::Private);
        for (auto [index, c] : llvm::enumerate(suffix))
          if (c == 'b')
            target.setArgAttr(index, kBorrowedArgAttr,
                              UnitAttr::get(target.getContext()));
        symbols.insert(target,
                       std::next(Block::iterator(original.getOperation())));
        worklist.push_back(target);
      }
      call.setCalleeFromCallable(
          FlatSymbolRefAttr::get(target.getContext(), name));
      forgetCallSummaries(*options.callSummaries);
    }
  }
  return success();
}

LogicalResult mlir::lms::materializeBufferizationCopies(ModuleOp module) {
  SmallVector<Operation *> functions;
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      functions.push_back(func);
  InPlaceDecisions decisions = getBufferizationDecisions(module, functions);
  if (decisions.empty())
    return failure();
  OpBuilder builder(module.getContext());
  auto copyOf = [&](Value value, Location loc) {
    auto type = cast<RankedTensorType>(value.getType());
    auto alloc = bufferization::AllocTensorOp::create(
        builder, loc, type, ValueRange{}, /*copy=*/value);
    alloc->setAttr(kMaterializedCopyAttr, builder.getUnitAttr());
    return alloc;
  };
  for (auto &[op, inPlace] : decisions) {
    for (auto [index, decision] : llvm::enumerate(inPlace)) {
      if (decision != 0)
        continue;
      OpOperand &operand = op->getOpOperand(index);
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !type.hasStaticShape())
        continue;
      // A destination (or a loop's init): bufferization copies the operand
      // before the op. A view whose source it does not share: it copies
      // the view after the op. Other out-of-place operands (values a
      // terminator or a call passes on) are left to bufferization.
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      auto loop = dyn_cast<LoopLikeOpInterface>(op);
      bool init = (dps && dps.isDpsInit(&operand)) ||
                  (loop && llvm::is_contained(loop.getInitsMutable(), operand));
      // A constant given as a destination the op overwrites without
      // reading: bufferization allocates without copying (a constant is
      // never written in place, so the decision cannot change), and a copy
      // here would read it.
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      Operation *def = operand.get().getDefiningOp();
      if (init && linalgOp && def && isHostConstant(def) &&
          !linalgOp.payloadUsesValueFromOperand(&operand))
        continue;
      if (init) {
        builder.setInsertionPoint(op);
        operand.set(copyOf(operand.get(), op->getLoc()));
        continue;
      }
      if (isViewLikeOp(op) && op->getNumResults() == 1 && index == 0) {
        Value view = op->getResult(0);
        auto viewType = dyn_cast<RankedTensorType>(view.getType());
        if (!viewType || !viewType.hasStaticShape())
          continue;
        builder.setInsertionPointAfter(op);
        auto copy = copyOf(view, op->getLoc());
        view.replaceAllUsesExcept(copy.getResult(), copy);
      }
    }
  }
  return success();
}

void mlir::lms::finishPlanning(ModuleOp module, bool reordered) {
  // A copy materialized for an op that a rewrite removed (a split region
  // whose values nobody read) is read by nothing: bufferization drops it,
  // and the analysis would count it (regression: property run seed 110,
  // program 130).
  SmallVector<Operation *> unread;
  module.walk([&](bufferization::AllocTensorOp alloc) {
    if (alloc->hasAttr(kMaterializedCopyAttr) && alloc->use_empty())
      unread.push_back(alloc);
  });
  for (Operation *alloc : unread)
    alloc->erase();
  bool rewritten = reordered;
  module.walk([&](Operation *op) {
    if (isa_and_nonnull<LMSDialect>(op->getDialect())) {
      rewritten = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (rewritten)
    return;
  // With the host's arena the planners measured the explicit copies: a
  // result bufferization copies (a loop's result) is then a buffer the
  // function allocates to return it, in the host's arena, where folded it
  // is the loop's own buffer, an allocation of its own beside the arena.
  // The verdict "fits" is for the IR with the copies, so they stay
  // (regression: property run --host-arena --loops, seed 3, program 77).
  bool hostArena = false;
  for (auto func : module.getOps<FunctionOpInterface>())
    hostArena |= func->hasAttr(LMSDialect::getArenaArgumentsAttrName());
  if (hostArena)
    return;
  foldMaterializedCopies(module);
  stripBorrowingCopies(module);
}
