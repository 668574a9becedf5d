// RUN: lms-opt %s -lms-insert-swaps=arena=false -split-input-file -allow-unregistered-dialect -verify-diagnostics -o /dev/null
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-insert-swaps="planner=magic arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANNER
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-insert-swaps=arena=false --lms-budget="12 potatoes" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-insert-swaps="device=tpu arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE

// PLANNER: for the --planner option: Cannot find option named 'magic'!
// BUDGET: error: invalid budget: invalid size '12 potatoes': unknown unit 'potatoes'
// DEVICE: error: unknown device preset 'tpu'

// COM: An op whose operands and results alone exceed the budget: the error is
// COM: at that op and names the smallest feasible budget.
func.func @too_small(%a: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<256xf32> attributes {lms.budget = "2KiB"} {
  // expected-error@+1 {{budget 2.00 KiB (2048 bytes) is below the smallest feasible budget 3.00 KiB (3072 bytes) of this op: its operands, results and temporaries need 3.00 KiB}}
  %c = "test.add"(%a, %b) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %c : tensor<256xf32>
}

// -----

// COM: The arguments are on the device when the function starts.
// expected-error@+1 {{budget 1.00 KiB (1024 bytes) is below the smallest feasible budget 2.00 KiB (2048 bytes) of @entry: the function's arguments are on the device when it starts: 2.00 KiB}}
func.func @entry(%a: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<1xf32> attributes {lms.budget = 1024 : i64} {
  %t = "test.reduce"(%a) : (tensor<256xf32>) -> tensor<1xf32>
  %u = "test.reduce"(%t, %b) : (tensor<1xf32>, tensor<256xf32>) -> tensor<1xf32>
  return %u : tensor<1xf32>
}

// -----

// expected-error@+1 {{invalid 'lms.budget' attribute: invalid size '1.5 bananas': unknown unit 'bananas'}}
func.func @bad_attribute(%a: tensor<4xf32>) -> tensor<4xf32> attributes {lms.budget = "1.5 bananas"} {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{'lms.budget' must be a size string ("12GiB", "60%") or an integer number of bytes, got 1.500000e+00 : f32}}
func.func @bad_attribute_type(%a: tensor<4xf32>) -> tensor<4xf32> attributes {lms.budget = 1.5 : f32} {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{cannot size %arg0 of type 'tensor<?xf32>': its shape is dynamic}}
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> attributes {lms.budget = "60%"} {
  return %a : tensor<?xf32>
}

// -----

// COM: Regression: an empty --lms-budget= silently meant "no budget".
// RUN: echo 'func.func @f() { return }' | not lms-opt --lms-budget= --lms-insert-swaps=arena=false 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: --lms-budget= needs a size (bytes with a unit, or a percentage such as 60%)
