//===- SwapCandidates.cpp - Which buffers the IR can offload --------------===//

#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Analysis/CostModel.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lms;
using ::lms::kEntry;
using ::lms::OpIndex;
using ::lms::TensorIndex;

SwapCandidates::SwapCandidates(const FunctionGraph &graph) {
  const ::lms::Graph &g = graph.getGraph();
  aliasesOf.resize(g.numTensors());
  updatesOf.resize(g.numTensors());
  for (OpIndex k = 0; k < static_cast<OpIndex>(g.numOps()); ++k)
    for (TensorIndex t : g.op(k).updates)
      if (updatesOf[t].empty() || updatesOf[t].back() != k)
        updatesOf[t].push_back(k);
  Block &block = *graph.getBlock();
  DenseMap<Value, int> idOf;
  auto record = [&](Value value, OpIndex def) {
    std::optional<TensorIndex> t = graph.lookupBuffer(value);
    if (!t || !isa<RankedTensorType>(value.getType()))
      return;
    OpIndex lastUse = kEntry;
    for (OpOperand &use : value.getUses()) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      if (!top)
        continue;
      if (std::optional<OpIndex> index = graph.lookupOp(top))
        lastUse = std::max(lastUse, *index);
    }
    int viewOf = -1;
    if (Operation *defOp = value.getDefiningOp())
      if (isViewLikeOp(defOp) && defOp->getNumOperands() > 0 &&
          defOp->getNumResults() == 1) {
        auto it = idOf.find(defOp->getOperand(0));
        if (it != idOf.end())
          viewOf = it->second;
      }
    idOf[value] = static_cast<int>(values.size());
    aliasesOf[*t].push_back(static_cast<int>(values.size()));
    values.push_back({value, def, lastUse, viewOf});
  };
  for (BlockArgument arg : block.getArguments())
    record(arg, kEntry);
  for (Operation &op : block) {
    std::optional<OpIndex> index = graph.lookupOp(&op);
    if (!index)
      continue;
    for (Value result : op.getResults())
      record(result, *index);
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      for (OpOperand &init : dps.getDpsInitsMutable())
        if (std::optional<TensorIndex> t = graph.lookupBuffer(init.get()))
          initsAt.insert({*index, *t});
  }
}

bool SwapCandidates::canReuseAfter(TensorIndex t, OpIndex a) const {
  return !initsAt.count({a, t});
}

SmallVector<int> SwapCandidates::crossing(TensorIndex t, OpIndex a,
                                          OpIndex b) const {
  SmallVector<int> ids;
  if (t < 0 || static_cast<size_t>(t) >= aliasesOf.size())
    return ids;
  for (int id : aliasesOf[t]) {
    const Alias &alias = values[id];
    if (alias.def <= a && alias.lastUse >= b)
      ids.push_back(id);
  }
  return ids;
}

bool SwapCandidates::isStale(TensorIndex t, int id, OpIndex a) const {
  // An op after the value's definition, up to the gap, wrote the buffer in
  // place: bufferization did so only because the value is not read again
  // (its later uses are destinations that the ops overwrite unread).
  const std::vector<OpIndex> &writes = updatesOf[t];
  auto next = std::upper_bound(writes.begin(), writes.end(), values[id].def);
  return next != writes.end() && *next <= a;
}

bool SwapCandidates::isViewOf(int id, int source) const {
  // Through the sources recorded from the IR as it was when analysed (the
  // rewrite replaces operands as it goes).
  while (id != source) {
    id = values[id].viewOf;
    if (id < 0)
      return false;
  }
  return true;
}

int SwapCandidates::valueAfterGap(TensorIndex t, OpIndex a, OpIndex b) const {
  SmallVector<int> ids = crossing(t, a, b);
  if (ids.empty())
    return -1;
  // A value whose buffer was overwritten in place before the gap no longer
  // holds the buffer's contents: copying it out would make bufferization
  // keep its old contents in a copy (and bring back stale data).
  if (llvm::any_of(ids, [&](int id) { return isStale(t, id, a); }))
    return -1;
  if (ids.size() == 1)
    return ids.front();
  // One value the others are views of.
  for (int root : ids)
    if (llvm::all_of(ids, [&](int id) { return isViewOf(id, root); }))
      return root;
  return -1;
}

SmallVector<Value> SwapCandidates::viewsAfterGap(TensorIndex t, OpIndex a,
                                                 OpIndex b) const {
  SmallVector<Value> views;
  int root = valueAfterGap(t, a, b);
  if (root < 0)
    return views;
  for (int id : crossing(t, a, b))
    if (id != root)
      views.push_back(values[id].value);
  return views;
}
