// RUN: lms-opt %s --lms-insert-swaps=arena=false -allow-unregistered-dialect | FileCheck %s
// RUN: lms-opt %s --lms-insert-swaps="stats=true arena=false" -allow-unregistered-dialect -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: lms-opt %s --lms-insert-swaps=arena=false -allow-unregistered-dialect | lms-opt --lms-report-memory=arena=false -allow-unregistered-dialect -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: lms-opt %s --lms-insert-swaps=arena=false -allow-unregistered-dialect | lms-opt -lms-strip -allow-unregistered-dialect > %t.stripped.mlir
// RUN: lms-opt %s -allow-unregistered-dialect > %t.original.mlir
// RUN: diff %t.original.mlir %t.stripped.mlir

// COM: %x is offloaded while the 12-byte temporary is live and prefetched
// COM: three ops before its next use (the link carries 4 bytes a second,
// COM: ops take 1 s). The view %v of it, read after the gap, is re-derived
// COM: from the swapped-in value right before that use, not at the prefetch
// COM: point: the first reader of a swap-in is where the lowered program
// COM: waits for its copy, and the plan waits at the next use. With the
// COM: view at the prefetch point the program stalled for the whole copy
// COM: there (13.0 s, a 5.00 s stall) where the plan said 10.5 s.
// CHECK-LABEL: func.func @view_read_after_gap
// CHECK:      %[[H:.*]] = lms.swap_out %arg0
// CHECK:      %[[IN:.*]] = lms.swap_in %[[H]]
// CHECK-NEXT: "test.op"
// CHECK-NEXT: "test.op"
// CHECK-NEXT: %[[LAST:.*]] = "test.op"
// CHECK-NEXT: %[[V:.*]] = tensor.expand_shape %[[IN]] {{.*}} {lms.rederived = 0 : i64}
// CHECK-NEXT: "test.op"(%[[LAST]], %[[IN]], %[[V]])

// STATS: lms-insert-swaps: 1 tensors-swapped, 1 swap-outs, 1 swap-ins, 10 bytes-to-host, 10 bytes-to-device, 2500000 estimated-stall-us
// REPORT: estimated time on v100-16g (DLTI): 10.5 s over 13 ops (compute 8.00 s, stall 2.50 s
#slow = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 4.0 : f64, "lms.d2h_bandwidth" = 4.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #slow} {
func.func @view_read_after_gap(%x: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 20 : i64} {
  %v = tensor.expand_shape %x [[0, 1]] output_shape [2, 5] : tensor<10xi8> into tensor<2x5xi8>
  %c0 = "test.op"(%x) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<4xi8>
  %c1 = "test.op"(%c0) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>) -> tensor<12xi8>
  %c2 = "test.op"(%c1) {lms.cost = {seconds = 1.0}} : (tensor<12xi8>) -> tensor<4xi8>
  %c3 = "test.op"(%c2) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>) -> tensor<4xi8>
  %c4 = "test.op"(%c3) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>) -> tensor<4xi8>
  %c5 = "test.op"(%c4) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>) -> tensor<4xi8>
  %c6 = "test.op"(%c5) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>) -> tensor<4xi8>
  %d = "test.op"(%c6, %x, %v) {lms.cost = {seconds = 1.0}} : (tensor<4xi8>, tensor<10xi8>, tensor<2x5xi8>) -> tensor<1xi8>
  return %d : tensor<1xi8>
}
}
