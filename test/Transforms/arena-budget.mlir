// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="budget=31" -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=31" | lms-opt -allow-unregistered-dialect -lms-report-memory -o /dev/null | FileCheck %s --check-prefix=LIVE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=31 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=31" -o /dev/null | FileCheck %s --check-prefix=REMAT
// RUN: lms-opt %s -allow-unregistered-dialect -lms-plan="budget=31 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=31" -o /dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lms-opt %s -allow-unregistered-dialect -lms-insert-swaps="budget=31 arena=true" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=31" -o /dev/null | FileCheck %s --check-prefix=SWAP
// RUN: not lms-opt %s -allow-unregistered-dialect -lms-insert-swaps="budget=31 arena=true swapout-threshold=100" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSWAP

// COM: A random DAG of 14 ops (bytes as tensor sizes) whose buffers peak at
// COM: 31 live bytes in the schedule order, but which the placer packs into
// COM: no less than 34 bytes of one address space: at some step the free
// COM: bytes are split.
// BEFORE: @frag: peak 31 B (31 bytes)
// BEFORE: arena: 34 B (34 bytes) for a live peak of 31 B: ratio 1.0968
// BEFORE: budget: 31 B (31 bytes): fits; lowered with arena=true it would need 34 B

// COM: Budgets bound live bytes by default: nothing to do.
// LIVE: @frag: peak 31 B
// LIVE: arena: 34 B
// LIVE-NOT: lms ops

// COM: With arena=true the budget bounds the arena: the planners are asked
// COM: again for less until the placed buffers fit.
// REMAT: @frag: peak 29 B
// REMAT: arena: 29 B (29 bytes)
// REMAT: lms ops: 0 swap-out, 0 swap-wait, 0 swap-in, 1 recompute
// REMAT: budget: 31 B (31 bytes): fits
// PLAN: arena: {{2[0-9]|3[01]}} B
// PLAN: budget: 31 B (31 bytes): fits

// COM: Offloading: the plan for 31 live bytes places into 34; asked for 28
// COM: (31 less the excess), below the 29 live bytes offloading can reach,
// COM: the pass tries those 29, whose plan places into 29 (before, it gave
// COM: up at 28).
// SWAP: @frag: peak 29 B
// SWAP: arena: 29 B (29 bytes)
// SWAP: lms ops: 1 swap-out, 0 swap-wait, 1 swap-in, 0 recompute
// SWAP: budget: 31 B (31 bytes): fits

// COM: With no gap long enough to offload, nothing shrinks the arena: a
// COM: clean error at the function, which is left as it was.
// NOSWAP: arena-budget.mlir:{{[0-9]+}}:1: error: cannot fit the budget 31 B (31 bytes) with the buffers placed in an arena: the rewritten function's arena stays over the budget (by fragmentation), and no plan with a margin for that fits: budget 28 is below the smallest feasible budget 31

func.func @frag() {
  %n0 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<1xi8>
  %n1 = "graph.node"(%n0) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>) -> tensor<8xi8>
  %n2 = "graph.node"(%n0, %n1) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<8xi8>) -> tensor<5xi8>
  %n3 = "graph.node"(%n2) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<13xi8>
  %n4 = "graph.node"(%n0, %n1, %n3) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<8xi8>, tensor<13xi8>) -> tensor<3xi8>
  %n5 = "graph.node"(%n0, %n1) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<8xi8>) -> tensor<1xi8>
  %n6 = "graph.node"(%n3) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<13xi8>) -> tensor<3xi8>
  %n7 = "graph.node"(%n2) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<5xi8>
  %n8 = "graph.node"(%n0, %n2, %n6) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>, tensor<5xi8>, tensor<3xi8>) -> tensor<5xi8>
  %n9 = "graph.node"(%n1, %n5) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<8xi8>, tensor<1xi8>) -> tensor<8xi8>
  %n10 = "graph.node"(%n5) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<1xi8>) -> tensor<5xi8>
  %n11 = "graph.node"(%n2) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>) -> tensor<3xi8>
  %n12 = "graph.node"(%n2, %n5, %n6) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>, tensor<1xi8>, tensor<3xi8>) -> tensor<5xi8>
  %n13 = "graph.node"(%n2, %n9, %n11) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<5xi8>, tensor<8xi8>, tensor<3xi8>) -> tensor<13xi8>
  return
}
