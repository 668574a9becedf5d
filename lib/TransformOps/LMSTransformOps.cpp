//===- LMSTransformOps.cpp - transform.lms.* ops --------------------------===//
//
// Each op translates its target function into the planning core through the
// same entry points as the passes (FunctionPlanning.h): the transform ops are
// another way to invoke the passes' per-function logic, not another planner.
//
//===----------------------------------------------------------------------===//

#include "LMS/TransformOps/LMSTransformOps.h"
#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/FunctionPlanning.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/Schedule.h"
#include "LMS/Transforms/Split.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::transform;
using mlir::lms::insertSwapsInFunction;
using mlir::lms::parseRematPlanner;
using mlir::lms::parseSwapPlanner;
using mlir::lms::PlanningContext;
using mlir::lms::rematerializeFunction;
using mlir::lms::RematKnobs;
using mlir::lms::resolveFunctionBudget;
using mlir::lms::resolvePlanningContext;
using mlir::lms::SwapKnobs;
using mlir::lms::verifyRematKnobs;

/// The passes' context (default graph options, the device, the budget
/// option) and the budget of `func`.
static FailureOr<std::pair<PlanningContext, uint64_t>>
setUp(FunctionOpInterface func, StringRef budget, StringRef device) {
  FailureOr<PlanningContext> context = resolvePlanningContext(
      func, /*alignment=*/1, /*dynamicBytes=*/"", device, budget);
  if (failed(context))
    return failure();
  FailureOr<uint64_t> limit = resolveFunctionBudget(func, *context);
  if (failed(limit))
    return failure();
  return std::make_pair(*context, *limit);
}

DiagnosedSilenceableFailure LMSInsertSwapsOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  SwapKnobs knobs;
  FailureOr<::lms::SwapMethod> planner = parseSwapPlanner(*this, getPlanner());
  if (failed(planner))
    return DiagnosedSilenceableFailure::definiteFailure();
  knobs.planner = *planner;
  auto setup = setUp(target, getBudget(), getDevice());
  if (failed(setup) ||
      failed(insertSwapsInFunction(target, setup->first.graphOptions,
                                   setup->first.device, setup->second, knobs)))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

DiagnosedSilenceableFailure LMSRematerializeOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  RematKnobs knobs;
  FailureOr<::lms::RematMethod> planner =
      parseRematPlanner(*this, getPlanner());
  if (failed(planner))
    return DiagnosedSilenceableFailure::definiteFailure();
  knobs.planner = *planner;
  knobs.timeLimitSeconds = getTimeLimit().convertToDouble();
  if (failed(verifyRematKnobs(*this, knobs, "planner", "time_limit")))
    return DiagnosedSilenceableFailure::definiteFailure();
  auto setup = setUp(target, getBudget(), getDevice());
  if (failed(setup) ||
      failed(rematerializeFunction(target, setup->first.graphOptions,
                                   setup->first.device, setup->second, knobs)))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

DiagnosedSilenceableFailure LMSScheduleOp::applyToOne(
    TransformRewriter &rewriter, FunctionOpInterface target,
    ApplyToEachResultList &results, TransformState &state) {
  // The getters return the values as unsigned: a negative one would wrap
  // into a work limit of 2^64 evaluations.
  int64_t iterations = getIterationsAttr().getInt();
  int64_t seed = getSeedAttr().getInt();
  if (iterations < 0 || seed < 0)
    return emitDefiniteFailure() << "iterations and seed must not be negative";
  mlir::lms::ScheduleKnobs knobs;
  knobs.iterations = static_cast<uint64_t>(iterations);
  knobs.seed = static_cast<uint64_t>(seed);
  if (failed(mlir::lms::scheduleFunction(target, mlir::lms::GraphOptions{},
                                         knobs)))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

DiagnosedSilenceableFailure
LMSSplitOp::applyToOne(TransformRewriter &rewriter, FunctionOpInterface target,
                       ApplyToEachResultList &results, TransformState &state) {
  int64_t slices = getSlicesAttr().getInt();
  int64_t loop = getLoopAttr().getInt();
  if (slices < 0 || slices == 1)
    return emitDefiniteFailure()
           << "slices must be at least 2 (or 0 to split for a budget)";
  if (loop < -1)
    return emitDefiniteFailure() << "loop must be -1 (measured) or a loop";
  mlir::lms::SplitKnobs knobs;
  knobs.slices = slices;
  if (loop >= 0)
    knobs.loop = static_cast<unsigned>(loop);
  std::optional<uint64_t> limit;
  if (slices == 0) {
    llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(getBudget());
    if (!size || size->isPercent) {
      if (!size)
        llvm::consumeError(size.takeError());
      return emitDefiniteFailure()
             << "with slices = 0, budget must be a size such as \"12GiB\", "
                "got '"
             << getBudget() << "'";
    }
    limit = size->bytes;
  }
  if (failed(mlir::lms::splitFunction(target, mlir::lms::GraphOptions{}, limit,
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

void LMSScheduleOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  onlyReadsHandle(getTargetMutable(), effects);
  modifiesPayload(effects);
}

void LMSSplitOp::getEffects(
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
  // transform.lms.split creates loops and slices of linalg ops.
  registerSplitDependencies(registry);
}
