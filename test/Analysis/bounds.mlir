// RUN: lms-opt %s -lms-print-liveness -allow-unregistered-dialect -o /dev/null | FileCheck %s
// RUN: lms-opt %s -lms-print-liveness=alignment=256 -allow-unregistered-dialect -o /dev/null | FileCheck %s --check-prefix=ALIGN
// RUN: lms-opt %s -lms-print-liveness=keep-arguments=true -allow-unregistered-dialect -o /dev/null | FileCheck %s --check-prefix=KEEP

// COM: Upper bounds for dynamic shapes from the lms.max_bytes attribute: on
// COM: the defining op (one per result with an array) and in arg_attrs.
// COM: 100 (%arg0) + 300 (%0) + 7 (%1#1) + 5 (%1#0) = 412.
// CHECK-LABEL: // memory of @bounds: peak 412 bytes at op 1 test.two
// CHECK-NEXT: // live at the peak: %0 (300) %arg0 (100) %1#1 (7) %1#0 (5)

// COM: With 256-byte alignment every buffer is rounded up: 256 + 512 + 256
// COM: + 256.
// ALIGN-LABEL: // memory of @bounds: peak 1280 bytes at op 1 test.two

// COM: Arguments kept resident to the end do not change this peak, but they
// COM: are live out of every op.
// KEEP-LABEL: // liveness of @bounds
// KEEP: op 2 func.return: live-in: {%arg0, %0} live-out: {%arg0} dying: {%0}
func.func @bounds(%a: tensor<?xf32> {lms.max_bytes = 100 : i64}, %n: index) -> tensor<?xf32> {
  %e = tensor.empty(%n) {lms.max_bytes = 300 : i64} : tensor<?xf32>
  %r:2 = "test.two"(%a, %e) {lms.max_bytes = [5, 7]} : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xi8>, tensor<?xi8>)
  return %e : tensor<?xf32>
}

