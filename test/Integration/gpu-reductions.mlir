// COM: lms-gpu-pipeline runs every op on device buffers in a kernel. An op
// COM: without a parallel loop (a full reduction: the driver's sum of a
// COM: gradient) lowered as it was stayed sequential host code that loads and
// COM: stores device buffers: a segmentation fault on an H200 (device memory
// COM: is not host memory; the emulated device could not tell). It is now a
// COM: kernel of one thread: after outlining, the host functions touch no
// COM: buffer element. (Found with scripts/gpu-aot.sh and
// COM: scripts/gpu-check.sh on an H200; there the MLP step with its driver
// COM: now computes the host pipeline's values.)
// RUN: lms-opt %s --lms-gpu-pipeline -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2> %t.outlined.mlir
// RUN: FileCheck %s < %t.outlined.mlir
// CHECK-LABEL: func.func @sum
// CHECK-NOT:   memref.load
// CHECK-NOT:   memref.store
// CHECK:       gpu.launch_func {{.*}}::@sum_kernel blocks in (%{{.*}}, %[[ONE:.*]], %[[ONE]]) threads in (%[[ONE]], %[[ONE]], %[[ONE]])
// CHECK-NOT:   memref.load
// CHECK:       gpu.launch_func @[[SUM:sum_kernel_[0-9]+]]::@sum_kernel blocks in (%{{.*}}, %[[ONE2:.*]], %[[ONE2]]) threads in (%[[ONE2]], %[[ONE2]], %[[ONE2]]) args({{.*}}%arg0 : memref<64x32xf32>
// CHECK-NOT:   memref.load
// CHECK-NOT:   memref.store
// CHECK:       return
// CHECK:       gpu.module @[[SUM]]
// CHECK:       gpu.func @sum_kernel
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       memref.load {{.*}} : memref<64x32xf32>

func.func @sum(%x: tensor<64x32xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
