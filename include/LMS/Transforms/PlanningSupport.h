//===- PlanningSupport.h - What the planning passes share -------*- C++ -*-===//

#ifndef LMS_TRANSFORMS_PLANNINGSUPPORT_H
#define LMS_TRANSFORMS_PLANNINGSUPPORT_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Swap.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace lms {

/// The functions of `module` with a body, callees before their callers (so
/// that a caller is planned with its callees' final peaks).
SmallVector<FunctionOpInterface> functionsCalleesFirst(ModuleOp module);

/// The budget of `func` in bytes: its `lms.budget` attribute, else `option`
/// (a pass option or --lms-budget), else the device's capacity. Percentages
/// are of the function's peak without LMS ops. Emits an error and fails on a
/// malformed size.
FailureOr<uint64_t> resolveBudgetBytes(FunctionOpInterface func,
                                       StringRef option,
                                       const ::lms::DeviceSpec &device,
                                       const GraphOptions &graphOptions,
                                       const FunctionGraph &graph);

/// Emits the error of a budget no plan can meet, at the op that needs more
/// (or at the function when its arguments alone exceed it), and fails.
LogicalResult reportInfeasible(FunctionOpInterface func,
                               const FunctionGraph &graph, uint64_t budget,
                               const ::lms::Infeasible &infeasible);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_PLANNINGSUPPORT_H
