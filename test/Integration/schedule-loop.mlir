// COM: --lms-schedule inside a loop body: each iteration computes two
// COM: branches written interleaved (a1 and b1, 16 KiB each, live
// COM: together). The body is reordered (branch a finished first), the
// COM: loop's peak drops from 33,536 to 17,408 bytes, the program prints the
// COM: same values, and the emulated device measures the analysed peak.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-schedule=stats=true -o %t.scheduled.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: lms-schedule: @main: peak 33536 -> 17408 bytes (nested)
// RUN: FileCheck %s --check-prefix=ORDER < %t.scheduled.mlir
// ORDER: scf.for
// ORDER: %[[A1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x64xf32>)
// ORDER: linalg.generic {{.*}} ins(%[[A1]] : tensor<64x64xf32>)
// ORDER: %[[B1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x64xf32>)
// ORDER: linalg.generic {{.*}} ins(%[[B1]] : tensor<64x64xf32>)
// ORDER: scf.yield
// RUN: lms-opt %s --lms-report-memory="format=json" -o /dev/null > %t.plain.json
// RUN: lms-opt %t.scheduled.mlir --lms-report-memory="format=json" -o /dev/null > %t.scheduled.json
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.scheduled.mlir --lms-host-pipeline -o %t.scheduled.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.plain.stats mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_BYTES=17408 LMS_RUNTIME_STATS=%t.scheduled.stats mlir-runner %t.scheduled.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.scheduled.out
// RUN: diff %t.plain.out %t.scheduled.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.scheduled.out
// COM: three iterations of 64 x 2 + max(2) = 130.
// VALUES: [390,  390,
// RUN: %check_stats %t.plain.stats --analysis %t.plain.json --no-leaks | FileCheck %s --check-prefix=PLAIN
// PLAIN: measured peak 33536 == analysed peak
// RUN: %check_stats %t.scheduled.stats --max-peak 17408 --analysis %t.scheduled.json --no-leaks | FileCheck %s --check-prefix=SCHEDULED
// SCHEDULED: measured peak 17408 == analysed peak
// SCHEDULED-NEXT: no leaks

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
    %a1 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%ea : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %eb = tensor.empty() : tensor<64x64xf32>
    %b1 = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%eb : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %one : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %ra = tensor.empty() : tensor<64xf32>
    %za = linalg.fill ins(%zero : f32) outs(%ra : tensor<64xf32>) -> tensor<64xf32>
    %a2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%a1 : tensor<64x64xf32>) outs(%za : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.addf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %rb = tensor.empty() : tensor<64xf32>
    %zb = linalg.fill ins(%zero : f32) outs(%rb : tensor<64xf32>) -> tensor<64xf32>
    %b2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%b1 : tensor<64x64xf32>) outs(%zb : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.maximumf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %s1 = linalg.add ins(%a2, %b2 : tensor<64xf32>, tensor<64xf32>) outs(%a2 : tensor<64xf32>) -> tensor<64xf32>
    %s2 = linalg.add ins(%acc, %s1 : tensor<64xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
    scf.yield %s2 : tensor<64xf32>
  }
  %u = tensor.cast %r : tensor<64xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
