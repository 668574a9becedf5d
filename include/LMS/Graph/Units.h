//===- Units.h - Byte sizes: parsing and printing ---------------*- C++ -*-===//

#ifndef LMS_GRAPH_UNITS_H
#define LMS_GRAPH_UNITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace lms {

/// A memory size as a user writes it: bytes, or a percentage of a function's
/// unconstrained peak.
struct ByteSize {
  uint64_t bytes = 0;
  /// When set, the size is this percentage (0 < p) of the peak.
  double percent = 0;
  bool isPercent = false;

  /// The size in bytes, given the unconstrained peak for percentages.
  uint64_t resolve(uint64_t peakBytes) const;
};

/// Parses "123", "123B", "1.5KB", "12GiB", "60%"... Units: B, KB, MB, GB, TB
/// (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024), case-sensitive as
/// written here; whitespace between number and unit is allowed. Fails with a
/// message that quotes the bad text.
llvm::Expected<ByteSize> parseByteSize(llvm::StringRef text);

/// "1.50 GiB", "312 B": three significant digits in binary units.
std::string formatBytes(uint64_t bytes);

/// "1.20 ms", "35.0 us", "2.00 s".
std::string formatSeconds(double seconds);

} // namespace lms

#endif // LMS_GRAPH_UNITS_H
