// RUN: lms-opt %s --lms-mark-arena-arguments | FileCheck %s

// COM: --lms-mark-arena-arguments marks the host's entry points: the public
// COM: functions with a body and a buffer argument that no function of the
// COM: module calls. Their
// COM: host then places the arguments they own in the arena it passes
// COM: (Arena.md, "Arguments in the arena").

// CHECK-LABEL: func.func @entry
// CHECK-SAME:    attributes {lms.arena_arguments}
func.func @entry(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = call @helper(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// COM: Called in the module: its callers pass its arguments.
// CHECK-LABEL: func.func @helper
// CHECK-NOT:     lms.arena_arguments
// CHECK-SAME:    {
func.func @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// COM: Private: not an entry point of the host.
// CHECK-LABEL: func.func private @internal
// CHECK-NOT:     lms.arena_arguments
// CHECK-SAME:    {
func.func private @internal(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// COM: External: no body to lower.
// CHECK-LABEL: func.func private @external
// CHECK-NOT:     lms.arena_arguments
func.func private @external(tensor<8xf32>) -> tensor<8xf32>

// COM: A second entry point.
// CHECK-LABEL: func.func @other
// CHECK-SAME:    attributes {lms.arena_arguments}
func.func @other(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = call @external(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// COM: No buffer argument (a driver's @main, which mlir-runner calls with
// COM: none): its signature stays.
// CHECK-LABEL: func.func @main()
// CHECK-NOT:     lms.arena_arguments
// CHECK-SAME:    {
func.func @main() {
  return
}
