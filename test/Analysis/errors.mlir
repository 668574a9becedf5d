// RUN: lms-opt %s -lms-print-liveness -split-input-file -verify-diagnostics -allow-unregistered-dialect -o /dev/null
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-print-liveness=dynamic-bytes=12potatoes -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: echo 'func.func @f() { return }' | not lms-opt -lms-print-liveness=alignment=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADALIGN
// BADOPT: error: invalid dynamic-bytes option: invalid size '12potatoes': unknown unit 'potatoes'
// BADALIGN: error: invalid alignment 0: expected a positive number of bytes

// COM: Values whose size is unknown are an error naming the value, never a
// COM: silent zero.

// expected-error@+1 {{cannot size %arg0 of type 'tensor<?x4xf32>': its shape is dynamic; give an upper bound in bytes with an 'lms.max_bytes' attribute on its defining op (or in the function's arg_attrs), or with the 'dynamic-bytes' option}}
func.func @dynamic_argument(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}

// -----

func.func @dynamic_result(%n: index) {
  // expected-error@+1 {{cannot size %0 of type 'tensor<?xf32>': its shape is dynamic}}
  %e = tensor.empty(%n) : tensor<?xf32>
  return
}

// -----

func.func @unranked(%a: tensor<4xf32>) {
  // expected-error@+1 {{cannot size %0 of type 'tensor<*xf32>': it is unranked}}
  %c = "test.make_unranked"(%a) : (tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @bad_bound(%n: index) {
  // expected-error@+1 {{'lms.max_bytes' must be a non-negative integer number of bytes (or an array of them, one per result), got "big"}}
  %e = tensor.empty(%n) {lms.max_bytes = "big"} : tensor<?xf32>
  return
}

// -----

func.func @negative_bound(%n: index) {
  // expected-error@+1 {{'lms.max_bytes' must be a non-negative integer number of bytes (or an array of them, one per result), got -4 : i64}}
  %e = tensor.empty(%n) {lms.max_bytes = -4 : i64} : tensor<?xf32>
  return
}

// -----

// expected-error@+1 {{cannot analyse a function with several blocks (unstructured control flow); use structured control flow such as scf}}
func.func @cfg(%c: i1, %a: tensor<4xf32>) -> tensor<4xf32> {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %a : tensor<4xf32>
^bb2:
  return %a : tensor<4xf32>
}

// -----

func.func @cfg_in_region(%a: tensor<4xf32>) {
  // expected-error@+1 {{cannot analyse a region with several blocks}}
  scf.execute_region {
    cf.br ^bb1
  ^bb1:
    scf.yield
  }
  return
}

// -----

// COM: Attributes of the dialect are verified with the IR (regressions: an
// COM: i128 bound was truncated, a negative or textual cost ignored, a bool
// COM: budget called negative).
func.func @wide_bound(%n: index) {
  // expected-error@+1 {{'lms.max_bytes' must be a non-negative integer number of bytes (or an array of them, one per result), got 18446744073709551617 : i128}}
  %e = tensor.empty(%n) {lms.max_bytes = 18446744073709551617 : i128} : tensor<?xf32>
  return
}

// -----

func.func @negative_cost(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.cost' must be a non-negative finite number (FLOPs) or a dictionary of flops, bytes and seconds, got -5 : i64}}
  %r = "test.op"(%a) {lms.cost = -5 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @text_cost(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.cost' must be a non-negative finite number (FLOPs) or a dictionary of flops, bytes and seconds, got "x"}}
  %r = "test.op"(%a) {lms.cost = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cost_entry(%a: tensor<4xf32>) {
  // expected-error@+1 {{'lms.cost' has an unknown entry 'flop': expected flops, bytes and seconds}}
  %r = "test.op"(%a) {lms.cost = {flop = 5 : i64}} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// expected-error@+1 {{'lms.budget' must be a size string ("12GiB", "60%") or an integer number of bytes, got true}}
func.func @bool_budget(%a: tensor<4xf32>) attributes {lms.budget = true} {
  return
}

// -----

// expected-error@+1 {{'lms.budget' must be a non-negative number of bytes that fits in 64 bits, got 18446744073709551617 : i128}}
func.func @wide_budget(%a: tensor<4xf32>) attributes {lms.budget = 18446744073709551617 : i128} {
  return
}

// -----

// expected-error@+1 {{argument #0: 'lms.borrowed' must be a unit attribute}}
func.func @borrowed(%a: tensor<4xf32> {lms.borrowed = 1 : i64}) {
  return
}

// -----

// expected-error@+1 {{unknown attribute 'lms.bugdet' of the lms dialect}}
func.func @typo(%a: tensor<4xf32>) attributes {lms.bugdet = "1GiB"} {
  return
}

// -----

// COM: Sizes are checked arithmetic (regressions: the size wrapped to a
// COM: small number or 0, and planning "succeeded" or failed with an
// COM: internal error).
// expected-error@+1 {{cannot size %arg0 of type 'tensor<4611686018427387904x4xf32>': it takes more than 1125899906842624 bytes (1 PiB), beyond any device}}
func.func @wrapping_size(%a: tensor<4611686018427387904x4xf32>) {
  return
}

// -----

func.func @huge_size() {
  // expected-error@+1 {{cannot size %0 of type 'tensor<9223372036854775807xf32>': it takes more than 1125899906842624 bytes (1 PiB), beyond any device}}
  %e = tensor.empty() : tensor<9223372036854775807xf32>
  "test.use"(%e) : (tensor<9223372036854775807xf32>) -> ()
  return
}

// -----

func.func @huge_bound(%n: index) {
  // expected-error@+1 {{'lms.max_bytes' of %0 must be at most 1125899906842624 bytes (1 PiB)}}
  %e = tensor.empty(%n) {lms.max_bytes = 4611686018427387904 : i64} : tensor<?xf32>
  "test.use"(%e) : (tensor<?xf32>) -> ()
  return
}

// -----

// COM: What --lms-carve-arena writes is checked too.
// expected-error@+1 {{'lms.arena_bytes' must be a non-negative integer number of bytes, got "big"}}
func.func @arena_text() attributes {lms.arena_bytes = "big"} {
  return
}

// -----

// expected-error@+1 {{'lms.arena_live_bytes' must be a non-negative integer number of bytes, got -1 : i64}}
func.func @arena_negative() attributes {lms.arena_bytes = 256 : i64, lms.arena_live_bytes = -1 : i64} {
  return
}

// -----

// The ids that link a copy LMS made to the op it copies are checked when
// the IR is parsed.
func.func @rederived_not_an_id(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'lms.rederived' must be a non-negative i64 id, got 2 : i32}}
  %e = tensor.empty() {lms.rederived = 2 : i32} : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @original_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'lms.original' must be a non-negative i64 id, got -1 : i64}}
  %e = tensor.empty() {lms.original = -1 : i64} : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// COM: And what --lms-mark-arena-slots writes: one entry per result.
// expected-error@+1 {{'lms.result_slots' must be an array<i1> with one entry per result of the function it is on, got array<i1: true, true>}}
func.func @slots_count(%a: tensor<4xf32>) -> tensor<4xf32> attributes {lms.result_slots = array<i1: true, true>} {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{'lms.result_slots' must be an array<i1> with one entry per result of the function it is on, got true}}
func.func @slots_kind(%a: tensor<4xf32>) -> tensor<4xf32> attributes {lms.result_slots = true} {
  return %a : tensor<4xf32>
}

// -----

func.func private @callee(tensor<4xf32>) -> tensor<4xf32>
func.func @slotted_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'lms.slotted' must be a unit attribute}}
  %r = call @callee(%a) {lms.slotted = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// COM: The host-arena mark and the layout --lms-carve-arena records.
// expected-error@+1 {{'lms.arena_arguments' must be a unit attribute on a function}}
func.func @host_arena_kind(%a: tensor<4xf32>) -> tensor<4xf32> attributes {lms.arena_arguments = true} {
  return %a : tensor<4xf32>
}

// -----

func.func @host_arena_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'lms.arena_arguments' must be a unit attribute on a function}}
  %b = arith.addf %a, %a {lms.arena_arguments} : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// expected-error@+1 {{'lms.argument_offsets' must be an array<i64> of offsets (or -1) on a function, got array<i64: 0, -2>}}
func.func @argument_offsets(%a: memref<8xi8>) attributes {lms.argument_offsets = array<i64: 0, -2>} {
  return
}

// -----

// expected-error@+1 {{'lms.result_offsets' must be an array<i64> of offsets (or -1) on a function, got [0]}}
func.func @result_offsets(%a: memref<8xi8>) attributes {lms.result_offsets = [0]} {
  return
}

// -----

// COM: A view of an offloaded value read after the wait that released its
// COM: device bytes (the verifier sees only direct uses of the value).
func.func @view_after_wait(%t: tensor<4xf32>) -> tensor<2x2xf32> {
  %v = tensor.expand_shape %t [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  // expected-note@+1 {{released here}}
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  %e = tensor.empty() : tensor<2x2xf32>
  // expected-error@+1 {{reads a buffer whose device bytes an 'lms.swap_wait' released (use a fetched copy, 'lms.swap_in')}}
  %r = linalg.exp ins(%v : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
