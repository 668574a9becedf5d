// RUN: lms-opt %s -allow-unregistered-dialect -split-input-file --lms-insert-swaps | FileCheck %s
// RUN: lms-opt %s -allow-unregistered-dialect -split-input-file --lms-insert-swaps --lms-strip | FileCheck %s --check-prefix=STRIP
// RUN: lms-opt %s -allow-unregistered-dialect -split-input-file --lms-print-liveness -o /dev/null | FileCheck %s --check-prefix=LIVE

// COM: A constant is host-backed: the swap planner drops its device copy
// COM: over the gap (no swap-out, no wait: the global is on the host) and
// COM: fetches it again before the view read after the gap: the constant
// COM: once more, in an lms.recompute (CSE cannot merge it back), marked with
// COM: the position of the constant it copies; the view is re-derived from
// COM: it. --lms-strip gives back the input.
// CHECK-LABEL: func.func @refetch
// CHECK-NOT: lms.swap_out
// CHECK: %[[BIG:.*]] = "test.op"(%{{.*}}) : (tensor<256xf32>) -> tensor<2048xf32>
// CHECK-NEXT: %[[Y:.*]] = "test.op"(%[[BIG]])
// CHECK-NEXT: %[[W:.*]] = lms.recompute() : () -> tensor<1024xf32> {
// CHECK-NEXT: arith.constant {lms.rederived = 0 : i64} dense<2.500000e-01> : tensor<1024xf32>
// CHECK: %[[V:.*]] = tensor.extract_slice %[[W]][0] [512] [1]
// CHECK-NEXT: "test.op"(%[[V]], %[[Y]])
// STRIP-LABEL: func.func @refetch
// STRIP-NOT: lms.{{recompute|swap|rederived}}
// STRIP: %[[C:.*]] = arith.constant dense<2.500000e-01> : tensor<1024xf32>
// STRIP: tensor.extract_slice %[[C]][0] [512] [1]

// COM: The constant is counted from its first use (op 1 here), not from
// COM: where it is written: its device copy is uploaded there.
// LIVE-LABEL: // liveness of @refetch
// LIVE-NEXT: op 0 arith.constant: live-in: {%arg0} live-out: {%arg0, %cst}
// LIVE-NEXT: op 1 test.op:
func.func @refetch(%a: tensor<256xf32>) -> tensor<256xf32> attributes {lms.budget = 12000 : i64} {
  %w = arith.constant dense<0.25> : tensor<1024xf32>
  %x = "test.op"(%w, %a) : (tensor<1024xf32>, tensor<256xf32>) -> tensor<256xf32>
  %big = "test.op"(%x) : (tensor<256xf32>) -> tensor<2048xf32>
  %y = "test.op"(%big) : (tensor<2048xf32>) -> tensor<256xf32>
  %v = tensor.extract_slice %w[0] [512] [1] : tensor<1024xf32> to tensor<512xf32>
  %z = "test.op"(%v, %y) : (tensor<512xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %z : tensor<256xf32>
}

// -----

// COM: Weights written at the top, as torch-mlir does: each is counted
// COM: right before its first user, so the peak is one weight at a time.
// LIVE-LABEL: // liveness of @weights_on_top
// LIVE-NEXT: op 0 test.op: live-in: {%arg0} live-out: {%0} dying: {%arg0}
// LIVE-NEXT: op 1 arith.constant: live-in: {%0} live-out: {%0, %cst}
// LIVE-NEXT: op 2 test.op: live-in: {%0, %cst} live-out: {%1} dying: {%0, %cst}
// LIVE-NEXT: op 3 arith.constant: live-in: {%1} live-out: {%1, %cst_0}
// LIVE-NEXT: op 4 test.op:
// LIVE: // memory of @weights_on_top: peak 4608 bytes
// CHECK-LABEL: func.func @weights_on_top
// CHECK-NOT: lms.
func.func @weights_on_top(%a: tensor<64xf32>) -> tensor<64xf32> {
  %w1 = arith.constant dense<1.0> : tensor<1024xf32>
  %w2 = arith.constant dense<2.0> : tensor<1024xf32>
  %x = "test.op"(%a) : (tensor<64xf32>) -> tensor<64xf32>
  %y = "test.op"(%x, %w1) : (tensor<64xf32>, tensor<1024xf32>) -> tensor<64xf32>
  %z = "test.op"(%y, %w2) : (tensor<64xf32>, tensor<1024xf32>) -> tensor<64xf32>
  return %z : tensor<64xf32>
}
