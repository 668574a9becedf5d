// RUN: lms-opt %s -lms-print-liveness -split-input-file -allow-unregistered-dialect -o /dev/null | FileCheck %s

// COM: Peaks computed by hand. Every f32 tensor<16xf32> takes 64 bytes.

// COM: A destination-style op whose init is not used later writes in place.
// COM: op0: 64 (%arg0) + 64 (empty) = 128; op1 in place: 128, then %arg0
// COM: dies; op2: 64 + 64; op3 in place; op4 (return) 64, then the
// COM: function ends.
// CHECK-LABEL: // liveness of @in_place
// CHECK-NEXT: op 0 tensor.empty: live-in: {%arg0} live-out: {%arg0, %0} dying: {}
// CHECK-NEXT: op 1 linalg.exp: live-in: {%arg0, %0} live-out: {%0} dying: {%arg0}
// CHECK-NEXT: op 2 tensor.empty: live-in: {%0} live-out: {%0, %2} dying: {}
// CHECK-NEXT: op 3 linalg.negf: live-in: {%0, %2} live-out: {%2} dying: {%0}
// CHECK-NEXT: op 4 func.return: live-in: {%2} live-out: {} dying: {%2}
// CHECK-NEXT: // memory of @in_place: peak 128 bytes at op 0 tensor.empty, host peak 0 bytes
// CHECK-NEXT: // live at the peak: %arg0 (64) %0 (64)
// CHECK-NEXT: op 0 tensor.empty: before 64 during 128 after 128
// CHECK-NEXT: op 1 linalg.exp: before 128 during 128 after 64
// CHECK-NEXT: op 2 tensor.empty: before 64 during 128 after 128
// CHECK-NEXT: op 3 linalg.negf: before 128 during 128 after 64
// CHECK-NEXT: op 4 func.return: before 64 during 64 after 0
func.func @in_place(%a: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %y = linalg.negf ins(%x : tensor<16xf32>) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// COM: The init's value is read later, so the first op cannot write into
// COM: it: its result is a new buffer (bufferization copies, as its
// COM: analysis decides). op3: %arg0 + %0 (filled) + new %2 = 192.
// CHECK-LABEL: // memory of @out_of_place: peak 192 bytes at op 3 linalg.exp
// CHECK-NEXT: // live at the peak: %arg0 (64) %0 (64) %2 (64)
func.func @out_of_place(%a: tensor<16xf32>) -> tensor<16xf32> {
  %c = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<16xf32>
  %e = linalg.fill ins(%c : f32) outs(%e0 : tensor<16xf32>) -> tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %y = linalg.add ins(%x, %e : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// COM: An init used again later whose value nobody reads (a tensor.empty)
// COM: is written in place, as One-Shot Bufferize's analysis decides: one
// COM: buffer for %e, %x and %y (the last-use rule alone would count a
// COM: phantom copy, 192 bytes).
// CHECK-LABEL: // memory of @unread_init: peak 128 bytes at op 0 tensor.empty
// CHECK-NEXT: // live at the peak: %arg0 (64) %0 (64)
// CHECK-NEXT: op 0 tensor.empty: before 64 during 128 after 128
// CHECK-NEXT: op 1 linalg.exp: before 128 during 128 after 64
// CHECK-NEXT: op 2 linalg.add: before 64 during 64 after 64
func.func @unread_init(%a: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %y = linalg.add ins(%x, %e : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// COM: A view aliases its source and keeps it alive while it is used: the
// COM: 256-byte %arg0 stays until the copy (op 2). A result nobody uses
// COM: (op 3, 400 bytes) is resident only while its op runs. (An unused
// COM: tensor.empty or constant allocates nothing: bufferization drops it.)
// CHECK-LABEL: // liveness of @views_and_unused
// CHECK-NEXT: op 0 tensor.extract_slice: live-in: {%arg0} live-out: {%arg0} dying: {}
// CHECK-NEXT: op 1 tensor.empty: live-in: {%arg0} live-out: {%arg0, %0} dying: {}
// CHECK-NEXT: op 2 linalg.copy: live-in: {%arg0, %0} live-out: {%0} dying: {%arg0}
// CHECK-NEXT: op 3 test.temp: live-in: {%0} live-out: {%0} dying: {%2}
// CHECK-NEXT: op 4 tensor.empty: live-in: {%0} live-out: {%0} dying: {%3}
// CHECK: // memory of @views_and_unused: peak 432 bytes at op 3 test.temp
// CHECK-NEXT: // live at the peak: %2 (400) %0 (32)
// CHECK-NEXT: op 0 tensor.extract_slice: before 256 during 256 after 256
// CHECK-NEXT: op 1 tensor.empty: before 256 during 288 after 288
// CHECK-NEXT: op 2 linalg.copy: before 288 during 288 after 32
// CHECK-NEXT: op 3 test.temp: before 32 during 432 after 32
// CHECK-NEXT: op 4 tensor.empty: before 32 during 32 after 32
func.func @views_and_unused(%a: tensor<64xf32>) -> tensor<8xf32> {
  %s = tensor.extract_slice %a[0] [8] [1] : tensor<64xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %c = linalg.copy ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %unused = "test.temp"() : () -> tensor<100xf32>
  %dropped = tensor.empty() : tensor<100xf32>
  return %c : tensor<8xf32>
}

// -----

// COM: Element sizes come from the data layout: i1 takes a byte, index 8,
// COM: complex<f64> 16, bf16 2. 3 + 32 + 32 + 6 = 73.
// CHECK-LABEL: // memory of @element_sizes: peak 73 bytes at op 0 func.return
func.func @element_sizes(%a: tensor<3xi1>, %b: tensor<4xindex>, %c: tensor<2xcomplex<f64>>, %d: tensor<3xbf16>)
    -> (tensor<3xi1>, tensor<4xindex>, tensor<2xcomplex<f64>>, tensor<3xbf16>) {
  return %a, %b, %c, %d : tensor<3xi1>, tensor<4xindex>, tensor<2xcomplex<f64>>, tensor<3xbf16>
}

// -----

// COM: An op with regions is one node whose transient bytes are the peak
// COM: inside it: the then-branch holds a 128-byte temporary; what it yields
// COM: is the scf.if result (64), counted outside. 64 + 64 + 128 = 256.
// CHECK-LABEL: // liveness of @region
// CHECK-NEXT: op 0 scf.if: live-in: {%arg0} live-out: {%0} dying: {%arg0}
// CHECK: // memory of @region: peak 256 bytes at op 0 scf.if
// CHECK-NEXT: // live at the peak: %arg0 (64) %0 (64)
func.func @region(%a: tensor<16xf32>, %c: i1) -> tensor<16xf32> {
  %r = scf.if %c -> tensor<16xf32> {
    %t = "test.temp"() : () -> tensor<32xf32>
    %y = tensor.empty() : tensor<16xf32>
    scf.yield %y : tensor<16xf32>
  } else {
    scf.yield %a : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// COM: A call counts the peak of its callee: on its own the callee peaks at
// COM: 64 (%x) + 400 (a temporary) = 464; its argument and result (64 + 64)
// COM: are the call's operand and result, counted by the caller, so the call
// COM: adds 464 - 128 = 336 to them: 464 again.
// CHECK-LABEL: // memory of @callee: peak 464 bytes at op 0 test.temp
// CHECK-LABEL: // memory of @caller: peak 464 bytes at op 0 func.call
func.func private @callee(%x: tensor<16xf32>) -> tensor<16xf32> {
  %t = "test.temp"() : () -> tensor<100xf32>
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
func.func @caller(%a: tensor<16xf32>) -> tensor<16xf32> {
  %r = call @callee(%a) : (tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// COM: A swap-out keeps its source resident until its wait; the host copy is
// COM: host memory. op1: %arg0 + %arg1 + 256 = 384.
// CHECK-LABEL: // liveness of @swapped
// CHECK-NEXT: op 0 lms.swap_out: live-in: {%arg0, %arg1} live-out: {%arg0, %arg1, %0} dying: {}
// CHECK-NEXT: op 1 test.temp: live-in: {%arg0, %arg1, %0} live-out: {%arg0, %arg1, %0} dying: {%1}
// CHECK-NEXT: op 2 lms.swap_wait: live-in: {%arg0, %arg1, %0} live-out: {%arg1, %0} dying: {%arg0}
// CHECK-NEXT: op 3 lms.swap_in: live-in: {%arg1, %0} live-out: {%arg1, %2} dying: {%0}
// CHECK: // memory of @swapped: peak 384 bytes at op 1 test.temp, host peak 64 bytes
// CHECK-NEXT: // live at the peak: %1 (256) %arg0 (64) %arg1 (64)
// CHECK-NEXT: op 0 lms.swap_out: before 128 during 128 after 128
// CHECK-NEXT: op 1 test.temp: before 128 during 384 after 128
// CHECK-NEXT: op 2 lms.swap_wait: before 128 during 128 after 64
// CHECK-NEXT: op 3 lms.swap_in: before 64 during 128 after 128
// CHECK-NEXT: op 4 tensor.empty: before 128 during 192 after 192
// CHECK-NEXT: op 5 linalg.add: before 192 during 192 after 64
func.func @swapped(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %h = lms.swap_out %a : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %t = "test.temp"() : () -> tensor<64xf32>
  lms.swap_wait %h : !lms.host<tensor<16xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.add ins(%u, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// COM: Without a wait the swap-out is synchronous: %arg0 is released at the
// COM: swap-out, so the temporary only adds to %arg1: 64 + 256 = 320.
// CHECK-LABEL: // memory of @synchronous: peak 320 bytes at op 1 test.temp, host peak 64 bytes
func.func @synchronous(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %h = lms.swap_out %a : tensor<16xf32> -> !lms.host<tensor<16xf32>>
  %t = "test.temp"() : () -> tensor<64xf32>
  %u = lms.swap_in %h : !lms.host<tensor<16xf32>> -> tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.add ins(%u, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// COM: A recomputation allocates its results; its body's temporaries count
// COM: while it runs (the yielded value is its result): 64 + 64 + 64 = 192.
// CHECK-LABEL: // memory of @recompute: peak 192 bytes at op 0 lms.recompute
func.func @recompute(%a: tensor<16xf32>) -> tensor<16xf32> {
  %r = lms.recompute (%a) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    %t = "test.temp"() : () -> tensor<16xf32>
    %e = tensor.empty() : tensor<16xf32>
    %y = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    lms.yield %y : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// COM: Bufferized IR: allocations, views that alias, an allocation without a
// COM: dealloc that nobody uses, an explicit dealloc.
// CHECK-LABEL: // liveness of @buffers
// CHECK-NEXT: op 0 memref.alloc: live-in: {%arg0} live-out: {%arg0, %alloc} dying: {}
// CHECK-NEXT: op 1 memref.subview: live-in: {%arg0, %alloc} live-out: {%arg0, %alloc} dying: {}
// CHECK-NEXT: op 2 memref.copy: live-in: {%arg0, %alloc} live-out: {%alloc} dying: {%arg0}
// CHECK-NEXT: op 3 gpu.alloc: live-in: {%alloc} live-out: {%alloc} dying: {%memref}
// CHECK-NEXT: op 4 memref.dealloc: live-in: {%alloc} live-out: {} dying: {%alloc}
// CHECK: // memory of @buffers: peak 192 bytes at op 0 memref.alloc
// CHECK-NEXT: // live at the peak: %alloc (128) %arg0 (64)
// CHECK-NEXT: op 0 memref.alloc: before 64 during 192 after 192
// CHECK-NEXT: op 1 memref.subview: before 192 during 192 after 192
// CHECK-NEXT: op 2 memref.copy: before 192 during 192 after 128
// CHECK-NEXT: op 3 gpu.alloc: before 128 during 160 after 128
// CHECK-NEXT: op 4 memref.dealloc: before 128 during 128 after 0
// CHECK-NEXT: op 5 func.return: before 0 during 0 after 0
func.func @buffers(%m: memref<16xf32>) {
  %a = memref.alloc() : memref<32xf32>
  %v = memref.subview %a[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  memref.copy %m, %v : memref<16xf32> to memref<16xf32, strided<[1]>>
  %b = gpu.alloc () : memref<8xf32>
  memref.dealloc %a : memref<32xf32>
  return
}

// -----

// COM: Loop-carried values are written in place into their init.
// CHECK-LABEL: // memory of @loop: peak 64 bytes
func.func @loop(%a: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<16xf32> {
    %x = linalg.exp ins(%acc : tensor<16xf32>) outs(%acc : tensor<16xf32>) -> tensor<16xf32>
    scf.yield %x : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// COM: Ops of dialects LMS does not know are sized from their types: the
// COM: unknown op's two results are new buffers (64 + 32).
// CHECK-LABEL: // memory of @unknown: peak 160 bytes at op 0 mhlo.thing
func.func @unknown(%a: tensor<16xf32>) -> tensor<8xf32> {
  %r:2 = "mhlo.thing"(%a) : (tensor<16xf32>) -> (tensor<16xf32>, tensor<8xf32>)
  return %r#1 : tensor<8xf32>
}

// -----

// COM: Regression (property program 50, seed 11): a constant given only as
// COM: the destination of ops that overwrite it is never read, so
// COM: bufferization never uploads it (each op gets a new buffer): it takes
// COM: no device memory and is not an input of the ops.
// CHECK-LABEL: // liveness of @unread_constant_destination
// CHECK-NEXT: op 0 arith.constant: live-in: {%arg0} live-out: {%arg0} dying: {%cst}
// CHECK-NEXT: op 1 linalg.exp: live-in: {%arg0} live-out: {%0} dying: {%arg0}
// CHECK-NEXT: op 2 linalg.negf: live-in: {%0} live-out: {%0, %1} dying: {}
// CHECK: // memory of @unread_constant_destination: peak 128 bytes at op 1 linalg.exp, host peak 0 bytes
func.func @unread_constant_destination(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c = arith.constant dense<2.0> : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%c : tensor<16xf32>) -> tensor<16xf32>
  %y = linalg.negf ins(%x : tensor<16xf32>) outs(%c : tensor<16xf32>) -> tensor<16xf32>
  return %x, %y : tensor<16xf32>, tensor<16xf32>
}

// -----

// COM: Regression (property program 478, seed 11): a constant fetched again
// COM: (an lms.recompute of a constant, which the swap planner may place
// COM: early) is lowered to an upload right before its first use, so the
// COM: analysis schedules it there too; counted at its place in the IR, the
// COM: analysis was one buffer above the measured peak.
// CHECK-LABEL: // liveness of @fetch_before_first_use
// CHECK-NEXT: op 0 tensor.empty:
// CHECK-NEXT: op 1 linalg.exp:
// CHECK-NEXT: op 2 tensor.empty:
// CHECK-NEXT: op 3 lms.recompute:
// CHECK-NEXT: op 4 linalg.add:
func.func @fetch_before_first_use(%a: tensor<16xf32>) -> tensor<16xf32> {
  %f = lms.recompute () : () -> tensor<16xf32> {
    %c = arith.constant {lms.rederived = 0 : i64} dense<1.0> : tensor<16xf32>
    lms.yield %c : tensor<16xf32>
  }
  %e = tensor.empty() : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %y = linalg.add ins(%x, %f : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
