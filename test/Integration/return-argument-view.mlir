// COM: Regression (found by the property test once --lms-schedule ran
// COM: unplanned programs): a function that returns a view of an argument
// COM: it owns (passed at its last use) returns that very buffer; the
// COM: caller counted the result as a new buffer next to the argument
// COM: (analysed 12,288, measured 8,192). The result is now the argument's
// COM: buffer, and the call still gives the argument away (no borrowing
// COM: copy of the callee).
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-report-memory="format=json" -o /dev/null > %t.json
// RUN: lms-opt %s --lms-report-memory -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: @main: peak 8.00 KiB (8192 bytes)
// RUN: lms-opt %s --lms-host-pipeline -o %t.ll.mlir
// RUN: FileCheck %s --check-prefix=OWNED < %t.ll.mlir
// OWNED-NOT: lms_borrow
// RUN: env LMS_RUNTIME_STATS=%t.stats mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s
// CHECK: [2,  2,
// CHECK: [1,  1,
// RUN: %check_stats %t.stats --analysis %t.json --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: measured peak 8192 == analysed peak
// STATS-NEXT: no leaks

#id = affine_map<(d0) -> (d0)>
func.func private @view(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  %v = tensor.expand_shape %x [[0, 1]] output_shape [2, 512] : tensor<1024xf32> into tensor<2x512xf32>
  %c = tensor.collapse_shape %v [[0, 1]] : tensor<2x512xf32> into tensor<1024xf32>
  return %y, %c : tensor<1024xf32>, tensor<1024xf32>
}
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%one : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r:2 = call @view(%a) : (tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>)
  %u0 = tensor.cast %r#0 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %r#1 : tensor<1024xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}
