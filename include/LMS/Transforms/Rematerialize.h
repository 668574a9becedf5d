//===- Rematerialize.h - Recomputation plans and the IR ---------*- C++ -*-===//
//
// The translation of --lms-rematerialize (and --lms-plan) between a function
// and the graph core: the graph with in-place chains contracted into one
// recomputable unit, and the rewrite of a plan into lms.recompute regions.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_REMATERIALIZE_H
#define LMS_TRANSFORMS_REMATERIALIZE_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Memory.h"

#include <vector>

namespace mlir {
namespace lms {

/// What the contraction of a function's graph needs from the IR, per op of
/// `fg`'s graph: whether every buffer it writes in place is held by a
/// result of an earlier op of the block that only it uses, and whether the
/// IR can clone it into a recompute region (::lms::contractChains decides
/// the units from these).
void contractionOf(const FunctionGraph &fg, std::vector<uint8_t> &joinsPrevious,
                   std::vector<uint8_t> &recomputable);

/// The graph of a function with each in-place chain as one op, as
/// ::lms::contractChains forms them (`tensor.empty` + `linalg.fill` +
/// `linalg.matmul`; a max pooling with the fills of its values, indices and
/// window). Tensor indices are those of the FunctionGraph; op k of `graph`
/// stands for the ops `members[k]` of the FunctionGraph. An op may be
/// recomputed when every member is free of memory effects with tensor
/// results and the group writes no buffer it did not produce. Costs are in
/// seconds under the device.
struct RematGraph {
  ::lms::Graph graph;
  std::vector<std::vector<::lms::OpIndex>> members;

  static FailureOr<RematGraph> build(const FunctionGraph &fg,
                                     const ::lms::DeviceSpec &device);
};

struct RecomputeStats {
  uint64_t recomputes = 0;
  uint64_t opsCloned = 0;
  double extraSeconds = 0;
};

/// Writes the recomputations of `plan` (a plan on `rg.graph`) into the
/// function of `fg`: each compute step of a group after its first becomes an
/// `lms.recompute` cloning the group's ops, placed before the next group the
/// plan computes for the first time; from there on, the uses of the group's
/// results read the recomputed values. After this, `fg` no longer describes
/// the function.
void rewriteWithRecomputes(const FunctionGraph &fg, const RematGraph &rg,
                           const ::lms::Plan &plan,
                           RecomputeStats *stats = nullptr);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_REMATERIALIZE_H
