// RUN: lms-opt %s -split-input-file --lms-split -verify-diagnostics | FileCheck %s
// RUN: lms-opt %s -split-input-file --lms-split=stats=true -verify-diagnostics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// COM: With no slice count, a function is split only while its smallest
// COM: feasible budget (6,144 bytes here: the middle op of the chain) is
// COM: above its budget, with the fewest slices that bring it within. The
// COM: loop to split is measured: the columns (loop 1), the row sums
// COM: accumulating across the slices, need less than the rows at the most
// COM: slices. 2 slices of 32 columns for 5,000 bytes (the loop needs
// COM: 4,128), 8 of 8 columns for 3,000 (4 would need 3,104).
// STATS: lms-split: @five: 'linalg.generic' at {{.*}}: loop 1 in 2 slices (5 ops, 1 loops): the op needed 6144 bytes, its loops need 4128
// STATS: lms-split: @three: 'linalg.generic' at {{.*}}: loop 1 in 8 slices (5 ops, 1 loops): the op needed 6144 bytes, its loops need 2592
// STATS-NOT: @fits
// CHECK-LABEL: func.func @five
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32]]
// CHECK: tensor<8x32xf32>
// CHECK-LABEL: func.func @three
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C8]]
// CHECK: tensor<8x8xf32>
// COM: A function within its budget is left as it is.
// CHECK-LABEL: func.func @fits
// CHECK-NOT: scf.for
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @five(%x: tensor<8x64xf32>) -> tensor<8xf32> attributes {lms.budget = "5000B"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.mulf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %z = tensor.empty() : tensor<8xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<8x64xf32>) outs(%zf : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @three(%x: tensor<8x64xf32>) -> tensor<8xf32> attributes {lms.budget = "3000B"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.mulf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %z = tensor.empty() : tensor<8xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<8x64xf32>) outs(%zf : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func @fits(%x: tensor<8x64xf32>) -> tensor<8xf32> attributes {lms.budget = "8KiB"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.mulf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %z = tensor.empty() : tensor<8xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<8x64xf32>) outs(%zf : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// COM: When the op that sets the floor cannot be split, a warning says why
// COM: and the function is left for the planners (which report the budget
// COM: they cannot meet). A call's floor is its callee's: not split here.
func.func @reduce_all(%x: tensor<64x64xf32>) -> tensor<f32> attributes {lms.budget = "1KiB"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-warning @+1 {{lms-split: the smallest feasible budget 16.0 KiB (16388 bytes) is set by this op, which cannot be split: no parallel loop of static extent of at least 2 that can be sliced}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func @caller(%x: tensor<64x64xf32>) -> tensor<f32> attributes {lms.budget = "1KiB"} {
  %r = call @reduce_all(%x) : (tensor<64x64xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// COM: The values a function returns stay resident at its end: when they set
// COM: the floor, a warning says so and nothing is split.
func.func @returns(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) attributes {lms.budget = "1KiB"} {
  // expected-warning @+1 {{lms-split: the smallest feasible budget 8.00 KiB (8192 bytes) is set by the values returned here, which no split changes}}
  return %x, %y : tensor<1024xf32>, tensor<1024xf32>
}
