// COM: A deliberately broken program: the lowering is told to leave out the
// COM: waits before the users of swapped-in buffers. The emulated device
// COM: completes copies late and guards the pages of a copy in flight: the
// COM: program's first read of a swapped-in buffer before its copy ran is
// COM: an error with a message that names the copy (it used to show only as
// COM: NaN in the output, then as the late copy landing in freed memory).
// COM: With the guards off (LMS_CHECK_IN_FLIGHT=0) the late copy into freed
// COM: memory is still caught when it runs.
// REQUIRES: lms-runtime

// RUN: %python %gen_models/mlp_train.py --batch 16 --inputs 16 --width 32 --layers 3 --classes 4 --with-main -o %t.mlir
// RUN: lms-opt %t.mlir --lms-insert-swaps="budget=15000 arena=false" -o %t.swapped.mlir
// RUN: lms-opt %t.swapped.mlir --lms-inline-recomputes --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --lms-deallocate --convert-lms-to-gpu=testing-skip-consumer-waits=true --lms-memref-to-gpu --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-math-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --gpu-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts -o %t.broken.ll.mlir
// RUN: env LMS_COPY_DELAY_US=50000 not --crash mlir-runner %t.broken.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: lms runtime: the program read or wrote memory at 0x{{[0-9a-f]+}} while a copy of {{[0-9]+}} bytes into it was still in flight (use before the copy completed: is a wait missing?)
// RUN: env LMS_COPY_DELAY_US=50000 LMS_CHECK_IN_FLIGHT=0 not --crash mlir-runner %t.broken.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=UNGUARDED
// UNGUARDED: lms runtime: a copy into freed device memory (use after free: is a wait missing?)

// RUN: lms-opt %t.swapped.mlir --lms-host-pipeline=arena=false -o %t.fixed.ll.mlir
// RUN: env LMS_COPY_DELAY_US=50000 mlir-runner %t.fixed.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | FileCheck %s --check-prefix=FIXED
// FIXED-NOT: nan
