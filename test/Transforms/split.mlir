// RUN: lms-opt %s -split-input-file --lms-split="slices=4 loop=0" | FileCheck %s
// RUN: lms-opt %s -split-input-file --lms-split="slices=4" | FileCheck %s --check-prefix=AUTO
// RUN: lms-opt %s -split-input-file --lms-split="slices=4 stats=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// COM: A chain of elementwise ops and a row sum: the middle op (two 2 KiB
// COM: operands and its 2 KiB result) sets the smallest feasible budget.
// COM: Split into 4 slices of rows, each op runs on 2 rows; the row sums are
// COM: assembled into the whole result. Nothing else changes.
// STATS: lms-split: @chain: 'linalg.generic' at {{.*}}: loop 0 in 4 slices (7 ops, 1 loops): the op needed 6144 bytes, its loops need 3104
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[WHOLE:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:[a-z0-9_]+]] = %[[C0]] to %[[C8]] step %[[C2]] iter_args(%[[ACC:[a-z0-9_]+]] = %[[WHOLE]]) -> (tensor<8xf32>) {
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [2, 64] [1, 1] : tensor<8x64xf32> to tensor<2x64xf32>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<2x64xf32>)
// CHECK: math.exp
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<2x64xf32>, tensor<2x64xf32>)
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<2xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x64xf32>) outs(%[[F]] : tensor<2xf32>)
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[S]] into %[[ACC]][%[[I]]] [2] [1] : tensor<2xf32> into tensor<8xf32>
// CHECK: scf.yield %[[INS]]
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @chain(%x: tensor<8x64xf32>) -> tensor<8xf32> {
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

// COM: Normalizing by a sum over the split dimension: the sum is complete
// COM: only after the first loop over rows (it accumulates into the
// COM: loop-carried sum, in the order of the unsplit op), so the division
// COM: runs in a second loop, which computes its slices of exp(x) again.
// COM: Left to choose (AUTO), the pass splits the columns instead (loop 1):
// COM: there the sum is per column and one loop does it all.
// STATS: lms-split: @normalize: 'linalg.generic' at {{.*}}: loop 1 in 4 slices (8 ops, 1 loops)
// CHECK-LABEL: func.func @normalize
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<64xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[I:[a-z0-9_]+]] = {{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[ZERO]]) -> (tensor<64xf32>) {
// CHECK: %[[E:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64xf32>)
// CHECK: math.exp
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<2x64xf32>) outs(%[[ACC]] : tensor<64xf32>)
// CHECK: scf.yield %[[PART]] : tensor<64xf32>
// CHECK: scf.for %[[J:[a-z0-9_]+]] = {{.*}} -> (tensor<8xf32>) {
// CHECK: %[[E2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E2]], %[[SUM]] : tensor<2x64xf32>, tensor<64xf32>)
// CHECK: arith.divf
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[J]]] [2] [1] : tensor<2xf32> into tensor<8xf32>
// AUTO-LABEL: func.func @normalize
// AUTO: scf.for %{{.*}} -> (tensor<8xf32>) {
// AUTO: tensor.extract_slice %{{.*}}[0, %{{.*}}] [8, 16] [1, 1] : tensor<8x64xf32> to tensor<8x16xf32>
// AUTO-NOT: scf.for
// AUTO: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @normalize(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %t = tensor.empty() : tensor<64xf32>
  %tf = linalg.fill ins(%zero : f32) outs(%t : tensor<64xf32>) -> tensor<64xf32>
  %tot = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<8x64xf32>) outs(%tf : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %n = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %tot : tensor<8x64xf32>, tensor<64xf32>) outs(%e2 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %v = arith.divf %in, %s : f32
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  %z = tensor.empty() : tensor<8xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%n : tensor<8x64xf32>) outs(%zf : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

// COM: Tokens are batch x sequence: the 32 rows after the collapse are 4
// COM: samples of 8. Split by samples (2 per slice), the collapse runs on the
// COM: slice (16 rows) and the row sums land at 8 rows per sample.
// STATS: lms-split: @tokens: 'linalg.generic' at {{.*}}: loop 0 in 4 slices (6 ops, 1 loops)
// CHECK-LABEL: func.func @tokens
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.*}}) -> (tensor<32xf32>) {
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0, 0] [1, 8, 16] [1, 1, 1] : tensor<4x8x16xf32> to tensor<1x8x16xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
// CHECK: %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[ROW]]] [8] [1] : tensor<8xf32> into tensor<32xf32>
func.func @tokens(%x: tensor<4x8x16xf32>) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x16xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x8x16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8x16xf32>
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  %z = tensor.empty() : tensor<32xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%z : tensor<32xf32>) -> tensor<32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<32x16xf32>) outs(%zf : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// COM: A view of a value the loop computes, read after it (exporters read a
// COM: saved activation through a view, and keep the activation too): the
// COM: loop assembles the activation once and the view is made again after
// COM: it, on the whole value. Assembling the view as well would hold the
// COM: same 8 KiB twice (its loops needed 20544 bytes so).
// STATS: lms-split: @saved_view: 'linalg.generic' at {{.*}}: loop 0 in 4 slices (8 ops, 1 loops): the op needed 16384 bytes, its loops need 12352
// CHECK-LABEL: func.func @saved_view
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (tensor<8x256xf32>, tensor<8xf32>) {
// CHECK-NOT: tensor.collapse_shape
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[FLAT:.*]] = tensor.collapse_shape %[[R]]#0 {{\[\[}}0, 1]] : tensor<8x256xf32> into tensor<2048xf32>
// CHECK: tensor.extract %[[FLAT]]
// CHECK: tensor.extract %[[R]]#0
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @saved_view(%x: tensor<8xf32>) -> (tensor<8xf32>, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<8x256xf32>
  %a = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x256xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x256xf32>) outs(%e2 : tensor<8x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8x256xf32>
  %flat = tensor.collapse_shape %b [[0, 1]] : tensor<8x256xf32> into tensor<2048xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%b : tensor<8x256xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %p = tensor.extract %flat[%c5] : tensor<2048xf32>
  %q = tensor.extract %b[%c0, %c5] : tensor<8x256xf32>
  return %s, %p, %q : tensor<8xf32>, f32, f32
}
