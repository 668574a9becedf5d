// COM: With copy-host-call-operands (what lms-gpu-pipeline uses, since the
// COM: host cannot read GPU memory), printMemrefF32 gets host copies of the
// COM: device buffers; on the emulated device the program prints the same
// COM: numbers and leaks nothing (the copies come from and go back to the
// COM: pinned pool).
// REQUIRES: lms-runtime
// RUN: %python %gen_models/mlp_train.py --batch 16 --inputs 16 --width 32 --layers 3 --classes 4 --with-main -o %t.mlir
// RUN: lms-opt %t.mlir --lms-host-pipeline=arena=false -o %t.plain.ll.mlir
// RUN: mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: lms-opt %t.mlir --lms-insert-swaps="budget=16000 arena=false" --lms-inline-recomputes --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --lms-deallocate --convert-lms-to-gpu=copy-host-call-operands=true --lms-memref-to-gpu -o %t.copies.mlir
// RUN: FileCheck %s < %t.copies.mlir
// CHECK-NOT: host_shared
// CHECK-LABEL: func.func @main
// CHECK:      %[[RAW:.*]] = call @lmsStagingAlloc(%{{.*}}) : (index) -> memref<?xi8>
// CHECK-NEXT: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[RAW]]
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: %[[HOST:.*]] = memref.view %[[RAW]]{{.*}} to memref<1xf32>
// CHECK-NEXT: gpu.wait async
// CHECK-NEXT: gpu.memcpy async [%{{.*}}] %[[HOST]]
// CHECK-NEXT: gpu.wait
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[HOST]]
// CHECK-NEXT: call @printMemrefF32(%[[CAST]])
// CHECK-NEXT: call @lmsStagingFree(%[[ADDR]])
// RUN: lms-opt %t.copies.mlir --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-math-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --gpu-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts -o %t.copies.ll.mlir
// RUN: env LMS_RUNTIME_STATS=%t.json mlir-runner %t.copies.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.copies.out
// RUN: diff %t.plain.out %t.copies.out
// RUN: %check_stats %t.json --no-leaks --min-d2h 1
