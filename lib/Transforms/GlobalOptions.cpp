//===- GlobalOptions.cpp - Command-line options shared by LMS passes ------===//

#include "LMS/Transforms/GlobalOptions.h"

#include "llvm/Support/CommandLine.h"

#include <memory>

using namespace mlir;

namespace {
std::string &budgetStorage() {
  static std::string budget;
  return budget;
}
} // namespace

void lms::registerLMSGlobalOptions() {
  static llvm::cl::opt<std::string, /*ExternalStorage=*/true> budget(
      "lms-budget",
      llvm::cl::desc("Device-memory budget of the LMS planning passes: bytes "
                     "with a unit (B, KB, KiB, MB, MiB, GB, GiB) or a "
                     "percentage of each function's peak (60%); a pass's "
                     "budget= option and a function's lms.budget attribute "
                     "win over it"),
      llvm::cl::value_desc("size"), llvm::cl::location(budgetStorage()));
  (void)budget;
}

std::string lms::getGlobalBudget() { return budgetStorage(); }

void lms::setGlobalBudget(llvm::StringRef budget) {
  budgetStorage() = budget.str();
}
