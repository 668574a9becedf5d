//===- LMSTransformOps.cpp - transform.lms.* ops --------------------------===//
//
// Each op translates its target function into the planning core through the
// same entry points as the passes (FunctionPlanning.h): the transform ops are
// another way to invoke the passes' per-function logic, not another planner.
//
//===----------------------------------------------------------------------===//

#include "LMS/TransformOps/LMSTransformOps.h"
#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Transforms/FunctionPlanning.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::transform;

/// Options shared by the planning ops: graph options as the passes' defaults,
/// the device, and the budget in bytes for `func`.
struct PlanningSetup {
  mlir::lms::GraphOptions graphOptions;
  ::lms::DeviceSpec device;
  uint64_t limit = 0;
};

static FailureOr<PlanningSetup> setUp(FunctionOpInterface func,
                                      StringRef budget, StringRef device) {
  PlanningSetup setup;
  FailureOr<mlir::lms::GraphOptions> options = mlir::lms::makeGraphOptions(
      func, /*alignment=*/1, /*dynamicBytes=*/"", /*keepArguments=*/false);
  if (failed(options))
    return failure();
  setup.graphOptions = *options;
  FailureOr<::lms::DeviceSpec> spec = mlir::lms::resolveDevice(func, device);
  if (failed(spec))
    return failure();
  setup.device = *spec;
  FailureOr<mlir::lms::FunctionGraph> graph =
      mlir::lms::FunctionGraph::build(func, setup.graphOptions);
  if (failed(graph))
    return failure();
  std::string option =
      budget.empty() ? mlir::lms::getGlobalBudget() : budget.str();
  FailureOr<uint64_t> limit = mlir::lms::resolveBudgetBytes(
      func, option, setup.device, setup.graphOptions, *graph);
  if (failed(limit))
    return failure();
  setup.limit = *limit;
  return setup;
}

DiagnosedSilenceableFailure LMSInsertSwapsOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  static const char *planners[] = {"lms", "tflms", "swap-all"};
  if (!llvm::is_contained(planners, getPlanner()))
    return emitDefiniteFailure()
           << "invalid planner '" << getPlanner()
           << "': expected lms, tflms or swap-all";
  FailureOr<PlanningSetup> setup = setUp(target, getBudget(), getDevice());
  if (failed(setup))
    return DiagnosedSilenceableFailure::definiteFailure();
  mlir::lms::SwapKnobs knobs;
  knobs.planner = getPlanner().str();
  if (failed(mlir::lms::insertSwapsInFunction(target, setup->graphOptions,
                                              setup->device, setup->limit,
                                              knobs)))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

DiagnosedSilenceableFailure LMSRematerializeOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  static const char *planners[] = {"heuristic", "exact", "dtr", "chen-greedy",
                                   "chen-sqrt"};
  if (!llvm::is_contained(planners, getPlanner()))
    return emitDefiniteFailure()
           << "invalid planner '" << getPlanner()
           << "': expected heuristic, exact, dtr, chen-greedy or chen-sqrt";
  if (!(getTimeLimit().convertToDouble() >= 0))
    return emitDefiniteFailure() << "invalid time_limit: expected seconds >= 0";
  FailureOr<PlanningSetup> setup = setUp(target, getBudget(), getDevice());
  if (failed(setup))
    return DiagnosedSilenceableFailure::definiteFailure();
  mlir::lms::RematKnobs knobs;
  knobs.planner = getPlanner().str();
  knobs.timeLimitSeconds = getTimeLimit().convertToDouble();
  if (failed(mlir::lms::rematerializeFunction(target, setup->graphOptions,
                                              setup->device, setup->limit,
                                              knobs)))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

DiagnosedSilenceableFailure LMSReportPeakOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  FailureOr<mlir::lms::FunctionGraph> graph =
      mlir::lms::FunctionGraph::build(target);
  if (failed(graph))
    return DiagnosedSilenceableFailure::definiteFailure();
  mlir::lms::MemoryPeakAnalysis peak(*graph);
  target->emitRemark() << "peak " << peak.getPeakBytes() << " bytes";
  return DiagnosedSilenceableFailure::success();
}

void LMSInsertSwapsOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  onlyReadsHandle(getTargetMutable(), effects);
  modifiesPayload(effects);
}

void LMSRematerializeOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  onlyReadsHandle(getTargetMutable(), effects);
  modifiesPayload(effects);
}

void LMSReportPeakOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  onlyReadsHandle(getTargetMutable(), effects);
  onlyReadsPayload(effects);
}

#define GET_OP_CLASSES
#include "LMS/TransformOps/LMSTransformOps.cpp.inc"

namespace {
class LMSTransformDialectExtension
    : public TransformDialectExtension<LMSTransformDialectExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LMSTransformDialectExtension)
  using Base::Base;

  void init() {
    // The ops rewrite payloads into lms ops.
    declareGeneratedDialect<mlir::lms::LMSDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "LMS/TransformOps/LMSTransformOps.cpp.inc"
        >();
  }
};
} // namespace

void mlir::lms::registerLMSTransformDialectExtension(
    DialectRegistry &registry) {
  registry.addExtensions<LMSTransformDialectExtension>();
}
