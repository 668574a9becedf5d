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

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_STRIP_H
