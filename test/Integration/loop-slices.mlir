// COM: Regression: slices indexed by a loop variable (subviews with dynamic
// COM: offsets) lower through --lms-host-pipeline: strided metadata is
// COM: expanded before affine is lowered, so no affine.apply is left for the
// COM: runner. The loop carries a tensor; measured peak == analysed peak.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-host-pipeline -o %t.ll.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.ll.mlir
// LOWERED-NOT: affine.apply
// RUN: lms-opt %s --lms-report-memory="format=json alignment=256" -o /dev/null > %t.json
// RUN: env LMS_RUNTIME_STATS=%t.stats mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s
// CHECK: [0,   0,   0,   0,   0,   0,   0,   0],
// CHECK-NEXT: [1,   1,   1,   1,   1,   1,   1,   1],
// CHECK-NEXT: [2,   2,   2,   2,   2,   2,   2,   2],
// CHECK-NEXT: [3,   3,   3,   3,   3,   3,   3,   3]]
// RUN: %check_stats %t.stats --analysis %t.json --no-leaks | FileCheck %s --check-prefix=STATS
// COM: With arena=true the buffers of the loop body stay allocations of
// COM: their own (counted as the loop's transient bytes): measured ==
// COM: analysed arena.
// RUN: lms-opt %s --lms-host-pipeline=arena=true -o %t.arena.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.arena.stats LMS_DEVICE_ALLOCATOR=first-fit mlir-runner %t.arena.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ | FileCheck %s
// RUN: %check_stats %t.arena.stats --analysis %t.json --arena --no-leaks | FileCheck %s --check-prefix=ARENA
// ARENA: measured peak {{[0-9]+}} == analysed arena
// STATS: measured peak {{[0-9]+}} == analysed peak
// STATS-NEXT: no leaks

func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<4x8xf32>) {
    %s = tensor.extract_slice %acc[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %f = arith.index_cast %i : index to i32
    %v = arith.sitofp %f : i32 to f32
    %t = linalg.fill ins(%v : f32) outs(%s : tensor<1x8xf32>) -> tensor<1x8xf32>
    %n = tensor.insert_slice %t into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
    scf.yield %n : tensor<4x8xf32>
  }
  %u = tensor.cast %r : tensor<4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
