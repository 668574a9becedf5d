// RUN: lms-opt %s -lms-rematerialize=arena=false -split-input-file -allow-unregistered-dialect -verify-diagnostics -o /dev/null
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-rematerialize="planner=magic arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANNER
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-rematerialize="time-limit=-3 arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-rematerialize=arena=false --lms-budget="12 potatoes" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET

// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-rematerialize="planner=checkpoint-all arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CKPT
// RUN: lms-opt --help | FileCheck %s --check-prefix=HELP

// COM: The planners are an enum option: the option parser refuses a name
// COM: outside the set (checkpoint-all cannot fit a budget: not offered), and
// COM: --help lists them.
// PLANNER: for the --planner option: Cannot find option named 'magic'!
// CKPT: for the --planner option: Cannot find option named 'checkpoint-all'!
// HELP:      --lms-rematerialize
// HELP:        --planner=<value>
// HELP-NEXT:     =heuristic
// HELP-NEXT:     =exact
// HELP-NEXT:     =moccasin
// HELP-NEXT:     =dtr
// HELP-NEXT:     =chen-greedy
// HELP-NEXT:     =chen-sqrt
// HELP-NEXT:     =segments
// HELP-NOT:      =checkpoint-all
// HELP:      --lms-report-memory
// TIME: error: invalid time-limit -3{{.*}}: expected a number of seconds >= 0
// BUDGET: error: invalid budget: invalid size '12 potatoes': unknown unit 'potatoes'

// COM: An op whose operands and results alone exceed the budget: the error is
// COM: at that op and names the smallest feasible budget.
func.func @too_small(%a: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<256xf32> attributes {lms.budget = "2KiB"} {
  // expected-error@+1 {{no plan fits the budget 2.00 KiB (2048 bytes): this op needs 3.00 KiB (3072 bytes) with its operands and results; the smallest feasible budget is 3.00 KiB (3072 bytes)}}
  %c = "test.add"(%a, %b) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %c : tensor<256xf32>
}

// -----

// COM: Ops with side effects (here: unknown ops, which may have any) are
// COM: never recomputed; when only recomputing them would fit, the error
// COM: names the planner and why, at the op where the planner got stuck (not
// COM: at the function, whose location prints its whole signature).
func.func @opaque(%x: tensor<256xf32>) -> tensor<256xf32> attributes {lms.budget = "3KiB"} {
  %a = "test.producer"(%x) : (tensor<256xf32>) -> tensor<256xf32>
  %b = "test.producer"(%x) : (tensor<256xf32>) -> tensor<256xf32>
  // expected-error@+1 {{the heuristic planner found no recomputation plan for @opaque that fits 3.00 KiB (3072 bytes): no plan found: stage 2 ('test.add') needs 4096 bytes}}
  %c = "test.add"(%b, %x) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d = "test.add"(%c, %a) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %d : tensor<256xf32>
}

// -----

// expected-error@+1 {{invalid 'lms.budget' attribute: invalid size '1.5 bananas': unknown unit 'bananas'}}
func.func @bad_attr(%x: tensor<256xf32>) -> tensor<256xf32> attributes {lms.budget = "1.5 bananas"} {
  return %x : tensor<256xf32>
}
