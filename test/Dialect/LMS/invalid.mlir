// RUN: lms-opt %s -split-input-file -verify-diagnostics

// COM: Every verifier error of the lms dialect, one per case.

func.func @swap_out_element_type(%t: tensor<4x8xf32>) {
  // expected-error@+1 {{'lms.swap_out' op element type of the host value ('f16') differs from the source ('f32')}}
  %h = lms.swap_out %t : tensor<4x8xf32> -> !lms.host<tensor<4x8xf16>>
  return
}

// -----

func.func @swap_out_shape(%t: tensor<4x8xf32>) {
  // expected-error@+1 {{'lms.swap_out' op shape of the host value ('tensor<8x4xf32>') differs from the source ('tensor<4x8xf32>')}}
  %h = lms.swap_out %t : tensor<4x8xf32> -> !lms.host<tensor<8x4xf32>>
  return
}

// -----

func.func @swap_out_static_vs_dynamic(%t: tensor<?x8xf32>) {
  // expected-error@+1 {{shape of the host value ('tensor<4x8xf32>') differs from the source ('tensor<?x8xf32>')}}
  %h = lms.swap_out %t : tensor<?x8xf32> -> !lms.host<tensor<4x8xf32>>
  return
}

// -----

func.func @swap_out_encoding(%t: tensor<4xf32, "a">) {
  // expected-error@+1 {{'lms.swap_out' op encoding of the host value differs from the source}}
  %h = lms.swap_out %t : tensor<4xf32, "a"> -> !lms.host<tensor<4xf32, "b">>
  return
}

// -----

func.func @swap_out_unranked(%t: tensor<*xf32>) {
  // expected-error@+1 {{'lms.swap_out' op operand #0 must be ranked tensor of any type values or memref of any type values, but got 'tensor<*xf32>'}}
  %h = "lms.swap_out"(%t) : (tensor<*xf32>) -> !lms.host<tensor<4xf32>>
  return
}

// -----

func.func @swap_out_unranked_memref(%t: memref<*xf32>) {
  // expected-error@+1 {{'lms.swap_out' op operand #0 must be ranked tensor of any type values or memref of any type values, but got 'memref<*xf32>'}}
  %h = "lms.swap_out"(%t) : (memref<*xf32>) -> !lms.host<memref<4xf32>>
  return
}

// -----

func.func @swap_out_kind_mismatch(%t: memref<4xf32>) {
  // expected-error@+1 {{'lms.swap_out' op expects a host type that holds a memref like its source, got '!lms.host<tensor<4xf32>>'}}
  %h = lms.swap_out %t : memref<4xf32> -> !lms.host<tensor<4xf32>>
  return
}

// -----

func.func @swap_in_memref_shape(%h: !lms.host<memref<4xf32>>) {
  // expected-error@+1 {{'lms.swap_in' op shape of the host value ('memref<4xf32>') differs from the result ('memref<8xf32>')}}
  %u = lms.swap_in %h : !lms.host<memref<4xf32>> -> memref<8xf32>
  return
}

// -----

// expected-error@+1 {{'!lms.host' holds a ranked tensor or memref type, got 'tensor<*xf32>'}}
func.func @host_unranked(%h: !lms.host<tensor<*xf32>>) {
  return
}

// -----

// expected-error@+1 {{'!lms.host' holds a ranked tensor or memref type, got 'f32'}}
func.func @host_not_shaped(%h: !lms.host<f32>) {
  return
}

// -----

func.func @swap_in_element_type(%h: !lms.host<tensor<4xf32>>) {
  // expected-error@+1 {{'lms.swap_in' op element type of the host value ('f32') differs from the result ('i32')}}
  %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<4xi32>
  return
}

// -----

func.func @swap_in_shape(%h: !lms.host<tensor<4xf32>>) {
  // expected-error@+1 {{'lms.swap_in' op shape of the host value ('tensor<4xf32>') differs from the result ('tensor<5xf32>')}}
  %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<5xf32>
  return
}

// -----

func.func @swap_in_unranked(%h: !lms.host<tensor<4xf32>>) {
  // expected-error@+1 {{'lms.swap_in' op result #0 must be ranked tensor of any type values or memref of any type values, but got 'tensor<*xf32>'}}
  %u = "lms.swap_in"(%h) : (!lms.host<tensor<4xf32>>) -> tensor<*xf32>
  return
}

// -----

func.func @swap_in_of_buffer(%h: !lms.host<memref<4xf32>>) {
  // expected-error@+1 {{'lms.swap_in' op expects a host type that holds a ranked tensor like its result, got '!lms.host<memref<4xf32>>'}}
  %u = lms.swap_in %h : !lms.host<memref<4xf32>> -> tensor<4xf32>
  return
}

// -----

func.func @swap_wait_of_argument(%h: !lms.host<tensor<4xf32>>) {
  // expected-error@+1 {{'lms.swap_wait' op expects its handle to be the result of an 'lms.swap_out'}}
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  return
}

// -----

func.func @swap_wait_other_block(%t: tensor<4xf32>, %c: i1) {
  // expected-note@+1 {{swap-out here}}
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  scf.if %c {
    // expected-error@+1 {{'lms.swap_wait' op must be in the same block as its 'lms.swap_out'}}
    lms.swap_wait %h : !lms.host<tensor<4xf32>>
  }
  return
}

// -----

// COM: The wait releases the offloaded value's device bytes: a use after it
// COM: (here in a nested region) reads a freed buffer; a fetched copy is
// COM: what later ops read.
func.func @use_after_wait(%t: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  // expected-error@+1 {{'lms.swap_wait' op releases the device bytes of a value that is used after it (use a fetched copy, 'lms.swap_in')}}
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  %r = scf.if %c -> tensor<4xf32> {
    // expected-note@+1 {{used here}}
    scf.yield %t : tensor<4xf32>
  } else {
    %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @two_waits(%t: tensor<4xf32>) {
  // expected-error@+1 {{'lms.swap_out' op has more than one 'lms.swap_wait'}}
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  // expected-note@+1 {{first wait here}}
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  // expected-note@+1 {{second wait here}}
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  return
}

// -----

func.func @recompute_yield_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op result #0 has type 'tensor<4xf16>' but the body yields 'tensor<4xf32>'}}
  %r = lms.recompute (%a) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf32>):
    // expected-note@+1 {{yield here}}
    lms.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @recompute_yield_count(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op has 2 results but its body yields 1 values}}
  %r:2 = lms.recompute (%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-note@+1 {{yield here}}
    lms.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @recompute_argument_count(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op has 1 inputs but its body has 0 arguments}}
  %r = lms.recompute (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    %k = arith.constant dense<1.0> : tensor<4xf32>
    lms.yield %k : tensor<4xf32>
  }
  return
}

// -----

func.func @recompute_argument_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op input #0 has type 'tensor<4xf32>' but body argument #0 has type 'tensor<8xf32>'}}
  %r = lms.recompute (%a) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    lms.yield %x : tensor<8xf32>
  }
  return
}

// -----

func.func @recompute_not_isolated(%a: tensor<4xf32>) {
  // expected-note@+1 {{required by region isolation constraints}}
  %r = lms.recompute () : () -> tensor<4xf32> {
    // expected-error@+1 {{'tensor.cast' op using value defined outside the region}}
    %c = tensor.cast %a : tensor<4xf32> to tensor<4xf32>
    lms.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @recompute_without_yield(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op expects its body to end with 'lms.yield'}}
  %r = "lms.recompute"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    llvm.unreachable
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @recompute_without_terminator(%a: tensor<4xf32>) {
  %r = "lms.recompute"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{block with no terminator}}
    %c = tensor.cast %x : tensor<4xf32> to tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @recompute_two_blocks(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.recompute' op expects region #0 to have 0 or 1 blocks}}
  %r = "lms.recompute"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    cf.br ^bb1
  ^bb1:
    "lms.yield"(%x) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.yield' op expects parent op 'lms.recompute'}}
  lms.yield %a : tensor<4xf32>
}
