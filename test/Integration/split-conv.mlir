// COM: --lms-split on the backward of a strided convolution as PyTorch
// COM: exports it: the gradient is dilated (tensor.insert_slice with stride 2
// COM: into a zero-filled tensor), padded (tensor.pad), then convolved with
// COM: the weights. The padding sets the smallest feasible budget (the
// COM: dilated and the padded tensors together). Split by samples, the
// COM: insertion, the padding and the convolution run on one sample at a
// COM: time: same values, measured peak == analysed peak.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-report-memory="alignment=256" -o /dev/null | FileCheck %s --check-prefix=FLOOR
// FLOOR-LABEL: @dgrad:
// FLOOR: smallest feasible budget: {{.*}} op {{[0-9]+}} 'tensor.pad')
// RUN: lms-opt %s --lms-split="slices=4 stats=true alignment=256" -o %t.split.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: lms-split: @dgrad: 'tensor.pad' at {{.*}}: loop 0 in 4 slices
// RUN: FileCheck %s --check-prefix=IR < %t.split.mlir
// IR-LABEL: func.func @dgrad
// IR: scf.for
// IR: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 2, 2] : tensor<1x2x8x8xf32> into tensor<1x2x15x15xf32>
// IR: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// IR: tensor<1x2x15x15xf32> to tensor<1x2x16x16xf32>
// IR: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x14x14xf32>)
// IR: tensor.insert_slice %{{.*}} : tensor<1x1x14x14xf32> into tensor<4x1x14x14xf32>
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.split.mlir --lms-host-pipeline -o %t.split.ll.mlir
// RUN: lms-opt %t.split.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.split.json
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.split.stats mlir-runner %t.split.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.split.out
// RUN: diff %t.plain.out %t.split.out
// RUN: %check_stats %t.split.stats --analysis %t.split.json --no-leaks | FileCheck %s --check-prefix=MEASURED
// MEASURED: measured peak {{[0-9]+}} == analysed peak
// MEASURED-NEXT: no leaks

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @dgrad(%g: tensor<4x2x8x8xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<4x1x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2x15x15xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2x15x15xf32>) -> tensor<4x2x15x15xf32>
  %dil = tensor.insert_slice %g into %f[0, 0, 0, 0] [4, 2, 8, 8] [1, 1, 2, 2] : tensor<4x2x8x8xf32> into tensor<4x2x15x15xf32>
  %pad = tensor.pad %dil low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<4x2x15x15xf32> to tensor<4x2x16x16xf32>
  %eo = tensor.empty() : tensor<4x1x14x14xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x1x14x14xf32>) -> tensor<4x1x14x14xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, o, h, w, c, kh, kw) -> (n, c, h + kh, w + kw)>, affine_map<(n, o, h, w, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, h, w, c, kh, kw) -> (n, o, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%pad, %w : tensor<4x2x16x16xf32>, tensor<1x2x3x3xf32>) outs(%fo : tensor<4x1x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x1x14x14xf32>
  return %r : tensor<4x1x14x14xf32>
}

func.func @main() {
  %eg = tensor.empty() : tensor<4x2x8x8xf32>
  %g = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%eg : tensor<4x2x8x8xf32>) {
  ^bb0(%c: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %c7 = arith.constant 7 : index
    %a = arith.muli %i, %c7 : index
    %b = arith.addi %a, %j : index
    %bb = arith.muli %b, %c7 : index
    %d = arith.addi %bb, %k : index
    %dd = arith.muli %d, %c7 : index
    %x = arith.addi %dd, %l : index
    %xi = arith.index_cast %x : index to i64
    %f = arith.sitofp %xi : i64 to f32
    %v = math.sin %f : f32
    linalg.yield %v : f32
  } -> tensor<4x2x8x8xf32>
  %ew = tensor.empty() : tensor<1x2x3x3xf32>
  %w = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ew : tensor<1x2x3x3xf32>) {
  ^bb0(%c: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %s1 = arith.addi %i, %j : index
    %s2 = arith.addi %k, %l : index
    %s3 = arith.muli %s1, %s2 : index
    %xi = arith.index_cast %s3 : index to i64
    %f = arith.sitofp %xi : i64 to f32
    %v = math.cos %f : f32
    linalg.yield %v : f32
  } -> tensor<1x2x3x3xf32>
  %r = call @dgrad(%g, %w) : (tensor<4x2x8x8xf32>, tensor<1x2x3x3xf32>) -> tensor<4x1x14x14xf32>
  %u = tensor.cast %r : tensor<4x1x14x14xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
