//===- SwapRewrite.h - Apply a swap plan to the IR --------------*- C++ -*-===//

#ifndef LMS_TRANSFORMS_SWAPREWRITE_H
#define LMS_TRANSFORMS_SWAPREWRITE_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Graph/Swap.h"

namespace mlir {
namespace lms {

/// Marks the view ops the swap rewrite re-derives from a swapped-in value,
/// with the position (among the top-level ops of the function before the
/// rewrite) of the view it copies; --lms-strip merges them back into it.
constexpr llvm::StringLiteral kRederivedAttr = "lms.rederived";

/// Whether LMS inserted `op`: of the lms dialect, re-derived, or a
/// materialized bufferization copy (`lms.copy`; planning may add more of
/// them after positions were recorded).
bool isInsertedByLMS(Operation &op);

/// The positions that `kRederivedAttr` records: each op of `block` that LMS
/// did not insert, numbered in order. --lms-strip numbers the ops the same
/// way.
DenseMap<Operation *, int64_t> originalPositions(Block &block);

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
