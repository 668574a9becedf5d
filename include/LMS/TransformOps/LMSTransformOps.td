//===- LMSTransformOps.td - transform.lms.* ops ------------*- tablegen -*-===//
//
// Transform dialect ops that run the LMS planners on payload functions, for
// IREE-style flows driven by transform scripts.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMOPS_LMSTRANSFORMOPS
#define LMS_TRANSFORMOPS_LMSTRANSFORMOPS

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

class LMSTransformOp<string mnemonic, list<Trait> traits = []>
    : Op<Transform_Dialect, "lms." # mnemonic,
         !listconcat([TransformOpInterface, TransformEachOpTrait,
                      DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
                      ReportTrackingListenerFailuresOpTrait], traits)> {
  let extraClassDeclaration = [{
    ::mlir::DiagnosedSilenceableFailure applyToOne(
        ::mlir::transform::TransformRewriter &rewriter,
        ::mlir::FunctionOpInterface target,
        ::mlir::transform::ApplyToEachResultList &results,
        ::mlir::transform::TransformState &state);
  }];
}

def LMSInsertSwapsOp : LMSTransformOp<"insert_swaps"> {
  let summary = "Offloads tensors of each target function to fit a budget";
  let description = [{
    Runs the swap planner of `--lms-insert-swaps` on every function the
    handle points to, in place. `budget` is bytes with a unit or a percentage
    of the function's peak ("" resolves as the pass does: the function's
    `lms.budget`, then `--lms-budget`, then the device's capacity); `device`
    is a preset name ("" for the module's DLTI spec or the default).

    ```mlir
    %f = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.lms.insert_swaps %f {budget = "12GiB", device = "v100-16g"}
        : !transform.any_op
    ```

    Fails definitely, with the planner's diagnostic at the function, when no
    plan fits (a budget below the smallest feasible one, a dynamic shape).
    Reads the handle and modifies the payload.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedStrAttr<StrAttr, "">:$budget,
                       DefaultValuedStrAttr<StrAttr, "">:$device,
                       DefaultValuedStrAttr<StrAttr, "lms">:$planner);
  let results = (outs);
  let assemblyFormat = "$target attr-dict `:` type($target)";
}

def LMSRematerializeOp : LMSTransformOp<"rematerialize"> {
  let summary = "Recomputes values of each target function to fit a budget";
  let description = [{
    Runs the rematerialization planner of `--lms-rematerialize` on every
    function the handle points to, in place. `budget` and `device` as for
    `transform.lms.insert_swaps`; `planner` is heuristic, exact, moccasin,
    dtr, chen-greedy, chen-sqrt or segments; `time_limit` caps the search in seconds (0:
    no cap, the search is bounded by work and reproducible).

    ```mlir
    transform.lms.rematerialize %f {budget = "60%"} : !transform.any_op
    ```

    Fails definitely, with the planner's diagnostic, when no plan fits.
    Reads the handle and modifies the payload.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedStrAttr<StrAttr, "">:$budget,
                       DefaultValuedStrAttr<StrAttr, "">:$device,
                       DefaultValuedStrAttr<StrAttr, "heuristic">:$planner,
                       DefaultValuedAttr<F64Attr, "0.0">:$time_limit);
  let results = (outs);
  let assemblyFormat = "$target attr-dict `:` type($target)";
}

def LMSScheduleOp : LMSTransformOp<"schedule"> {
  let summary = "Reorders the ops of each target function for a smaller peak";
  let description = [{
    Runs `--lms-schedule` on every function the handle points to: its ops
    are reordered where SSA uses, memory effects and the terminator allow,
    and the new order is kept only when the analysed peak drops. Ops are
    moved, never created or erased, so handles to them stay valid.
    `iterations` is the search's work limit (0: from the function's size),
    `seed` its seed.

    ```mlir
    transform.lms.schedule %f : !transform.any_op
    ```

    Fails definitely, with the analysis' diagnostic, on a function it cannot
    analyse (a dynamic shape without a bound). Reads the handle and modifies
    the payload.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedAttr<I64Attr, "0">:$iterations,
                       DefaultValuedAttr<I64Attr, "1">:$seed);
  let results = (outs);
  let assemblyFormat = "$target attr-dict `:` type($target)";
}

def LMSSplitOp : LMSTransformOp<"split"> {
  let summary = "Splits the op that sets each target function's smallest "
                "feasible budget into loops over slices";
  let description = [{
    Runs `--lms-split` on every function the handle points to: the op that
    sets the smallest feasible budget, with its neighbours along a parallel
    dimension, becomes loops over `slices` slices (`loop`: the anchor's loop
    to split, -1: measured). With `slices = 0`, splits while the smallest
    feasible budget is above `budget` (a size such as `"12GiB"`; required
    then), with the fewest slices that bring it within.

    ```mlir
    transform.lms.split %f {slices = 8} : !transform.any_op
    transform.lms.split %f {budget = "12GiB"} : !transform.any_op
    ```

    The split ops are erased and new ones created inside loops: handles to
    ops of the function other than the function itself are invalidated.
    Fails definitely, with the pass's diagnostic, on an op that cannot be
    split (with `slices`), a slice count that does not divide the loop, a
    malformed budget or a function it cannot analyse. Reads the handle and
    modifies the payload.
  }];
  let arguments = (ins TransformHandleTypeInterface:$target,
                       DefaultValuedAttr<I64Attr, "0">:$slices,
                       DefaultValuedAttr<I64Attr, "-1">:$loop,
                       DefaultValuedAttr<StrAttr, "\"\"">:$budget);
  let results = (outs);
  let assemblyFormat = "$target attr-dict `:` type($target)";
}

def LMSReportPeakOp : LMSTransformOp<"report_peak"> {
  let summary = "Emits the peak device memory of each target as a remark";
  let description = [{
    Emits a remark at every target function with its analysed peak device
    bytes ("peak N bytes"), for transform scripts that log or test where the
    memory goes. Reads the handle only.

    ```mlir
    transform.lms.report_peak %f : !transform.any_op
    ```
  }];
  let arguments = (ins TransformHandleTypeInterface:$target);
  let results = (outs);
  let assemblyFormat = "$target attr-dict `:` type($target)";
}

#endif // LMS_TRANSFORMOPS_LMSTRANSFORMOPS
