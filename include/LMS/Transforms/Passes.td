//===- Passes.td - LMS transformation passes ---------------*- tablegen -*-===//
//
// The passes that plan and rewrite programs for large model support.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_TRANSFORMS_PASSES_TD
#define LMS_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LMSStrip : Pass<"lms-strip"> {
  let summary = "Undo LMS rewriting: remove swaps and inline recomputations";
  let description = [{
    Turns a program rewritten by the LMS passes back into its origin, so that
    the two can be diffed:

    * every `lms.swap_in` whose handle comes from an `lms.swap_out` is replaced
      by the swapped-out value (chains of swaps collapse to the first value);
      the `lms.swap_wait` and `lms.swap_out` ops that are left unused go away;
    * every `lms.recompute` is inlined at its position, and each inlined op
      that is equivalent to an op that dominates it (the original
      computation) is replaced by that op, so the recomputation disappears.

    Input:

    ```mlir
    %h = lms.swap_out %t : tensor<64xf32> -> !lms.host<tensor<64xf32>>
    lms.swap_wait %h : !lms.host<tensor<64xf32>>
    ...
    %u = lms.swap_in %h : !lms.host<tensor<64xf32>> -> tensor<64xf32>
    %r = lms.recompute (%a) : (tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%x: tensor<64xf32>):
      %e = tensor.empty() : tensor<64xf32>
      %y = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
      lms.yield %y : tensor<64xf32>
    }
    "use"(%u, %r) : (tensor<64xf32>, tensor<64xf32>) -> ()
    ```

    Output (where `%y0` is the original `linalg.exp` of `%a`):

    ```mlir
    "use"(%t, %y0) : (tensor<64xf32>, tensor<64xf32>) -> ()
    ```

    A swap-in whose handle is not produced by an `lms.swap_out` (a block
    argument of type `!lms.host`) cannot be undone; the pass leaves it and
    emits a warning at it.
  }];
  let statistics = [
    Statistic<"numSwapsRemoved", "swaps-removed",
              "Number of lms.swap_in ops replaced by their original value">,
    Statistic<"numRecomputesInlined", "recomputes-inlined",
              "Number of lms.recompute ops inlined">,
    Statistic<"numOpsMerged", "ops-merged",
              "Number of inlined ops replaced by an equivalent original">
  ];
}

#endif // LMS_TRANSFORMS_PASSES_TD
