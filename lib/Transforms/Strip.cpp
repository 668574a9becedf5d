//===- Strip.cpp - Undo LMS rewriting -------------------------------------===//
//
// The --lms-strip pass: swap pairs become the original value, recomputations
// are inlined and merged with the original computation where it dominates.
//
//===----------------------------------------------------------------------===//

#include "LMS/Transforms/Strip.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/SwapRewrite.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSSTRIP
#define GEN_PASS_DEF_LMSINLINERECOMPUTES
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

#include <functional>

using namespace mlir;
using namespace mlir::lms;

namespace {

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

  // Merge from the last clone back: a clone is equivalent to an original
  // op when their operands are the same values or results of clones
  // equivalent to the ops that define the original's (recursively), so the
  // clone of a whole chain (`tensor.empty`, `linalg.fill`, `linalg.matmul`)
  // is matched with the chain it copies, not with any look-alike `fill` of
  // another `empty`. Clones left without uses are dropped (they are pure).
  DominanceInfo dom(root);
  llvm::SmallPtrSet<Operation *, 16> cloneSet(clones.begin(), clones.end());
  std::function<bool(Operation *, Operation *)> opsEquivalent;
  auto valuesEquivalent = [&](Value a, Value b) {
    if (a == b)
      return true;
    auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
    if (!ra || !rb || ra.getResultNumber() != rb.getResultNumber() ||
        !cloneSet.contains(ra.getOwner()))
      return false;
    return opsEquivalent(ra.getOwner(), rb.getOwner());
  };
  opsEquivalent = [&](Operation *clone, Operation *original) {
    if (clone == original || clone->getName() != original->getName() ||
        cloneSet.contains(original) || !isMemoryEffectFree(original))
      return false;
    DenseMap<Value, Value> mapped;
    return OperationEquivalence::isEquivalentTo(
        clone, original,
        [&](Value l, Value r) {
          return success(mapped.lookup(l) == r || valuesEquivalent(l, r));
        },
        [&](Value l, Value r) {
          mapped.insert({l, r});
        },
        OperationEquivalence::IgnoreLocations);
  };
  auto findOriginal = [&](Operation *clone) -> Operation * {
    for (Operation *scope = clone; scope && scope->getBlock();
         scope = scope->getParentOp())
      for (Operation *prev = scope->getPrevNode(); prev;
           prev = prev->getPrevNode())
        if (opsEquivalent(clone, prev) && dom.properlyDominates(prev, clone))
          return prev;
    return nullptr;
  };
  auto erase = [&](Operation *clone) {
    cloneSet.erase(clone);
    clone->erase();
    ++stats.opsMerged;
  };
  for (Operation *clone : llvm::reverse(clones)) {
    if (!cloneSet.contains(clone))
      continue;
    if (clone->use_empty()) {
      erase(clone);
      continue;
    }
    if (Operation *original = findOriginal(clone)) {
      clone->replaceAllUsesWith(original);
      erase(clone);
    }
  }
  // Operands of merged clones that are now unused.
  for (Operation *clone : llvm::reverse(clones))
    if (cloneSet.contains(clone) && clone->use_empty())
      erase(clone);
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

  // Constants fetched again and recomputations (an lms.recompute whose ops
  // each carry the id of the op they copy): inline, then merge by id below
  // (there may be several equal constants).
  SmallVector<RecomputeOp> fetches;
  root->walk([&](RecomputeOp recompute) {
    Block &body = recompute.getBody().front();
    if (!body.without_terminator().empty() &&
        llvm::all_of(body.without_terminator(),
                     [](Operation &op) { return op.hasAttr(kRederivedAttr); }))
      fetches.push_back(recompute);
  });
  for (RecomputeOp fetch : fetches)
    inlineRecompute(fetch, root, /*merge=*/false, stats);

  // Copies LMS made (views re-derived after a swap-in, which now read the
  // original value again; the ops of inlined recomputations) merge into the
  // op whose id they carry (kOriginalAttr), or, if the IR was changed in
  // between, into an equivalent earlier op.
  // Ids are unique in a function.
  auto scopeOf = [](Operation *op) {
    return originalIdScope(op->getParentOp() ? op->getParentOp() : op);
  };
  DenseMap<std::pair<Operation *, int64_t>, Operation *> originals;
  root->walk([&](Operation *op) {
    if (auto id = op->getAttrOfType<IntegerAttr>(kOriginalAttr))
      originals.try_emplace({scopeOf(op), id.getInt()}, op);
  });
  SmallVector<Operation *> rederived;
  root->walk([&](Operation *op) {
    if (op->hasAttr(kRederivedAttr))
      rederived.push_back(op);
  });
  // Equal operands; values defined in regions (block arguments, payload
  // results) correspond as the comparison walks them.
  auto equivalent = [](Operation *a, Operation *b) {
    DenseMap<Value, Value> mapped;
    return OperationEquivalence::isEquivalentTo(
        a, b,
        [&](Value l, Value r) {
          return success(l == r || mapped.lookup(l) == r);
        },
        [&](Value l, Value r) {
          mapped.insert({l, r});
        },
        OperationEquivalence::IgnoreLocations);
  };
  for (Operation *op : rederived) {
    auto id = op->getAttrOfType<IntegerAttr>(kRederivedAttr);
    op->removeAttr(kRederivedAttr);
    Operation *target =
        id ? originals.lookup({scopeOf(op), id.getInt()}) : nullptr;
    // (The original loses its mark only at the end: its other copies come
    // later.)
    if (target) {
      target->removeAttr(kOriginalAttr);
      bool same = target->getBlock() == op->getBlock() &&
                  target->isBeforeInBlock(op) && equivalent(op, target);
      target->setAttr(kOriginalAttr, id);
      if (!same)
        target = nullptr;
    }
    for (Operation *prev = op->getPrevNode(); prev && !target;
         prev = prev->getPrevNode())
      if (equivalent(op, prev))
        target = prev;
    if (!target)
      continue;
    op->replaceAllUsesWith(target);
    op->erase();
    ++stats.opsMerged;
  }
  root->walk([](Operation *op) { op->removeAttr(kOriginalAttr); });

  // Recomputations: inline, then merge the clones with the originals.
  inlineRecomputes(root, /*mergeWithOriginals=*/true, &stats);
  foldMaterializedCopies(root);
  stripBorrowingCopies(root);
  return stats;
}

void mlir::lms::foldMaterializedCopies(Operation *root) {
  SmallVector<bufferization::AllocTensorOp> copies;
  root->walk([&](bufferization::AllocTensorOp alloc) {
    if (alloc->hasAttr(kMaterializedCopyAttr) && alloc.getCopy())
      copies.push_back(alloc);
  });
  for (bufferization::AllocTensorOp alloc : copies) {
    alloc.getResult().replaceAllUsesWith(alloc.getCopy());
    alloc.erase();
  }
}

void mlir::lms::stripBorrowingCopies(Operation *root) {
  constexpr StringLiteral marker = "_lms_borrow_";
  root->walk([&](CallOpInterface call) {
    auto ref = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    if (!ref || ref.getNestedReferences().size() != 0)
      return;
    StringRef name = ref.getRootReference().getValue();
    size_t at = name.rfind(marker);
    if (at == StringRef::npos)
      return;
    call.setCalleeFromCallable(
        FlatSymbolRefAttr::get(call.getContext(), name.take_front(at)));
  });
  if (!root->hasTrait<OpTrait::SymbolTable>())
    return;
  SmallVector<Operation *> copies;
  for (Operation &op : root->getRegion(0).front())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      if (name.getValue().contains(marker) &&
          SymbolTable::symbolKnownUseEmpty(&op, root))
        copies.push_back(&op);
  for (Operation *op : copies)
    op->erase();
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
    : public mlir::lms::impl::LMSInlineRecomputesBase<LMSInlineRecomputesPass> {
  void runOnOperation() override {
    inlineRecomputes(getOperation(), /*mergeWithOriginals=*/false);
  }
};
} // namespace
