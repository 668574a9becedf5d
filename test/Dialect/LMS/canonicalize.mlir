// RUN: lms-opt %s -canonicalize -cse -split-input-file -allow-unregistered-dialect | FileCheck %s
// RUN: lms-opt %s -loop-invariant-code-motion -split-input-file -allow-unregistered-dialect | FileCheck %s --check-prefix=LICM

// COM: Nothing folds a swap pair away: only --lms-strip undoes it.
// CHECK-LABEL: func.func @swap_pair_survives
// CHECK: %[[H:.*]] = lms.swap_out %arg0
// CHECK: lms.swap_wait %[[H]]
// CHECK: %[[U:.*]] = lms.swap_in %[[H]]
// CHECK: return %[[U]]
func.func @swap_pair_survives(%t: tensor<16xf32>) -> tensor<16xf32> {
  %h = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  lms.swap_wait %h : !lms.host<tensor<16xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  return %u : tensor<16xf32>
}

// -----

// COM: CSE merges neither two swap-outs of one tensor nor two swap-ins of one
// COM: handle: each is its own transfer and allocation.
// CHECK-LABEL: func.func @no_cse_of_swaps
// CHECK-COUNT-2: lms.swap_out
// CHECK-COUNT-2: lms.swap_in
func.func @no_cse_of_swaps(%t: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, !lms.host<tensor<16xf32>>) {
  %h1 = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %h2 = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %a = lms.swap_in %h1 : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  %b = lms.swap_in %h1 : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  return %a, %b, %h2 : tensor<16xf32>, tensor<16xf32>, !lms.host<tensor<16xf32>>
}

// -----

// COM: CSE merges neither two identical recomputations nor a recomputation
// COM: with the original computation.
// CHECK-LABEL: func.func @no_cse_of_recompute
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[ORIG:.*]] = linalg.exp ins(%arg0 {{.*}} outs(%[[E]]
// CHECK: %[[R1:.*]] = lms.recompute(%arg0)
// CHECK: linalg.exp
// CHECK: %[[R2:.*]] = lms.recompute(%arg0)
// CHECK: linalg.exp
// CHECK: return %[[ORIG]], %[[R1]], %[[R2]]
func.func @no_cse_of_recompute(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %orig = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r1 = lms.recompute (%a) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    %e1 = tensor.empty() : tensor<16xf32>
    %y = linalg.exp ins(%x : tensor<16xf32>) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
    lms.yield %y : tensor<16xf32>
  }
  %r2 = lms.recompute (%a) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    %e2 = tensor.empty() : tensor<16xf32>
    %y = linalg.exp ins(%x : tensor<16xf32>) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
    lms.yield %y : tensor<16xf32>
  }
  return %orig, %r1, %r2 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// COM: Unused swap-ins, swap-outs and recomputations are still dead code; a
// COM: swap-out kept alive by its wait stays.
// CHECK-LABEL: func.func @dead_code
// CHECK-NEXT: %[[H:.*]] = lms.swap_out %arg0
// CHECK-NEXT: lms.swap_wait %[[H]]
// CHECK-NEXT: return
func.func @dead_code(%t: tensor<16xf32>) {
  %h = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %dead = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %r = lms.recompute (%t) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    lms.yield %x : tensor<16xf32>
  }
  lms.swap_wait %h : !lms.host<tensor<16xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  return
}

// -----

// COM: Unrelated ops are still optimized across lms ops: pure ops are merged,
// COM: and loads are merged across a swap wait (its effect is on device memory
// COM: of the lms dialect, not on the memref).
// CHECK-LABEL: func.func @unrelated_cse
// CHECK: arith.addf
// CHECK-NOT: arith.addf
// CHECK: memref.load
// CHECK-NOT: memref.load
// CHECK: return
func.func @unrelated_cse(%t: tensor<16xf32>, %f: f32, %m: memref<4xf32>, %i: index) -> (f32, f32, f32, f32) {
  %a = arith.addf %f, %f : f32
  %h = lms.swap_out %t : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %l1 = memref.load %m[%i] : memref<4xf32>
  lms.swap_wait %h : !lms.host<tensor<16xf32>>
  %l2 = memref.load %m[%i] : memref<4xf32>
  %b = arith.addf %f, %f : f32
  return %a, %b, %l1, %l2 : f32, f32, f32, f32
}

// -----

// COM: LICM hoists pure ops out of a loop around lms ops, but never a swap-in
// COM: or a recomputation (each iteration allocates its own).
// LICM-LABEL: func.func @licm
// LICM: arith.mulf
// LICM: scf.for
// LICM: lms.swap_in
// LICM: lms.recompute
// LICM: scf.yield
func.func @licm(%h: !lms.host<tensor<16xf32>>, %f: f32, %lb: index, %ub: index, %s: index) -> f32 {
  %r = scf.for %iv = %lb to %ub step %s iter_args(%acc = %f) -> f32 {
    %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
    %c = lms.recompute (%u) : (tensor<16xf32>) -> tensor<16xf32> {
    ^bb0(%x: tensor<16xf32>):
      lms.yield %x : tensor<16xf32>
    }
    %m = arith.mulf %f, %f : f32
    "test.use"(%u, %c) : (tensor<16xf32>, tensor<16xf32>) -> ()
    %n = arith.addf %acc, %m : f32
    scf.yield %n : f32
  }
  return %r : f32
}
