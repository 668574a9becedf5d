//===- Split.h - Splitting ops below the single-op bound --------*- C++ -*-===//
//
// No plan that keeps ops whole can go below the bytes of the largest op's
// operands and results: they are resident together while it runs. Splitting
// breaks that floor: the op, with its neighbours that share a parallel
// dimension (batch, tokens), runs as a loop over slices of that dimension,
// so that only one slice of the large tensors between them is resident at a
// time (chunked cross-entropy, micro-batched layers, done by the compiler).
//
// The region split is grown from an anchor op along one dimension of its
// iteration space over tensors of at least `minBytes` bytes that carry the
// dimension (linalg ops; tensor.pad, tensor.insert_slice, and
// tensor.collapse_shape/expand_shape where the dimension is outermost in its
// group; fills and empties of inits at any size), either every such
// neighbour (SplitGrowth::Reach) or best first by the bytes the loops would
// hold whole (SplitGrowth::Greedy). Each op is
// sliced by its TilingInterface implementation (upstream's, for linalg), its
// operands from inside the region replaced by the slices computed in the same
// iteration. An op that reduces over the dimension accumulates across
// iterations in a loop-carried value (the loop keeps the reduction's order,
// so sums are bit-identical to the unsplit op); an op that needs the
// complete result of such a reduction starts a second loop, which computes
// again the slices it needs of values of the first (recomputation in
// slices, as chunked-loss implementations do); a softmax's sum of
// exponentials split by the dimension it reduces runs with its maximum
// instead, rescaled as the maximum grows (online softmax). An op that reads
// a sliced tensor at an index it computes (a label gather split by
// vocabulary) runs whole in every iteration, each point only where its
// index falls in the slice, its results accumulated. Values used
// outside the
// region are assembled whole (tensor.insert_slice into a loop-carried
// tensor).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_SPLIT_H
#define LMS_TRANSFORMS_SPLIT_H

#include "LMS/Analysis/FunctionGraph.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace lms {

/// How a region grows from its anchor. Reach: every producer and consumer
/// joined by a tensor of at least minBytes that carries the dimension
/// (long chains: a loss head from the logits to the weight gradient).
/// Greedy: best first, the neighbour that leaves the loops the fewest
/// bytes to hold whole (tensors read from outside or given out), keeping
/// the best region seen (short chains in networks where every tensor
/// carries the batch: a convolution's padding and input gradient).
enum class SplitGrowth { Reach, Greedy };

/// A region of ops around an anchor that can run as loops over slices of
/// one dimension, found without changing the IR.
struct SplitRegion {
  Operation *anchor = nullptr;
  /// The anchor's loop dimension that is split, and its extent.
  unsigned dim = 0;
  int64_t extent = 0;
  /// Slice sizes must be multiples of this (where the dimension is a group
  /// of a reshape, e.g. tokens = batch x sequence, a slice is whole rows).
  int64_t granularity = 1;
  /// The smallest tensor (bytes) that joins a neighbour to the region.
  uint64_t minBytes = 0;
  SplitGrowth growth = SplitGrowth::Reach;
  /// A sum of exponentials shifted by a maximum over the split dimension
  /// (a softmax's) runs in the maximum's loop, rescaled as the maximum
  /// grows (online softmax), instead of a loop after it.
  bool online = true;
  /// The ops of the region, in block order, and the loop each runs in first.
  SmallVector<Operation *> ops;
  unsigned numLoops = 0;
  /// Bytes of the region's values that only the region uses (what slicing
  /// saves).
  uint64_t internalBytes = 0;

  /// The slice counts the region admits (divisors of the extent whose slice
  /// is a multiple of the granularity), ascending, 1 excluded.
  SmallVector<int64_t> sliceCounts() const;
};

/// Finds the split region around `anchor` (an op of a function body): the
/// parallel dimension of its iteration space whose region keeps the most
/// bytes internal. Fails with the reason in `whyNot` when the op cannot be
/// split: not a linalg op on tensors, no parallel dimension of static
/// extent that its large operands share, side effects.
/// `minBytes` 0: a quarter of the anchor's largest operand or result.
/// `loop`, when given, is the loop to split instead.
FailureOr<SplitRegion>
findSplitRegion(Operation *anchor, uint64_t minBytes, std::string &whyNot,
                std::optional<unsigned> loop = std::nullopt,
                SplitGrowth growth = SplitGrowth::Reach, bool online = true);

/// Rewrites `region` into loops over `slices` slices (one of
/// region.sliceCounts()). Fails with the reason in `whyNot`, changing
/// nothing, where the loops cannot be placed (a value of the region used
/// outside it before the loop that computes it ends). The loops made are
/// appended to `loops` when given.
LogicalResult applySplit(const SplitRegion &region, int64_t slices,
                         std::string &whyNot,
                         SmallVectorImpl<Operation *> *loops = nullptr);

/// Adds to `registry` what splitting needs: the dialects of the ops it
/// creates and the TilingInterface models of linalg ops (for passes'
/// getDependentDialects and the transform extension).
void registerSplitDependencies(DialectRegistry &registry);

/// One split splitFunction made: its anchor's kind (splitAnchorKey) and
/// location, the loop split and the slice count. Two runs that make the
/// same list make the same loops.
struct SplitMade {
  std::string kind;
  Location loc;
  unsigned dim = 0;
  int64_t slices = 0;
  bool operator==(const SplitMade &other) const {
    return kind == other.kind && dim == other.dim && slices == other.slices;
  }
};

/// How splitFunction splits.
struct SplitKnobs {
  /// Slices of the anchor; 0: the fewest that bring the function's
  /// smallest feasible budget within the limit, round after round.
  int64_t slices = 0;
  /// The anchor's loop to split; none: the best.
  std::optional<unsigned> loop;
  /// How the region grows; none: the better of the two, measured.
  std::optional<SplitGrowth> growth;
  /// findSplitRegion's minBytes (0: its default).
  uint64_t minBytes = 0;
  /// Most splits with slices == 0.
  unsigned rounds = 200;
  /// Warn where the op that sets the floor cannot be split.
  bool warn = true;
  /// Print each split to stderr.
  bool printStatistics = false;
  /// SplitRegion::online: softmax sums split by the dimension they reduce
  /// run with their maximum (rescaled), not in a loop after it.
  bool online = true;
  /// With slices == 0: per kind of anchor (splitAnchorKey), the smallest
  /// feasible budget its loops aim at instead of the limit (more slices
  /// below it, fewer above), so that a planner can choose the slice count
  /// of each kind on its own. The loops made for an anchor are held to
  /// its aim in the rounds after.
  std::map<std::string, uint64_t> aims;
  /// When given, every split made is appended here, in order.
  std::vector<SplitMade> *made = nullptr;
};

/// The kind of an anchor: its name, attributes and types. The layers of a
/// network repeat the same ops, and one measurement (and one aim) serves
/// them all.
std::string splitAnchorKey(Operation *anchor);

/// Splits the op of `func` that sets its smallest feasible budget (as
/// ::lms::minimumFeasibleBytes counts it on the function's graph): with
/// knobs.slices, once into that many slices (an error where it cannot be);
/// else while the smallest feasible budget is above `limit` (none: as far as
/// splitting lowers it), each time with
/// the fewest slices that bring the loops within it (else the most, if they
/// lower the op's need), measured on a copy of the function. Returns the
/// number of splits.
FailureOr<unsigned> splitFunction(FunctionOpInterface func,
                                  const GraphOptions &options,
                                  std::optional<uint64_t> limit,
                                  const SplitKnobs &knobs);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_SPLIT_H
