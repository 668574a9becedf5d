// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="budget=19" -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=19" | lms-opt -allow-unregistered-dialect -lms-report-memory -o /dev/null | FileCheck %s --check-prefix=LIVE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=19 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=19" -o /dev/null | FileCheck %s --check-prefix=REMAT
// RUN: lms-opt %s -allow-unregistered-dialect -lms-insert-swaps="budget=19 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=19" -o /dev/null | FileCheck %s --check-prefix=SWAP
// RUN: lms-opt %s -allow-unregistered-dialect -lms-plan="budget=19 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=19" -o /dev/null | FileCheck %s --check-prefix=PLAN

// COM: A random DAG of 14 ops (bytes as tensor sizes) whose buffers peak at
// COM: 19 live bytes in the schedule order but cannot be packed into 19
// COM: bytes of one address space: at some step the free bytes are split.
// BEFORE: @frag: peak 19 B (19 bytes)
// BEFORE: arena: 20 B (20 bytes) for a live peak of 19 B: ratio 1.0526
// BEFORE: budget: 19 B (19 bytes): the live bytes fit, the arena does not

// COM: Budgets bound live bytes by default: nothing to do.
// LIVE: @frag: peak 19 B
// LIVE: arena: 20 B
// LIVE-NOT: lms ops

// COM: With arena=true the budget bounds the arena: the planners are asked
// COM: again for less until the placed buffers fit.
// REMAT: @frag: peak 18 B
// REMAT: arena: 18 B (18 bytes)
// REMAT: lms ops: 0 swap-out, 0 swap-wait, 0 swap-in, 1 recompute
// REMAT: budget: 19 B (19 bytes): fits
// SWAP: arena: 18 B (18 bytes)
// SWAP: lms ops: 1 swap-out, 1 swap-wait, 1 swap-in, 0 recompute
// SWAP: budget: 19 B (19 bytes): fits
// PLAN: arena: {{1[0-9]}} B
// PLAN: budget: 19 B (19 bytes): fits

func.func @frag() {
  %n0 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<5xi8>
  %n1 = "graph.node"(%n0) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<1xi8>
  %n2 = "graph.node"(%n0, %n1) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>, tensor<1xi8>) -> tensor<2xi8>
  %n3 = "graph.node"(%n0) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<1xi8>
  %n4 = "graph.node"(%n2) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<2xi8>) -> tensor<2xi8>
  %n5 = "graph.node"(%n0) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<8xi8>
  %n6 = "graph.node"(%n0, %n1) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>, tensor<1xi8>) -> tensor<1xi8>
  %n7 = "graph.node"(%n3, %n6) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<1xi8>) -> tensor<5xi8>
  %n8 = "graph.node"(%n0, %n3) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>, tensor<1xi8>) -> tensor<2xi8>
  %n9 = "graph.node"(%n6, %n8) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<2xi8>) -> tensor<3xi8>
  %n10 = "graph.node"(%n6) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>) -> tensor<8xi8>
  %n11 = "graph.node"(%n6, %n7) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<5xi8>) -> tensor<2xi8>
  %n12 = "graph.node"(%n2, %n4, %n7) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<2xi8>, tensor<2xi8>, tensor<5xi8>) -> tensor<3xi8>
  %n13 = "graph.node"(%n4) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<2xi8>) -> tensor<8xi8>
  return
}
