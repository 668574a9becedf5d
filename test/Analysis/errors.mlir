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
  // expected-error@+1 {{'lms.max_bytes' of %0 must be an integer number of bytes (or an array of them, one per result), got "big"}}
  %e = tensor.empty(%n) {lms.max_bytes = "big"} : tensor<?xf32>
  return
}

// -----

func.func @negative_bound(%n: index) {
  // expected-error@+1 {{'lms.max_bytes' of %0 must not be negative}}
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
