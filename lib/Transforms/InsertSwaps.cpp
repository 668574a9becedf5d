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
    SwapKnobs knobs;
    knobs.planner = planner;
    knobs.swapoutThreshold = swapoutThreshold;
    knobs.swapinAhead = swapinAhead;
    knobs.swapinGroupby = swapinGroupby;
    FailureOr<PlanningContext> context = resolvePlanningContext(
        module, alignment, dynamicBytes, device, budget, arena);
    if (failed(context))
      return signalPassFailure();
    FailureOr<uint64_t> hostLimit =
        resolveHostBudget(module, hostBudget, context->device);
    if (failed(hostLimit)) {
      finishPlanning(module);
      return signalPassFailure();
    }
    knobs.hostLimit = *hostLimit;
    // Callees first: each callee is summarized once, after its rewrite.
    context->graphOptions.callSummaries = makeCalleesFirstCache(module);
    if (arena && context->graphOptions.callSummaries)
      context->graphOptions.arenaModels = makeArenaModelCache();

    bool failedAny = false;
    for (FunctionOpInterface func : functionsCalleesFirst(module))
      if (failed(runOnFunction(func, *context, knobs)))
        failedAny = true;
    finishPlanning(module);
    if (failedAny)
      return signalPassFailure();
    if (printStatistics)
      llvm::errs() << "lms-insert-swaps: " << totals.tensors
                   << " tensors-swapped, " << totals.swapOuts << " swap-outs, "
                   << totals.swapIns << " swap-ins, " << totals.toHost
                   << " bytes-to-host, " << totals.toDevice
                   << " bytes-to-device, " << totals.stallMicroseconds
                   << " estimated-stall-us"
                   << fidelityStatistics(totals.replans)
                   << bodyStatistics(totals.bodies, totals.fetched) << "\n";
  }

  /// The statistics, also kept here: Debian's LLVM is built without
  /// statistics support, so -mlir-pass-statistics prints nothing there.
  struct Totals {
    uint64_t tensors = 0, swapOuts = 0, swapIns = 0, toHost = 0, toDevice = 0,
             stallMicroseconds = 0, replans = 0, bodies = 0, fetched = 0;
  } totals;

  LogicalResult runOnFunction(FunctionOpInterface func,
                              const PlanningContext &context,
                              const SwapKnobs &knobs) {
    FailureOr<uint64_t> limit = resolveFunctionBudget(func, context);
    if (failed(limit))
      return failure();
    FailureOr<SwapStats> stats = insertSwapsInFunction(
        func, context.graphOptions, context.device, *limit, knobs);
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
    totals.replans += stats->replans;
    totals.bodies += stats->bodies;
    totals.fetched += stats->fetched;
    return success();
  }
};

} // namespace
