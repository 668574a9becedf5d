// RUN: lms-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file -verify-diagnostics | FileCheck %s

// COM: One-shot bufferization turns a swapped tensor program into buffers:
// COM: the swap-out reads the buffer of its source, the swap-in allocates a
// COM: contiguous device buffer, the wait is untouched; no copies are added.
// CHECK-LABEL: func.func @swapped
// CHECK-SAME: (%[[A:.*]]: memref<16xf32>, %[[B:.*]]: memref<16xf32>)
// CHECK: %[[X:.*]] = memref.alloc() {{.*}} : memref<16xf32>
// CHECK: linalg.exp ins(%[[A]] : memref<16xf32>) outs(%[[X]] : memref<16xf32>)
// CHECK: %[[H:.*]] = lms.swap_out %[[X]] : memref<16xf32> -> !lms.host<memref<16xf32>>
// CHECK: lms.swap_wait %[[H]] : !lms.host<memref<16xf32>>
// CHECK: %[[U:.*]] = lms.swap_in %[[H]] : !lms.host<memref<16xf32>> -> memref<16xf32>
// CHECK: linalg.add ins(%[[U]], %{{.*}} : memref<16xf32>, memref<16xf32>)
// CHECK-NOT: memref.copy
func.func @swapped(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %h = lms.swap_out %x : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %e2 = tensor.empty() : tensor<16xf32>
  %y = linalg.exp ins(%b : tensor<16xf32>) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
  lms.swap_wait %h : !lms.host<tensor<16xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  %e3 = tensor.empty() : tensor<16xf32>
  %z = linalg.add ins(%u, %y : tensor<16xf32>, tensor<16xf32>) outs(%e3 : tensor<16xf32>) -> tensor<16xf32>
  return %z : tensor<16xf32>
}

// -----

// COM: Dynamic shapes: the host copy and the swapped-in buffer keep them.
// CHECK-LABEL: func.func @dynamic
// CHECK: lms.swap_out %{{.*}} : memref<?x4xf32> -> !lms.host<memref<?x4xf32>>
// CHECK: lms.swap_in %{{.*}} : !lms.host<memref<?x4xf32>> -> memref<?x4xf32>
func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %h = lms.swap_out %a : tensor<?x4xf32> -> !lms.host<tensor<?x4xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<?x4xf32>> -> tensor<?x4xf32>
  return %u : tensor<?x4xf32>
}

// -----

// COM: A handle that crosses a function boundary cannot be bufferized.
func.func @handle_argument(%h: !lms.host<tensor<4xf32>>) -> tensor<4xf32> {
  // expected-error@+2 {{'lms.swap_in' op cannot be bufferized: its handle is not the result of a bufferized 'lms.swap_out'}}
  // expected-error@+1 {{failed to bufferize op}}
  %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<4xf32>
  return %u : tensor<4xf32>
}
