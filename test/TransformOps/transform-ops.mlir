// RUN: lms-opt %s --transform-interpreter -split-input-file -verify-diagnostics | FileCheck %s

// COM: transform.lms.* run the LMS planners from a transform script on the
// COM: functions a handle points to. Every tensor<1024xf32> is 4 KiB and
// COM: every tensor<4x1024xf32> 16 KiB; @f peaks at 36 KiB; the remark of
// COM: transform.lms.report_peak is at the function.

// CHECK-LABEL: func.func @f
// CHECK: lms.swap_out
// CHECK: lms.swap_in
// CHECK-LABEL: func.func @g
// CHECK: lms.recompute
module attributes {transform.with_named_sequence} {
  // expected-remark @below {{peak 36864 bytes}}
  func.func @f(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
    %cst = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    %e1 = tensor.empty() : tensor<4x1024xf32>
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %e3 = tensor.empty() : tensor<1024xf32>
    %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
    return %d : tensor<1024xf32>
  }
  // expected-remark @below {{peak 32768 bytes}}
  func.func @g(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
    %cst = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    %e1 = tensor.empty() : tensor<4x1024xf32>
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %e3 = tensor.empty() : tensor<1024xf32>
    %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
    return %d : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} attributes {sym_name = "f"} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.match ops{["func.func"]} attributes {sym_name = "g"} in %root : (!transform.any_op) -> !transform.any_op
    transform.lms.report_peak %f : !transform.any_op
    transform.lms.insert_swaps %f {budget = "32KiB"} : !transform.any_op
    transform.lms.rematerialize %g {budget = "32KiB"} : !transform.any_op
    transform.lms.report_peak %g : !transform.any_op
    transform.yield
  }
}

// -----

// COM: A budget below the smallest feasible one is the planner's error at
// COM: the op that needs more, and the script fails.
module attributes {transform.with_named_sequence} {
  func.func @h(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
    %e1 = tensor.empty() : tensor<4x1024xf32>
    // expected-error @below {{below the smallest feasible budget 32.0 KiB (32768 bytes) of this op}}
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    return %b : tensor<4x1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.lms.insert_swaps %f {budget = "1KiB"} : !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @k() {
    return
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{invalid planner 'magic': expected heuristic, exact, moccasin, dtr, chen-greedy, chen-sqrt or segments}}
    transform.lms.rematerialize %f {planner = "magic"} : !transform.any_op
    transform.yield
  }
}

// -----

// COM: transform.lms.schedule reorders: @s's fill %a moves after the
// COM: reduction, next to its use (36 KiB -> 32 KiB), and the handle to the
// COM: fill (moved, not recreated) is still valid afterwards.
// CHECK-LABEL: func.func @s
// CHECK: linalg.reduce
// CHECK: linalg.fill
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.add
module attributes {transform.with_named_sequence} {
  // expected-remark @below {{peak 32768 bytes}}
  func.func @s(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
    %cst = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<1024xf32>
    // expected-remark @below {{still tracked}}
    %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    %e1 = tensor.empty() : tensor<4x1024xf32>
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %e3 = tensor.empty() : tensor<1024xf32>
    %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
    return %d : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %first:2 = transform.split_handle %fill : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.lms.schedule %f : !transform.any_op
    transform.lms.report_peak %f : !transform.any_op
    transform.debug.emit_remark_at %first#0, "still tracked" : !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @n() {
    return
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{iterations and seed must not be negative}}
    transform.lms.schedule %f {iterations = -1} : !transform.any_op
    transform.yield
  }
}

// -----

// COM: transform.lms.split: the middle op of the chain (its two operands and
// COM: its result, 12 KiB) becomes a loop over 4 slices of 256 elements.
// CHECK-LABEL: func.func @sp
// CHECK: scf.for
// CHECK: linalg.mul ins(%{{.*}}, %{{.*}} : tensor<256xf32>, tensor<256xf32>)
// CHECK: tensor.insert_slice %{{.*}} : tensor<256xf32> into tensor<1024xf32>
module attributes {transform.with_named_sequence} {
  func.func @sp(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %e = tensor.empty() : tensor<1024xf32>
    %a = linalg.exp ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %b = linalg.mul ins(%a, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    return %b : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.lms.split %f {slices = 4} : !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @sq(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    return %x : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{slices must be at least 2 (or 0 to split for a budget)}}
    transform.lms.split %f {slices = 1} : !transform.any_op
    transform.yield
  }
}

// -----

module attributes {transform.with_named_sequence} {
  func.func @sr(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    return %x : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{with slices = 0, budget must be a size such as "12GiB", got ''}}
    transform.lms.split %f : !transform.any_op
    transform.yield
  }
}

// COM: The same script runs in upstream mlir-opt with the dialect plugin
// COM: (test/Plugins/transform-ops.test).

// -----

// COM: The planners insert ops and never replace the function's own (a
// COM: rewrite that does not fit is undone in place): handles to its ops stay
// COM: valid after them and point at the same ops (@k is offloaded, @k2 recomputed:
// COM: both peak at 36 KiB).
// CHECK-LABEL: func.func @k(
// CHECK: lms.swap_in
// CHECK-LABEL: func.func @k2(
// CHECK: lms.recompute
module attributes {transform.with_named_sequence} {
  func.func @k(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
    %cst = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    %e1 = tensor.empty() : tensor<4x1024xf32>
    // expected-remark @below {{the exp, after insert_swaps}}
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %e3 = tensor.empty() : tensor<1024xf32>
    // expected-remark @below {{the add, after insert_swaps}}
    %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
    return %d : tensor<1024xf32>
  }
  func.func @k2(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
    %cst = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<1024xf32>
    %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
    %e1 = tensor.empty() : tensor<4x1024xf32>
    // expected-remark @below {{the exp, after rematerialize}}
    %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<1024xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
    %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %e3 = tensor.empty() : tensor<1024xf32>
    // expected-remark @below {{the add, after rematerialize}}
    %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
    return %d : tensor<1024xf32>
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} attributes {sym_name = "k"} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.structured.match ops{["func.func"]} attributes {sym_name = "k2"} in %root : (!transform.any_op) -> !transform.any_op
    %exp = transform.structured.match ops{["linalg.exp"]} in %f : (!transform.any_op) -> !transform.any_op
    %add = transform.structured.match ops{["linalg.add"]} in %f : (!transform.any_op) -> !transform.any_op
    %exp2 = transform.structured.match ops{["linalg.exp"]} in %g : (!transform.any_op) -> !transform.any_op
    %add2 = transform.structured.match ops{["linalg.add"]} in %g : (!transform.any_op) -> !transform.any_op
    transform.lms.insert_swaps %f {budget = "32KiB"} : !transform.any_op
    transform.debug.emit_remark_at %exp, "the exp, after insert_swaps" : !transform.any_op
    transform.debug.emit_remark_at %add, "the add, after insert_swaps" : !transform.any_op
    transform.lms.rematerialize %g {budget = "32KiB"} : !transform.any_op
    transform.debug.emit_remark_at %exp2, "the exp, after rematerialize" : !transform.any_op
    transform.debug.emit_remark_at %add2, "the add, after rematerialize" : !transform.any_op
    transform.yield
  }
}
