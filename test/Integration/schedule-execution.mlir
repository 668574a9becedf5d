// COM: --lms-schedule by execution: two branches written interleaved (the
// COM: 16 KiB broadcasts a1 and b1 live together) run in the new order
// COM: (branch a finished first) with the same values, and the emulated
// COM: device measures the analysed peak: 33,024 bytes before, 16,896
// COM: after. On a device of 16,896 bytes only the scheduled program runs.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-schedule -o %t.scheduled.mlir
// RUN: lms-opt %s --lms-report-memory="format=json" -o /dev/null > %t.plain.json
// RUN: lms-opt %t.scheduled.mlir --lms-report-memory="format=json" -o /dev/null > %t.scheduled.json
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.scheduled.mlir --lms-host-pipeline -o %t.scheduled.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.plain.stats mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=16896 LMS_RUNTIME_STATS=%t.scheduled.stats mlir-runner %t.scheduled.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.scheduled.out
// RUN: diff %t.plain.out %t.scheduled.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.scheduled.out
// COM: a2 = 64 x (1 + 1), b2 = max(1 + 1): 130 everywhere.
// VALUES: [130,  130,
// RUN: %check_stats %t.plain.stats --analysis %t.plain.json --no-leaks | FileCheck %s --check-prefix=PLAIN
// PLAIN: measured peak 33024 == analysed peak
// PLAIN-NEXT: no leaks
// RUN: %check_stats %t.scheduled.stats --max-peak 16896 --analysis %t.scheduled.json --no-leaks | FileCheck %s --check-prefix=SCHEDULED
// SCHEDULED: peak device bytes 16896 <= 16896
// SCHEDULED-NEXT: measured peak 16896 == analysed peak
// SCHEDULED-NEXT: no leaks
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=16896 not --crash mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: lms runtime: out of device memory

// COM: --lms-plan schedules first: the budget of the scheduled peak needs
// COM: no swap and no recomputation.
// RUN: lms-opt %s --lms-plan="budget=16896" | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: lms.
// PLAN: return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func private @printMemrefF32(tensor<*xf32>)
func.func @main() {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ex = tensor.empty() : tensor<64xf32>
  %x = linalg.fill ins(%one : f32) outs(%ex : tensor<64xf32>) -> tensor<64xf32>
  %ea = tensor.empty() : tensor<64x64xf32>
  %a1 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %eb = tensor.empty() : tensor<64x64xf32>
  %b1 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%eb : tensor<64x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %one : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %ra = tensor.empty() : tensor<64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ra : tensor<64xf32>) -> tensor<64xf32>
  %a2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%a1 : tensor<64x64xf32>) outs(%za : tensor<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %rb = tensor.empty() : tensor<64xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%rb : tensor<64xf32>) -> tensor<64xf32>
  %b2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%b1 : tensor<64x64xf32>) outs(%zb : tensor<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.maximumf %i, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %sum = linalg.add ins(%a2, %b2 : tensor<64xf32>, tensor<64xf32>) outs(%a2 : tensor<64xf32>) -> tensor<64xf32>
  %u = tensor.cast %sum : tensor<64xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
