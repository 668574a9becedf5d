//===- Strip.cpp - Undo LMS rewriting -------------------------------------===//
//
// The --lms-strip pass: swap pairs become the original value, recomputations
// are inlined and merged with the original computation where it dominates.
//
//===----------------------------------------------------------------------===//

#include "LMS/Transforms/Strip.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSSTRIP
#define GEN_PASS_DEF_LMSINLINERECOMPUTES
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

/// Returns an op equivalent to `op` that properly dominates it, or null.
/// Candidates are the other users of its first operand, or, for an op without
/// operands, the ops before it in its block and the enclosing blocks.
Operation *findDominatingEquivalent(Operation *op, DominanceInfo &dom) {
  auto equivalent = [&](Operation *other) {
    return other != op && other->getName() == op->getName() &&
           isMemoryEffectFree(other) &&
           OperationEquivalence::isEquivalentTo(
               other, op, OperationEquivalence::IgnoreLocations) &&
           dom.properlyDominates(other, op);
  };
  if (op->getNumOperands() > 0) {
    for (Operation *user : op->getOperand(0).getUsers())
      if (equivalent(user))
        return user;
    return nullptr;
  }
  for (Operation *scope = op; scope && scope->getBlock();
       scope = scope->getParentOp())
    for (Operation *prev = scope->getPrevNode(); prev;
         prev = prev->getPrevNode())
      if (equivalent(prev))
        return prev;
  return nullptr;
}

/// Inlines `recompute` and, with `merge`, merges the clones with dominating
/// originals.
void inlineRecompute(RecomputeOp recompute, Operation *root, bool merge,
                     StripStatistics &stats) {
  OpBuilder builder(recompute);
  IRMapping mapping;
  Block &body = recompute.getBody().front();
  mapping.map(body.getArguments(), recompute.getInputs());
  SmallVector<Operation *> clones;
  for (Operation &op : body.without_terminator())
    clones.push_back(builder.clone(op, mapping));
  for (auto [result, yielded] :
       llvm::zip(recompute.getResults(), recompute.getYield().getValues()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(yielded));
  recompute.erase();
  ++stats.recomputesInlined;
  if (!merge)
    return;

  // Merge in program order, so that the operands of a clone have already
  // been merged when the clone is looked at.
  DominanceInfo dom(root);
  for (Operation *clone : clones) {
    Operation *original = findDominatingEquivalent(clone, dom);
    if (!original)
      continue;
    clone->replaceAllUsesWith(original);
    clone->erase();
    ++stats.opsMerged;
  }
}

struct LMSStripPass : public mlir::lms::impl::LMSStripBase<LMSStripPass> {
  void runOnOperation() override {
    StripStatistics stats = stripLMSOps(getOperation());
    numSwapsRemoved += stats.swapsRemoved;
    numRecomputesInlined += stats.recomputesInlined;
    numOpsMerged += stats.opsMerged;
  }
};

} // namespace

StripStatistics mlir::lms::stripLMSOps(Operation *root) {
  StripStatistics stats;
  // Swaps: each swap-in of a swapped-out value becomes that value. Walking in
  // pre-order handles chains: an inner swap-in is replaced before the
  // swap-out that consumes it is reached by a later swap-in.
  SmallVector<SwapInOp> swapIns;
  root->walk([&](SwapInOp op) { swapIns.push_back(op); });
  for (SwapInOp swapIn : swapIns) {
    auto swapOut = swapIn.getHandle().getDefiningOp<SwapOutOp>();
    if (!swapOut) {
      swapIn.emitWarning("cannot strip a swap-in whose handle is not the "
                         "result of an 'lms.swap_out'");
      continue;
    }
    swapIn.getResult().replaceAllUsesWith(swapOut.getSource());
    swapIn.erase();
    ++stats.swapsRemoved;
  }
  SmallVector<SwapOutOp> swapOuts;
  root->walk([&](SwapOutOp op) { swapOuts.push_back(op); });
  for (SwapOutOp swapOut : swapOuts) {
    if (!llvm::all_of(swapOut.getResult().getUsers(),
                      [](Operation *user) { return isa<SwapWaitOp>(user); }))
      continue;
    for (Operation *user :
         llvm::make_early_inc_range(swapOut.getResult().getUsers()))
      user->erase();
    swapOut.erase();
  }

  // Recomputations: inline, then merge the clones with the originals.
  inlineRecomputes(root, /*mergeWithOriginals=*/true, &stats);
  return stats;
}

unsigned mlir::lms::inlineRecomputes(Operation *root, bool mergeWithOriginals,
                                     StripStatistics *stats) {
  StripStatistics local;
  StripStatistics &counts = stats ? *stats : local;
  unsigned before = counts.recomputesInlined;
  // A body may itself hold recomputations, hence the loop.
  while (true) {
    SmallVector<RecomputeOp> recomputes;
    root->walk([&](RecomputeOp op) { recomputes.push_back(op); });
    if (recomputes.empty())
      break;
    for (RecomputeOp recompute : recomputes)
      inlineRecompute(recompute, root, mergeWithOriginals, counts);
  }
  return counts.recomputesInlined - before;
}

namespace {
struct LMSInlineRecomputesPass
    : public mlir::lms::impl::LMSInlineRecomputesBase<
          LMSInlineRecomputesPass> {
  void runOnOperation() override {
    inlineRecomputes(getOperation(), /*mergeWithOriginals=*/false);
  }
};
} // namespace
