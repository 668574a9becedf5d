//===- GlobalOptions.cpp - Command-line options shared by LMS passes ------===//

#include "LMS/Transforms/GlobalOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"

#include <memory>

using namespace mlir;

namespace {
std::string &budgetStorage() {
  static std::string budget;
  return budget;
}
std::string &hostBudgetStorage() {
  static std::string budget;
  return budget;
}
} // namespace

void lms::registerLMSGlobalOptions() {
  static llvm::cl::opt<std::string, /*ExternalStorage=*/true> budget(
      "lms-budget",
      llvm::cl::desc("Device-memory budget of the LMS planning passes: bytes "
                     "with a unit (B, KB, KiB, MB, MiB, GB, GiB) or a "
                     "percentage of the whole program's peak (60%); a "
                     "pass's budget= option and a function's lms.budget "
                     "attribute win over it"),
      llvm::cl::value_desc("size"), llvm::cl::location(budgetStorage()),
      // Regression: an empty value silently meant "no budget".
      llvm::cl::callback([](const std::string &value) {
        if (llvm::StringRef(value).trim().empty())
          llvm::report_fatal_error(
              "--lms-budget= needs a size (bytes with a unit, or a "
              "percentage such as 60%)",
              /*gen_crash_diag=*/false);
      }));
  (void)budget;
  static llvm::cl::opt<std::string, /*ExternalStorage=*/true> hostBudget(
      "lms-host-budget",
      llvm::cl::desc("Host memory the offloading planners may hold at once "
                     "(bytes with a unit); a pass's host-budget= option wins "
                     "over it; default: the device preset's host memory"),
      llvm::cl::value_desc("size"), llvm::cl::location(hostBudgetStorage()),
      llvm::cl::callback([](const std::string &value) {
        if (llvm::StringRef(value).trim().empty())
          llvm::report_fatal_error("--lms-host-budget= needs a size (bytes "
                                   "with a unit)",
                                   /*gen_crash_diag=*/false);
      }));
  (void)hostBudget;
}

std::string lms::getGlobalBudget() { return budgetStorage(); }

std::string lms::getGlobalHostBudget() { return hostBudgetStorage(); }

void lms::setGlobalBudget(llvm::StringRef budget) {
  budgetStorage() = budget.str();
}
