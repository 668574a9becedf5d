// RUN: lms-opt %s --allow-unregistered-dialect --lms-schedule | FileCheck %s --check-prefix=KEPT
// RUN: lms-opt %s --allow-unregistered-dialect --lms-schedule=pure-dialects=hlo | FileCheck %s
// RUN: lms-opt %s --allow-unregistered-dialect --lms-schedule=pure-dialects=hlo,other | FileCheck %s

// COM: Ops of a dialect lms-opt does not know may have any effect: without
// COM: pure-dialects they keep their order. With pure-dialects=hlo the
// COM: branches are finished one after the other (pure ops move around the
// COM: rest), while the all_reduce (a collective: every device must issue
// COM: it in the same order) and the custom_call keep their order.
// KEPT-LABEL: func.func @f
// KEPT: "hlo.broadcast"
// KEPT-NEXT: "hlo.all_reduce"
// KEPT-NEXT: "hlo.broadcast"
// KEPT-NEXT: "hlo.custom_call"
// KEPT-NEXT: "hlo.reduce"
// KEPT-NEXT: "hlo.reduce"
// CHECK-LABEL: func.func @f
// CHECK: "hlo.all_reduce"
// CHECK-NEXT: "hlo.custom_call"
// CHECK-NEXT: %[[A1:.*]] = "hlo.broadcast"
// CHECK-NEXT: "hlo.reduce"(%[[A1]])
// CHECK-NEXT: %[[B1:.*]] = "hlo.broadcast"
// CHECK-NEXT: "hlo.reduce"(%[[B1]])
func.func @f(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %a1 = "hlo.broadcast"(%x) : (tensor<64xf32>) -> tensor<64x64xf32>
  %r = "hlo.all_reduce"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b1 = "hlo.broadcast"(%x) : (tensor<64xf32>) -> tensor<64x64xf32>
  "hlo.custom_call"() : () -> ()
  %a2 = "hlo.reduce"(%a1) : (tensor<64x64xf32>) -> tensor<64xf32>
  %b2 = "hlo.reduce"(%b1) : (tensor<64x64xf32>) -> tensor<64xf32>
  return %a2, %b2, %r : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
