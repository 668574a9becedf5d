// RUN: lms-opt %s | FileCheck %s
// RUN: lms-opt %s | lms-opt | FileCheck %s
// RUN: lms-opt %s --mlir-print-op-generic | lms-opt | FileCheck %s
// RUN: lms-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// COM: The pretty form of every op round-trips, through the generic form too.

// CHECK-LABEL: func.func @swap_pair
// CHECK-SAME: (%[[T:.*]]: tensor<1024x1024xf32>)
// CHECK: %[[H:.*]] = lms.swap_out %[[T]] : tensor<1024x1024xf32> -> !lms.host<tensor<1024x1024xf32>>
// CHECK: lms.swap_wait %[[H]] : !lms.host<tensor<1024x1024xf32>>
// CHECK: %[[U:.*]] = lms.swap_in %[[H]] : !lms.host<tensor<1024x1024xf32>> -> tensor<1024x1024xf32>
// CHECK: return %[[U]]
// GENERIC-LABEL: sym_name = "swap_pair"
// GENERIC: "lms.swap_out"(%{{.*}}) : (tensor<1024x1024xf32>) -> !lms.host<tensor<1024x1024xf32>>
// GENERIC: "lms.swap_wait"(%{{.*}}) : (!lms.host<tensor<1024x1024xf32>>) -> ()
// GENERIC: "lms.swap_in"(%{{.*}}) : (!lms.host<tensor<1024x1024xf32>>) -> tensor<1024x1024xf32>
func.func @swap_pair(%t: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %h = lms.swap_out %t : tensor<1024x1024xf32> -> !lms.host<tensor<1024x1024xf32>>
  lms.swap_wait %h : !lms.host<tensor<1024x1024xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<1024x1024xf32>> -> tensor<1024x1024xf32>
  return %u : tensor<1024x1024xf32>
}

// COM: Dynamic shapes, encodings, i1 and a synchronous swap-out (no wait); a
// COM: handle swapped in twice.
// CHECK-LABEL: func.func @dynamic_and_sync
// CHECK: lms.swap_out %{{.*}} : tensor<?x8xi1> -> !lms.host<tensor<?x8xi1>>
// CHECK-NOT: lms.swap_wait
// CHECK: lms.swap_in %{{.*}} : !lms.host<tensor<?x8xi1>> -> tensor<?x8xi1>
// CHECK: lms.swap_in %{{.*}} : !lms.host<tensor<?x8xi1>> -> tensor<?x8xi1>
func.func @dynamic_and_sync(%t: tensor<?x8xi1>) -> (tensor<?x8xi1>, tensor<?x8xi1>) {
  %h = lms.swap_out %t : tensor<?x8xi1> -> !lms.host<tensor<?x8xi1>>
  %a = lms.swap_in %h : !lms.host<tensor<?x8xi1>> -> tensor<?x8xi1>
  %b = lms.swap_in %h : !lms.host<tensor<?x8xi1>> -> tensor<?x8xi1>
  return %a, %b : tensor<?x8xi1>, tensor<?x8xi1>
}

// COM: Handles can cross function boundaries.
// CHECK-LABEL: func.func @host_argument
// CHECK-SAME: !lms.host<tensor<2x3xbf16>>
func.func @host_argument(%h: !lms.host<tensor<2x3xbf16>>) -> tensor<2x3xbf16> {
  %u = lms.swap_in %h : !lms.host<tensor<2x3xbf16>> -> tensor<2x3xbf16>
  return %u : tensor<2x3xbf16>
}

// CHECK-LABEL: func.func @recompute
// CHECK: %[[R:.*]]:2 = lms.recompute(%{{.*}}, %{{.*}}) : (tensor<64xf32>, f32) -> (tensor<64xf32>, tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<64xf32>, %[[S:.*]]: f32):
// CHECK: linalg.fill ins(%[[S]] : f32)
// CHECK: linalg.add
// CHECK: lms.yield %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT: }
// CHECK: return %[[R]]#0, %[[R]]#1
// GENERIC-LABEL: sym_name = "recompute"
// GENERIC: "lms.recompute"(%{{.*}}, %{{.*}}) ({
// GENERIC: "lms.yield"
// GENERIC: }) : (tensor<64xf32>, f32) -> (tensor<64xf32>, tensor<64xf32>)
func.func @recompute(%a: tensor<64xf32>, %s: f32) -> (tensor<64xf32>, tensor<64xf32>) {
  %r:2 = lms.recompute (%a, %s) : (tensor<64xf32>, f32) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%x: tensor<64xf32>, %y: f32):
    %e = tensor.empty() : tensor<64xf32>
    %f = linalg.fill ins(%y : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.add ins(%x, %f : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    lms.yield %sum, %f : tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}

// COM: A recomputation without inputs (from constants only) and one without
// COM: results are both valid.
// CHECK-LABEL: func.func @recompute_edge_cases
// CHECK: lms.recompute() : () -> tensor<4xf32>
// CHECK: lms.recompute(%{{.*}}) : (tensor<4xf32>) -> ()
// CHECK-NEXT: ^bb0
// CHECK-NEXT: lms.yield
// CHECK-NEXT: }
func.func @recompute_edge_cases(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = lms.recompute () : () -> tensor<4xf32> {
    %k = arith.constant dense<1.0> : tensor<4xf32>
    lms.yield %k : tensor<4xf32>
  }
  lms.recompute (%a) : (tensor<4xf32>) -> () {
  ^bb0(%x: tensor<4xf32>):
    lms.yield
  }
  return %c : tensor<4xf32>
}

// COM: After bufferization the host type may hold a memref.
// CHECK-LABEL: func.func @host_memref
// CHECK-SAME: !lms.host<memref<16xf32>>
func.func @host_memref(%h: !lms.host<memref<16xf32>>) {
  return
}

// COM: After bufferization the swap ops work on memrefs; the host copy is
// COM: contiguous while the device buffer may have any layout.
// CHECK-LABEL: func.func @buffers
// CHECK: lms.swap_out %{{.*}} : memref<4x8xf32, strided<[16, 1]>> -> !lms.host<memref<4x8xf32>>
// CHECK: lms.swap_in %{{.*}} : !lms.host<memref<4x8xf32>> -> memref<4x8xf32>
func.func @buffers(%m: memref<4x8xf32, strided<[16, 1]>>) -> memref<4x8xf32> {
  %h = lms.swap_out %m : memref<4x8xf32, strided<[16, 1]>> -> !lms.host<memref<4x8xf32>>
  lms.swap_wait %h : !lms.host<memref<4x8xf32>>
  %u = lms.swap_in %h : !lms.host<memref<4x8xf32>> -> memref<4x8xf32>
  return %u : memref<4x8xf32>
}
