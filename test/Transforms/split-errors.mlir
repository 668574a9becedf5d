// RUN: lms-opt %s -split-input-file --lms-split=slices=4 -verify-diagnostics
// RUN: not lms-opt %s -split-input-file --lms-split=slices=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not lms-opt %s -split-input-file --lms-split=slices=-2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not lms-opt %s -split-input-file --lms-split=min-bytes=12% -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINBYTES
// RUN: not lms-opt %s -split-input-file --lms-split="slices=2 loop=7" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOOP
// ONE: error: lms-split: slices must be at least 2 (or 0 to choose from the budget), got 1
// NEGATIVE: error: lms-split: slices must be at least 2 (or 0 to choose from the budget), got -2
// MINBYTES: error: lms-split: min-bytes '12%' is not a size such as 64MiB
// RUN: not lms-opt %s -split-input-file --lms-split="slices=2 loop=-3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGLOOP
// LOOP: error: lms-split: cannot split this op: the op has 2 loops, no loop 7
// NEGLOOP: error: lms-split: loop must be -1 (measured) or a loop of the op, got -3

// COM: What cannot be split is an error at the op that sets the smallest
// COM: feasible budget, saying why: no parallel loop (a full reduction), not
// COM: a linalg op, a slice count that does not divide the loop, ops on
// COM: buffers, dynamic shapes.

func.func @reduce_all(%x: tensor<64x64xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{lms-split: cannot split this op: no parallel loop of static extent of at least 2 that can be sliced}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
// -----
func.func @concat(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{lms-split: cannot split this op: 'tensor.concat' is not a linalg op on tensors, a padding, an insertion or a reshape (only those are split)}}
  %c = tensor.concat dim(0) %x, %y : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  return %c : tensor<128x64xf32>
}
// -----
func.func @six(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
  %e = tensor.empty() : tensor<6x64xf32>
  // expected-error @+1 {{lms-split: loop 0 (extent 6) cannot be cut into 4 slices: the count must divide the extent and each slice be a multiple of 1}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<6x64xf32>) outs(%e : tensor<6x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<6x64xf32>
  return %r : tensor<6x64xf32>
}
// -----
func.func @buffers(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  // expected-error @+1 {{lms-split: cannot split this op: 'linalg.copy' is not a linalg op on tensors, a padding, an insertion or a reshape (only those are split)}}
  linalg.copy ins(%x : memref<64x64xf32>) outs(%y : memref<64x64xf32>)
  return
}
// -----
func.func @dynamic(%x: tensor<?x64xf32> {lms.max_bytes = 4096 : i64}) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%d) {lms.max_bytes = 4096 : i64} : tensor<?x64xf32>
  // expected-error @+1 {{lms-split: cannot split this op: its shapes are dynamic (only static shapes are split)}}
  %r = linalg.copy ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
