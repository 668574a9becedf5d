// RUN: lms-opt %s --lms-upload-constants -split-input-file | FileCheck %s

// COM: A global stays in host memory; its device copy is made right before
// COM: the first op that uses it (not where the get_global is), and every use
// COM: reads the copy. A splat constant is filled on the device instead of
// COM: copied.
// CHECK-LABEL: func.func @upload
// CHECK: %[[G:.*]] = memref.get_global @weights
// CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<2xf32> to memref<2xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[D]]
// CHECK-NEXT: linalg.copy ins(%[[D]] : memref<4xf32>)
// CHECK: %[[Z:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: linalg.fill ins(%[[C]] : f32) outs(%[[Z]] : memref<8xf32>)
// CHECK-NEXT: linalg.copy ins(%[[Z]] : memref<8xf32>)
// CHECK-NEXT: linalg.copy ins(%[[D]] : memref<4xf32>)
// CHECK-NOT: memref.get_global @half
memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @half : memref<8xf32> = dense<0.5>
func.func @upload(%a: memref<2xf32>, %b: memref<2xf32>, %o4: memref<4xf32>, %o8: memref<8xf32>) {
  %g = memref.get_global @weights : memref<4xf32>
  %h = memref.get_global @half : memref<8xf32>
  memref.copy %a, %b : memref<2xf32> to memref<2xf32>
  linalg.copy ins(%g : memref<4xf32>) outs(%o4 : memref<4xf32>)
  linalg.copy ins(%h : memref<8xf32>) outs(%o8 : memref<8xf32>)
  linalg.copy ins(%g : memref<4xf32>) outs(%o4 : memref<4xf32>)
  return
}

// -----

// COM: A use inside a region: the copy is made before the op that holds it.
// CHECK-LABEL: func.func @in_loop
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy
// CHECK-NEXT: scf.for
// CHECK-NEXT: linalg.copy ins(%[[D]] : memref<4xf32>)
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @in_loop(%n: index, %o: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = memref.get_global @w : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    linalg.copy ins(%g : memref<4xf32>) outs(%o : memref<4xf32>)
  }
  return
}

// -----

// COM: A mutable global that is written (an ml_program.global_store after
// COM: bufferization) is the host data itself: no device copy of it, the
// COM: write goes there. A mutable global's splat initial value is not
// COM: refilled: a store may have changed it.
// CHECK-LABEL: func.func @stored
// CHECK: %[[S:.*]] = memref.get_global @state
// CHECK-NEXT: memref.copy %{{.*}}, %[[S]]
// CHECK: %[[R:.*]] = memref.get_global @state
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[R]], %[[D]]
// CHECK-NEXT: linalg.copy ins(%[[D]] : memref<4xf32>)
memref.global "private" @state : memref<4xf32> = dense<0.0>
func.func @stored(%new: memref<4xf32>, %o: memref<4xf32>) {
  %s = memref.get_global @state : memref<4xf32>
  memref.copy %new, %s : memref<4xf32> to memref<4xf32>
  %r = memref.get_global @state : memref<4xf32>
  linalg.copy ins(%r : memref<4xf32>) outs(%o : memref<4xf32>)
  return
}
