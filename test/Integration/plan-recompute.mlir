// COM: Proof by execution of the chained recomputation that --lms-plan
// COM: chooses over offloading (see test/Transforms/plan.mlir): the function
// COM: computes the same sum, and its measured device high-water mark fits
// COM: 32 KiB and equals the analysis; the original needs 36 KiB.
// REQUIRES: lms-runtime

// RUN: lms-opt %S/Inputs/chained.mlir --lms-host-pipeline=arena=false -o %t.orig.ll.mlir
// RUN: mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.orig.out
// RUN: FileCheck %s --check-prefix=VALUE < %t.orig.out
// VALUE: [8042.97]

// COM: (schedule=false: reordering alone would fit, see plan.mlir.)
// RUN: lms-opt %S/Inputs/chained.mlir --lms-plan="budget=32KiB schedule=false arena=false" -o %t.plan.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.plan.mlir
// IR-COUNT-2: lms.recompute
// IR-NOT: lms.swap_out
// RUN: lms-opt %t.plan.mlir --lms-report-memory="format=json alignment=256 arena=false" -o /dev/null > %t.report.json
// RUN: lms-opt %t.plan.mlir --lms-host-pipeline=arena=false -o %t.plan.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.stats.json LMS_DEVICE_BYTES=32768 mlir-runner %t.plan.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plan.out
// RUN: diff %t.orig.out %t.plan.out
// RUN: %check_stats %t.stats.json --max-peak 32768 --analysis %t.report.json --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: peak device bytes {{[0-9]+}} <= 32768
// STATS-NEXT: measured peak {{[0-9]+}} == analysed peak
// STATS-NEXT: no leaks
// RUN: env LMS_DEVICE_BYTES=32768 not --crash mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: lms runtime: out of device memory
