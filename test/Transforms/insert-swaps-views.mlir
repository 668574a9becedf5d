// RUN: lms-opt %s -lms-insert-swaps=arena=false -allow-unregistered-dialect | FileCheck %s
// RUN: lms-opt %s -lms-insert-swaps=arena=false -allow-unregistered-dialect | lms-opt -lms-strip -allow-unregistered-dialect > %t.stripped.mlir
// RUN: lms-opt %s -allow-unregistered-dialect > %t.original.mlir
// RUN: diff %t.original.mlir %t.stripped.mlir

// COM: %x (10 bytes) is read after the gap both directly and through a view
// COM: made before the gap (as every reshape of an exported model is). Two
// COM: values of the buffer cross the gap; %x is offloaded and the view is
// COM: re-derived from the swapped-in value, marked with the position of the
// COM: view it copies (op 0) so that --lms-strip merges it back. Before,
// COM: such a buffer could not be offloaded at all and the budget of 16 was
// COM: infeasible. Memory per op: 15, 20, 20, 20, 20, 16.
// CHECK-LABEL: func.func @view_crosses_gap
// CHECK-SAME: (%[[X:.*]]: tensor<10xi8>)
// CHECK:      %[[V:.*]] = tensor.expand_shape %[[X]]
// CHECK:      %[[H:.*]] = lms.swap_out %[[X]]
// CHECK:      %[[U:.*]] = lms.swap_in %[[H]]
// CHECK-NEXT: %[[V2:.*]] = tensor.expand_shape %[[U]] {{\[\[}}0, 1]] output_shape [2, 5] {lms.rederived = 0 : i64}
// CHECK:      "test.op"(%[[U]], %[[V2]], %{{.*}})
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @view_crosses_gap(%x: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 16 : i64} {
  %v = tensor.expand_shape %x [[0, 1]] output_shape [2, 5] : tensor<10xi8> into tensor<2x5xi8>
  %c0 = "test.op"(%x) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<5xi8>
  %c1 = "test.op"(%c0) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c2 = "test.op"(%c1) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c3 = "test.op"(%c2) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c4 = "test.op"(%c3) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %out = "test.op"(%x, %v, %c4) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>, tensor<2x5xi8>, tensor<5xi8>) -> tensor<1xi8>
  return %out : tensor<1xi8>
}
}
