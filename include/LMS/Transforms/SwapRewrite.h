//===- SwapRewrite.h - Apply a swap plan to the IR --------------*- C++ -*-===//

#ifndef LMS_TRANSFORMS_SWAPREWRITE_H
#define LMS_TRANSFORMS_SWAPREWRITE_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Graph/Swap.h"

namespace mlir {
namespace lms {

/// Marks the ops LMS copies (views re-derived from a swapped-in value,
/// constants fetched again, recomputed ops) with the id of the op they copy,
/// which that op carries as `kOriginalAttr`; --lms-strip merges each copy
/// back into the op with its id and removes both marks. An id, not a
/// position: it stays right whatever is inserted or removed in between.
constexpr llvm::StringLiteral kRederivedAttr = "lms.rederived";
constexpr llvm::StringLiteral kOriginalAttr = "lms.original";

/// The op within which kOriginalAttr ids are unique: the closest op
/// isolated from above that holds `op` (its function), or `op` itself when
/// it is one.
Operation *originalIdScope(Operation *op);

/// Hands out the ids of kOriginalAttr within one function (or other
/// isolated region): one more than the largest id already there, so that
/// running a pass again does not reuse one.
class OriginalIds {
public:
  explicit OriginalIds(Operation *scope);
  /// Marks `clone` as a copy of `copied`: with the id `copied` carries
  /// (given it now if it has none), or, when `copied` is itself a copy,
  /// with the id of the op that one copies.
  void markCopy(Operation *clone, Operation *copied);

private:
  int64_t next = 0;
};

/// Inserts the swap ops of `plan` (made on `graph`, whose gaps `candidates`
/// allowed) into the function `graph` was built from, in the order
/// `::lms::applySwapPlan` gives them, and makes the uses after each gap read
/// the swapped-in value. A decision whose release point is its swap-out
/// becomes a synchronous swap-out (no `lms.swap_wait`). After this, `graph`
/// no longer describes the function.
void rewriteWithSwaps(const FunctionGraph &graph,
                      const SwapCandidates &candidates,
                      const ::lms::SwapPlan &plan);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_SWAPREWRITE_H
