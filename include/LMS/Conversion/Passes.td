//===- Passes.td - LMS conversion passes -------------------*- tablegen -*-===//

#ifndef LMS_CONVERSION_PASSES_TD
#define LMS_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLMSToGPU : Pass<"convert-lms-to-gpu", "ModuleOp"> {
  let summary = "Lower bufferized lms ops to the GPU dialect's async copies";
  let description = [{
    On bufferized IR (after `--lms-deallocate`), before
    `--lms-memref-to-gpu` (which makes the other buffers device memory):

    * `lms.swap_out %buf` allocates a host staging buffer from the LMS
      runtime's pinned pool (`call @lmsStagingAlloc(bytes)`, viewed as the
      buffer's type) and starts a device-to-host `gpu.memcpy async` on a
      stream of its own;
    * `lms.swap_wait %h` (and a swap-out without a wait, right away) is the
      release point: a `gpu.dealloc async` of the offloaded buffer ordered
      after the copy, and a `gpu.wait` on it, so the bytes are held exactly
      until there, as the analyses count them;
    * `lms.swap_in %h` allocates the device buffer at its position
      (`gpu.alloc async`) and starts the host-to-device `gpu.memcpy async`,
      ordered after the copy-out when that has not been waited for; after the
      last swap-in of a handle, `call @lmsStagingFree(address)` gives the
      staging buffer back: the runtime returns it to the pool once that copy
      is done, and the host does not wait.
      The first user of the result waits for it: a host op behind a
      `gpu.wait` on the host (compute on the CPU, `lms-host-pipeline`); a
      kernel (`gpu.launch`, compute on the GPU, `lms-gpu-pipeline`) on its
      stream, as `gpu.launch async [copy-in]`, with the host waiting for
      the kernel after it as the synchronous launch did.

    Every async op has exactly one dependency; joins go through
    `gpu.wait async [...]`, which `--gpu-to-llvm` lowers to stream-event
    calls.

    Staging buffers are the runtime's own calls (declared in the module;
    `lmsStagingAlloc` through its C interface), not `gpu.alloc host_shared`,
    which upstream's CUDA runtime serves as managed memory. No lms op is
    left afterwards: one without a lowering (an `lms.recompute` not inlined
    by `--lms-inline-recomputes`) is an error.

    Example:

    ```mlir
    %h = lms.swap_out %buf : memref<16xf32> -> !lms.host<memref<16xf32>>
    ...
    lms.swap_wait %h : !lms.host<memref<16xf32>>
    %u = lms.swap_in %h : !lms.host<memref<16xf32>> -> memref<16xf32>
    "use"(%u) : (memref<16xf32>) -> ()
    ```

    becomes

    ```mlir
    %c64 = arith.constant 64 : index
    %raw = call @lmsStagingAlloc(%c64) : (index) -> memref<?xi8>
    %addr = memref.extract_aligned_pointer_as_index %raw : memref<?xi8> -> index
    %c0 = arith.constant 0 : index
    %hbuf = memref.view %raw[%c0][] : memref<?xi8> to memref<16xf32>
    %0 = gpu.wait async
    %1 = gpu.memcpy async [%0] %hbuf, %buf : memref<16xf32>, memref<16xf32>
    ...
    %2 = gpu.dealloc async [%1] %buf : memref<16xf32>
    gpu.wait [%2]
    %3 = gpu.wait async
    %u, %4 = gpu.alloc async [%3] () : memref<16xf32>
    %5 = gpu.memcpy async [%4] %u, %hbuf : memref<16xf32>, memref<16xf32>
    call @lmsStagingFree(%addr) : (index) -> ()
    gpu.wait [%5]
    "use"(%u) : (memref<16xf32>) -> ()
    ```
  }];
  let options = [
    Option<"copyHostCallOperands", "copy-host-call-operands", "bool", "false",
           "Pass external (host) functions such as printMemrefF32 a host "
           "copy of each buffer operand instead of device memory (for "
           "compute on a real GPU, where the host cannot read device "
           "memory)">,
    Option<"skipConsumerWaits", "testing-skip-consumer-waits", "bool",
           "false",
           "For tests only: omit the waits before the users of swapped-in "
           "buffers (a broken program the emulated device must catch)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LMSMemRefToGPU : Pass<"lms-memref-to-gpu", "ModuleOp"> {
  let summary = "Make the buffers of the default memory space device memory "
                "(GPU dialect allocations and copies)";
  let description = [{
    After `--convert-lms-to-gpu` (the lowering of the lms ops, whose swap-in
    buffers are already device allocations), on bufferized IR:

    * every `memref.alloc` of the default memory space is a device buffer:
      `gpu.alloc async` on a fresh stream, and `memref.dealloc` a
      `gpu.dealloc async`, each followed by `gpu.wait` (the host continues
      once the memory is held or released, so that the bytes are held
      exactly where the analyses count them);
    * a `memref.copy` between a global (host data: a constant that
      `--lms-upload-constants` uploads, or a variable) and a device buffer is
      a `gpu.memcpy async` followed by `gpu.wait`.

    Buffers with a memory space are left alone. Example:

    ```mlir
    %b = memref.alloc() : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
    ```

    becomes

    ```mlir
    %0 = gpu.wait async
    %b, %1 = gpu.alloc async [%0] () : memref<16xf32>
    gpu.wait [%1]
    %2 = gpu.wait async
    %3 = gpu.dealloc async [%2] %b : memref<16xf32>
    gpu.wait [%3]
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LMSCarveArena : Pass<"lms-carve-arena", "ModuleOp"> {
  let summary = "Carve a function's device buffers out of one arena at "
                "planned offsets";
  let description = [{
    On the output of `--convert-lms-to-gpu` and `--lms-memref-to-gpu`: the
    device buffers a function
    allocates and frees in its body (`gpu.alloc` without `host_shared`, of
    static shape, with one `gpu.dealloc` in the same block, neither returned
    nor passed to a function of the module, which may free it) are placed
    at offsets in one arena (the placer of `LMS/Graph/Placement.h`, over
    their lifetimes in op order), the arena is allocated once at function
    entry and freed before each return, and each buffer becomes a
    `memref.view` of the arena at its offset. A buffer's release waits on the
    host for what its `gpu.dealloc` waited for (the copy out of it), so the
    bytes are free in program order before a later buffer reuses them. The
    function makes no other device allocation for those buffers, so the
    device needs one contiguous block of the arena's size: an allocator that
    fragments cannot fail it midway.

    Calls: a function called by another (not on a cycle of calls) gets a
    private variant `@f_lms_frame` that takes its arena as a last argument
    (`memref<Nxi8>`) instead of allocating one; a carved caller places the
    callee's frame as a buffer alive during the call and passes a view of
    its own arena at that offset, so a whole call tree below a function
    makes one device allocation for the buffers it owns. Buffers that cross
    a call (arguments, results) stay allocations of their own.

    Each carved buffer's beginning and end is a call to the runtime
    (`lmsArenaAcquire` / `lmsArenaRelease`: the arena's address, the offset,
    the size), which checks and poisons them on the emulated device.

    The function gets `lms.arena_bytes` (the arena's size) and
    `lms.arena_live_bytes` (the most bytes of its buffers alive at once, the
    arena's lower bound). With `budget`, an arena over the budget is an
    error at the function.

    Example:

    ```mlir
    %0 = gpu.wait async
    %buf, %1 = gpu.alloc async [%0] () : memref<16xf32>
    ...
    %2 = gpu.dealloc async [%copy] %buf : memref<16xf32>
    gpu.wait [%2]
    ```

    becomes

    ```mlir
    // at function entry
    %a0 = gpu.wait async
    %arena, %a1 = gpu.alloc async [%a0] () : memref<1024xi8>
    gpu.wait [%a1]
    ...
    %0 = gpu.wait async
    %off = arith.constant 512 : index
    %buf = memref.view %arena[%off][] : memref<1024xi8> to memref<16xf32>
    %1 = gpu.wait async [%0]
    ...
    gpu.wait [%copy]
    %2 = gpu.wait async
    gpu.wait [%2]
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", "256",
           "Offsets and sizes in the arena are multiples of this (the LMS "
           "runtime's allocation granularity)">,
    Option<"budget", "budget", "std::string", "\"\"",
           "Fail at a function whose arena exceeds this size (bytes with a "
           "unit)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // LMS_CONVERSION_PASSES_TD
