// RUN: lms-opt %s -split-input-file --lms-rematerialize="budget=32KiB arena=false" | FileCheck %s
// RUN: lms-opt %s -split-input-file --lms-rematerialize="budget=32KiB arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=PEAK
// RUN: lms-opt %s -split-input-file --lms-rematerialize="budget=32KiB stats=true arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: lms-opt %s -split-input-file --lms-rematerialize="budget=32KiB arena=false" | lms-opt -split-input-file --lms-strip > %t.stripped.mlir
// RUN: lms-opt %s -split-input-file > %t.original.mlir
// RUN: diff %t.original.mlir %t.stripped.mlir

// COM: Every tensor<1024xf32> is 4 KiB and every tensor<4x1024xf32> 16 KiB.
// COM: Without LMS both functions peak at 36 KiB when %b is allocated: the
// COM: argument, %b and the small value needed at the end are resident. Under
// COM: 32 KiB the small value is freed right after it is computed and
// COM: recomputed before its use: the cheapest tensor to give up.

// PEAK: @fill_once: peak 32.0 KiB
// PEAK: @chained: peak 32.0 KiB
// STATS: lms-rematerialize: 1 recomputes, 2 ops-cloned, 5 extra-compute-us
// STATS-NEXT: lms-rematerialize: 2 recomputes, 4 ops-cloned, 10 extra-compute-us
// STATS-NEXT: lms-rematerialize: 0 recomputes, 0 ops-cloned, 0 extra-compute-us

// CHECK-LABEL: func.func @fill_once
// CHECK:         %[[CST:.*]] = arith.constant 1.0
// CHECK:         tensor.empty() {lms.original = 0 : i64} : tensor<1024xf32>
// CHECK-NEXT:    %[[A:.*]] = linalg.fill {lms.original = 1 : i64} ins(%[[CST]] : f32)
// CHECK:         linalg.exp ins
// CHECK:         %[[C:.*]] = linalg.reduce
// COM: The chain that produced %a (tensor.empty, linalg.fill) is one unit:
// COM: both are cloned, each marked with the id that the op it copies
// COM: carries as lms.original (for --lms-strip); the scalar it reads is
// COM: passed in.
// CHECK:         %[[A1:.*]] = lms.recompute(%[[CST]]) : (f32) -> tensor<1024xf32> {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = tensor.empty() {lms.rederived = 0 : i64} : tensor<1024xf32>
// CHECK-NEXT:      %[[F:.*]] = linalg.fill {lms.rederived = 1 : i64} ins(%[[IN]] : f32) outs(%[[E]] : tensor<1024xf32>)
// CHECK-NEXT:      lms.yield %[[F]] : tensor<1024xf32>
// CHECK-NEXT:    }
// CHECK:         linalg.add ins(%[[C]], %[[A1]] :
func.func @fill_once(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
  %cst = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}

// -----

// COM: Recomputing %a2 needs %a, which was freed too: the recomputations are
// COM: chained, the second reads the first.
// CHECK-LABEL: func.func @chained
// CHECK:         linalg.reduce
// CHECK:         %[[R1:.*]] = lms.recompute(%{{.*}}) : (f32) -> tensor<1024xf32> {
// CHECK:           linalg.fill
// CHECK-NEXT:      lms.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R2:.*]] = lms.recompute(%[[R1]]) : (tensor<1024xf32>) -> tensor<1024xf32> {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: tensor<1024xf32>):
// CHECK-NEXT:      %[[E:.*]] = tensor.empty() {lms.rederived = {{[0-9]+}} : i64} : tensor<1024xf32>
// CHECK-NEXT:      %[[X:.*]] = linalg.exp {lms.rederived = {{[0-9]+}} : i64} ins(%[[IN]] : tensor<1024xf32>) outs(%[[E]] : tensor<1024xf32>)
// CHECK-NEXT:      lms.yield %[[X]]
// CHECK:         linalg.add ins(%{{.*}}, %[[R2]] :
func.func @chained(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
  %cst = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %a2 = linalg.exp ins(%a : tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e2 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f3 : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e4 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %a2 : tensor<1024xf32>, tensor<1024xf32>) outs(%e4 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}

// -----

// COM: A function that fits is left as it is.
// CHECK-LABEL: func.func @fits
// CHECK-NOT:     lms.recompute
func.func @fits(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.exp ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
