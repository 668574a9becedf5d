// RUN: lms-opt %s --lms-upload-constants -split-input-file -allow-unregistered-dialect | FileCheck %s

// COM: A global stays in host memory; its device copy is made right before
// COM: the first op that uses it (not where the get_global is), and every use
// COM: reads the copy. A splat is filled on the device instead of copied.
// CHECK-LABEL: func.func @upload
// CHECK: %[[G:.*]] = memref.get_global @weights
// CHECK-NEXT: "test.first"() : () -> ()
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[D]]
// CHECK-NEXT: "test.use"(%[[D]])
// CHECK: %[[Z:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: linalg.fill ins(%[[C]] : f32) outs(%[[Z]] : memref<8xf32>)
// CHECK-NEXT: "test.use"(%[[Z]], %[[D]])
// CHECK-NOT: memref.get_global @half
memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @half : memref<8xf32> = dense<0.5>
func.func @upload() {
  %g = memref.get_global @weights : memref<4xf32>
  %h = memref.get_global @half : memref<8xf32>
  "test.first"() : () -> ()
  "test.use"(%g) : (memref<4xf32>) -> ()
  "test.use"(%h, %g) : (memref<8xf32>, memref<4xf32>) -> ()
  return
}

// -----

// COM: A use inside a region: the copy is made before the op that holds it.
// CHECK-LABEL: func.func @in_loop
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy
// CHECK-NEXT: scf.for
// CHECK-NEXT: "test.use"(%[[D]])
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = memref.get_global @w : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    "test.use"(%g) : (memref<4xf32>) -> ()
  }
  return
}
