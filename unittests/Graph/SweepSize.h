//===- SweepSize.h - A prefix of a random sweep -------------*- C++ -*-===//
//
// How many instances of a random sweep to run: all of them, or the first
// 1/LMS_SWEEP_DIVISOR (at least one) when scripts/sanitize.sh sets it, as
// bench/sweep.py does for the property runner and the fuzzer. The instances
// run are the same either way, fewer of them.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_UNITTESTS_GRAPH_SWEEPSIZE_H
#define LMS_UNITTESTS_GRAPH_SWEEPSIZE_H

#include <cstdlib>

namespace lms {

inline int sweepSize(int count) {
  const char *text = std::getenv("LMS_SWEEP_DIVISOR");
  int divisor = text ? std::atoi(text) : 1;
  if (count > 1 && divisor > 1)
    return count / divisor > 0 ? count / divisor : 1;
  return count;
}

} // namespace lms

#endif // LMS_UNITTESTS_GRAPH_SWEEPSIZE_H
