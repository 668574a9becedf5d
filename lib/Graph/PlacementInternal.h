//===- PlacementInternal.h - The placer's constraint program ----*- C++ -*-===//

#ifndef LMS_LIB_GRAPH_PLACEMENTINTERNAL_H
#define LMS_LIB_GRAPH_PLACEMENTINTERNAL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace lms::detail {

/// A buffer as the constraint program sees it: its (aligned) bytes over the
/// steps [begin, end), and the bytes it must leave free between its top and
/// the capacity (room kept for buffers placed after the program's).
struct Rectangle {
  uint64_t bytes = 0;
  uint32_t begin = 0, end = 0;
  uint64_t reserve = 0;
};

/// Whether this build has the constraint solver (Gecode) solveOffsets uses.
bool haveOffsetSolver();

/// Offsets, multiples of `alignment`, for `rectangles` so that no two alive
/// at the same step overlap and each ends at or below `capacity` less its
/// reserve: found by
/// the constraint program (no-overlap of rectangles fixed in time, the
/// buffer in the most recent failures first at its lowest offset, restarts
/// on the Luby sequence) within `fails` failures. None when it finds none,
/// or without the solver. Deterministic.
std::optional<std::vector<uint64_t>>
solveOffsets(llvm::ArrayRef<Rectangle> rectangles, uint64_t capacity,
             uint64_t alignment, uint64_t fails);

/// What a search under a capacity found (the canonical and sweep searches).
struct SearchResult {
  /// A placement within the capacity was found (in `offsets`).
  bool found = false;
  std::vector<uint64_t> offsets;
  /// Work used: search nodes (the sweep search: nodes plus the buffers they
  /// look at).
  uint64_t nodes = 0;
};

/// Whether the searches take these rectangles: each of some bytes over a
/// nonempty life (the placer passes only those).
bool searchable(llvm::ArrayRef<Rectangle> rectangles);

/// Offsets for a set of rectangles (sizes already aligned, each of some
/// bytes over a nonempty life, else nothing is searched; reserves ignored)
/// so that no two alive at the same step overlap and each ends at or below
/// a capacity: a complete depth-first search over placements in canonical
/// order (PlacementCanonical.cpp). The overlaps are found once; each solve
/// searches under its capacity within its node limit. Deterministic.
class CanonicalSearcher {
public:
  explicit CanonicalSearcher(llvm::ArrayRef<Rectangle> rectangles);
  ~CanonicalSearcher();
  SearchResult solve(uint64_t capacity, uint64_t nodeLimit);

private:
  struct Impl;
  size_t count = 0;
  std::unique_ptr<Impl> impl;
};

/// Offsets for the same rectangles under a capacity by a depth-first search
/// in the order of time (PlacementSweep.cpp): each buffer, by first step,
/// at the bottom or top of a gap that those before it leave, best fit
/// first, with the states shown to lead nowhere remembered. `fixed`, when
/// given, has an offset for each rectangle: kept where it is not ~0 (those
/// must not overlap each other), searched where it is. `nodes` of the
/// result counts its work: nodes plus the buffers they look at.
/// Deterministic.
class SweepSearcher {
public:
  explicit SweepSearcher(llvm::ArrayRef<Rectangle> rectangles,
                         llvm::ArrayRef<uint64_t> fixed = {});
  ~SweepSearcher();
  SearchResult solve(uint64_t capacity, uint64_t workLimit);

private:
  struct Impl;
  size_t count = 0;
  std::unique_ptr<Impl> impl;
};

} // namespace lms::detail

#endif // LMS_LIB_GRAPH_PLACEMENTINTERNAL_H
