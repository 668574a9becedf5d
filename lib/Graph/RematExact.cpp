//===- RematExact.cpp - The Checkmate MILP on CBC -------------------------===//
//
// Placeholder until the MILP lands: reports that no exact solver is built.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Remat.h"

using namespace lms;

bool lms::haveExactSolver() { return false; }

llvm::Expected<RematResult> lms::planRematExact(const Graph &graph,
                                                uint64_t budget,
                                                const RematOptions &options) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no exact solver in this build");
}
