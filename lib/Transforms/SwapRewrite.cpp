//===- SwapRewrite.cpp - Apply a swap plan to the IR ----------------------===//

#include "LMS/Transforms/SwapRewrite.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "LMS/Analysis/CostModel.h"
#include "LMS/Transforms/Strip.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::SwapDecision;
using ::lms::TensorIndex;

Operation *mlir::lms::originalIdScope(Operation *op) {
  while (!op->hasTrait<OpTrait::IsIsolatedFromAbove>() && op->getParentOp())
    op = op->getParentOp();
  return op;
}

mlir::lms::OriginalIds::OriginalIds(Operation *scope) {
  originalIdScope(scope)->walk([&](Operation *op) {
    for (StringRef name : {kOriginalAttr, kRederivedAttr})
      if (auto id = op->getAttrOfType<IntegerAttr>(name))
        next = std::max(next, id.getInt() + 1);
  });
}

void mlir::lms::OriginalIds::markCopy(Operation *clone, Operation *copied) {
  Builder builder(clone->getContext());
  auto id = copied->getAttrOfType<IntegerAttr>(kRederivedAttr);
  if (!id)
    id = copied->getAttrOfType<IntegerAttr>(kOriginalAttr);
  if (!id) {
    id = builder.getI64IntegerAttr(next++);
    copied->setAttr(kOriginalAttr, id);
  }
  // (A clone of an op that already had its id would carry it too.)
  clone->removeAttr(kOriginalAttr);
  clone->setAttr(kRederivedAttr, id);
}

void mlir::lms::rewriteWithSwaps(const FunctionGraph &graph,
                                 const SwapCandidates &candidates,
                                 const ::lms::SwapPlan &plan) {
  const std::vector<SwapDecision> &decisions = plan.decisions;
  size_t numDecisions = decisions.size();
  OpIndex numOps = static_cast<OpIndex>(graph.getGraph().numOps());
  Block &block = *graph.getBlock();

  // The swap ops at each position and the host copy each reuse reads, as
  // the graph's rewrite (applySwapPlan) inserts them: one description.
  ::lms::SwapEvents events = ::lms::swapEvents(graph.getGraph(), plan);

  // The ids that link each re-derived op to the op it copies (what
  // --lms-strip merges it back into).
  OriginalIds originalIds(block.getParentOp());

  // The value each decision offloads, through earlier replacements.
  DenseMap<Value, Value> current;
  auto currentOf = [&](Value v) {
    auto it = current.find(v);
    return it == current.end() ? v : it->second;
  };
  // Every value a buffer's offloaded value has been (itself, swap-ins).
  DenseMap<Value, llvm::SmallPtrSet<Value, 4>> incarnations;
  std::vector<Value> handles(numDecisions);
  std::vector<Value> offloaded(numDecisions);

  // A swap-in brings the value back for its next use: the plan never puts
  // one after the last op.
  assert(events.atPosition[numOps].empty() && "swap op after the last op");
  for (OpIndex p = 0; p < numOps; ++p) {
    Operation *anchor = graph.getInsertionAnchor(p);
    OpBuilder builder(anchor);
    for (::lms::SwapEvent event : events.atPosition[p]) {
      size_t i = event.decision;
      const SwapDecision &d = decisions[i];
      if (event.kind == ::lms::OpKind::SwapOut) {
        int id = candidates.valueAfterGap(d.tensor, d.lastUse, d.nextUse);
        Value value = currentOf(candidates.getValue(id));
        offloaded[i] = value;
        auto type = cast<RankedTensorType>(value.getType());
        Location loc = value.getLoc();
        handles[i] = SwapOutOp::create(builder, loc, HostType::get(type), value)
                         .getResult();
        continue;
      }
      if (event.kind == ::lms::OpKind::SwapWait) {
        SwapWaitOp::create(builder, handles[i].getLoc(), handles[i]);
        continue;
      }
      int id = candidates.valueAfterGap(d.tensor, d.lastUse, d.nextUse);
      Value original = candidates.getValue(id);
      Value value = currentOf(original);
      Value fetched;
      if (graph.getGraph().tensor(d.tensor).hostBacked && d.reuseHostCopy) {
        // A constant comes back from its host data: the constant again (and
        // the views of it that the gap's value is), in an lms.recompute so
        // that CSE does not merge it with the original. Each clone records
        // the op it copies, for --lms-strip.
        // The views from the value down to the constant (or to an earlier
        // fetch of it, which the views may read by now).
        Value root = graph.getAllocatingValue(d.tensor);
        SmallVector<Operation *> views;
        Value base = original;
        while (base != root) {
          Operation *def = base.getDefiningOp();
          if (!def || !isViewLikeOp(def) || def->getNumOperands() == 0)
            break;
          views.push_back(def);
          base = def->getOperand(0);
        }
        auto recompute =
            RecomputeOp::create(builder, root.getLoc(),
                                TypeRange{original.getType()}, ValueRange{});
        OpBuilder inner = OpBuilder::atBlockEnd(&recompute.getBody().front());
        Operation *clone = inner.clone(*root.getDefiningOp());
        originalIds.markCopy(clone, root.getDefiningOp());
        IRMapping mapping;
        mapping.map(base, clone->getResult(0));
        for (Operation *view : llvm::reverse(views)) {
          clone = inner.clone(*view, mapping);
          originalIds.markCopy(clone, view);
        }
        YieldOp::create(inner, root.getLoc(), clone->getResults());
        fetched = recompute.getResult(0);
      } else {
        if (d.reuseHostCopy)
          handles[i] = handles[events.copyOf[i]];
        fetched = SwapInOp::create(builder, anchor->getLoc(), value.getType(),
                                   handles[i])
                      .getResult();
      }
      // The uses from the next use on read the swapped-in value.
      value.replaceUsesWithIf(fetched, [&](OpOperand &use) {
        Operation *top = block.findAncestorOpInBlock(*use.getOwner());
        if (!top)
          return false;
        std::optional<OpIndex> index = graph.lookupOp(top);
        return index && *index >= d.nextUse;
      });
      current[original] = fetched;
      incarnations[original].insert(value);
      // Views of the value read after the gap are re-derived from the
      // swapped-in value (marked, so that --lms-strip can merge them back).
      // A view made after an earlier swap-in of the same value reads that
      // swap-in: the chain ends at any incarnation of the value. They go
      // right before the next use, not at the prefetch point: the first
      // reader of a swap-in is where the lowered program waits for its
      // copy, which the plan puts at the next use.
      OpBuilder viewBuilder(graph.getInsertionAnchor(d.nextUse));
      const llvm::SmallPtrSet<Value, 4> &bases = incarnations[original];
      for (Value view :
           candidates.viewsAfterGap(d.tensor, d.lastUse, d.nextUse)) {
        SmallVector<Operation *> chain;
        Value v = currentOf(view);
        while (v != original && !bases.contains(v)) {
          Operation *def = v.getDefiningOp();
          if (!def || !isViewLikeOp(def) || def->getNumOperands() == 0) {
            chain.clear();
            break;
          }
          chain.push_back(def);
          v = def->getOperand(0);
        }
        if (chain.empty())
          continue;
        IRMapping mapping;
        mapping.map(chain.back()->getOperand(0), fetched);
        Operation *clone = nullptr;
        for (Operation *op : llvm::reverse(chain)) {
          clone = viewBuilder.clone(*op, mapping);
          // Which op it copies; a copy of a view re-derived at an earlier
          // swap-in copies the view that one copies (else --lms-strip would
          // merge it with any equal view, and the views chained on it would
          // match none).
          originalIds.markCopy(clone, op);
        }
        Value rederived = clone->getResult(0);
        chain.front()->getResult(0).replaceUsesWithIf(
            rederived, [&](OpOperand &use) {
              Operation *top = block.findAncestorOpInBlock(*use.getOwner());
              if (!top)
                return false;
              std::optional<OpIndex> index = graph.lookupOp(top);
              return index && *index >= d.nextUse;
            });
        current[view] = rederived;
      }
    }
  }
}
