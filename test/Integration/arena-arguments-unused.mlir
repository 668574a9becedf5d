// COM: Regression (property run --host-arena, seed 1, program 39): an
// COM: argument the function never reads. The plan frees it before anything
// COM: is allocated, and the arena model counted it in no byte of the arena,
// COM: while the host writes it there before the call and the lowering
// COM: carves it: measured 4,352 != analysed 1,536. An argument the host
// COM: places now holds its bytes at entry in both: the arena is 4096 (the
// COM: unused 4 KiB, then the 256-byte buffers at its offset), measured ==
// COM: analysed.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-mark-arena-arguments --lms-report-memory="format=json alignment=256" -o /dev/null > %t.report.json
// RUN: lms-opt %s --lms-mark-arena-arguments --lms-host-pipeline -mlir-print-ir-after=lms-carve-arena -o %t.ll.mlir 2> %t.carved.mlir
// RUN: FileCheck %s < %t.carved.mlir
// CHECK: func.func @step(%{{.*}}: memref<64xf32> {lms.borrowed}, %{{.*}}: memref<4096xi8>) -> memref<64xf32>
// CHECK-SAME: lms.argument_offsets = array<i64: 0, -1>
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_ALLOCATOR=first-fit LMS_RUNTIME_STATS=%t.stats %host_driver %s --function step --lowered %t.ll.mlir --carved %t.carved.mlir --work %t.work > %t.out
// RUN: %check_stats %t.stats --analysis %t.report.json --function step --arena --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: measured peak {{[0-9]+}} == analysed arena
// STATS: no leaks

func.func @step(%unused: tensor<1024xf32>, %w: tensor<64xf32> {lms.borrowed}) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.add ins(%w, %w : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %a : tensor<64xf32>
}
