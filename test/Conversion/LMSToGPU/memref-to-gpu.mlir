// RUN: lms-opt %s --lms-memref-to-gpu -allow-unregistered-dialect | FileCheck %s

// COM: The buffers of the default memory space are device memory: each
// COM: allocation and release on a fresh stream, the host waiting for it (so
// COM: that the bytes are held exactly where the analyses count them).
// CHECK-LABEL: func.func @buffers
// CHECK:      %[[S0:.*]] = gpu.wait async
// CHECK-NEXT: %[[B:.*]], %[[T0:.*]] = gpu.alloc async [%[[S0]]] () : memref<16xf32>
// CHECK-NEXT: gpu.wait [%[[T0]]]
// CHECK-NEXT: "use"(%[[B]])
// CHECK-NEXT: %[[S1:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.dealloc async [%[[S1]]] %[[B]] : memref<16xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NOT:  memref.alloc
func.func @buffers() {
  %b = memref.alloc() : memref<16xf32>
  "use"(%b) : (memref<16xf32>) -> ()
  memref.dealloc %b : memref<16xf32>
  return
}

// COM: A buffer with a memory space is not the device's: left alone.
// CHECK-LABEL: func.func @other_space
// CHECK-NEXT: memref.alloc() : memref<16xf32, 1>
// CHECK:      memref.dealloc
func.func @other_space() {
  %b = memref.alloc() : memref<16xf32, 1>
  "use"(%b) : (memref<16xf32, 1>) -> ()
  memref.dealloc %b : memref<16xf32, 1>
  return
}

// COM: The upload of a constant: host global to device buffer is a
// COM: host-to-device copy; a copy between two device buffers stays.
memref.global "private" constant @c : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @upload
// CHECK:      %[[G:.*]] = memref.get_global @c
// CHECK:      %[[D:.*]], %{{.*}} = gpu.alloc async
// CHECK:      %[[S:.*]] = gpu.wait async
// CHECK-NEXT: %[[T:.*]] = gpu.memcpy async [%[[S]]] %[[D]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK:      memref.copy %[[D]], %{{.*}} : memref<4xf32> to memref<4xf32>
func.func @upload() {
  %g = memref.get_global @c : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  memref.copy %g, %d : memref<4xf32> to memref<4xf32>
  %e = memref.alloc() : memref<4xf32>
  memref.copy %d, %e : memref<4xf32> to memref<4xf32>
  "use"(%e) : (memref<4xf32>) -> ()
  memref.dealloc %d : memref<4xf32>
  memref.dealloc %e : memref<4xf32>
  return
}
