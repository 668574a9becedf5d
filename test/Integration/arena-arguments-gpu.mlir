// COM: The host's arena (--lms-mark-arena-arguments) through the GPU
// COM: pipeline: the carving is the host pipeline's, so @step takes the arena
// COM: its host passes as its only argument, its arguments are views of it at
// COM: the recorded offsets, and the kernels read and write those views.
// COM: (Lowered here to kernels in PTX; no GPU runs it in the test suite.)

// RUN: lms-opt %s --lms-mark-arena-arguments --lms-gpu-pipeline -mlir-print-ir-after=lms-carve-arena -o %t.gpu.mlir 2> %t.carved.mlir
// RUN: FileCheck %s < %t.carved.mlir
// CHECK-LABEL: IR Dump After LMSCarveArena
// CHECK:         func.func @step(%[[ARENA:.*]]: memref<12288xi8>) -> memref<1024xf32>
// CHECK-SAME:      lms.argument_offsets = array<i64: 0, 4096>
// CHECK-NOT:     gpu.alloc
// CHECK:         %[[X:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// CHECK:         %[[W:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[X]]
// CHECK:           memref.load %[[W]]
// RUN: FileCheck %s --check-prefix=LLVM < %t.gpu.mlir
// LLVM: llvm.func @step(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// LLVM-SAME: lms.arena_bytes = 12288
// LLVM-COUNT-4: gpu.launch_func

func.func @step(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.mul ins(%x, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %b = linalg.add ins(%a, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.mul ins(%b, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}
