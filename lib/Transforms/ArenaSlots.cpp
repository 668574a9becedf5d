//===- ArenaSlots.cpp - Results in slots of the caller's arena ------------===//
//
// The --lms-mark-arena-slots pass: records in the IR which results the arena
// model counts in slots of a caller's arena (arenaSlots in PlanningSupport),
// so that --lms-carve-arena lowers exactly what the analyses counted.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSMARKARENASLOTS
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

/// The attributes --lms-carve-arena reads.
static constexpr llvm::StringLiteral kResultSlotsAttr =
    LMSDialect::getResultSlotsAttrName();
static constexpr llvm::StringLiteral kSlottedCallAttr =
    LMSDialect::getSlottedAttrName();

namespace {

struct LMSMarkArenaSlotsPass
    : public mlir::lms::impl::LMSMarkArenaSlotsBase<LMSMarkArenaSlotsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<GraphOptions> options =
        makeGraphOptions(module, alignment, dynamicBytes,
                         /*keepArguments=*/false);
    if (failed(options))
      return signalPassFailure();
    // Decisions first (each reads the module as it was), then the marks.
    SmallVector<std::pair<FunctionOpInterface, ArenaSlots>> decisions;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<FunctionGraph> graph = FunctionGraph::build(func, *options);
      if (failed(graph))
        return signalPassFailure();
      decisions.push_back({func, arenaSlots(*graph, *options)});
    }
    for (auto &[func, slots] : decisions) {
      func->removeAttr(kResultSlotsAttr);
      func.walk(
          [](CallOpInterface call) { call->removeAttr(kSlottedCallAttr); });
      if (llvm::is_contained(slots.results, true))
        func->setAttr(kResultSlotsAttr, DenseBoolArrayAttr::get(
                                            func.getContext(), slots.results));
      for (Operation *call : slots.calls)
        call->setAttr(kSlottedCallAttr, UnitAttr::get(func.getContext()));
    }
  }
};

} // namespace
