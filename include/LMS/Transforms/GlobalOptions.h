//===- GlobalOptions.h - Options shared by LMS passes ----------*- C++ -*-===//
//
// `--lms-budget=<size>`: the device-memory budget every planning pass uses
// unless its own `budget=` option or a function's `lms.budget` attribute
// says otherwise. Tools register it with registerLMSGlobalOptions() before
// parsing the command line (lms-opt does).
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_GLOBALOPTIONS_H
#define LMS_TRANSFORMS_GLOBALOPTIONS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace lms {

/// Registers `--lms-budget` and `--lms-host-budget` with the LLVM command
/// line.
void registerLMSGlobalOptions();

/// The value of `--lms-budget` ("" when not given or not registered).
std::string getGlobalBudget();

/// Sets the global budget programmatically (for tools and tests).
void setGlobalBudget(llvm::StringRef budget);

/// The value of `--lms-host-budget` ("" when not given or not registered).
std::string getGlobalHostBudget();

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_GLOBALOPTIONS_H
