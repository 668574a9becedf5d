// RUN: lms-opt %s -lms-print-liveness=dynamic-bytes=1KiB -allow-unregistered-dialect -o /dev/null | FileCheck %s --check-prefix=DYN

// COM: The dynamic-bytes option bounds every dynamic value without an
// COM: attribute (1 KiB); an attribute still wins. 1024 + 1024 + 10.
// DYN-LABEL: // memory of @option
// DYN-SAME: peak 2058 bytes
func.func @option(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = tensor.empty(%n) {lms.max_bytes = 10 : i64} : tensor<?xf32>
  "test.use"(%a, %e, %f) : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> ()
  return %e : tensor<?xf32>
}
