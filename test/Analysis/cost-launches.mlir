// RUN: lms-opt %s -split-input-file --lms-report-memory=alignment=1 -o /dev/null | FileCheck %s

// COM: Only ops that launch work take time on the device. Views, allocations,
// COM: constants and terminators are free: not even the launch overhead
// COM: (here 1 s a launch, compute and memory immeasurably fast), so the
// COM: function costs its two kernels, the fill and the add. Before, every
// COM: op paid the overhead (9.00 s over 9 ops), and a rewrite that adds
// COM: views (re-derived after a swap-in or a recomputation) took longer
// COM: than its plan said.
// CHECK: estimated time on v100-16g (DLTI): 2.00 s over 9 ops (compute 2.00 s)
#dev = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.op_overhead" = 1.0 : f64, "lms.peak_flops" = 1.0e30 : f64,
  "lms.memory_bandwidth" = 1.0e30 : f64>>
module attributes {dlti.target_system_spec = #dev} {
func.func @launches(%a: tensor<2x4xf32>) -> tensor<8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = tensor.collapse_shape %f [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %x = tensor.expand_shape %c [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %s = linalg.add ins(%x, %a : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = tensor.collapse_shape %s [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}
}

// -----

// COM: An lms.recompute is inlined where it stands before it is lowered, so
// COM: each op it holds is a kernel of its own, timed with its launch, as
// COM: the recomputation planner timed it: the fill and the add, 2.00 s.
// COM: Before, the region was one kernel of their totals (1.00 s with free
// COM: views, and the rewrite of a plan looked cheaper than the plan).
// CHECK: estimated time on v100-16g (DLTI): 2.00 s over 3 ops (compute 2.00 s)
#dev = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.op_overhead" = 1.0 : f64, "lms.peak_flops" = 1.0e30 : f64,
  "lms.memory_bandwidth" = 1.0e30 : f64>>
module attributes {dlti.target_system_spec = #dev} {
func.func @recompute_launches(%a: tensor<8xf32>) -> tensor<8xf32> {
  %cst = arith.constant 1.0 : f32
  %r = lms.recompute(%cst, %a) : (f32, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%c: f32, %x: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %f = linalg.fill ins(%c : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %e2 = tensor.empty() : tensor<8xf32>
    %s = linalg.add ins(%f, %x : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
    lms.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
}

// -----

// COM: A constant fetched again inside an lms.recompute is uploaded there
// COM: (2 s for its 16 bytes on this link, after the 1 s its op costs as
// COM: at the top level), then the add (1 s). Before, the upload inside the
// COM: region was not timed (2.00 s), and a plan that re-fetched constants
// COM: looked faster than it runs.
// CHECK: estimated time on v100-16g (DLTI): 4.00 s over 4 ops (compute 4.00 s)
#dev = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.op_overhead" = 1.0 : f64, "lms.peak_flops" = 1.0e30 : f64,
  "lms.memory_bandwidth" = 1.0e30 : f64, "lms.h2d_bandwidth" = 8.0 : f64,
  "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #dev} {
func.func @refetch(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = lms.recompute() : () -> tensor<4xf32> {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    lms.yield %c : tensor<4xf32>
  }
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.add ins(%r, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
}

// -----

// COM: Offloading and fetching inside a loop's body (as --lms-insert-swaps
// COM: plans a body over the budget) is timed on the host link, each
// COM: iteration in the order of the body: the add's 1 s, 4 s out, 2 s in,
// COM: three times. Before, the copies were kernels of device-memory
// COM: traffic (a launch each: 9.00 s here, whatever the link).
// CHECK: estimated time on v100-16g (DLTI): 21.0 s over 5 ops (compute 21.0 s)
#dev = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.op_overhead" = 1.0 : f64, "lms.peak_flops" = 1.0e30 : f64,
  "lms.memory_bandwidth" = 1.0e30 : f64, "lms.h2d_bandwidth" = 2048.0 : f64,
  "lms.d2h_bandwidth" = 1024.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #dev} {
func.func @loop_copies(%a: tensor<1024xf32>, %init: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<1024xf32>) {
    %e = tensor.empty() : tensor<1024xf32>
    %t = linalg.add ins(%a, %acc : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
    %h = lms.swap_out %t : tensor<1024xf32> -> !lms.host<tensor<1024xf32>>
    lms.swap_wait %h : !lms.host<tensor<1024xf32>>
    %back = lms.swap_in %h : !lms.host<tensor<1024xf32>> -> tensor<1024xf32>
    scf.yield %back : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}
}

// -----

// COM: A call runs its callee's kernels, each with its launch, and waits
// COM: as long as the callee's own timeline stalls: @caller takes @callee's
// COM: fill and add (2 s), the 8 s @callee waits for its offload and fetch
// COM: (at 8 bytes a second, 4 s each, on the copy streams beside its
// COM: compute), and its own add (1 s). The copies are not added to the
// COM: caller's compute: only what they leave unhidden. Before, the call
// COM: was one kernel of the callee's totals (1 s), then the callee's
// COM: kernels without its stall (3 s): a caller looked faster than its
// COM: callee alone.
// CHECK-LABEL: @callee:
// CHECK: estimated time on v100-16g (DLTI): 10.0 s over {{[0-9]+}} ops (compute 2.00 s, stall 8.00 s
// CHECK-LABEL: @caller:
// CHECK: estimated time on v100-16g (DLTI): 11.0 s over {{[0-9]+}} ops (compute 11.0 s)
#dev = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.op_overhead" = 1.0 : f64, "lms.peak_flops" = 1.0e30 : f64,
  "lms.memory_bandwidth" = 1.0e30 : f64, "lms.h2d_bandwidth" = 8.0 : f64,
  "lms.d2h_bandwidth" = 8.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #dev} {
func.func @callee(%a: tensor<8xf32>) -> tensor<8xf32> {
  %cst = arith.constant 1.0 : f32
  %h = lms.swap_out %a : tensor<8xf32> -> !lms.host<tensor<8xf32>>
  lms.swap_wait %h : !lms.host<tensor<8xf32>>
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %d = lms.swap_in %h : !lms.host<tensor<8xf32>> -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %s = linalg.add ins(%f, %d : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
func.func @caller(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = call @callee(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.add ins(%r, %a : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
}
