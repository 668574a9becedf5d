//===- SwapCandidates.h - Which buffers the IR can offload ------*- C++ -*-===//
//
// A buffer of the graph can be offloaded over a gap in its uses when the IR
// can express it: exactly one SSA value of the buffer (a ranked tensor)
// that is defined before the gap is read after it. That value is what
// `lms.swap_out` copies and what the later uses then read from `lms.swap_in`.
// Values of the same buffer read after two gaps are the same value when they
// are the same SSA value: the second offload may reuse the first host copy.
//
// Several values of the buffer may cross the gap when all but one are views
// (reshapes, slices) made from that one before the gap, as exported models
// reshape every activation: the one is offloaded, and the rewrite re-derives
// the views from the swapped-in value (viewsAfterGap).
//
// A value whose buffer an op wrote in place after it was defined is stale:
// bufferization wrote in place only because the value is not read again (a
// later use is a destination its op overwrites unread). Such a value cannot
// carry the buffer over a gap.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_ANALYSIS_SWAPCANDIDATES_H
#define LMS_ANALYSIS_SWAPCANDIDATES_H

#include "LMS/Analysis/FunctionGraph.h"

#include <set>
#include <vector>

namespace mlir {
namespace lms {

class SwapCandidates {
public:
  explicit SwapCandidates(const FunctionGraph &graph);

  /// The id of the value read after the gap (a, b) of buffer t, or -1 when
  /// the IR cannot offload it there. Usable as SwapOptions::valueAfterGap.
  int valueAfterGap(::lms::TensorIndex t, ::lms::OpIndex a,
                    ::lms::OpIndex b) const;

  /// Whether an offload of buffer t after op `a` may reuse an earlier host
  /// copy: not when `a` writes into an alias of t out of place (without the
  /// later uses, it would write in place and keep the device copy alive).
  /// Usable as SwapOptions::canReuseAfter.
  bool canReuseAfter(::lms::TensorIndex t, ::lms::OpIndex a) const;

  /// The other values of buffer t read after the gap (a, b): views of the
  /// value valueAfterGap returns, each to be re-derived from its swap-in.
  SmallVector<Value> viewsAfterGap(::lms::TensorIndex t, ::lms::OpIndex a,
                                   ::lms::OpIndex b) const;

  /// The SSA value of an id returned by valueAfterGap.
  Value getValue(int id) const { return values[id].value; }

private:
  struct Alias {
    Value value;
    ::lms::OpIndex def;     ///< op that defines it (kEntry: an argument)
    ::lms::OpIndex lastUse; ///< last top-level op that reads it
    int viewOf;             ///< the value it is a view of (-1: none)
  };
  bool isViewOf(int id, int source) const;
  /// Whether value `id` of buffer t is stale at the end of op `a`: an op
  /// after its definition wrote the buffer in place.
  bool isStale(::lms::TensorIndex t, int id, ::lms::OpIndex a) const;
  /// The values of buffer t live across (a, b).
  SmallVector<int> crossing(::lms::TensorIndex t, ::lms::OpIndex a,
                            ::lms::OpIndex b) const;

  std::vector<Alias> values;
  /// Aliases of each buffer (indices into `values`).
  std::vector<std::vector<int>> aliasesOf;
  /// (op, buffer) pairs where the op has a destination operand in the buffer.
  std::set<std::pair<::lms::OpIndex, ::lms::TensorIndex>> initsAt;
  /// Per buffer: the ops that write it in place, in increasing order.
  std::vector<std::vector<::lms::OpIndex>> updatesOf;
};

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_SWAPCANDIDATES_H
