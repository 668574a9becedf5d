// RUN: lms-opt %s --lms-pipeline="budget=1KiB strategy=swap arena=false" -verify-diagnostics -o /dev/null
// RUN: lms-opt %s --lms-pipeline="budget=1KiB strategy=remat arena=false" -verify-diagnostics -o /dev/null
// RUN: lms-opt %s --lms-pipeline="budget=1KiB arena=false" -verify-diagnostics -o /dev/null

// COM: A budget no plan can meet is the planner's error at the op that
// COM: needs more, whichever strategy the pipeline runs.
func.func @small(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  // expected-error-re @below {{smallest feasible budget {{(is )?}}8.00 KiB (8192 bytes)}}
  %y = linalg.exp ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
