// RUN: lms-opt %s -verify-diagnostics -lms-insert-swaps="arena=true" -o /dev/null

// COM: With arena=true the two arguments and the two results (12 KiB at
// COM: their peak) are allocations of their own beside the arena, which the
// COM: plan keeps as they are. Below what they and the op that needs most
// COM: take together, the error is at that op and a note at the function
// COM: names the 12 KiB (without the arena the function fits 14,000 live
// COM: bytes by offloading one tensor).

// expected-note @+1 {{with arena=true the budget holds the arena and, beside it, 12.0 KiB (12288 bytes) of @step's arguments, results and buffers that cross calls (allocations of their own, at their peak), which the plan keeps as they are}}
func.func @step(%w: tensor<1024xf32>, %x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) attributes {lms.budget = 14000 : i64} {
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.mul ins(%w, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
// expected-error @+1 {{budget 13.7 KiB (14000 bytes) is below the smallest feasible budget 20.0 KiB (20480 bytes) of this op}}
  %b = linalg.exp ins(%a : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.exp ins(%b : tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%a, %c : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %e4 = tensor.empty() : tensor<1024xf32>
  %g = linalg.mul ins(%d, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) -> tensor<1024xf32>
  return %g, %d : tensor<1024xf32>, tensor<1024xf32>
}
