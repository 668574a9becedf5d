// COM: Proof by execution on the emulated device: an MLP training step
// COM: (tools/gen-models/mlp_train.py) and the same step after
// COM: --lms-insert-swaps with a budget of 100000 bytes (the original peaks at
// COM: 217088) compute the same numbers; the measured device high-water mark
// COM: fits the budget and equals the analysis of the rewritten program; no
// COM: memory leaks; and the original does not even run on a device of that
// COM: capacity.
// REQUIRES: lms-runtime

// RUN: %python %gen_models/mlp_train.py --batch 64 --inputs 32 --width 64 --layers 4 --classes 8 --with-main -o %t.mlir
// RUN: lms-opt %t.mlir --lms-host-pipeline=arena=false -o %t.orig.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.orig.json mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.orig.out
// RUN: lms-opt %t.mlir --lms-report-memory="format=json alignment=256 arena=false" -o /dev/null > %t.orig.report.json
// RUN: %check_stats %t.orig.json --analysis %t.orig.report.json --no-leaks | FileCheck %s --check-prefix=ORIG
// ORIG: measured peak 217088 == analysed peak
// ORIG-NEXT: no leaks

// RUN: lms-opt %t.mlir --lms-insert-swaps="budget=100000 arena=false" -o %t.swapped.mlir
// RUN: lms-opt %t.swapped.mlir --lms-report-memory="format=json alignment=256 arena=false" -o /dev/null > %t.swapped.report.json
// RUN: lms-opt %t.swapped.mlir --lms-host-pipeline=arena=false -o %t.swapped.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.swapped.json LMS_DEVICE_BYTES=100000 mlir-runner %t.swapped.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.swapped.out
// RUN: diff %t.orig.out %t.swapped.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.swapped.out
// VALUES-COUNT-5: {{^}}[{{-?[0-9]}}
// RUN: %check_stats %t.swapped.json --max-peak 100000 --analysis %t.swapped.report.json --no-leaks --min-h2d 1 --min-d2h 1 | FileCheck %s --check-prefix=SWAPPED
// SWAPPED: peak device bytes {{[0-9]+}} <= 100000
// SWAPPED-NEXT: measured peak {{[0-9]+}} == analysed peak
// SWAPPED-NEXT: no leaks

// RUN: env LMS_DEVICE_BYTES=100000 not --crash mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: lms runtime: out of device memory

// COM: The same through lms-host-pipeline's own planning option.
// RUN: lms-opt %t.mlir --lms-host-pipeline="budget=100000 arena=false" -o %t.pipeline.ll.mlir
// RUN: mlir-runner %t.pipeline.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.pipeline.out
// RUN: diff %t.orig.out %t.pipeline.out
