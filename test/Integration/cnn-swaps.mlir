// COM: Proof by execution for a convolutional training step
// COM: (tools/gen-models/conv_train.py): planned with the emulated device's
// COM: 256-byte allocation granularity, the swapped step prints what the
// COM: original prints and its measured high-water mark is the analysed one,
// COM: within the budget, with no leaks.
// REQUIRES: lms-runtime

// RUN: %python %gen_models/conv_train.py --batch 4 --size 12 --with-main -o %t.mlir
// RUN: lms-opt %t.mlir --lms-host-pipeline=arena=false -o %t.orig.ll.mlir
// RUN: mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.orig.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.orig.out
// VALUES-COUNT-3: {{^}}[{{-?[0-9]}}

// RUN: lms-opt %t.mlir --lms-insert-swaps="budget=40000 alignment=256 arena=false" -o %t.swapped.mlir
// RUN: lms-opt %t.swapped.mlir --lms-report-memory="format=json alignment=256 arena=false" -o /dev/null > %t.report.json
// RUN: lms-opt %t.swapped.mlir --lms-host-pipeline=arena=false -o %t.swapped.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.json LMS_DEVICE_BYTES=40000 mlir-runner %t.swapped.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.swapped.out
// RUN: diff %t.orig.out %t.swapped.out
// RUN: %check_stats %t.json --max-peak 40000 --analysis %t.report.json --no-leaks --min-h2d 1 --min-d2h 1
