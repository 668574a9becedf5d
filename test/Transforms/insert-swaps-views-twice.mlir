// RUN: lms-opt %s -lms-insert-swaps=arena=false -allow-unregistered-dialect | FileCheck %s
// RUN: lms-opt %s -lms-insert-swaps=arena=false -allow-unregistered-dialect | lms-opt -lms-strip -allow-unregistered-dialect > %t.stripped.mlir
// RUN: lms-opt %s -allow-unregistered-dialect > %t.original.mlir
// RUN: diff %t.original.mlir %t.stripped.mlir

// COM: Regression (property run seed 34, program 454): %x is offloaded over
// COM: two gaps. After the first swap-in its views %v1/%v2 are re-derived,
// COM: and %w1/%w2 are views of the re-derived %v2. At the second swap-in
// COM: the chain of %w2 runs through those re-derived views, which are
// COM: copied again: the copies must carry the id of the views they copy
// COM: (0 and 1, which %v1/%v2 carry as lms.original), not one of their
// COM: own. When they carried none, --lms-strip merged them with the
// COM: nearest equal view (%v3/%v4, an equal pair of views of %x), and the
// COM: copies of %w1/%w2 then matched no op: strip did not give back the
// COM: input (an extra expand/collapse pair remained).
// CHECK-LABEL: func.func @view_of_rederived_view
// CHECK:      tensor.expand_shape %arg0 {{.*}} {lms.original = 0 : i64}
// CHECK-NEXT: tensor.collapse_shape {{.*}} {lms.original = 1 : i64}
// CHECK-NEXT: tensor.expand_shape %arg0
// CHECK-NOT:  lms.original
// CHECK-SAME: tensor<10xi8> into tensor<2x5xi8>
// CHECK:      %[[H:.*]] = lms.swap_out %arg0
// CHECK:      lms.swap_in %[[H]]
// CHECK-NEXT: tensor.expand_shape {{.*}} {lms.rederived = 0 : i64}
// CHECK-NEXT: tensor.collapse_shape {{.*}} {lms.rederived = 1 : i64}
// CHECK:      %[[U2:.*]] = lms.swap_in %[[H]]
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[U2]] {{.*}} {lms.rederived = 0 : i64}
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[E]] {{.*}} {lms.rederived = 1 : i64}
// CHECK-NEXT: %[[E2:.*]] = tensor.expand_shape %[[C]] {{.*}} {lms.rederived = 2 : i64}
// CHECK-NEXT: %[[C2:.*]] = tensor.collapse_shape %[[E2]] {{.*}} {lms.rederived = 3 : i64}
// CHECK-NEXT: "test.op"(%{{.*}}, %[[U2]], %[[C2]])
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @view_of_rederived_view(%x: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 20 : i64} {
  %v1 = tensor.expand_shape %x [[0, 1]] output_shape [2, 5] : tensor<10xi8> into tensor<2x5xi8>
  %v2 = tensor.collapse_shape %v1 [[0, 1]] : tensor<2x5xi8> into tensor<10xi8>
  %v3 = tensor.expand_shape %x [[0, 1]] output_shape [2, 5] : tensor<10xi8> into tensor<2x5xi8>
  %v4 = tensor.collapse_shape %v3 [[0, 1]] : tensor<2x5xi8> into tensor<10xi8>
  %c0 = "test.op"(%v4) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<8xi8>
  %c1 = "test.op"(%c0) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %c2 = "test.op"(%c1) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %c3 = "test.op"(%c2) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %c4 = "test.op"(%c3) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %d = "test.op"(%c4, %x, %v2) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>, tensor<10xi8>, tensor<10xi8>) -> tensor<1xi8>
  %w1 = tensor.expand_shape %v2 [[0, 1]] output_shape [2, 5] : tensor<10xi8> into tensor<2x5xi8>
  %w2 = tensor.collapse_shape %w1 [[0, 1]] : tensor<2x5xi8> into tensor<10xi8>
  %e0 = "test.op"(%d) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<8xi8>
  %e1 = "test.op"(%e0) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %e2 = "test.op"(%e1) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %e3 = "test.op"(%e2) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>) -> tensor<8xi8>
  %f = "test.op"(%e3, %x, %w2) {lms.cost = {seconds = 1.0}} : (tensor<8xi8>, tensor<10xi8>, tensor<10xi8>) -> tensor<1xi8>
  return %f : tensor<1xi8>
}
}
