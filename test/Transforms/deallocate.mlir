// RUN: lms-opt %s --lms-deallocate -split-input-file -allow-unregistered-dialect | FileCheck %s

// COM: Every owned buffer is freed right after its last use, views keeping
// COM: their buffer alive; returned buffers are not freed; arguments are
// COM: owned by the callee (freed after their last use).
// CHECK-LABEL: func.func @last_use
// CHECK-SAME: (%[[ARG:.*]]: memref<16xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<32xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[A]]
// CHECK-NEXT: "test.op"(%[[ARG]], %[[V]])
// CHECK-NEXT: memref.dealloc %[[ARG]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: "test.op"(%[[V]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[UNUSED:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[UNUSED]]
// CHECK-NEXT: return %[[B]]
func.func @last_use(%arg: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<32xf32>
  %v = memref.subview %a[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  "test.op"(%arg, %v) : (memref<16xf32>, memref<16xf32, strided<[1]>>) -> ()
  %b = memref.alloc() : memref<16xf32>
  "test.op"(%v, %b) : (memref<16xf32, strided<[1]>>, memref<16xf32>) -> ()
  %unused = memref.alloc() : memref<8xf32>
  return %b : memref<16xf32>
}

// -----

// COM: A call lends what the caller still needs after it, or passes twice,
// COM: and the caller frees it after its own last use: no copy is made. A
// COM: host (external) function frees nothing, so what it gets is lent too.
// COM: A call result is owned by the caller.
// CHECK-LABEL: func.func @calls
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[R:.*]] = call @callee(%[[A]]) : (memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: "test.op"(%[[A]], %[[R]])
// CHECK-DAG: memref.dealloc %[[A]]
// CHECK-DAG: memref.dealloc %[[R]]
// CHECK: %[[TWICE:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @callee2(%[[TWICE]], %[[TWICE]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: memref.dealloc %[[TWICE]]
func.func private @callee(memref<4xf32>) -> memref<4xf32>
func.func private @callee2(memref<4xf32>, memref<4xf32>)
func.func @calls() {
  %a = memref.alloc() : memref<4xf32>
  %r = call @callee(%a) : (memref<4xf32>) -> memref<4xf32>
  "test.op"(%a, %r) : (memref<4xf32>, memref<4xf32>) -> ()
  %t = memref.alloc() : memref<4xf32>
  call @callee2(%t, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// COM: A buffer offloaded by a swap-out is released by the swap, not here;
// COM: the swapped-in buffer is freed after its last use.
// CHECK-LABEL: func.func @swapped
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: %[[U:.*]] = lms.swap_in
// CHECK-NEXT: "test.op"(%[[U]])
// CHECK-NEXT: memref.dealloc %[[U]]
func.func @swapped() {
  %a = memref.alloc() : memref<4xf32>
  "test.op"(%a) : (memref<4xf32>) -> ()
  %h = lms.swap_out %a : memref<4xf32> -> !lms.host<memref<4xf32>>
  lms.swap_wait %h : !lms.host<memref<4xf32>>
  %u = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<4xf32>
  "test.op"(%u) : (memref<4xf32>) -> ()
  return
}

// -----

// COM: Inside a region: a temporary is freed there; a yielded buffer is not,
// COM: and neither is an outer buffer a region yields (it may be the region
// COM: op's result, which is returned). Buffers that leave a region are not
// COM: tracked further: they leak rather than being freed twice.
// CHECK-LABEL: func.func @region
// CHECK: scf.if
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: "test.op"(%[[T]], %[[Y]])
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: scf.yield %[[Y]]
// CHECK-NOT: memref.dealloc
func.func @region(%c: i1, %b: memref<4xf32>) -> memref<4xf32> {
  %r = scf.if %c -> memref<4xf32> {
    %t = memref.alloc() : memref<8xf32>
    %y = memref.alloc() : memref<4xf32>
    "test.op"(%t, %y) : (memref<8xf32>, memref<4xf32>) -> ()
    scf.yield %y : memref<4xf32>
  } else {
    scf.yield %b : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// COM: Regression: a buffer a linalg payload captures (a gather through
// COM: memref.load, as an exported embedding lookup does) is used by that op;
// COM: it was freed before the op, and the op then read poisoned memory.
// CHECK-LABEL: func.func @captured_by_linalg
// CHECK-SAME: (%[[TABLE:.*]]: memref<32x16xf32>, %[[IDS:.*]]: memref<8xi64>)
// CHECK: linalg.generic
// CHECK: memref.load %[[TABLE]]
// CHECK: memref.dealloc %[[IDS]]
// CHECK-NEXT: memref.dealloc %[[TABLE]]
func.func @captured_by_linalg(%table: memref<32x16xf32>, %ids: memref<8xi64>) -> memref<8x16xf32> {
  %out = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<8xi64>) outs(%out : memref<8x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = memref.load %table[%row, %col] : memref<32x16xf32>
    linalg.yield %v : f32
  }
  return %out : memref<8x16xf32>
}

// -----

// COM: Calls of a function with a body: a buffer passed at its last use goes
// COM: to the callee, which frees it after its own last use; a buffer the
// COM: caller still needs is lent: the call is redirected to a copy of the
// COM: callee whose lent argument carries lms.borrowed and is never freed
// COM: there (one copy per set of lent arguments), and the caller frees it.
// CHECK-LABEL: func.func @lend_and_give
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[R:.*]] = call @step_lms_borrow_b(%[[A]])
// CHECK-NEXT: %[[S:.*]] = call @step(%[[A]])
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: func.func private @step(%[[Y:.*]]: memref<4xf32>)
// CHECK: "test.op"(%[[Y]], %[[B:.*]])
// CHECK-NEXT: memref.dealloc %[[Y]]
// CHECK: func.func private @step_lms_borrow_b(%[[X:.*]]: memref<4xf32> {lms.borrowed})
// CHECK-NOT: memref.dealloc %[[X]]
// CHECK: return
func.func @lend_and_give() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %r = call @step(%a) : (memref<4xf32>) -> memref<4xf32>
  %s = call @step(%a) : (memref<4xf32>) -> memref<4xf32>
  return %r, %s : memref<4xf32>, memref<4xf32>
}
func.func private @step(%x: memref<4xf32>) -> memref<4xf32> {
  %b = memref.alloc() : memref<4xf32>
  "test.op"(%x, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return %b : memref<4xf32>
}

// -----

// COM: Regression (bench/property/run.py --loops, seed 101, program 53): a
// COM: bufferized loop carries its init's buffer itself. Its result, passed
// COM: to a call whose operand it is last used by, is still the init's
// COM: buffer, which later ops read: the call lends it (a borrowing copy of
// COM: the callee), and the caller frees it once, after the last read.
// COM: Before, the loop's result counted as a buffer of its own, the callee
// COM: owned it and freed it, and the caller freed it again.
// CHECK-LABEL: func.func @loop_result_to_call
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[L:.*]] = scf.for
// CHECK: call @give_lms_borrow_b(%[[L]])
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: "test.read"(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: func.func private @give_lms_borrow_b(%{{.*}}: memref<4xf32> {lms.borrowed})
func.func @loop_result_to_call() -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<4xf32>
  %l = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %a) -> (memref<4xf32>) {
    "test.write"(%acc) : (memref<4xf32>) -> ()
    scf.yield %acc : memref<4xf32>
  }
  %r = call @give(%l) : (memref<4xf32>) -> memref<4xf32>
  "test.read"(%a) : (memref<4xf32>) -> ()
  return %r : memref<4xf32>
}
func.func private @give(%x: memref<4xf32>) -> memref<4xf32> {
  %b = memref.alloc() : memref<4xf32>
  "test.op"(%x, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return %b : memref<4xf32>
}
