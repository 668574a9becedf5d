//===- Units.cpp - Byte sizes: parsing and printing -----------------------===//

#include "LMS/Graph/Units.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace lms;

uint64_t ByteSize::resolve(uint64_t peakBytes) const {
  if (!isPercent)
    return bytes;
  return static_cast<uint64_t>(
      std::floor(static_cast<double>(peakBytes) * percent / 100.0));
}

llvm::Expected<ByteSize> lms::parseByteSize(llvm::StringRef text) {
  auto bad = [&](llvm::StringRef why) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("invalid size '{0}': {1}", text, why).str());
  };
  llvm::StringRef rest = text.trim();
  if (rest.empty())
    return bad("expected a number of bytes with an optional unit "
               "(B, KB, KiB, MB, MiB, GB, GiB, TB, TiB) or a percentage");
  // The number: digits with an optional fraction.
  size_t end = 0;
  bool seenDot = false;
  while (end < rest.size() &&
         (std::isdigit(static_cast<unsigned char>(rest[end])) ||
          (rest[end] == '.' && !seenDot))) {
    seenDot |= rest[end] == '.';
    ++end;
  }
  llvm::StringRef number = rest.take_front(end);
  llvm::StringRef unit = rest.drop_front(end).trim();
  if (number.empty() || number == ".")
    return bad("expected a number");
  double value = 0;
  if (number.getAsDouble(value))
    return bad("expected a number");

  ByteSize size;
  if (unit == "%") {
    if (value <= 0 || value > 100)
      return bad("a percentage must be in (0, 100]");
    size.isPercent = true;
    size.percent = value;
    return size;
  }
  std::optional<double> scale = llvm::StringSwitch<std::optional<double>>(unit)
                                    .Cases({"", "B"}, 1.0)
                                    .Case("KB", 1e3)
                                    .Case("MB", 1e6)
                                    .Case("GB", 1e9)
                                    .Case("TB", 1e12)
                                    .Case("KiB", 1024.0)
                                    .Case("MiB", 1024.0 * 1024)
                                    .Case("GiB", 1024.0 * 1024 * 1024)
                                    .Case("TiB", 1024.0 * 1024 * 1024 * 1024)
                                    .Default(std::nullopt);
  if (!scale)
    return bad(llvm::formatv("unknown unit '{0}' (expected B, KB, KiB, MB, "
                             "MiB, GB, GiB, TB, TiB or %)",
                             unit)
                   .str());
  double bytes = value * *scale;
  if (bytes >= 1.8e19)
    return bad("too large");
  if (bytes != std::floor(bytes))
    return bad("not a whole number of bytes");
  size.bytes = static_cast<uint64_t>(bytes);
  return size;
}

std::string lms::formatBytes(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return llvm::formatv("{0} B", bytes).str();
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return llvm::formatv("{0} {1}", llvm::format("%.*f", decimals, value),
                       units[unit])
      .str();
}

std::string lms::formatSeconds(double seconds) {
  double value = seconds;
  const char *unit = "s";
  if (seconds < 1e-3) {
    value = seconds * 1e6;
    unit = "us";
  } else if (seconds < 1) {
    value = seconds * 1e3;
    unit = "ms";
  }
  int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return llvm::formatv("{0} {1}", llvm::format("%.*f", decimals, value), unit)
      .str();
}
