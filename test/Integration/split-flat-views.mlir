// COM: Splitting through a view written as exporters write it: torch's
// COM: `view` through a flat shape is a tensor.collapse_shape to one
// COM: dimension and a tensor.expand_shape back. The columns of %a (64) are
// COM: inner in the flat dimension, so the chain cannot be sliced by columns;
// COM: --lms-split first composes the chain into one reshape (upstream's
// COM: composition patterns), which keeps the columns a dimension of their
// COM: own. The anchor (%b: two 1 KiB operands and its 1 KiB result) is then
// COM: split by columns together with %a's producer, so %a is never whole:
// COM: its loops need 1,808 bytes in 8 slices, where without the
// COM: composition they stopped at 2,324 (64 slices, reading %a whole). By
// COM: execution: the same values, measured peak == analysed.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-split="budget=2KiB stats=true" -o %t.split.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: lms-split: @cols: 'linalg.generic' at {{.*}}: loop 2 in 8 slices (8 ops, 1 loops): the op needed 3072 bytes, its loops need 1808
// STATS-NOT: warning
// RUN: FileCheck %s --check-prefix=IR < %t.split.mlir
// IR-LABEL: func.func @cols
// IR-NOT: tensor.collapse_shape
// IR: scf.for %[[J:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x64xf32>)
// IR: %[[C:.*]] = tensor.extract_slice %{{.*}}[%[[J]]] [8] [1] : tensor<64xf32> to tensor<8xf32>
// IR: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[C]] : tensor<4xf32>, tensor<8xf32>)
// IR: tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
// IR: tensor.insert_slice %{{.*}}[0, %[[J]]] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<1x64xf32>
// IR-LABEL: func.func @main
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.split.mlir --lms-host-pipeline -o %t.split.ll.mlir
// RUN: lms-opt %t.split.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.json
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.stats mlir-runner %t.split.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.split.out
// RUN: diff %t.plain.out %t.split.out
// RUN: %check_stats %t.stats --analysis %t.json --no-leaks | FileCheck %s --check-prefix=MEASURED
// MEASURED: measured peak {{[0-9]+}} == analysed peak
// MEASURED-NEXT: no leaks

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#colsum = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @cols(%r: tensor<4xf32>, %c: tensor<64xf32>, %y: tensor<1x4x64xf32>) -> tensor<1x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x64xf32>
  %a = linalg.generic {indexing_maps = [#row, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%r, %c : tensor<4xf32>, tensor<64xf32>) outs(%e0 : tensor<4x64xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    %e = math.exp %t : f32
    linalg.yield %e : f32
  } -> tensor<4x64xf32>
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<4x64xf32> into tensor<256xf32>
  %v = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 4, 64] : tensor<256xf32> into tensor<1x4x64xf32>
  %e1 = tensor.empty() : tensor<1x4x64xf32>
  %b = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v, %y : tensor<1x4x64xf32>, tensor<1x4x64xf32>) outs(%e1 : tensor<1x4x64xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<1x4x64xf32>
  %e2 = tensor.empty() : tensor<1x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x64xf32>) -> tensor<1x64xf32>
  %s = linalg.generic {indexing_maps = [#id3, #colsum], iterator_types = ["parallel", "reduction", "parallel"]} ins(%b : tensor<1x4x64xf32>) outs(%f2 : tensor<1x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<1x64xf32>
  return %s : tensor<1x64xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %er = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%er : tensor<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %k = arith.constant 0.25 : f32
    %v = arith.mulf %f, %k : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %ec = tensor.empty() : tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%ec : tensor<64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %v = math.sin %f : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %ey = tensor.empty() : tensor<1x4x64xf32>
  %y = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%ey : tensor<1x4x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %k = arith.addi %i, %j : index
    %ki = arith.index_cast %k : index to i64
    %f = arith.sitofp %ki : i64 to f32
    %v = math.cos %f : f32
    linalg.yield %v : f32
  } -> tensor<1x4x64xf32>
  %s = call @cols(%r, %c, %y) : (tensor<4xf32>, tensor<64xf32>, tensor<1x4x64xf32>) -> tensor<1x64xf32>
  %su = tensor.cast %s : tensor<1x64xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}
