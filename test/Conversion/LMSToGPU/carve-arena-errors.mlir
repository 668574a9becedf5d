// COM: An arena over the budget is an error at the function.
// RUN: lms-opt %s -allow-unregistered-dialect --lms-carve-arena="budget=1KiB" --verify-diagnostics -o /dev/null
// RUN: not lms-opt %s -allow-unregistered-dialect --lms-carve-arena="budget=50%" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERCENT
// PERCENT: error: invalid budget '50%': expected bytes or a size with a unit
// RUN: not lms-opt %s -allow-unregistered-dialect --lms-carve-arena="alignment=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: error: invalid alignment 0: expected a positive number of bytes
// expected-error @below {{the device buffers need an arena of 2.00 KiB (2048 bytes; 2048 bytes alive at most), over the budget of 1.00 KiB (1024 bytes)}}
func.func @over() {
  %s0 = gpu.wait async
  %a, %t0 = gpu.alloc async [%s0] () : memref<256xf32>
  gpu.wait [%t0]
  %s1 = gpu.wait async
  %b, %t1 = gpu.alloc async [%s1] () : memref<256xf32>
  gpu.wait [%t1]
  "test.use"(%a, %b) : (memref<256xf32>, memref<256xf32>) -> ()
  %s2 = gpu.wait async
  %f0 = gpu.dealloc async [%s2] %a : memref<256xf32>
  gpu.wait [%f0]
  %s3 = gpu.wait async
  %f1 = gpu.dealloc async [%s3] %b : memref<256xf32>
  gpu.wait [%f1]
  return
}


// COM: A result marked for a slot of the caller's arena (by
// COM: --lms-mark-arena-slots, or by hand) that is not a buffer the function
// COM: allocates to return it (here its argument) stays an allocation of its
// COM: own, and the pass says that the lowering differs from the model.
// expected-warning@below {{result 0 is not a buffer the function allocates to return it: it stays an allocation of its own (the arena model counted it in the caller's arena)}}
func.func @passthrough(%in: memref<64xf32>) -> memref<64xf32> attributes {lms.result_slots = array<i1: true>} {
  return %in : memref<64xf32>
}
func.func @lender(%in: memref<64xf32>) -> memref<64xf32> {
  %r = call @passthrough(%in) {lms.slotted} : (memref<64xf32>) -> memref<64xf32>
  return %r : memref<64xf32>
}

// COM: The host-arena mark (lms.arena_arguments) on a function the module
// COM: calls is an error: a call in the module does not place its arguments
// COM: in an arena.
// expected-error@below {{'lms.arena_arguments' on a function the module calls: its host places its arguments in its arena, which a call in the module does not}}
func.func @hosted(%in: memref<64xf32>) attributes {lms.arena_arguments} {
  %s = gpu.wait async
  %f = gpu.dealloc async [%s] %in : memref<64xf32>
  gpu.wait [%f]
  return
}
func.func @calls_hosted(%in: memref<64xf32>) {
  call @hosted(%in) : (memref<64xf32>) -> ()
  return
}

// COM: With the host's arena, a result marked for it that is not a buffer the
// COM: function allocates to return it stays an allocation of its own, and
// COM: the pass says so.
// expected-warning@below {{result 0 is not a buffer the function allocates to return it: it stays an allocation of its own (the arena model counted it in the host's arena)}}
func.func @hosted_passthrough(%in: memref<64xf32>) -> memref<64xf32> attributes {lms.arena_arguments, lms.result_slots = array<i1: true>} {
  return %in : memref<64xf32>
}
