// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="budget=75 alignment=1" -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="budget=75 arena=false" -o /dev/null | FileCheck %s --check-prefix=BEFORE-LIVE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=75 arena=false" | lms-opt -allow-unregistered-dialect -lms-report-memory=alignment=1 -o /dev/null | FileCheck %s --check-prefix=LIVE
// RUN: lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=75 alignment=1" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=75 alignment=1" -o /dev/null | FileCheck %s --check-prefix=REMAT
// RUN: lms-opt %s -allow-unregistered-dialect -lms-plan="budget=75 alignment=1" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=75 alignment=1" -o /dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lms-opt %s -allow-unregistered-dialect -lms-insert-swaps="budget=75 alignment=1" | lms-opt -allow-unregistered-dialect -lms-report-memory="budget=75 alignment=1" -o /dev/null | FileCheck %s --check-prefix=SWAP
// RUN: not lms-opt %s -allow-unregistered-dialect -lms-insert-swaps="budget=75 arena=true alignment=1 swapout-threshold=100" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSWAP
// RUN: not lms-opt %s -allow-unregistered-dialect -lms-rematerialize="budget=75" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRANULE

// COM: Buffers that peak at 70 live bytes but need 80 bytes of one address
// COM: space in any placement. %w (10 bytes) is alive throughout; under it,
// COM: the buffers %b0-%b6 hold 60 bytes at four of the five steps that
// COM: the ops %c0-%c4 close, and no offsets put them in 60: placed whole
// COM: at each step, their sizes (30, 30 | 30, 20, 10 | 20, 10, 20 | 10,
// COM: 20, 30 | 30, 30) cannot keep the bytes free at one step contiguous
// COM: for the next (an exhaustive search over offsets finds none below 70;
// COM: with %w, none below 80: the gtest PlacementTest.
// COM: ArenaBudgetBuffersNeedMoreThanTheirLivePeak). Before the placer
// COM: searched over orders, the
// COM: fragmenting instance here was a random DAG at 31 live bytes whose
// COM: placement at 34 the search brought down to 31.
// BEFORE: @frag: peak 70 B (70 bytes)
// BEFORE: arena: 80 B (80 bytes) for a live peak of 70 B: ratio 1.1429
// BEFORE: budget: 75 B (75 bytes): exceeded (the arena lowering needs 80 B)
// COM: The report's verdict on live bytes (arena=false), as a budget with
// COM: arena=false bounds them:
// BEFORE-LIVE: budget: 75 B (75 bytes): fits; lowered with arena=true it would need 80 B

// COM: With arena=false budgets bound live bytes: nothing to do.
// LIVE: @frag: peak 70 B
// LIVE: arena: 80 B
// LIVE-NOT: lms ops

// COM: With arena=true (the default) the planning passes count each buffer
// COM: as the arena lowering carves it, rounded to 256 bytes, unless an
// COM: alignment is given: here an op with its operands and results needs
// COM: two granules.
// GRANULE: error: no plan fits the budget 75 B (75 bytes): this op needs 512 B (512 bytes) with its operands and results

// COM: At alignment=1 the bytes are exact. The budget bounds the arena: the planners are asked
// COM: again for less until the placed buffers fit. Recomputing %w at its
// COM: reader frees its 10 bytes over the others: 70 placed bytes.
// REMAT: @frag: peak 60 B
// REMAT: arena: 70 B (70 bytes)
// REMAT: lms ops: 0 swap-out, 0 swap-wait, 0 swap-in, 1 recompute
// REMAT: budget: 75 B (75 bytes): fits
// PLAN: arena: {{[67][0-9]}} B
// PLAN: budget: 75 B (75 bytes): fits

// COM: Offloading: the plan for 75 live bytes is the input (70 live, 80
// COM: placed); asked again for less (2 replans), it offloads %w over the
// COM: others: 60 live bytes, 70 placed.
// SWAP: @frag: peak 60 B
// SWAP: arena: 70 B (70 bytes)
// SWAP: lms ops: 1 swap-out, 1 swap-wait, 1 swap-in, 0 recompute
// SWAP: budget: 75 B (75 bytes): fits

// COM: With no gap long enough to offload, nothing shrinks the arena: a
// COM: clean error at the function, which is left as it was.
// NOSWAP: arena-budget.mlir:{{[0-9]+}}:1: error: cannot fit the budget 75 B (75 bytes) with the buffers placed in an arena: the rewritten function's arena stays over the budget (by fragmentation), and no plan with a margin for that fits: budget 60 is below the smallest feasible budget 70

func.func @frag() {
  %w = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<10xi8>
  %b0 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<30xi8>
  %b1 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<30xi8>
  %c0 = "graph.node"(%b0) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<30xi8>) -> tensor<0xi8>
  %b2 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<20xi8>
  %b3 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<10xi8>
  %c1 = "graph.node"(%b1) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<30xi8>) -> tensor<0xi8>
  %b4 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<20xi8>
  %c2 = "graph.node"(%b2) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<20xi8>) -> tensor<0xi8>
  %b5 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<30xi8>
  %c3 = "graph.node"(%b3, %b4) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<10xi8>, tensor<20xi8>) -> tensor<0xi8>
  %b6 = "graph.node"() {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : () -> tensor<30xi8>
  %c4 = "graph.node"(%b5, %b6) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<30xi8>, tensor<30xi8>) -> tensor<0xi8>
  %end = "graph.node"(%w) {lms.cost = {seconds = 1.0 : f64}, lms.recomputable} : (tensor<10xi8>) -> tensor<0xi8>
  return
}
