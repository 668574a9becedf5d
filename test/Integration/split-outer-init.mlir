// COM: Regression (property run, seed 5, program 132): a split op writes in
// COM: place into a slice of a tensor computed before the loop (%v4 into
// COM: %v3, the helper's result, not read again). Bufferization writes the
// COM: subview of that buffer; the analysis of the loop body counted the
// COM: slice as a new buffer, so the analysed peak (17,408) was above the
// COM: measured one (16,896). A write in place into a view of a buffer of
// COM: the enclosing function allocates nothing in the nested block.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-split="slices=8 alignment=256" -o %t.split.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.split.mlir
// IR-LABEL: func.func @step
// IR: scf.for
// IR: %[[IN:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}] [128] [1] : tensor<1024xf32> to tensor<128xf32>
// IR-NEXT: %[[S:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}] [128] [1] : tensor<1024xf32> to tensor<128xf32>
// IR-NEXT: linalg.generic {{.*}} ins(%[[IN]] : tensor<128xf32>) outs(%[[S]] : tensor<128xf32>)
// RUN: lms-opt %t.split.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.json
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.split.mlir --lms-host-pipeline -o %t.split.ll.mlir
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.stats mlir-runner %t.split.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.split.out
// RUN: diff %t.plain.out %t.split.out
// RUN: %check_stats %t.stats --analysis %t.json --no-leaks | FileCheck %s --check-prefix=MEASURED
// MEASURED: measured peak 16896 == analysed peak
// MEASURED-NEXT: no leaks

#id = affine_map<(d0) -> (d0)>
func.func private @helper1024(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %h = arith.constant 0.75 : f32
    %m = arith.mulf %i, %h : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
func.func @step(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %v2 = tensor.empty() : tensor<1024xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%v2 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v3 = call @helper1024(%v1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v1 : tensor<1024xf32>) outs(%v3 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a0, %z : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v6 = tensor.empty() : tensor<1024xf32>
  %v5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v1 : tensor<1024xf32>) outs(%v6 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %r = arith.mulf %a0, %h : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %v7 = tensor.expand_shape %v3 [[0, 1]] output_shape [2, 512] : tensor<1024xf32> into tensor<2x512xf32>
  %v8 = tensor.collapse_shape %v7 [[0, 1]] : tensor<2x512xf32> into tensor<1024xf32>
  %v10 = tensor.empty() : tensor<1024xf32>
  %v9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v4 : tensor<1024xf32>) outs(%v10 : tensor<1024xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %r = arith.mulf %a0, %h : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %v9, %v4 : tensor<1024xf32>, tensor<1024xf32>
}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<1024xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c = arith.constant 11 : index
    %m = arith.remui %i, %c : index
    %n = arith.index_cast %m : index to i32
    %f = arith.sitofp %n : i32 to f32
    %s = arith.constant 0.125 : f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %r0, %r1 = call @step(%x) : (tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>)
  %u0 = tensor.cast %r0 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %r1 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}
