// RUN: lms-opt %s -lms-report-memory=format=json -split-input-file -allow-unregistered-dialect -o /dev/null | FileCheck %s

// COM: FLOPs of the cost model, one op per function.

// COM: A matmul: 2 x M x N x K from the iteration domain.
// CHECK-LABEL: "name": "matmul",
// CHECK: "flops": 24,
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// COM: A generic op: points x payload ops (2 here); a fill has none.
// CHECK-LABEL: "name": "generic",
// CHECK: "flops": 16,
func.func @generic(%a: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %cst = arith.constant 0.0 : f32
  %f = linalg.fill ins(%cst : f32) outs(%c : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %x : f32
    %s = arith.addf %m, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// COM: tosa.conv2d: 2 x outputs (1x4x4x8) x KH x KW x IC (3x3x2) = 4608.
// CHECK-LABEL: "name": "conv",
// CHECK: "flops": 4608,
func.func @conv(%x: tensor<1x6x6x2xf32>, %w: tensor<8x3x3x2xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<8x3x3x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

// COM: tosa.matmul: 2 x N x H x W x C = 2 x 2 x 3 x 5 x 4 = 240.
// CHECK-LABEL: "name": "tosa_matmul",
// CHECK: "flops": 240,
func.func @tosa_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}

// -----

// COM: An lms.cost attribute overrides: a number is FLOPs.
// CHECK-LABEL: "name": "override",
// CHECK: "flops": 1000000,
func.func @override(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = "test.op"(%a) {lms.cost = 1000000 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// COM: The fallback for unknown ops: one FLOP per result element.
// CHECK-LABEL: "name": "fallback",
// CHECK: "flops": 24,
func.func @fallback(%a: tensor<8xf32>) -> tensor<2x12xf32> {
  %r = "test.op"(%a) : (tensor<8xf32>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// COM: A loop with a static trip count costs its body times the trip count
// COM: (and nothing of its own: regression, the fallback once counted its
// COM: results).
// CHECK-LABEL: "name": "loop",
// CHECK: "flops": 80,
func.func @loop(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %a) -> tensor<8xf32> {
    %e = linalg.exp ins(%acc : tensor<8xf32>) outs(%acc : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %e : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
