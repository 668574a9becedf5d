//===- PlacementConstraint.cpp - Offsets by a constraint program ----------===//
//
// The placer's constraint step (Placement.cpp): the offsets of a set of
// buffers, each a rectangle fixed in time, under a capacity, on Gecode's
// no-overlap constraint. Greedy placement decides each offset once; on
// plans whose largest buffers are a few GB each (an offloading plan that
// fills the device) its first decisions leave holes that no later buffer
// fits, and the search over orders does not undo them. The search here
// branches on the buffer that took part in the most recent failures (its
// action), at its lowest offset, and restarts on the Luby sequence, so
// that the buffers that conflict are decided first after a restart.
//
//===----------------------------------------------------------------------===//

#include "PlacementInternal.h"

#ifdef LMS_HAVE_GECODE
#include <gecode/int.hh>
#include <gecode/search.hh>
#endif

#include <algorithm>
#include <memory>

using namespace lms;

#ifdef LMS_HAVE_GECODE
namespace {

/// Offsets in units (a multiple of the alignment) below a capacity.
class OffsetModel : public Gecode::Space {
public:
  /// Buffer k at an offset in [0, tops[k] - sizes[k]].
  OffsetModel(llvm::ArrayRef<int> sizes, llvm::ArrayRef<int> begins,
              llvm::ArrayRef<int> lengths, llvm::ArrayRef<int> tops) {
    using namespace Gecode;
    int n = static_cast<int>(sizes.size());
    offsets = IntVarArray(*this, n);
    IntArgs widths(n), heights(n);
    IntVarArgs times(n);
    for (int k = 0; k < n; ++k) {
      offsets[k] = IntVar(*this, 0, tops[k] - sizes[k]);
      widths[k] = sizes[k];
      heights[k] = lengths[k];
      times[k] = IntVar(*this, begins[k], begins[k]);
    }
    nooverlap(*this, offsets, widths, times, heights);
    branch(*this, offsets,
           tiebreak(INT_VAR_ACTION_SIZE_MAX(0.99), INT_VAR_MIN_MIN()),
           INT_VAL_MIN());
  }
  OffsetModel(OffsetModel &other) : Gecode::Space(other) {
    offsets.update(*this, other.offsets);
  }
  Gecode::Space *copy() override { return new OffsetModel(*this); }

  Gecode::IntVarArray offsets;
};

} // namespace

bool detail::haveOffsetSolver() { return true; }

std::optional<std::vector<uint64_t>>
detail::solveOffsets(llvm::ArrayRef<Rectangle> rectangles, uint64_t capacity,
                     uint64_t alignment, uint64_t fails) {
  if (rectangles.empty())
    return std::vector<uint64_t>();
  // Units: a multiple of the alignment that keeps the capacity within
  // Gecode's 32-bit domains. Sizes round up and the capacity down, so a
  // placement in units is one in bytes; reserves round up too.
  uint64_t unit = std::max<uint64_t>(alignment, 1);
  while (capacity / unit >= (uint64_t(1) << 30))
    unit *= 2;
  int room = static_cast<int>(capacity / unit);
  std::vector<int> sizes, begins, lengths, tops;
  for (const Rectangle &r : rectangles) {
    uint64_t size = (r.bytes + unit - 1) / unit;
    uint64_t reserve = (r.reserve + unit - 1) / unit;
    if (r.reserve > capacity || size + reserve > static_cast<uint64_t>(room) ||
        r.end <= r.begin ||
        r.end > static_cast<uint32_t>(Gecode::Int::Limits::max))
      return std::nullopt;
    sizes.push_back(static_cast<int>(size));
    begins.push_back(static_cast<int>(r.begin));
    lengths.push_back(static_cast<int>(r.end - r.begin));
    tops.push_back(room - static_cast<int>(reserve));
  }
  try {
    auto *root = new OffsetModel(sizes, begins, lengths, tops);
    Gecode::Search::FailStop stop(fails);
    Gecode::Search::Options options;
    options.threads = 1;
    options.stop = &stop;
    // The engine owns the cutoff.
    options.cutoff = Gecode::Search::Cutoff::luby(100);
    Gecode::RBS<OffsetModel, Gecode::DFS> engine(root, options);
    delete root;
    std::unique_ptr<OffsetModel> solution(engine.next());
    if (!solution)
      return std::nullopt;
    std::vector<uint64_t> offsets;
    for (int k = 0; k < solution->offsets.size(); ++k)
      offsets.push_back(static_cast<uint64_t>(solution->offsets[k].val()) *
                        unit);
    return offsets;
  } catch (const Gecode::Exception &) {
    // Gecode's limits: no placement from here (the greedy one stands).
    return std::nullopt;
  }
}

#else

bool detail::haveOffsetSolver() { return false; }

std::optional<std::vector<uint64_t>>
detail::solveOffsets(llvm::ArrayRef<Rectangle>, uint64_t, uint64_t, uint64_t) {
  return std::nullopt;
}

#endif
