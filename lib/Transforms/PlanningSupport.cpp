//===- PlanningSupport.cpp - What the planning passes share ---------------===//

#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Strip.h"

#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;
using namespace mlir::lms;

SmallVector<FunctionOpInterface>
mlir::lms::functionsCalleesFirst(ModuleOp module) {
  SmallVector<FunctionOpInterface> order;
  DenseSet<Operation *> visited;
  SymbolTableCollection symbols;
  std::function<void(FunctionOpInterface)> visit =
      [&](FunctionOpInterface func) {
        if (!visited.insert(func).second)
          return;
        func.walk([&](CallOpInterface call) {
          if (auto callee = dyn_cast_or_null<FunctionOpInterface>(
                  call.resolveCallableInTable(&symbols)))
            if (!callee.isExternal())
              visit(callee);
        });
        order.push_back(func);
      };
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      visit(func);
  return order;
}

/// The peak of `func` without LMS ops: of a stripped copy when it has some.
static FailureOr<uint64_t> peakWithoutLMS(FunctionOpInterface func,
                                          const GraphOptions &options,
                                          const FunctionGraph &graph) {
  bool hasLMS = false;
  func.walk([&](Operation *op) {
    hasLMS |= isa_and_nonnull<LMSDialect>(op->getDialect());
  });
  if (!hasLMS)
    return ::lms::evaluateSchedule(graph.getGraph(),
                                   ::lms::EvalOptions{/*recordSteps=*/false})
        .peakBytes;
  // A stripped copy next to the function, so that its calls still resolve.
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  Operation *copy = builder.clone(*func);
  copy->setAttr(
      SymbolTable::getSymbolAttrName(),
      builder.getStringAttr("__lms_reference_" + func.getName().str()));
  stripLMSOps(copy);
  FailureOr<FunctionGraph> stripped = FunctionGraph::build(copy, options);
  FailureOr<uint64_t> peak = failure();
  if (succeeded(stripped))
    peak = ::lms::evaluateSchedule(stripped->getGraph(),
                                   ::lms::EvalOptions{/*recordSteps=*/false})
               .peakBytes;
  copy->erase();
  return peak;
}

FailureOr<uint64_t> mlir::lms::resolveBudgetBytes(
    FunctionOpInterface func, StringRef option, const ::lms::DeviceSpec &device,
    const GraphOptions &graphOptions, const FunctionGraph &graph) {
  FailureOr<std::optional<::lms::ByteSize>> size = getBudget(func, option);
  if (failed(size))
    return failure();
  if (!*size)
    return device.capacityBytes;
  if (!(*size)->isPercent)
    return (*size)->bytes;
  FailureOr<uint64_t> peak = peakWithoutLMS(func, graphOptions, graph);
  if (failed(peak))
    return failure();
  return (*size)->resolve(*peak);
}

LogicalResult mlir::lms::reportInfeasible(FunctionOpInterface func,
                                          const FunctionGraph &graph,
                                          uint64_t budget,
                                          const ::lms::Infeasible &infeasible) {
  Operation *at =
      infeasible.op >= 0 ? graph.getOp(infeasible.op) : func.getOperation();
  InFlightDiagnostic diag = emitError(at->getLoc());
  diag << "budget " << ::lms::formatBytes(budget) << " (" << budget
       << " bytes) is below the smallest feasible budget "
       << ::lms::formatBytes(infeasible.smallestBudget) << " ("
       << infeasible.smallestBudget << " bytes) ";
  if (infeasible.op >= 0)
    diag << "of this op: " << infeasible.reason;
  else
    diag << "of @" << func.getName() << ": " << infeasible.reason;
  return diag;
}

FailureOr<PlanningContext>
mlir::lms::resolvePlanningContext(Operation *scope, uint64_t alignment,
                                  StringRef dynamicBytes, StringRef device,
                                  StringRef budget) {
  PlanningContext context;
  FailureOr<GraphOptions> graphOptions =
      makeGraphOptions(scope, alignment, dynamicBytes, false);
  if (failed(graphOptions))
    return failure();
  context.graphOptions = *graphOptions;
  FailureOr<::lms::DeviceSpec> spec = resolveDevice(scope, device);
  if (failed(spec))
    return failure();
  context.device = *spec;
  context.budgetOption = budget.empty() ? getGlobalBudget() : budget.str();
  llvm::Expected<::lms::ByteSize> size =
      ::lms::parseByteSize(context.budgetOption);
  if (!size) {
    // Reported at the function that uses it (getBudget).
    llvm::consumeError(size.takeError());
    return context;
  }
  if (!size->isPercent)
    return context;
  auto module = dyn_cast<ModuleOp>(scope);
  if (!module)
    module = scope->getParentOfType<ModuleOp>();
  if (!module)
    return context;
  FailureOr<uint64_t> peak = programPeak(module, context.graphOptions);
  if (failed(peak))
    return failure();
  context.programPeakBytes = *peak;
  context.programBudgetBytes = size->resolve(*peak);
  return context;
}

FailureOr<uint64_t> mlir::lms::programPeak(ModuleOp module,
                                           const GraphOptions &options) {
  SmallVector<FunctionOpInterface> functions = functionsCalleesFirst(module);
  DenseSet<Operation *> called;
  SymbolTableCollection symbols;
  for (FunctionOpInterface func : functions)
    func.walk([&](CallOpInterface call) {
      if (Operation *callee = call.resolveCallableInTable(&symbols))
        if (callee != func.getOperation())
          called.insert(callee);
    });
  uint64_t peak = 0;
  for (FunctionOpInterface func : functions) {
    // Entry functions: those no other function calls (all of them in a
    // module whose functions all call each other).
    if (called.contains(func.getOperation()) &&
        called.size() < functions.size())
      continue;
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
    if (failed(graph))
      return failure();
    FailureOr<uint64_t> funcPeak = peakWithoutLMS(func, options, *graph);
    if (failed(funcPeak))
      return failure();
    peak = std::max(peak, *funcPeak);
  }
  return peak;
}

FailureOr<uint64_t>
mlir::lms::resolveFunctionBudget(FunctionOpInterface func,
                                 const PlanningContext &context) {
  // A percentage of the program, resolved once; a function's own
  // `lms.budget` still wins.
  if (context.programBudgetBytes &&
      !func->hasAttr(LMSDialect::getBudgetAttrName()))
    return *context.programBudgetBytes;
  FailureOr<FunctionGraph> graph =
      FunctionGraph::build(func, context.graphOptions);
  if (failed(graph))
    return failure();
  return resolveBudgetBytes(func, context.budgetOption, context.device,
                            context.graphOptions, *graph);
}
