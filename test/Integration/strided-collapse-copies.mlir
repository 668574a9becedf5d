// COM: Regression: a collapse_shape of a slice across the inner dimension
// COM: (the Q, K and V thirds of a fused 16x48 projection, as torch exports
// COM: a GPT's attention) is not a view: the slice's rows are 48 apart, so
// COM: bufferization copies it into a buffer of its own and collapses the
// COM: copy. The analysis took it as a view of the projection and missed
// COM: the copies, which are live with the projection at the third copy
// COM: (6 KiB). Found when a recompute plan put such a
// COM: split, as a three-result lms.recompute, at tiny-gpt's peak: analysed
// COM: 45,824 bytes, measured 47,104. A slice of whole rows stays a view.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-report-memory="alignment=256" -o /dev/null | FileCheck %s --check-prefix=PEAK
// PEAK: @main: peak 6.00 KiB (6144 bytes) at op {{[0-9]+}} 'tensor.collapse_shape'
// PEAK: @main_recompute: peak 6.00 KiB (6144 bytes) at op {{[0-9]+}} 'lms.recompute'
// PEAK: @main_rows: peak 4.50 KiB (4608 bytes)

// RUN: lms-opt %s --lms-report-memory="format=json alignment=256" -o /dev/null > %t.json
// RUN: lms-opt %s --lms-host-pipeline -o %t.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.stats mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s
// RUN: %check_stats %t.stats --analysis %t.json --no-leaks | FileCheck %s --check-prefix=STATS
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.rc.stats mlir-runner %t.ll.mlir -e main_recompute -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s
// RUN: %check_stats %t.rc.stats --analysis %t.json --function main_recompute --no-leaks | FileCheck %s --check-prefix=STATS
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.rows.stats mlir-runner %t.ll.mlir -e main_rows -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s --check-prefix=ROWS
// RUN: %check_stats %t.rows.stats --analysis %t.json --function main_rows --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: measured peak {{[0-9]+}} == analysed peak
// STATS-NEXT: no leaks

// COM: q + k + v of column c: c + (16 + c) + (32 + c) = 48 + 3c, every row.
// CHECK: [48,   51,   54,   57,   60,   63,   66,   69,   72,   75,   78,   81,   84,   87,   90,   93],
// COM: Rows r, r + 4 and r + 8, all equal to their column: 3c.
// ROWS: [0,   3,   6,   9,   12,   15,   18,   21,   24,   27,   30,   33,   36,   39,   42,   45,   48,   51,   54,   57,   60,   63,   66,   69,   72,   75,   78,   81,   84,   87,   90,   93,   96,   99,   102,   105,   108,   111,   114,   117,   120,   123,   126,   129,   132,   135,   138,   141],

#col = affine_map<(d0, d1) -> (d0, d1)>
#flat = affine_map<(d0) -> (d0)>
func.func private @printMemrefF32(tensor<*xf32>)

// A 16x48 projection whose element (r, c) is c.
func.func private @projection() -> tensor<16x48xf32> {
  %e = tensor.empty() : tensor<16x48xf32>
  %p = linalg.generic {indexing_maps = [#col], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<16x48xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 1 : index
    %i = arith.index_cast %c : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  } -> tensor<16x48xf32>
  return %p : tensor<16x48xf32>
}

// q + k + v over 256 elements, printed as 16x16.
func.func private @sum3(%q: tensor<256xf32>, %k: tensor<256xf32>, %v: tensor<256xf32>) {
  %e0 = tensor.empty() : tensor<256xf32>
  %s = linalg.add ins(%q, %k : tensor<256xf32>, tensor<256xf32>) outs(%e0 : tensor<256xf32>) -> tensor<256xf32>
  %e1 = tensor.empty() : tensor<256xf32>
  %t = linalg.add ins(%s, %v : tensor<256xf32>, tensor<256xf32>) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %m = tensor.expand_shape %t [[0, 1]] output_shape [16, 16] : tensor<256xf32> into tensor<16x16xf32>
  %u = tensor.cast %m : tensor<16x16xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// The split in the function: 3 KiB of projection + three 1 KiB copies.
func.func @main() {
  %e = tensor.empty() : tensor<16x48xf32>
  %p = linalg.generic {indexing_maps = [#col], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<16x48xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 1 : index
    %i = arith.index_cast %c : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  } -> tensor<16x48xf32>
  %q = tensor.extract_slice %p[0, 0] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
  %k = tensor.extract_slice %p[0, 16] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
  %v = tensor.extract_slice %p[0, 32] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
  %qc = tensor.collapse_shape %q [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  %kc = tensor.collapse_shape %k [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  %vc = tensor.collapse_shape %v [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
  call @sum3(%qc, %kc, %vc) : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> ()
  return
}

// The same split as one three-result recomputation (as --lms-rematerialize
// writes it): inlined by the lowering, its body's copies are counted.
func.func @main_recompute() {
  %r:3 = lms.recompute() : () -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
    %e = tensor.empty() : tensor<16x48xf32>
    %p = linalg.generic {indexing_maps = [#col], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<16x48xf32>) {
    ^bb0(%out: f32):
      %c = linalg.index 1 : index
      %i = arith.index_cast %c : index to i32
      %f = arith.sitofp %i : i32 to f32
      linalg.yield %f : f32
    } -> tensor<16x48xf32>
    %q = tensor.extract_slice %p[0, 0] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
    %k = tensor.extract_slice %p[0, 16] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
    %v = tensor.extract_slice %p[0, 32] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
    %qc = tensor.collapse_shape %q [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
    %kc = tensor.collapse_shape %k [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
    %vc = tensor.collapse_shape %v [[0, 1]] : tensor<16x16xf32> into tensor<256xf32>
    lms.yield %qc, %kc, %vc : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
  }
  call @sum3(%r#0, %r#1, %r#2) : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> ()
  return
}

// Whole rows are contiguous: the collapses are views of the projection.
func.func @main_rows() {
  %p = call @projection() : () -> tensor<16x48xf32>
  %a = tensor.extract_slice %p[0, 0] [4, 48] [1, 1] : tensor<16x48xf32> to tensor<4x48xf32>
  %b = tensor.extract_slice %p[4, 0] [4, 48] [1, 1] : tensor<16x48xf32> to tensor<4x48xf32>
  %c = tensor.extract_slice %p[8, 0] [4, 48] [1, 1] : tensor<16x48xf32> to tensor<4x48xf32>
  %ac = tensor.collapse_shape %a [[0, 1]] : tensor<4x48xf32> into tensor<192xf32>
  %bc = tensor.collapse_shape %b [[0, 1]] : tensor<4x48xf32> into tensor<192xf32>
  %cc = tensor.collapse_shape %c [[0, 1]] : tensor<4x48xf32> into tensor<192xf32>
  %e0 = tensor.empty() : tensor<192xf32>
  %s = linalg.add ins(%ac, %bc : tensor<192xf32>, tensor<192xf32>) outs(%e0 : tensor<192xf32>) -> tensor<192xf32>
  %e1 = tensor.empty() : tensor<192xf32>
  %t = linalg.add ins(%s, %cc : tensor<192xf32>, tensor<192xf32>) outs(%e1 : tensor<192xf32>) -> tensor<192xf32>
  %m = tensor.expand_shape %t [[0, 1]] output_shape [4, 48] : tensor<192xf32> into tensor<4x48xf32>
  %u = tensor.cast %m : tensor<4x48xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
