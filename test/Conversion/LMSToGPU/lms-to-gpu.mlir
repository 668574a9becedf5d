// RUN: lms-opt %s --convert-lms-to-gpu --lms-memref-to-gpu -split-input-file -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// COM: Device buffers become stream-ordered GPU allocations the host waits
// COM: for; a swap-out copies to a pinned staging buffer of the LMS runtime
// COM: (lmsStagingAlloc, viewed as the buffer's type; not gpu.alloc
// COM: host_shared, which upstream's runtime serves as managed memory) on its
// COM: own stream; its wait frees the device buffer after the copy and
// COM: waits; a swap-in allocates and copies back on a fresh stream, hands
// COM: the staging buffer back after its (last) copy (lmsStagingFree: the
// COM: runtime orders it after the copy, the host does not wait), and the
// COM: first user waits.
// CHECK-LABEL: func.func @swap
// CHECK-SAME: (%[[ARG:.*]]: memref<16xf32>)
// CHECK:      %[[S0:.*]] = gpu.wait async
// CHECK-NEXT: %[[BUF:.*]], %[[T0:.*]] = gpu.alloc async [%[[S0]]] () : memref<16xf32>
// CHECK-NEXT: gpu.wait [%[[T0]]]
// CHECK-NEXT: "test.fill"(%[[BUF]])
// CHECK-NEXT: %[[BYTES:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[RAW:.*]] = call @lmsStagingAlloc(%[[BYTES]]) : (index) -> memref<?xi8>
// CHECK-NEXT: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[RAW]]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[HOST:.*]] = memref.view %[[RAW]][%[[C0]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NEXT: %[[S1:.*]] = gpu.wait async
// CHECK-NEXT: %[[COPY:.*]] = gpu.memcpy async [%[[S1]]] %[[HOST]], %[[BUF]]
// CHECK-NEXT: "test.compute"(%[[ARG]])
// CHECK-NEXT: %[[FREE:.*]] = gpu.dealloc async [%[[COPY]]] %[[BUF]]
// CHECK-NEXT: gpu.wait [%[[FREE]]]
// CHECK-NEXT: %[[S2:.*]] = gpu.wait async
// CHECK-NEXT: %[[IN:.*]], %[[T2:.*]] = gpu.alloc async [%[[S2]]] () : memref<16xf32>
// CHECK-NEXT: %[[COPYIN:.*]] = gpu.memcpy async [%[[T2]]] %[[IN]], %[[HOST]]
// CHECK-NEXT: call @lmsStagingFree(%[[ADDR]]) : (index) -> ()
// CHECK-NEXT: "test.compute"(%[[ARG]])
// CHECK-NEXT: gpu.wait [%[[COPYIN]]]
// CHECK-NEXT: "test.use"(%[[IN]])
// CHECK-NEXT: %[[S3:.*]] = gpu.wait async
// CHECK-NEXT: %[[F3:.*]] = gpu.dealloc async [%[[S3]]] %[[IN]]
// CHECK-NEXT: gpu.wait [%[[F3]]]
// CHECK-NOT: lms.
// CHECK:      func.func private @lmsStagingAlloc(index) -> memref<?xi8> attributes {llvm.emit_c_interface}
// CHECK-NEXT: func.func private @lmsStagingFree(index)
func.func @swap(%arg: memref<16xf32>) {
  %buf = memref.alloc() : memref<16xf32>
  "test.fill"(%buf) : (memref<16xf32>) -> ()
  %h = lms.swap_out %buf : memref<16xf32> -> !lms.host<memref<16xf32>>
  "test.compute"(%arg) : (memref<16xf32>) -> ()
  lms.swap_wait %h : !lms.host<memref<16xf32>>
  %u = lms.swap_in %h : !lms.host<memref<16xf32>> -> memref<16xf32>
  "test.compute"(%arg) : (memref<16xf32>) -> ()
  "test.use"(%u) : (memref<16xf32>) -> ()
  memref.dealloc %u : memref<16xf32>
  return
}

// -----

// COM: A swap-out without a wait is synchronous: released right after the
// COM: copy starts; a handle swapped in twice frees its staging buffer after
// COM: the second copy only.
// CHECK-LABEL: func.func @sync_and_twice
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[HOST:.*]] = memref.view
// CHECK: %[[COPY:.*]] = gpu.memcpy async
// CHECK-NEXT: %[[FREE:.*]] = gpu.dealloc async [%[[COPY]]] %arg0
// CHECK-NEXT: gpu.wait [%[[FREE]]]
// CHECK: gpu.memcpy async [%{{.*}}] %{{.*}}, %[[HOST]]
// CHECK-NOT: lmsStagingFree
// CHECK: "test.use"
// CHECK: gpu.memcpy async [%{{.*}}] %{{.*}}, %[[HOST]]
// CHECK-NEXT: call @lmsStagingFree(%[[ADDR]])
func.func @sync_and_twice(%buf: memref<4xf32>) {
  %h = lms.swap_out %buf : memref<4xf32> -> !lms.host<memref<4xf32>>
  %a = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<4xf32>
  "test.use"(%a) : (memref<4xf32>) -> ()
  %b = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<4xf32>
  "test.use"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// COM: A value offloaded before a loop and fetched in each iteration (as
// COM: --lms-insert-swaps writes a loop-invariant that keeps the loop over
// COM: the budget): the fetch inside the body copies from the staging
// COM: buffer every iteration, and the staging buffer goes back after the
// COM: loop, not after the fetch (which runs again), nor at the release.
// CHECK-LABEL: func.func @fetch_per_iteration
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[HOST:.*]] = memref.view
// CHECK: gpu.dealloc async
// CHECK-NOT: lmsStagingFree
// CHECK: scf.for
// CHECK: gpu.memcpy async [%{{.*}}] %{{.*}}, %[[HOST]]
// CHECK-NOT: lmsStagingFree
// CHECK: "test.use"
// CHECK: }
// CHECK-NEXT: call @lmsStagingFree(%[[ADDR]])
// CHECK-NEXT: return
func.func @fetch_per_iteration(%buf: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %h = lms.swap_out %buf : memref<4xf32> -> !lms.host<memref<4xf32>>
  scf.for %i = %c0 to %c3 step %c1 {
    %a = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<4xf32>
    "test.use"(%a) : (memref<4xf32>) -> ()
  }
  return
}

// -----

func.func @swap_in_before_wait(%buf: memref<4xf32>) {
  %h = lms.swap_out %buf : memref<4xf32> -> !lms.host<memref<4xf32>>
  // expected-error@+1 {{'lms.swap_in' op comes before the release point of its handle (its lms.swap_wait); the lowering needs the wait first}}
  %a = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<4xf32>
  lms.swap_wait %h : !lms.host<memref<4xf32>>
  return
}

// -----

func.func @strided(%buf: memref<4x4xf32, strided<[8, 1]>>) {
  // expected-error@+1 {{'lms.swap_out' op cannot offload a strided view: the lowering copies contiguous buffers}}
  %h = lms.swap_out %buf : memref<4x4xf32, strided<[8, 1]>> -> !lms.host<memref<4x4xf32>>
  return
}

// -----

func.func @not_bufferized(%t: tensor<4xf32>) {
  // expected-error@+1 {{'lms.swap_out' op must be bufferized before it is lowered to the GPU dialect}}
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  return
}

// -----

// COM: When the first user of a swapped-in buffer is a kernel (compute on the
// COM: GPU, lms-gpu-pipeline), the kernel waits for the copy-in on its stream:
// COM: the synchronous gpu.launch becomes `gpu.launch async [copy-in token]`
// COM: and the host waits for the kernel after it (what the synchronous
// COM: launch implied), not for the copy before it. Attributes are kept.
// CHECK-LABEL: func.func @kernel_consumer
// CHECK:      "test.compute"
// CHECK:      %[[COPY:.*]] = gpu.memcpy async [%{{.*}}] %[[DEV:.*]], %{{.*}} : memref<16xf32>, memref<16xf32>
// CHECK-NEXT: call @lmsStagingFree
// CHECK-NOT:  gpu.wait [%[[COPY]]]
// CHECK:      %[[K:.*]] = gpu.launch async [%[[COPY]]] blocks
// CHECK:        memref.load %[[DEV]]
// CHECK:      } {kept}
// CHECK-NEXT: gpu.wait [%[[K]]]
// CHECK-NEXT: "test.after"
func.func @kernel_consumer(%arg: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %buf = memref.alloc() : memref<16xf32>
  "test.fill"(%buf) : (memref<16xf32>) -> ()
  %h = lms.swap_out %buf : memref<16xf32> -> !lms.host<memref<16xf32>>
  "test.compute"(%arg) : (memref<16xf32>) -> ()
  lms.swap_wait %h : !lms.host<memref<16xf32>>
  %u = lms.swap_in %h : !lms.host<memref<16xf32>> -> memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %u[%c0] : memref<16xf32>
    memref.store %v, %arg[%c0] : memref<16xf32>
    gpu.terminator
  } {kept}
  "test.after"(%arg) : (memref<16xf32>) -> ()
  memref.dealloc %u : memref<16xf32>
  return
}

// -----

// COM: The staging buffer's size is the buffer's bytes: the static elements
// COM: times the element size (i1 takes a byte, as in the LLVM lowering),
// COM: times each dynamic dimension.
// CHECK-LABEL: func.func @staging_sizes
// CHECK-SAME: (%[[F16:.*]]: memref<3x5xf16>, %[[DYN:.*]]: memref<?x8xi1>)
// CHECK:      %[[B1:.*]] = arith.constant 30 : index
// CHECK-NEXT: call @lmsStagingAlloc(%[[B1]])
// CHECK:      %[[D0:.*]] = memref.dim %[[DYN]], %{{.*}}
// CHECK-NEXT: %[[B2:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[B2]], %[[D0]] : index
// CHECK-NEXT: %[[RAW:.*]] = call @lmsStagingAlloc(%[[BYTES]])
// CHECK:      memref.view %[[RAW]][%{{.*}}][%[[D0]]] : memref<?xi8> to memref<?x8xi1>
func.func @staging_sizes(%a: memref<3x5xf16>, %b: memref<?x8xi1>) {
  %h = lms.swap_out %a : memref<3x5xf16> -> !lms.host<memref<3x5xf16>>
  %g = lms.swap_out %b : memref<?x8xi1> -> !lms.host<memref<?x8xi1>>
  return
}

// -----

// COM: No lms op is left: an lms.recompute that was not inlined is an error
// COM: (a legality check, not IR that fails later in the LLVM lowering).
func.func @not_inlined(%x: memref<4xf32>) -> memref<4xf32> {
  // expected-error@+1 {{'lms.recompute' op has no lowering to the GPU dialect (inline it first: --lms-inline-recomputes)}}
  %r = lms.recompute(%x) : (memref<4xf32>) -> memref<4xf32> {
  ^bb0(%in: memref<4xf32>):
    lms.yield %in : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// COM: A module that already has a symbol of the runtime's name with another
// COM: type is an error at the op that needs it.
func.func private @lmsStagingAlloc(i64) -> memref<?xi8>

func.func @conflict(%buf: memref<4xf32>) {
  // expected-error@+1 {{'lms.swap_out' op needs the runtime function @lmsStagingAlloc of type '(index) -> memref<?xi8>', but the module declares it as '(i64) -> memref<?xi8>'}}
  %h = lms.swap_out %buf : memref<4xf32> -> !lms.host<memref<4xf32>>
  return
}

// -----

// COM: Elements whose width is not a power of two take the power of two above
// COM: (what the LLVM lowering's copies stride by): 10 x i24 is 40 bytes, not
// COM: 30, so the copy does not run past the staging buffer.
// CHECK-LABEL: func.func @odd_width
// CHECK:       %[[B:.*]] = arith.constant 40 : index
// CHECK-NEXT:  call @lmsStagingAlloc(%[[B]])
func.func @odd_width(%a: memref<10xi24>) {
  %h = lms.swap_out %a : memref<10xi24> -> !lms.host<memref<10xi24>>
  return
}

// -----

// COM: A staging buffer whose size overflows 64 bits is an error at the op,
// COM: not an allocation of a wrapped size.
func.func @too_large(%a: memref<4611686018427387904x4xf32>) {
  // expected-error@+1 {{'lms.swap_out' op needs a host staging buffer of type 'memref<4611686018427387904x4xf32>', whose size in bytes overflows 64 bits}}
  %h = lms.swap_out %a : memref<4611686018427387904x4xf32> -> !lms.host<memref<4611686018427387904x4xf32>>
  return
}
