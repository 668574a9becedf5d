// COM: A max pooling that writes its values and indices into two filled
// COM: buffers (as torch exports write it) is one unit of recomputation
// COM: with its fills and its window: --lms-rematerialize recomputes it for
// COM: the late use of both results instead of keeping them across the wide
// COM: section. The rewrite computes the same values, and its measured
// COM: device high-water mark fits 36 KiB and equals the analysis; the
// COM: original needs 39 KiB. (Before the unit was formed, the pooling was
// COM: not recomputable and no plan fit.)
// REQUIRES: lms-runtime

// RUN: lms-opt %S/Inputs/pool_indices.mlir --lms-host-pipeline=arena=false -o %t.orig.ll.mlir
// RUN: mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.orig.out
// RUN: FileCheck %s --check-prefix=VALUE < %t.orig.out
// VALUE: [{{[0-9.e+-]+}}]
// VALUE: [{{[0-9.e+-]+}}]

// RUN: lms-opt %S/Inputs/pool_indices.mlir --lms-rematerialize="budget=36KiB alignment=256 arena=false" -o %t.remat.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.remat.mlir
// IR: lms.recompute{{.*}} -> (tensor<4x8x8xf32>, tensor<4x8x8xi64>)
// IR: tensor.empty
// IR: linalg.fill
// IR: tensor.empty
// IR: linalg.fill
// IR: tensor.empty
// IR: linalg.fill
// IR: linalg.generic
// RUN: lms-opt %t.remat.mlir --lms-report-memory="format=json alignment=256 arena=false" -o /dev/null > %t.report.json
// RUN: lms-opt %t.remat.mlir --lms-host-pipeline=arena=false -o %t.remat.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.stats.json LMS_DEVICE_BYTES=36864 mlir-runner %t.remat.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.remat.out
// RUN: diff %t.orig.out %t.remat.out
// RUN: %check_stats %t.stats.json --max-peak 36864 --analysis %t.report.json --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: peak device bytes {{[0-9]+}} <= 36864
// STATS-NEXT: measured peak {{[0-9]+}} == analysed peak
// STATS-NEXT: no leaks
// RUN: env LMS_DEVICE_BYTES=36864 not --crash mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: lms runtime: out of device memory
