//===- Placement.h - Buffers at offsets in one arena ------------*- C++ -*-===//
//
// A plan bounds the sum of live device bytes; a real allocator also needs a
// contiguous block for every buffer. Placement assigns each allocation of a
// plan (each time a tensor becomes resident: computed, recomputed or swapped
// in, and the transient bytes of an op) an offset in one arena so that
// allocations alive at the same time never overlap. The arena is then what
// the device must hold; the live-bytes peak is its lower bound.
//
// The placer starts from what an online best-fit allocator does in schedule
// order, then places greedily (best fit and first fit) in several offline
// orders (decreasing size, as XLA's heap simulator and TFLite's arena
// planner do; size x lifetime; schedule order; size classes; TFLite's greedy
// by breadth); where the build has Gecode, it also places the largest
// buffers exactly by a constraint program (once as they are, once with room
// kept above them for the smaller buffers alive with them) and the rest
// around them; then it improves the best by ruin and recreate around the
// buffers that reach the top and by a search over orders; last, for up to
// 4,000 buffers, a complete search over placements in canonical order (after
// MiniMalloc: offsets never decrease, each buffer at the lowest offset left,
// with the bytes still to place bounding every step) looks for a placement
// at the live peak, then bisects between the lowest capacity where it found
// none and the best so far. Time is counted by
// allocations, so the offsets depend only on the order of allocations and
// releases. Work is bounded by counts, never by time, so the result is the same
// on any machine (a build without Gecode may place differently).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_PLACEMENT_H
#define LMS_GRAPH_PLACEMENT_H

#include "LMS/Graph/Memory.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lms {

/// One allocation of device memory during a plan, alive while plan steps
/// [begin, end) run (end is the number of steps for one never freed).
struct BufferLife {
  /// The tensor allocated, or -1 for the transient bytes of op `op`.
  TensorIndex tensor = -1;
  /// The op that allocates it (computes or recomputes it, or whose transient
  /// it is); -1 for a swap-in or a tensor resident on entry.
  OpIndex op = -1;
  uint64_t bytes = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
};

/// The device allocations of a valid plan, in the order the plan makes them.
/// A tensor resident on entry is alive from step 0; one never freed until
/// the end. Negative transient bytes (a call that frees before its peak) are
/// placed as none. Fails as evaluatePlan does on an invalid plan.
llvm::Expected<std::vector<BufferLife>> bufferLives(const Graph &graph,
                                                    const Plan &plan);

struct PlacementOptions {
  /// Every offset is a multiple of this, and every size is rounded up to it.
  uint64_t alignment = 1;
  /// Work limit, in millions of overlapping pairs of buffers the placer
  /// looks at (about 10-20 ns each); 0 means 50. Above it, the online
  /// allocator's placement is the answer.
  unsigned workLimit = 0;
  /// Where the build has the constraint solver (Gecode): also place the
  /// largest buffers exactly by a constraint program and the rest around
  /// them (two ways), and improve from those placements too (see
  /// placeBuffers).
  bool constraintSearch = true;
  /// Last, search placements in canonical order (PlacementCanonical.cpp)
  /// under the live peak and then between it and the best so far.
  bool canonicalSearch = true;
  /// Then search placements in the order of time (PlacementSweep.cpp): the
  /// large buffers first, the others around them.
  bool sweepSearch = true;
  /// Take the placement from the recent ones this process found for the
  /// same buffers and options, where there is one (a placement depends on
  /// nothing else, so it is the one the placer would find again); false
  /// places them again (what a check of determinism wants).
  bool reuse = true;
};

struct Placement {
  /// The offset of each buffer, in the order given.
  std::vector<uint64_t> offsets;
  /// The highest end offset: the arena the plan needs.
  uint64_t arenaBytes = 0;
  /// The most (aligned) bytes alive at one step: no placement is smaller.
  uint64_t livePeakBytes = 0;
  /// What gave the result: "online", an offline order and fit ("size/
  /// best-fit", "size-x-lifetime/...", "schedule/...", "breadth/..."), or
  /// "search" when the improvement search found it.
  std::string strategy;
  /// Greedy placements run.
  unsigned placementsTried = 0;
  /// The buffers placed (filled by placePlan; placeBuffers leaves it empty).
  std::vector<BufferLife> buffers;

  /// The arena over the live peak (1 when nothing is wasted).
  double ratio() const {
    return livePeakBytes ? static_cast<double>(arenaBytes) / livePeakBytes
                         : 1.0;
  }
  /// The share of the arena that is never used at the busiest step.
  double fragmentation() const {
    return arenaBytes ? 1.0 - static_cast<double>(livePeakBytes) / arenaBytes
                      : 0.0;
  }
};

/// The most aligned bytes alive at one step.
uint64_t livePeakBytes(llvm::ArrayRef<BufferLife> buffers,
                       uint64_t alignment = 1);

/// Places `buffers` in one arena. Deterministic. Fails only when the sizes
/// add up to more than 2^62 bytes.
llvm::Expected<Placement> placeBuffers(llvm::ArrayRef<BufferLife> buffers,
                                       const PlacementOptions &options = {});

/// Checks a placement independently: offsets aligned, no two buffers alive at
/// the same step overlap, every buffer inside the arena. Names the first
/// offending pair.
llvm::Error verifyPlacement(llvm::ArrayRef<BufferLife> buffers,
                            const Placement &placement, uint64_t alignment = 1);

/// Places the allocations of `plan`.
llvm::Expected<Placement> placePlan(const Graph &graph, const Plan &plan,
                                    const PlacementOptions &options = {});

/// A call into a function that a lowering gives an arena of its own (and a
/// frame of its caller's arena when it is called).
struct ArenaCall {
  /// The callee's arena: a frame alive while the call runs.
  uint64_t frameBytes = 0;
  /// What the callee allocates on its own beyond its arguments and results,
  /// at its peak (negative when it frees arguments before it): in place of
  /// the op's transient bytes.
  int64_t ownExtraBytes = 0;
  /// The results the call finds in slots of the caller's arena (allocated
  /// with the call, before its frame); the others are allocations of their
  /// own.
  llvm::SmallVector<TensorIndex, 2> slots;
};

/// What a function needs when it is lowered with one arena (allocated at
/// entry, freed at return) for the buffers it allocates and frees itself and
/// the frames of its calls, while the other buffers are allocations of their
/// own (--lms-carve-arena).
struct ArenaNeed {
  uint64_t arenaBytes = 0;
  /// The most bytes of the other allocations alive at once.
  uint64_t ownPeakBytes = 0;
  /// The same when the tensors marked kCallerSlot are placed by the caller
  /// (in its arena, for the function's frame variant) and count nowhere
  /// here.
  uint64_t ownPeakWithSlotsBytes = 0;
  uint64_t totalBytes() const { return arenaBytes + ownPeakBytes; }
};

/// An `ownAllocation` value of arenaNeed: an allocation of its own (a result
/// the function returns) that its frame variant finds in a slot of its
/// caller's arena instead.
constexpr uint8_t kCallerSlot = 2;

/// An `ownAllocation` value of arenaNeed for a tensor resident on entry (an
/// argument): its host places it in the arena the function is given (the
/// host-arena convention of `lms.arena_arguments`), so it is one of the
/// arena's buffers from the start of the plan, allocated before every other
/// buffer (in tensor order) and alive until the plan frees it.
constexpr uint8_t kHostPlaced = 3;

/// Where the life of an argument its host placed ends, given where the
/// function frees it: never before the first allocation, since the host
/// wrote it into the arena before the call even when the function frees it
/// before anything else (an unused argument). arenaNeed (over plan steps)
/// and the lowering (over op positions) end it so.
inline uint32_t hostPlacedEnd(uint32_t end) { return end > 1 ? end : 1; }

/// The need of `plan` on `graph`: `ownAllocation[t]` says which tensors are
/// allocations of their own (nonzero but kHostPlaced; the rest are placed in
/// the arena, in the order the plan allocates them; tensors resident on entry
/// are the caller's unless kHostPlaced), `calls[op]` which ops are such
/// calls. Fails as
/// evaluatePlan does, or when the arena's sizes pass 2^62.
llvm::Expected<ArenaNeed>
arenaNeed(const Graph &graph, const Plan &plan,
          llvm::ArrayRef<uint8_t> ownAllocation,
          llvm::ArrayRef<std::optional<ArenaCall>> calls,
          const PlacementOptions &options = {});

/// The graph on which a live-bytes planner plans so that its budget bounds
/// what arenaNeed measures (the arena plus the most bytes of the allocations
/// of their own at once) rather than the sum of live bytes: each tensor with
/// `ownAllocation[t]` weighs nothing, and one more tensor of `ownPeakBytes`
/// (index graph.numTensors()), on the device from entry and live out, stands
/// for all of them. Its live bytes are then the arena's live bytes plus that
/// constant. Tensor and op indices are kept, so a plan for it is a plan for
/// `graph` (without steps on the extra tensor). What the tensors of their own
/// hold is counted at their peak whatever the plan does, so a plan must keep
/// them as they are: the ops that produce them are not recomputable here,
/// and a swap planner must be kept from offloading them
/// (SwapOptions::valueAfterGap; the graph has no such mark).
///
/// `callFrames[op]`, where given (not negative), replaces the transient bytes
/// of a call into a function with an arena model: what the call holds in
/// the arena is its callee's frame (what the callee allocates on its own is
/// in `ownPeakBytes`, ArenaCall::ownExtraBytes).
Graph reserveOwnAllocations(const Graph &graph,
                            llvm::ArrayRef<uint8_t> ownAllocation,
                            uint64_t ownPeakBytes,
                            llvm::ArrayRef<int64_t> callFrames = {});

/// A plan whose placement fits a budget.
struct ArenaFit {
  Plan plan;
  Placement placement;
  /// The live-bytes budget the last plan was made for (the budget itself
  /// when the first plan fit).
  uint64_t plannedBudget = 0;
  /// Plans made.
  unsigned rounds = 0;
};

/// Makes the budget bound the arena, not only the live bytes: plans with
/// `planAt(target)` starting at target = `budget`, places the plan, and while
/// the arena exceeds `budget` lowers the target by the excess and plans
/// again (at most `maxRounds` plans). Fails with the smallest arena found
/// when no plan fits, or with planAt's error when the target becomes
/// infeasible for the planner.
llvm::Expected<ArenaFit>
fitArena(const Graph &graph, uint64_t budget,
         llvm::function_ref<llvm::Expected<Plan>(uint64_t target)> planAt,
         const PlacementOptions &options = {}, unsigned maxRounds = 8);

} // namespace lms

#endif // LMS_GRAPH_PLACEMENT_H
