//===- Strip.h - Undo LMS rewriting -----------------------------*- C++ -*-===//

#ifndef LMS_TRANSFORMS_STRIP_H
#define LMS_TRANSFORMS_STRIP_H

#include "mlir/IR/Operation.h"

namespace mlir {
namespace lms {

struct StripStatistics {
  unsigned swapsRemoved = 0;
  unsigned recomputesInlined = 0;
  unsigned opsMerged = 0;
};

/// Undoes LMS rewriting under `root` (see the lms-strip pass): swap-ins of
/// swapped-out values become those values, unused swap-outs and their waits
/// go away, recomputations are inlined and merged with equivalent dominating
/// ops. Swap-ins of handles that no swap-out produced stay, with a warning.
StripStatistics stripLMSOps(Operation *root);

/// Attribute of the `bufferization.alloc_tensor` copies that the planning
/// passes insert to make bufferization's decisions explicit.
constexpr llvm::StringLiteral kMaterializedCopyAttr = "lms.copy";

/// Replaces each such copy by the value it copies. Part of stripLMSOps.
void foldMaterializedCopies(Operation *root);

/// Points calls of borrowing copies of callees (`@f_lms_borrow_...`, made by
/// the planning passes and --lms-deallocate) back at the original `@f`, and,
/// when `root` is a symbol table, erases the copies nobody calls any more.
/// Part of stripLMSOps.
void stripBorrowingCopies(Operation *root);

/// Inlines every `lms.recompute` under `root` (also nested ones) and returns
/// how many; with `mergeWithOriginals`, inlined ops equivalent to a
/// dominating op are replaced by it (what --lms-strip does).
unsigned inlineRecomputes(Operation *root, bool mergeWithOriginals,
                          StripStatistics *stats = nullptr);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_STRIP_H
