// RUN: lms-opt %s -split-input-file -verify-diagnostics -lms-rematerialize="arena=true" -o /dev/null

// COM: The same function for recomputation. Below what the allocations of
// COM: their own need (12 KiB: the arguments and both results), the error
// COM: says so at the function (not "the arguments at entry": those are
// COM: 8 KiB).

// expected-error @+1 {{no plan fits the budget 11.7 KiB (12000 bytes): its arguments, results and buffers that cross calls need 12.0 KiB (12288 bytes) at their peak beside the arena (no plan that keeps them as they are fits less)}}
func.func @step(%w: tensor<1024xf32>, %x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) attributes {lms.budget = 12000 : i64} {
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.mul ins(%w, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %b = linalg.exp ins(%a : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.exp ins(%b : tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%a, %c : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %e4 = tensor.empty() : tensor<1024xf32>
  %g = linalg.mul ins(%d, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) -> tensor<1024xf32>
  return %g, %d : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// COM: Above it, the planner's error at the op it got stuck at, and the
// COM: note.

// expected-note @+1 {{with arena=true the budget holds the arena and, beside it, 12.0 KiB (12288 bytes) of @step's arguments, results and buffers that cross calls (allocations of their own, at their peak), which the plan keeps as they are}}
func.func @step(%w: tensor<1024xf32>, %x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) attributes {lms.budget = 14000 : i64} {
  %e0 = tensor.empty() : tensor<1024xf32>
// expected-error @+1 {{the heuristic planner found no recomputation plan for @step that fits 13.7 KiB (14000 bytes)}}
  %a = linalg.mul ins(%w, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %b = linalg.exp ins(%a : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.exp ins(%b : tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%a, %c : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %e4 = tensor.empty() : tensor<1024xf32>
  %g = linalg.mul ins(%d, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) -> tensor<1024xf32>
  return %g, %d : tensor<1024xf32>, tensor<1024xf32>
}
