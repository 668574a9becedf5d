// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory -o /dev/null | FileCheck %s --check-prefix=TEXT
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="format=json device=h200 top=2" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="format=svg budget=75% file=%t.svg" -o /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory | FileCheck %s --check-prefix=IR
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="format=json arena=false" -o /dev/null | FileCheck %s --check-prefix=EXACT
// RUN: lms-opt %s -allow-unregistered-dialect -lms-report-memory="format=json" -o /dev/null | FileCheck %s --check-prefix=GRANULES

// COM: Two layers on 1 MiB tensors: the peak is where the first layer's
// COM: output is allocated (tensor.empty) with the three arguments resident
// COM: (4 MiB). The second matmul writes into %e2 in place although the exp
// COM: uses %e2 again: nobody reads its value (One-Shot Bufferize's analysis
// COM: says so), so no op needs a fourth buffer and the arguments at entry
// COM: (3 MiB) set the smallest feasible budget.

// TEXT: @two_layers: peak 4.00 MiB (4194304 bytes) at op 0 'tensor.empty' ({{.*}}report-memory.mlir:[[# @LINE + 73]]:8)
// TEXT-NEXT: live at the peak (largest 4 of 4):
// TEXT-NEXT: 1.00 MiB  %arg0  tensor<512x512xf32> ({{.*}}report-memory.mlir:[[# @LINE + 70]]:
// TEXT: host memory peak: 0 B (v100-16g host memory: 59.6 GiB)
// COM: The five buffers pack without a hole: the arena is the live peak.
// TEXT-NEXT: arena: 4.00 MiB (4194304 bytes) for a live peak of 4.00 MiB: ratio 1.0000, fragmentation 0.00% (5 buffers, {{.*}})
// TEXT-NEXT: smallest feasible budget: 3.00 MiB (3145728 bytes, the arguments at entry)
// COM: With the arena the arguments stay beside it to the end (they are
// COM: allocations of their own): at op 0 they and the new buffer need 4 MiB.
// TEXT-NEXT: smallest feasible budget with the arena: 4.00 MiB (4194304 bytes, op 0 'tensor.empty')
// TEXT-NEXT: estimated time on v100-16g: {{.*}} over 6 ops (compute {{.*}})
// TEXT-LABEL: @unknown_ops: peak 768 B (768 bytes) at op 0 'mhlo.thing'

// JSON: "device": {
// JSON-NEXT: "name": "h200",
// JSON-NEXT: "capacity_bytes": 149681078272,
// JSON: "functions": [
// JSON-NEXT: {
// JSON-NEXT: "name": "two_layers",
// JSON-NEXT: "num_ops": 6,
// JSON-NEXT: "peak_bytes": 4194304,
// JSON-NEXT: "host_peak_bytes": 0,
// JSON-NEXT: "min_feasible_bytes": 3145728,
// JSON-NEXT: "peak_op": {
// JSON-NEXT: "index": 0,
// JSON-NEXT: "name": "tensor.empty",
// JSON-NEXT: "loc": "{{.*}}report-memory.mlir:[[# @LINE + 47]]:8"
// JSON: "live_at_peak": [
// JSON-NEXT: {
// JSON-NEXT: "value": "%arg0",
// JSON-NEXT: "bytes": 1048576,
// JSON: "value": "%arg1",
// JSON-NOT: "value"
// COM: 2 x 512^3 per matmul, one per element for the exp.
// JSON: "flops": 537133056,
// JSON: "arena": {
// JSON-NEXT: "bytes": 4194304,
// JSON-NEXT: "live_peak_bytes": 4194304,
// JSON-NEXT: "fragmentation": 0,
// JSON: "buffers": [
// JSON-NEXT: {
// JSON-NEXT: "value": "%arg0",
// JSON-NEXT: "bytes": 1048576,
// JSON-NEXT: "offset": {{[0-9]+}},
// JSON-NEXT: "first_op": -1,
// JSON-NEXT: "last_op": 1,
// COM: The plan steps the placement saw: alive from entry to its free after
// COM: op 1 (step 2); lms-bench-placement --reports places these again.
// JSON-NEXT: "begin_step": 0,
// JSON-NEXT: "end_step": 2
// JSON: "timeline": [
// JSON-NEXT: {
// JSON-NEXT: "index": 0,
// JSON-NEXT: "name": "tensor.empty",
// JSON-NEXT: "before": 3145728,
// JSON-NEXT: "live_bytes": 4194304,
// JSON-NEXT: "after": 4194304
// JSON: "name": "unknown_ops",

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: @two_layers on v100-16g
// SVG: peak 4.00 MiB at op 0
// SVG: budget 3.00 MiB
// COM: The address map: one rectangle per buffer, its offset in the tooltip.
// SVG: @two_layers: arena 4.00 MiB for a live peak of 4.00 MiB (fragmentation 0.0%)
// SVG: offset in the arena
// SVG: <rect {{.*}}><title>%arg0: 1.00 MiB at offset {{[0-9]+}}, ops -1..1</title></rect>
// SVG: @unknown_ops on v100-16g

// COM: The report leaves the IR as it is.
// IR: func.func @two_layers
// IR: linalg.matmul
func.func @two_layers(%x: tensor<512x512xf32>, %w1: tensor<512x512xf32>, %w2: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %e = tensor.empty() : tensor<512x512xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<512x512xf32>, tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %e2 = tensor.empty() : tensor<512x512xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<512x512xf32>, tensor<512x512xf32>) outs(%e2 : tensor<512x512xf32>) -> tensor<512x512xf32>
  %z = linalg.exp ins(%y : tensor<512x512xf32>) outs(%e2 : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %z : tensor<512x512xf32>
}

// COM: Regression: ops of unregistered dialects have no dialect object.
func.func @unknown_ops(%a: tensor<16xf32>) -> tensor<8xf32> {
  %r:2 = "mhlo.thing"(%a) : (tensor<16xf32>) -> (tensor<4xf32>, tensor<8xf32>)
  return %r#1 : tensor<8xf32>
}

// COM: Sizes count in the arena lowering's 256-byte granules (alignment 0,
// COM: the default, chooses them with arena=true, the default), as the
// COM: planning passes count: three small buffers of 112 bytes in all take
// COM: three granules on the device.
// GRANULES: "alignment": 256,
// GRANULES-LABEL: "name": "unknown_ops",
// GRANULES: "peak_bytes": 768,
// COM: With arena=false the report counts exact bytes, as a budget with
// COM: arena=false bounds them.
// EXACT: "alignment": 1,
// EXACT-LABEL: "name": "unknown_ops",
// EXACT: "peak_bytes": 112,
