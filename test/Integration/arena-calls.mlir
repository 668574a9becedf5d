// COM: Buffers that cross a call, in the caller's arena.
// COM: - %x, which @main lends to @step (it reads it again after the call,
// COM:   so @step borrows it: lms.borrowed), stays @main's: it is carved from
// COM:   @main's arena like its other buffers.
// COM: - %r, which @step computes and @main frees, goes into a slot of
// COM:   @main's arena: --lms-mark-arena-slots marks @step's result
// COM:   (lms.result_slots) and the call (lms.slotted), and
// COM:   --lms-carve-arena calls a variant of @step that takes the slot (after
// COM:   its frame) and writes the result there instead of allocating it.
// COM: The program then makes one device allocation, @main's arena, of its
// COM: live peak (65536 bytes). Before, both were allocations of their own
// COM: beside the arena (98304 bytes measured: the arena of 65536 plus %x and
// COM: %r); with %x carved and %r not, 81920.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-host-pipeline=arena=true -mlir-print-ir-after=lms-mark-arena-slots -mlir-print-ir-after=lms-carve-arena -o %t.arena.ll.mlir 2> %t.carved.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.carved.mlir
// IR-LABEL: IR Dump After LMSMarkArenaSlots
// IR:         func.func @step({{.*}}) -> tensor<4096xf32> attributes {lms.result_slots = array<i1: true>}
// IR:         call @step(%{{.*}}) {lms.slotted}
// IR-LABEL: IR Dump After LMSCarveArena
// IR-LABEL: func.func private @step_lms_borrow_b_lms_frame_slots
// IR-SAME:    (%{{.*}}: memref<4096xf32> {lms.borrowed}, %{{.*}}: memref<16384xi8>, %[[SLOTARG:.*]]: memref<16384xi8>)
// IR-NOT:     func.func
// IR:         memref.view %[[SLOTARG]][%{{.*}}][] : memref<16384xi8> to memref<4096xf32>
// IR:         return
// IR-LABEL: func.func @main()
// IR-SAME:    lms.arena_bytes = 65536
// IR:         %[[ARENA:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<65536xi8>
// IR-NOT:     gpu.alloc
// IR:         %[[X:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<65536xi8> to memref<4096xf32>
// IR:         linalg.fill ins(%{{.*}} : f32) outs(%[[X]] : memref<4096xf32>)
// IR:         %[[FRAME:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<65536xi8> to memref<16384xi8>
// IR:         %[[SLOT:.*]] = memref.view %[[ARENA]][%[[AT:.*]]][] : memref<65536xi8> to memref<16384xi8>
// IR:         call @lmsArenaAcquire(%{{.*}}, %[[AT]], %{{.*}})
// IR-NEXT:    %[[R:.*]] = call @step_lms_borrow_b_lms_frame_slots(%[[X]], %[[FRAME]], %[[SLOT]])
// IR:         linalg.add ins(%[[R]], %[[X]] : memref<4096xf32>, memref<4096xf32>)
// IR-NOT:     gpu.dealloc {{.*}} %[[R]]
// IR:         call @lmsArenaRelease(%{{.*}}, %[[AT2:.*]], %{{.*}})
// IR-NOT:     gpu.alloc
// IR:         return

// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_DEVICE_ALLOCATOR=first-fit LMS_RUNTIME_STATS=%t.arena.json mlir-runner %t.arena.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.arena.out
// RUN: diff %t.plain.out %t.arena.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.arena.out
// VALUES: [7.54726,  7.54726]
// RUN: lms-opt %s --lms-report-memory="format=json alignment=256" -o /dev/null > %t.report.json
// RUN: %check_stats %t.arena.json --analysis %t.report.json --function main --arena --no-leaks | FileCheck %s --check-prefix=STATS
// STATS: measured peak 65536 == analysed arena
// STATS-NEXT: no leaks
// RUN: FileCheck %s --check-prefix=ONE < %t.arena.json
// ONE: "device_allocations": 1,

func.func private @printMemrefF32(tensor<*xf32>)
func.func @step(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %e = tensor.empty() : tensor<4096xf32>
  %a = linalg.exp ins(%x : tensor<4096xf32>) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %e2 = tensor.empty() : tensor<4096xf32>
  %b = linalg.mul ins(%a, %x : tensor<4096xf32>, tensor<4096xf32>) outs(%e2 : tensor<4096xf32>) -> tensor<4096xf32>
  return %b : tensor<4096xf32>
}
func.func @main() {
  %c = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = call @step(%x) : (tensor<4096xf32>) -> tensor<4096xf32>
  %e3 = tensor.empty() : tensor<4096xf32>
  %z = linalg.add ins(%r, %x : tensor<4096xf32>, tensor<4096xf32>) outs(%e3 : tensor<4096xf32>) -> tensor<4096xf32>
  %e4 = tensor.empty() : tensor<4096xf32>
  %a = linalg.exp ins(%z : tensor<4096xf32>) outs(%e4 : tensor<4096xf32>) -> tensor<4096xf32>
  %e5 = tensor.empty() : tensor<4096xf32>
  %b = linalg.sqrt ins(%a : tensor<4096xf32>) outs(%e5 : tensor<4096xf32>) -> tensor<4096xf32>
  %e6 = tensor.empty() : tensor<4096xf32>
  %d = linalg.add ins(%a, %b : tensor<4096xf32>, tensor<4096xf32>) outs(%e6 : tensor<4096xf32>) -> tensor<4096xf32>
  %e7 = tensor.empty() : tensor<4096xf32>
  %y = linalg.mul ins(%d, %z : tensor<4096xf32>, tensor<4096xf32>) outs(%e7 : tensor<4096xf32>) -> tensor<4096xf32>
  %s = tensor.extract_slice %y[0] [2] [1] : tensor<4096xf32> to tensor<2xf32>
  %u = tensor.cast %s : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
