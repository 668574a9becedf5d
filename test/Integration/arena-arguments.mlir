// COM: Arguments in the arena (Arena.md, "Arguments in the arena"): with
// COM: --lms-mark-arena-arguments the host allocates @step's arena and places
// COM: in it the arguments @step owns; @step frees them into the arena at
// COM: their last use, and its result is carved there too. Without the mark
// COM: the arguments and the result are allocations of their own beside an
// COM: arena allocated at entry: 16384 bytes for a live peak of 12288.
// COM: With it the program makes one device allocation, the host's arena, of
// COM: its live peak: 12288 bytes measured == analysed, on a first-fit
// COM: device. The host (host_driver.py) is compiled apart from @step, as a
// COM: runtime links a compiled model, and computes the same values as an
// COM: ordinary host of the unmarked function.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-mark-arena-arguments --lms-host-pipeline -mlir-print-ir-after=lms-carve-arena -o %t.arena.ll.mlir 2> %t.carved.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.carved.mlir
// IR-LABEL: IR Dump After LMSCarveArena
// IR:         func.func @step(%[[ARENA:.*]]: memref<12288xi8>) -> memref<1024xf32>
// IR-SAME:      lms.arena_arguments
// IR-SAME:      lms.arena_bytes = 12288
// IR-SAME:      lms.argument_offsets = array<i64: 0, 4096>
// IR-SAME:      lms.result_offsets = array<i64: 0>
// IR-NOT:     gpu.alloc
// IR:         %[[X:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// IR:         call @lmsArenaAcquire
// IR:         %[[W:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// IR:         linalg.mul ins(%[[X]], %[[W]] :
// IR:         call @lmsArenaRelease(%{{.*}}, %[[C0:.*]], %{{.*}})
// IR-NOT:     gpu.dealloc
// IR:         return

// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.plain.json %host_driver %s --function step --lowered %t.plain.ll.mlir --work %t.plain > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_ALLOCATOR=first-fit LMS_RUNTIME_STATS=%t.arena.json %host_driver %s --function step --lowered %t.arena.ll.mlir --carved %t.carved.mlir --work %t.arena > %t.arena.out
// RUN: diff %t.plain.out %t.arena.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.arena.out
// COM: The sum of d = (2 x w)^2 + w over the host's pattern
// COM: (x[i] = ((7 i) mod 17) / 64, w[i] = ((7 i + 3) mod 17) / 64), as numpy
// COM: computes it in f32 and sums it in f64: the sum, its bits, and the bits
// COM: of the sum weighted by position (element i times i mod 97 + 1).
// VALUES: 129.925, 4638775344738861056, 4663560376388943872

// RUN: lms-opt %s --lms-mark-arena-arguments --lms-report-memory="format=json alignment=256" -o /dev/null > %t.report.json
// RUN: %check_stats %t.arena.json --analysis %t.report.json --function step --arena --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: measured peak 12288 == analysed arena
// STATS: no leaks
// RUN: FileCheck %s --check-prefix=ONE < %t.arena.json
// ONE: "peak_device_bytes": 12288,
// ONE: "device_allocations": 1,
// RUN: lms-opt %s --lms-report-memory="format=json alignment=256" -o /dev/null > %t.plain.report.json
// RUN: %check_stats %t.plain.json --analysis %t.plain.report.json --function step --arena | FileCheck %s --check-prefix=PLAIN
// PLAIN: measured peak 16384 == analysed arena

func.func @step(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.mul ins(%x, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<1024xf32>
  %b = linalg.add ins(%a, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e1 : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %c = linalg.mul ins(%b, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %w : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}
