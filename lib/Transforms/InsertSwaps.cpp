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
#include "LMS/Transforms/FunctionPlanning.h"
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
    SwapKnobs knobs;
    knobs.planner = planner;
    knobs.swapoutThreshold = swapoutThreshold;
    knobs.swapinAhead = swapinAhead;
    knobs.swapinGroupby = swapinGroupby;
    FailureOr<SwapStats> stats =
        insertSwapsInFunction(func, graphOptions, spec, *limit, knobs);
    if (failed(stats))
      return failure();
    uint64_t stall = static_cast<uint64_t>(stats->stallSeconds * 1e6 + 0.5);
    numTensorsSwapped += stats->tensors;
    numSwapOuts += stats->swapOuts;
    numSwapIns += stats->swapIns;
    bytesToHost += stats->toHost;
    bytesToDevice += stats->toDevice;
    stallMicroseconds += stall;
    totals.tensors += stats->tensors;
    totals.swapOuts += stats->swapOuts;
    totals.swapIns += stats->swapIns;
    totals.toHost += stats->toHost;
    totals.toDevice += stats->toDevice;
    totals.stallMicroseconds += stall;
    return success();
  }
};

} // namespace
