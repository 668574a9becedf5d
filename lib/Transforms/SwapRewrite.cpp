//===- SwapRewrite.cpp - Apply a swap plan to the IR ----------------------===//

#include "LMS/Transforms/SwapRewrite.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "LMS/Analysis/CostModel.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::SwapDecision;
using ::lms::TensorIndex;

void mlir::lms::rewriteWithSwaps(const FunctionGraph &graph,
                                 const SwapCandidates &candidates,
                                 const ::lms::SwapPlan &plan) {
  const std::vector<SwapDecision> &decisions = plan.decisions;
  size_t numDecisions = decisions.size();
  OpIndex numOps = static_cast<OpIndex>(graph.getGraph().numOps());
  Block &block = *graph.getBlock();

  // Ops at each position p (before original op p), as in applySwapPlan:
  // swap-outs, then waits, then swap-ins, each by tensor index.
  std::vector<std::vector<size_t>> outs(numOps), waits(numOps), ins(numOps);
  for (size_t i = 0; i < numDecisions; ++i) {
    const SwapDecision &d = decisions[i];
    if (!d.reuseHostCopy) {
      outs[d.swapOutAfter + 1].push_back(i);
      if (d.releaseAfter != d.swapOutAfter)
        waits[d.releaseAfter + 1].push_back(i);
    }
    ins[d.swapInBefore].push_back(i);
  }
  auto byTensor = [&](size_t a, size_t b) {
    return decisions[a].tensor < decisions[b].tensor;
  };
  // For a reuse, the decision whose host copy it reads: the previous decision
  // of the same tensor.
  std::vector<size_t> previous(numDecisions, numDecisions);
  {
    std::map<TensorIndex, std::vector<size_t>> perTensor;
    for (size_t i = 0; i < numDecisions; ++i)
      perTensor[decisions[i].tensor].push_back(i);
    for (auto &[t, list] : perTensor) {
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        return decisions[a].lastUse < decisions[b].lastUse;
      });
      for (size_t k = 1; k < list.size(); ++k)
        previous[list[k]] = list[k - 1];
    }
  }

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

  for (OpIndex p = 0; p < numOps; ++p) {
    Operation *anchor = graph.getInsertionAnchor(p);
    OpBuilder builder(anchor);
    std::sort(outs[p].begin(), outs[p].end(), byTensor);
    std::sort(waits[p].begin(), waits[p].end(), byTensor);
    std::sort(ins[p].begin(), ins[p].end(), byTensor);
    for (size_t i : outs[p]) {
      const SwapDecision &d = decisions[i];
      int id = candidates.valueAfterGap(d.tensor, d.lastUse, d.nextUse);
      Value value = currentOf(candidates.getValue(id));
      offloaded[i] = value;
      auto type = cast<RankedTensorType>(value.getType());
      Location loc = value.getLoc();
      handles[i] = SwapOutOp::create(builder, loc, HostType::get(type), value)
                       .getResult();
    }
    for (size_t i : waits[p])
      SwapWaitOp::create(builder, handles[i].getLoc(), handles[i]);
    for (size_t i : ins[p]) {
      const SwapDecision &d = decisions[i];
      int id = candidates.valueAfterGap(d.tensor, d.lastUse, d.nextUse);
      Value original = candidates.getValue(id);
      Value value = currentOf(original);
      Value fetched;
      if (graph.getGraph().tensor(d.tensor).hostBacked && d.reuseHostCopy) {
        // A constant comes back from its host data: the constant again, in
        // an lms.recompute so that CSE does not merge it with the original.
        Operation *constant = original.getDefiningOp();
        auto recompute = RecomputeOp::create(builder, constant->getLoc(),
                                             TypeRange{value.getType()},
                                             ValueRange{});
        OpBuilder inner = OpBuilder::atBlockEnd(&recompute.getBody().front());
        Operation *clone = inner.clone(*constant);
        YieldOp::create(inner, constant->getLoc(), clone->getResults());
        fetched = recompute.getResult(0);
      } else {
        if (d.reuseHostCopy)
          handles[i] = handles[previous[i]];
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
      // swap-in: the chain ends at any incarnation of the value.
      const llvm::SmallPtrSet<Value, 4> &bases = incarnations[original];
      for (Value view : candidates.viewsAfterGap(d.tensor, d.lastUse,
                                                 d.nextUse)) {
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
          clone = builder.clone(*op, mapping);
          // Which op it copies: its position in the original function.
          std::optional<OpIndex> position = graph.lookupOp(op);
          clone->setAttr(kRederivedAttr,
                         builder.getI64IntegerAttr(position ? *position : -1));
        }
        Value rederived = clone->getResult(0);
        chain.front()->getResult(0).replaceUsesWithIf(rederived,
                                                      [&](OpOperand &use) {
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
