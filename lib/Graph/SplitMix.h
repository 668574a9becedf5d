//===- SplitMix.h - A deterministic random generator ------------*- C++ -*-===//
//
// The searches of the planning core draw from this generator rather than the
// standard distributions, whose numbers differ between library versions:
// the same seed gives the same plans on every platform.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_LIB_GRAPH_SPLITMIX_H
#define LMS_LIB_GRAPH_SPLITMIX_H

#include <cstdint>

namespace lms::detail {

class SplitMix {
public:
  explicit SplitMix(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound) (0 for bound 0).
  uint64_t below(uint64_t bound) { return bound ? next() % bound : 0; }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state;
};

} // namespace lms::detail

#endif // LMS_LIB_GRAPH_SPLITMIX_H
