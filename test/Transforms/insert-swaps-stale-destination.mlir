// RUN: lms-opt %s -lms-report-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not lms-opt %s -lms-insert-swaps=budget=12KiB -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET

// COM: Regression (property run seed 39, program 1535): %b writes %x's
// COM: buffer in place (%x is its destination, not read), so after %b the
// COM: value %x no longer holds the buffer's contents; its only later use is
// COM: again a destination %d overwrites unread. The buffer crosses the gap
// COM: from %c to %d as %x, but %x is stale there: offloading it (swap_out
// COM: %x) made bufferization keep %x's old contents in a copy, so the
// COM: rewrite held 4 KiB more than its plan and had to plan again, and
// COM: ended in an error about in-place writes. A stale value cannot carry
// COM: its buffer over a gap: the buffer stays resident, the smallest
// COM: feasible budget is the one the report gives, and the error names %g.
// REPORT: smallest feasible budget: 16.0 KiB (16384 bytes, op 8 'linalg.generic')
// BUDGET: :[[@LINE+27]]:8: error: budget 12.0 KiB (12288 bytes) is below the smallest feasible budget 16.0 KiB (16384 bytes) of this op
#id = affine_map<(d0) -> (d0)>
func.func @stale(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e1 = tensor.empty() : tensor<1024xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.mulf %i, %i : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<1024xf32>) outs(%x : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.addf %i, %i : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.mulf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.addf %i, %i : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %e4 = tensor.empty() : tensor<1024xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%c, %f : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %r = arith.mulf %i, %j : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<1024xf32>) outs(%x : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.addf %i, %i : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}
