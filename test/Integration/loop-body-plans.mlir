// COM: Planning inside a loop's body (issue 18). Each of the three
// COM: iterations holds three 16 KiB tensors at once (a, b, c), so the loop
// COM: needs 49,664 bytes; a budget of 40,000 leaves 39,488 for its body
// COM: beside the loop's operands (x and the accumulator). The planners see
// COM: the loop as one op, so no plan of the function alone fits: the body
// COM: is planned first, with offloading (a goes to the host while b and c
// COM: are computed, and comes back for its reduction) or recomputation (a
// COM: computed again there), and the program computes the same values
// COM: with the measured device peak equal to the analysed one, under the
// COM: budget, on the emulated device.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-report-memory -o /dev/null | FileCheck %s --check-prefix=BEFORE
// BEFORE: @main: peak 48.5 KiB (49664 bytes) at op 9 'scf.for'
// BEFORE: smallest feasible budget: 48.5 KiB (49664 bytes, op 9 'scf.for')

// RUN: lms-opt %s --lms-insert-swaps="budget=40000 stats=true" -o %t.swap.mlir 2>&1 | FileCheck %s --check-prefix=SWAP-STATS
// SWAP-STATS: lms-insert-swaps: 1 tensors-swapped, 1 swap-outs, 1 swap-ins, 16384 bytes-to-host, 16384 bytes-to-device, {{[0-9]+}} estimated-stall-us, 1 bodies-planned
// RUN: FileCheck %s --check-prefix=SWAP < %t.swap.mlir
// SWAP: scf.for
// SWAP: %[[A:.*]] = linalg.generic
// SWAP-NEXT: ^bb0
// SWAP-NEXT: arith.addf %in, %in
// SWAP: %[[H:.*]] = lms.swap_out %[[A]]
// SWAP: lms.swap_wait %[[H]]
// SWAP: arith.mulf
// SWAP: %[[BACK:.*]] = lms.swap_in %[[H]]
// SWAP: linalg.generic {{.*}} ins(%[[BACK]] : tensor<64x64xf32>)
// SWAP: scf.yield

// RUN: lms-opt %s --lms-rematerialize="budget=40000 stats=true" -o %t.remat.mlir 2>&1 | FileCheck %s --check-prefix=REMAT-STATS
// REMAT-STATS: lms-rematerialize: 1 recomputes, 2 ops-cloned, {{[0-9]+}} extra-compute-us, 1 bodies-planned
// RUN: FileCheck %s --check-prefix=REMAT < %t.remat.mlir
// REMAT: scf.for
// REMAT: arith.mulf
// REMAT: lms.recompute
// REMAT: arith.addf %in, %in
// REMAT: scf.yield

// COM: --lms-plan (its scheduling off: reordering alone fits this body)
// COM: tries both in the body and keeps the one the simulator times faster.
// RUN: lms-opt %s --lms-plan="budget=40000 stats=true schedule=false" -o %t.plan.mlir 2>&1 | FileCheck %s --check-prefix=PLAN-STATS
// PLAN-STATS: lms-plan: @main: body of 'scf.for' at loc({{.*}}:{{[0-9]+}}:8) in 39488 bytes: offloading {{[0-9.]+}} us, recomputing {{[0-9.]+}} us

// RUN: lms-opt %s --lms-host-pipeline -o %t.orig.ll.mlir
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.orig.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.orig.out
// COM: three iterations of max(2) + 64 x 4 = 258.
// VALUES: [774,  774,
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=40000 not --crash mlir-runner %t.orig.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: lms runtime: out of device memory

// RUN: lms-opt %t.swap.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.swap.json
// RUN: lms-opt %t.swap.mlir --lms-host-pipeline -o %t.swap.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=40000 LMS_RUNTIME_STATS=%t.swap.stats mlir-runner %t.swap.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.swap.out
// RUN: diff %t.orig.out %t.swap.out
// RUN: %check_stats %t.swap.stats --max-peak 40000 --analysis %t.swap.json --no-leaks --min-h2d 1 --min-d2h 1 | FileCheck %s --check-prefix=MEASURED
// MEASURED: peak device bytes {{[0-9]+}} <= 40000
// MEASURED-NEXT: measured peak {{[0-9]+}} == analysed peak
// MEASURED-NEXT: no leaks

// RUN: lms-opt %t.remat.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.remat.json
// RUN: lms-opt %t.remat.mlir --lms-host-pipeline -o %t.remat.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=40000 LMS_RUNTIME_STATS=%t.remat.stats mlir-runner %t.remat.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.remat.out
// RUN: diff %t.orig.out %t.remat.out
// RUN: %check_stats %t.remat.stats --max-peak 40000 --analysis %t.remat.json --no-leaks | FileCheck %s --check-prefix=MEASURED

// RUN: lms-opt %t.plan.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.plan.json
// RUN: lms-opt %t.plan.mlir --lms-host-pipeline -o %t.plan.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=40000 LMS_RUNTIME_STATS=%t.plan.stats mlir-runner %t.plan.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plan.out
// RUN: diff %t.orig.out %t.plan.out
// RUN: %check_stats %t.plan.stats --max-peak 40000 --analysis %t.plan.json --no-leaks | FileCheck %s --check-prefix=MEASURED

// COM: Below what one iteration needs (c computed from b: 32 KiB), the
// COM: error names the loop, the room its body had, and the op inside.
// RUN: not lms-opt %s --lms-insert-swaps=budget=30000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR-SWAP
// ERROR-SWAP: :[[@LINE+18]]:8: error: cannot fit the body of this op into 28.8 KiB (29488 bytes), what the budget leaves beside its operands and results, offloading: budget 29488 is below the smallest feasible budget 32768
// ERROR-SWAP: :[[@LINE+31]]:10: note: the op of the body that needs 32.0 KiB (32768 bytes)
// RUN: not lms-opt %s --lms-rematerialize=budget=30000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR-REMAT
// ERROR-REMAT: error: cannot fit the body of this op into 28.8 KiB (29488 bytes), what the budget leaves beside its operands and results, recomputing: its smallest feasible budget is 32.0 KiB (32768 bytes)

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ex = tensor.empty() : tensor<64xf32>
  %x = linalg.fill ins(%one : f32) outs(%ex : tensor<64xf32>) -> tensor<64xf32>
  %ei = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ei : tensor<64xf32>) -> tensor<64xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<64xf32>) {
    %ea = tensor.empty() : tensor<64x64xf32>
    %a = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%ea : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %eb = tensor.empty() : tensor<64x64xf32>
    %b = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%eb : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %one : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %ec = tensor.empty() : tensor<64x64xf32>
    %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<64x64xf32>) outs(%ec : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %rc = tensor.empty() : tensor<64xf32>
    %zc = linalg.fill ins(%zero : f32) outs(%rc : tensor<64xf32>) -> tensor<64xf32>
    %c2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<64x64xf32>) outs(%zc : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.addf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %ra = tensor.empty() : tensor<64xf32>
    %za = linalg.fill ins(%zero : f32) outs(%ra : tensor<64xf32>) -> tensor<64xf32>
    %a2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x64xf32>) outs(%za : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.maximumf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %s1 = linalg.add ins(%a2, %c2 : tensor<64xf32>, tensor<64xf32>) outs(%a2 : tensor<64xf32>) -> tensor<64xf32>
    %s2 = linalg.add ins(%acc, %s1 : tensor<64xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
    scf.yield %s2 : tensor<64xf32>
  }
  %u = tensor.cast %r : tensor<64xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
