//===- Deallocate.cpp - Free buffers after their last use -----------------===//
//
// The --lms-deallocate pass: deallocation driven by the memory analyses, so
// that the lowered program holds exactly the buffers the planners counted.
// Ownership rules are in the pass description (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSDEALLOCATE
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::TensorIndex;

namespace {

/// Whether the value that allocates a buffer makes it owned by its block.
bool isOwnedAllocation(Value value, bool functionBody) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return functionBody && isa<BaseMemRefType>(arg.getType());
  Operation *op = value.getDefiningOp();
  return isa<memref::AllocOp, SwapInOp, bufferization::CloneOp,
             CallOpInterface>(op);
}

struct LMSDeallocatePass
    : public mlir::lms::impl::LMSDeallocateBase<LMSDeallocatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(specializeBorrowingCallees(module, GraphOptions())))
      return signalPassFailure();
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      if (failed(deallocateFunction(func)))
        return signalPassFailure();
    }
  }

  /// Each result a function returns becomes a buffer its caller owns and
  /// frees: a buffer returned twice (a value and a view of it) or an
  /// argument the function borrows is returned as a copy, so that no buffer
  /// is freed twice.
  LogicalResult separateReturnedBuffers(FunctionOpInterface func) {
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func);
    if (failed(graph))
      return failure();
    Block &body = *graph->getBlock();
    Operation *terminator = body.empty() ? nullptr : &body.back();
    if (!terminator || !terminator->hasTrait<OpTrait::ReturnLike>())
      return success();
    const ::lms::Graph &g = graph->getGraph();
    llvm::SmallDenseSet<TensorIndex> returned;
    for (OpOperand &operand : terminator->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      std::optional<TensorIndex> t = graph->lookupBuffer(operand.get());
      if (!type || !t)
        continue;
      bool borrowed =
          g.tensor(*t).producer == ::lms::kEntry && g.tensor(*t).liveOut;
      if (returned.insert(*t).second && !borrowed)
        continue;
      OpBuilder builder(terminator);
      Location loc = terminator->getLoc();
      SmallVector<Value> dynamicSizes;
      for (int64_t dim = 0; dim < type.getRank(); ++dim)
        if (type.isDynamicDim(dim))
          dynamicSizes.push_back(
              memref::DimOp::create(builder, loc, operand.get(), dim));
      auto copyType = MemRefType::get(type.getShape(), type.getElementType());
      Value copy =
          memref::AllocOp::create(builder, loc, copyType, dynamicSizes);
      memref::CopyOp::create(builder, loc, operand.get(), copy);
      if (copyType != type)
        copy = memref::CastOp::create(builder, loc, type, copy);
      operand.set(copy);
    }
    return success();
  }

  LogicalResult deallocateFunction(FunctionOpInterface func) {
    if (failed(separateReturnedBuffers(func)))
      return failure();
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func);
    if (failed(graph))
      return failure();
    if (failed(deallocateBlock(*graph, /*functionBody=*/true)))
      return failure();
    // Blocks nested in the function's ops, innermost last.
    SmallVector<Block *> nested;
    func.getFunctionBody().front().walk([&](Operation *op) {
      if (isa<linalg::LinalgOp>(op))
        return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (llvm::any_of(block, [](Operation &inner) {
                return isa<memref::AllocOp, SwapInOp, bufferization::CloneOp,
                           CallOpInterface>(inner);
              }))
            nested.push_back(&block);
    });
    for (Block *block : nested) {
      FailureOr<FunctionGraph> inner = FunctionGraph::buildNested(*block);
      if (failed(inner))
        return failure();
      if (failed(deallocateBlock(*inner, /*functionBody=*/false)))
        return failure();
    }
    return success();
  }

  LogicalResult deallocateBlock(const FunctionGraph &graph, bool functionBody) {
    const ::lms::Graph &g = graph.getGraph();
    Block &block = *graph.getBlock();
    OpIndex numOps = static_cast<OpIndex>(g.numOps());
    // Buffers released by a swap-out (at its wait) or leaving the block.
    llvm::SmallDenseSet<TensorIndex> notFreed;
    for (Operation &op : block) {
      if (auto swapOut = dyn_cast<SwapOutOp>(op))
        if (std::optional<TensorIndex> t =
                graph.lookupBuffer(swapOut.getSource()))
          notFreed.insert(*t);
      // A buffer of this block yielded out of a nested region may become
      // the region op's result: it is not freed here (the result is not
      // tracked either, so it leaks rather than being freed twice).
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (Operation *terminator = inner.empty() ? nullptr : &inner.back())
            if (terminator->hasTrait<OpTrait::IsTerminator>())
              for (Value yielded : terminator->getOperands())
                if (yielded.getParentBlock() == &block)
                  if (std::optional<TensorIndex> t =
                          graph.lookupBuffer(yielded))
                    notFreed.insert(*t);
      // A call owns the buffers passed at their last use (the callee frees
      // them); the caller frees the ones it lends, and those the callee
      // returns (an owned argument returned as a result is the caller's
      // again).
      if (auto call = dyn_cast<CallOpInterface>(op))
        for (auto [operand, borrowed] :
             llvm::zip(op.getOperands(), graph.borrowedCallOperands(call)))
          if (isa<MemRefType>(operand.getType()) && !borrowed)
            if (std::optional<TensorIndex> t = graph.lookupBuffer(operand))
              if (llvm::none_of(op.getResults(), [&](Value result) {
                    return graph.lookupBuffer(result) == t;
                  }))
                notFreed.insert(*t);
    }
    if (numOps > 0)
      for (TensorIndex t : g.op(numOps - 1).inputs)
        notFreed.insert(t);

    for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t) {
      Value root = graph.getAllocatingValue(t);
      if (!isa<MemRefType>(root.getType()) || notFreed.count(t) ||
          !isOwnedAllocation(root, functionBody) || g.tensor(t).liveOut)
        continue;
      OpIndex last = g.lastUse(t);
      OpBuilder builder(root.getContext());
      if (root.getDefiningOp() &&
          root.getDefiningOp()->hasAttr(kResidentConstantsAttr) &&
          block.mightHaveTerminator())
        // A resident constant's device copy lives to the end.
        builder.setInsertionPoint(block.getTerminator());
      else if (last == ::lms::kEntry)
        builder.setInsertionPointToStart(&block);
      else
        builder.setInsertionPointAfter(graph.getOp(last));
      memref::DeallocOp::create(builder, root.getLoc(), root);
    }
    return success();
  }
};

} // namespace
