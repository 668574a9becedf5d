//===- InsertSwaps.cpp - The --lms-insert-swaps pass ----------------------===//
//
// Translates each function into the graph core, runs a swap planner there and
// writes its plan back as lms ops. The pass itself only translates: the
// planning lives in lib/Graph.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/SwapRewrite.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <set>

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSINSERTSWAPS
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

struct LMSInsertSwapsPass
    : public mlir::lms::impl::LMSInsertSwapsBase<LMSInsertSwapsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (planner != "lms" && planner != "tflms" && planner != "swap-all") {
      module.emitError() << "invalid planner '" << planner
                         << "': expected lms, tflms or swap-all";
      return signalPassFailure();
    }
    FailureOr<GraphOptions> graphOptions =
        makeGraphOptions(module, alignment, dynamicBytes, false);
    if (failed(graphOptions))
      return signalPassFailure();
    FailureOr<::lms::DeviceSpec> spec = resolveDevice(module, device);
    if (failed(spec))
      return signalPassFailure();
    std::string budgetOption = budget.empty() ? getGlobalBudget() : budget;

    bool failedAny = false;
    for (FunctionOpInterface func : functionsCalleesFirst(module)) {
      if (failed(runOnFunction(func, *graphOptions, *spec, budgetOption)))
        failedAny = true;
    }
    if (failedAny)
      return signalPassFailure();
    if (printStatistics)
      llvm::errs() << "lms-insert-swaps: " << totals.tensors
                   << " tensors-swapped, " << totals.swapOuts << " swap-outs, "
                   << totals.swapIns << " swap-ins, " << totals.toHost
                   << " bytes-to-host, " << totals.toDevice
                   << " bytes-to-device, " << totals.stallMicroseconds
                   << " estimated-stall-us\n";
  }

  /// The statistics, also kept here: Debian's LLVM is built without
  /// statistics support, so -mlir-pass-statistics prints nothing there.
  struct Totals {
    uint64_t tensors = 0, swapOuts = 0, swapIns = 0, toHost = 0, toDevice = 0,
             stallMicroseconds = 0;
  } totals;

  LogicalResult runOnFunction(FunctionOpInterface func,
                              const GraphOptions &graphOptions,
                              const ::lms::DeviceSpec &spec,
                              StringRef budgetOption) {
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    FailureOr<uint64_t> limit =
        resolveBudgetBytes(func, budgetOption, spec, graphOptions, *graph);
    if (failed(limit))
      return failure();
    ::lms::MemoryProfile profile = ::lms::evaluateSchedule(
        graph->getGraph(), ::lms::EvalOptions{/*recordSteps=*/false});
    if (profile.peakBytes <= *limit)
      return success();

    SwapCandidates candidates(*graph);
    ::lms::SwapOptions options;
    options.swapoutThreshold = swapoutThreshold;
    options.swapinAhead = swapinAhead;
    options.swapinGroupby = swapinGroupby;
    options.valueAfterGap = [&](::lms::TensorIndex t, ::lms::OpIndex a,
                                ::lms::OpIndex b) {
      return candidates.valueAfterGap(t, a, b);
    };
    options.canReuseAfter = [&](::lms::TensorIndex t, ::lms::OpIndex a) {
      return candidates.canReuseAfter(t, a);
    };

    ::lms::Infeasible infeasible;
    llvm::Expected<::lms::SwapResult> result = [&] {
      if (planner == "tflms")
        return ::lms::planSwapsTFLMS(graph->getGraph(), spec, *limit, options);
      if (planner == "swap-all")
        return llvm::Expected<::lms::SwapResult>(
            ::lms::planSwapEverything(graph->getGraph(), spec, options));
      return ::lms::planSwaps(graph->getGraph(), spec, *limit, options,
                              &infeasible);
    }();
    if (!result) {
      std::string message = llvm::toString(result.takeError());
      if (planner == "lms" && infeasible.smallestBudget > 0)
        return reportInfeasible(func, *graph, *limit, infeasible);
      return emitError(func.getLoc())
             << "the " << planner << " planner cannot fit the budget "
             << ::lms::formatBytes(*limit) << " (" << *limit
             << " bytes): " << message;
    }
    if (result->peakBytes > *limit)
      return emitError(func.getLoc())
             << "the " << planner << " planner cannot fit the budget "
             << ::lms::formatBytes(*limit) << " (" << *limit
             << " bytes): its plan peaks at " << result->peakBytes << " bytes";

    rewriteWithSwaps(*graph, candidates, result->plan);

    // The guarantee: the analysis of the rewritten function fits.
    FailureOr<FunctionGraph> after = FunctionGraph::build(func, graphOptions);
    if (failed(after))
      return failure();
    uint64_t peakAfter = ::lms::evaluateSchedule(after->getGraph()).peakBytes;
    if (peakAfter > *limit)
      return emitError(func.getLoc())
             << "internal error: after inserting swaps the peak is "
             << peakAfter << " bytes, over the budget of " << *limit
             << " bytes; please report this with the input";

    std::set<::lms::TensorIndex> tensors;
    uint64_t outs = 0, ins = 0;
    for (const ::lms::SwapDecision &d : result->plan.decisions) {
      tensors.insert(d.tensor);
      outs += d.reuseHostCopy ? 0 : 1;
      ++ins;
    }
    uint64_t stall =
        static_cast<uint64_t>(result->timeline.stallSeconds * 1e6 + 0.5);
    numTensorsSwapped += tensors.size();
    numSwapOuts += outs;
    numSwapIns += ins;
    bytesToHost += result->timeline.d2hBytes;
    bytesToDevice += result->timeline.h2dBytes;
    stallMicroseconds += stall;
    totals.tensors += tensors.size();
    totals.swapOuts += outs;
    totals.swapIns += ins;
    totals.toHost += result->timeline.d2hBytes;
    totals.toDevice += result->timeline.h2dBytes;
    totals.stallMicroseconds += stall;
    return success();
  }
};

} // namespace
