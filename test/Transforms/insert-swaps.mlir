// RUN: lms-opt %s -lms-insert-swaps=arena=false -split-input-file -allow-unregistered-dialect | FileCheck %s

// COM: A device where each op below takes 1 s (lms.cost) and a 10-byte tensor
// COM: takes 1 s to copy either way.

// COM: %x (10 bytes) is read by the first and the last op. Memory per op:
// COM: 11, 12, 20, 20, 12, 12. With a budget of 12 it must be off the device
// COM: during the two 20-byte ops. The copy-out hides behind the second op
// COM: (released after it), the copy-in behind the fifth (prefetched before
// COM: it); the last op reads the swapped-in copy.
// CHECK-LABEL: func.func @hidden
// CHECK-SAME: (%[[X:.*]]: tensor<10xi8>)
// CHECK-NEXT: %[[C0:.*]] = "test.op"(%[[X]])
// CHECK-NEXT: %[[H:.*]] = lms.swap_out %[[X]] : tensor<10xi8> -> !lms.host<tensor<10xi8>>
// CHECK-NEXT: %[[C1:.*]] = "test.op"(%[[C0]])
// CHECK-NEXT: lms.swap_wait %[[H]]
// CHECK-NEXT: %[[C2:.*]] = "test.op"(%[[C1]])
// CHECK-NEXT: %[[C3:.*]] = "test.op"(%[[C2]])
// CHECK-NEXT: %[[U:.*]] = lms.swap_in %[[H]] : !lms.host<tensor<10xi8>> -> tensor<10xi8>
// CHECK-NEXT: %[[C4:.*]] = "test.op"(%[[C3]])
// CHECK-NEXT: "test.op"(%[[U]], %[[C4]])
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @hidden(%x: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 12 : i64} {
  %c0 = "test.op"(%x) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<1xi8>
  %c1 = "test.op"(%c0) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<1xi8>
  %c2 = "test.op"(%c1) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<9xi8>
  %c3 = "test.op"(%c2) {lms.cost = {seconds = 1.0}} : (tensor<9xi8>) -> tensor<1xi8>
  %c4 = "test.op"(%c3) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<1xi8>
  %out = "test.op"(%x, %c4) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>, tensor<1xi8>) -> tensor<1xi8>
  return %out : tensor<1xi8>
}
}

// -----

// COM: Memory per op: 15, 20, 20, 20, 20, 16. A budget of 16 needs %x off the
// COM: device from the second op to the fifth: no compute is left to hide the
// COM: copies, so the swap-out is synchronous (no wait: released at once) and
// COM: the swap-in comes just before the last op.
// CHECK-LABEL: func.func @forced
// CHECK-NEXT: "test.op"
// CHECK-NEXT: %[[H:.*]] = lms.swap_out
// CHECK-COUNT-4: "test.op"
// CHECK-NOT: lms.swap_wait
// CHECK-NEXT: %[[U:.*]] = lms.swap_in %[[H]]
// CHECK-NEXT: "test.op"(%[[U]],
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @forced(%x: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 16 : i64} {
  %c0 = "test.op"(%x) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<5xi8>
  %c1 = "test.op"(%c0) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c2 = "test.op"(%c1) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c3 = "test.op"(%c2) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %c4 = "test.op"(%c3) {lms.cost = {seconds = 1.0}} : (tensor<5xi8>) -> tensor<5xi8>
  %out = "test.op"(%x, %c4) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>, tensor<5xi8>) -> tensor<1xi8>
  return %out : tensor<1xi8>
}
}

// -----

// COM: Two arguments: %v is first read by the last op, %w by ops 0, 3 and 6.
// COM: Memory per op without LMS: 21, 31, 32, 22, 31, 32, 22, 12; the
// COM: arguments alone take 20 at the entry, which is the smallest budget.
// COM: At 20, %v leaves the device at the entry and %w over both of its
// COM: gaps, the second time from the same host copy: one swap-out of %w and
// COM: two swap-ins of its handle.
// CHECK-LABEL: func.func @argument_and_reuse
// CHECK-SAME: (%[[W:.*]]: tensor<10xi8>, %[[V:.*]]: tensor<10xi8>)
// CHECK-NEXT: %[[HV:.*]] = lms.swap_out %[[V]]
// CHECK: %[[HW:.*]] = lms.swap_out %[[W]]
// CHECK-NOT: lms.swap_out
// CHECK: %[[W1:.*]] = lms.swap_in %[[HW]]
// CHECK: "test.op"(%{{.*}}, %[[W1]])
// CHECK-NOT: lms.swap_out
// CHECK: %[[W2:.*]] = lms.swap_in %[[HW]]
// CHECK: "test.op"(%{{.*}}, %[[W2]])
// CHECK: %[[V1:.*]] = lms.swap_in %[[HV]]
// CHECK-NEXT: "test.op"(%{{.*}}, %[[V1]])
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @argument_and_reuse(%w: tensor<10xi8>, %v: tensor<10xi8>) -> tensor<1xi8> attributes {lms.budget = 20 : i64} {
  %a0 = "test.op"(%w) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<1xi8>
  %a1 = "test.op"(%a0) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<10xi8>
  %a2 = "test.op"(%a1) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<1xi8>
  %a3 = "test.op"(%a2, %w) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>, tensor<10xi8>) -> tensor<1xi8>
  %a4 = "test.op"(%a3) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<10xi8>
  %a5 = "test.op"(%a4) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<1xi8>
  %a6 = "test.op"(%a5, %w) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>, tensor<10xi8>) -> tensor<1xi8>
  %a7 = "test.op"(%a6, %v) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>, tensor<10xi8>) -> tensor<1xi8>
  return %a7 : tensor<1xi8>
}
}

// -----

// COM: A function that fits is left alone.
// CHECK-LABEL: func.func @fits
// CHECK-NOT: lms.swap
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @fits(%x: tensor<10xi8>) -> tensor<10xi8> attributes {lms.budget = "1KiB"} {
  %y = "test.op"(%x) : (tensor<10xi8>) -> tensor<10xi8>
  return %y : tensor<10xi8>
}
}

// -----

// COM: An op with regions is one unit: %x is offloaded across the loop, whose
// COM: 9-byte temporary counts while it runs, and the loop body is not
// COM: touched. Memory: 11, 20 (the loop), 11.
// CHECK-LABEL: func.func @region
// CHECK: %[[H:.*]] = lms.swap_out %arg0
// CHECK: scf.for
// CHECK-NOT: lms.swap
// CHECK: scf.yield
// CHECK: lms.swap_in %[[H]]
#unit = #dlti.target_system_spec<"GPU" = #dlti.target_device_spec<
  "lms.h2d_bandwidth" = 10.0 : f64, "lms.d2h_bandwidth" = 10.0 : f64,
  "lms.op_overhead" = 0.0 : f64, "lms.copy_latency" = 0.0 : f64>>
module attributes {dlti.target_system_spec = #unit} {
func.func @region(%x: tensor<10xi8>, %n: index) -> tensor<1xi8> attributes {lms.budget = 12 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = "test.op"(%x) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>) -> tensor<1xi8>
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<1xi8> {
    %t = "test.op"(%acc) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<9xi8>
    %u = "test.op"(%t) {lms.cost = {seconds = 1.0}} : (tensor<9xi8>) -> tensor<1xi8>
    scf.yield %u : tensor<1xi8>
  }
  %c = "test.op"(%b) {lms.cost = {seconds = 1.0}} : (tensor<1xi8>) -> tensor<1xi8>
  %d = "test.op"(%x, %c) {lms.cost = {seconds = 1.0}} : (tensor<10xi8>, tensor<1xi8>) -> tensor<1xi8>
  return %d : tensor<1xi8>
}
}
