//===- SwapCandidates.cpp - Which buffers the IR can offload --------------===//

#include "LMS/Analysis/SwapCandidates.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;
using namespace mlir::lms;
using ::lms::kEntry;
using ::lms::OpIndex;
using ::lms::TensorIndex;

SwapCandidates::SwapCandidates(const FunctionGraph &graph) {
  aliasesOf.resize(graph.getGraph().numTensors());
  Block &block = *graph.getBlock();
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
    aliasesOf[*t].push_back(static_cast<int>(values.size()));
    values.push_back({value, def, lastUse});
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

int SwapCandidates::valueAfterGap(TensorIndex t, OpIndex a, OpIndex b) const {
  if (t < 0 || static_cast<size_t>(t) >= aliasesOf.size())
    return -1;
  int found = -1;
  for (int id : aliasesOf[t]) {
    const Alias &alias = values[id];
    if (alias.def > a || alias.lastUse < b)
      continue;
    if (found >= 0)
      return -1; // Two values of the buffer cross the gap.
    found = id;
  }
  return found;
}
