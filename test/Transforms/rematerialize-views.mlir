// RUN: lms-opt %s --lms-rematerialize="budget=32KiB arena=false" | FileCheck %s
// RUN: lms-opt %s --lms-rematerialize="budget=32KiB arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=PEAK
// RUN: lms-opt %s --lms-rematerialize="budget=32KiB arena=false" | lms-opt --lms-strip > %t.stripped.mlir
// RUN: lms-opt %s > %t.original.mlir
// RUN: diff %t.original.mlir %t.stripped.mlir

// COM: Regression (found on exported PyTorch models, where every reshape is a
// COM: view made right after its producer): %a is read late only through a
// COM: view made early. Recomputing %a must re-derive the view in the region;
// COM: the late op read the original view, which kept the original %a alive,
// COM: and the rewritten function exceeded the budget (36 KiB > 32 KiB).

// PEAK: @view_read_late: peak 32.0 KiB
// CHECK-LABEL: func.func @view_read_late
// CHECK:         %[[R:.*]] = lms.recompute(%{{.*}}) : (f32) -> tensor<1x1024xf32> {
// CHECK:           %[[F:.*]] = linalg.fill
// CHECK-NEXT:      %[[V:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [1, 1024]
// CHECK-NEXT:      lms.yield %[[V]] : tensor<1x1024xf32>
// CHECK:         linalg.add ins(%{{.*}}, %[[R]] : tensor<1x1024xf32>, tensor<1x1024xf32>)
func.func @view_read_late(%x: tensor<4x1024xf32>) -> tensor<1x1024xf32> {
  %cst = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %av = tensor.expand_shape %a [[0, 1]] output_shape [1, 1024] : tensor<1024xf32> into tensor<1x1024xf32>
  %e1 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %cv = tensor.expand_shape %c [[0, 1]] output_shape [1, 1024] : tensor<1024xf32> into tensor<1x1024xf32>
  %e3 = tensor.empty() : tensor<1x1024xf32>
  %d = linalg.add ins(%cv, %av : tensor<1x1024xf32>, tensor<1x1024xf32>) outs(%e3 : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  return %d : tensor<1x1024xf32>
}
