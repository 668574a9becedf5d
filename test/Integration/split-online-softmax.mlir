// COM: --lms-split by execution, split by the dimension a softmax reduces
// COM: (the vocabulary of a loss head written as torch-mlir writes
// COM: log_softmax: a max, a sum of exp(x - max), x - max - log(sum)). By
// COM: default the sum of exponentials runs in the loop of the maximum,
// COM: rescaled as the maximum grows (online softmax): two loops instead of
// COM: three, the logits' slices computed twice instead of three times.
// COM: Row 0's first 96 words are -inf, so its first slice's maximum is -inf
// COM: (without the guard for it, row 0 would be NaN). The values agree with
// COM: the unsplit program within a relative 1e-5 (float reassociation: the
// COM: sum is rescaled), and the emulated device measures the analysed
// COM: peak. With online-softmax=false: three loops, bit-identical values.
// REQUIRES: lms-runtime

// RUN: lms-opt %s --lms-report-memory=alignment=1 -o /dev/null | FileCheck %s --check-prefix=FLOOR
// FLOOR-LABEL: @head:
// FLOOR: smallest feasible budget: 32.1 KiB (32896 bytes, op {{[0-9]+}} 'linalg.generic')
// RUN: lms-opt %s --lms-split="slices=4 loop=1 stats=true" -o %t.on.mlir 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: lms-split: @head: 'linalg.generic' at {{.*}}: loop 1 in 4 slices (16 ops, 2 loops): the op needed 32896 bytes, its loops need 17216
// RUN: lms-opt %s --lms-split="slices=4 loop=1 stats=true online-softmax=false" -o %t.off.mlir 2>&1 | FileCheck %s --check-prefix=STATS-OFF
// STATS-OFF: lms-split: @head: 'linalg.generic' at {{.*}}: loop 1 in 4 slices (16 ops, 3 loops)
// RUN: FileCheck %s --check-prefix=IR < %t.on.mlir
// COM: The first loop carries the maximum and the sum; the slice's maximum
// COM: starts from a fresh -inf; the sum so far is rescaled by
// COM: exp(m_before - m_now) before the maximum is updated in place.
// IR-LABEL: func.func @head
// IR: %[[MS:.*]]:2 = scf.for %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<16xf32>, tensor<16xf32>)
// IR: %[[LOGITS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// IR: %[[FRESH:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// IR: %[[SLICEMAX:.*]] = linalg.generic {{.*}} ins(%[[LOGITS]] : tensor<16x64xf32>) outs(%[[FRESH]] : tensor<16xf32>)
// IR: arith.maximumf
// IR: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[SLICEMAX]] : tensor<16xf32>, tensor<16xf32>) outs(%[[S]] : tensor<16xf32>)
// IR: math.exp
// IR: arith.mulf
// IR: %[[NOW:.*]] = linalg.generic {{.*}} ins(%[[SLICEMAX]] : tensor<16xf32>) outs(%[[M]] : tensor<16xf32>)
// IR: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[LOGITS]], %[[NOW]] : tensor<16x64xf32>, tensor<16xf32>) outs(%[[SCALED]] : tensor<16xf32>)
// IR: arith.cmpf oeq
// IR: arith.select
// IR: math.exp
// IR: scf.yield %[[NOW]], %[[SUM]]
// IR: scf.for
// IR-NOT: scf.for
// IR: return
// RUN: lms-opt %s --lms-host-pipeline -o %t.plain.ll.mlir
// RUN: lms-opt %t.on.mlir --lms-host-pipeline -o %t.on.ll.mlir
// RUN: lms-opt %t.off.mlir --lms-host-pipeline -o %t.off.ll.mlir
// RUN: lms-opt %t.on.mlir --lms-report-memory="format=json alignment=256" -o /dev/null > %t.on.json
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.plain.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.plain.out
// RUN: env LMS_RUNTIME=emulated LMS_RUNTIME_STATS=%t.on.stats mlir-runner %t.on.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.on.out
// RUN: env LMS_RUNTIME=emulated mlir-runner %t.off.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils | grep -v base@ > %t.off.out
// RUN: FileCheck %s --check-prefix=VALUES < %t.on.out
// VALUES: [6.39396,  5.8617,
// RUN: %compare_outputs %t.plain.out %t.on.out --rtol 1e-5 | FileCheck %s --check-prefix=AGREE
// AGREE: 1104 numbers agree
// RUN: diff %t.plain.out %t.off.out
// RUN: %check_stats %t.on.stats --analysis %t.on.json --no-leaks | FileCheck %s --check-prefix=MEASURED
// MEASURED: measured peak {{[0-9]+}} == analysed peak
// MEASURED-NEXT: no leaks

#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
#tn_a = affine_map<(d0, d1, d2) -> (d2, d0)>
#nt_b = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>

func.func private @printMemrefF32(tensor<*xf32>)

// Cross-entropy against soft targets over a 256-word vocabulary, as
// torch-mlir writes log_softmax (a max, a sum of exp(x - max), x - max -
// log(sum)); row 0's first 96 words are masked to -inf.
func.func @head(%h: tensor<16x4xf32>, %w: tensor<4x256xf32>, %labels: tensor<16xi64>)
    -> (tensor<16xf32>, tensor<4x256xf32>, tensor<16x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<16x256xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %mm = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %w : tensor<16x4xf32>, tensor<4x256xf32>) outs(%f0 : tensor<16x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x256xf32>
  %em = tensor.empty() : tensor<16x256xf32>
  %logits = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<16x256xf32>) outs(%em : tensor<16x256xf32>) {
  ^bb0(%a: f32, %c: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %c96 = arith.constant 96 : index
    %r0 = arith.cmpi eq, %i, %c0 : index
    %lo = arith.cmpi ult, %j, %c96 : index
    %mask = arith.andi %r0, %lo : i1
    %v = arith.select %mask, %ninf, %a : f32
    linalg.yield %v : f32
  } -> tensor<16x256xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%logits : tensor<16x256xf32>) outs(%f1 : tensor<16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %m = arith.maximumf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %max : tensor<16x256xf32>, tensor<16xf32>) outs(%f2 : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32, %c: f32):
    %d = arith.subf %a, %m : f32
    %x = math.exp %d : f32
    %s = arith.addf %c, %x : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e3 = tensor.empty() : tensor<16x256xf32>
  %logp = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%logits, %max, %sum : tensor<16x256xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e3 : tensor<16x256xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %c: f32):
    %d = arith.subf %a, %m : f32
    %l = math.log %s : f32
    %r = arith.subf %d, %l : f32
    linalg.yield %r : f32
  } -> tensor<16x256xf32>
  // loss[i] = -logp[i, label[i]], picked by the column index (a masked
  // reduction, not a gather), and its gradient softmax - onehot(label).
  %e4 = tensor.empty() : tensor<16xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<16xf32>) -> tensor<16xf32>
  %loss = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logp, %labels : tensor<16x256xf32>, tensor<16xi64>) outs(%f4 : tensor<16xf32>) {
  ^bb0(%lp: f32, %l: i64, %c: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %l, %ji : i64
    %q = arith.select %hit, %lp, %zero : f32
    %r = arith.subf %c, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e5 = tensor.empty() : tensor<16x256xf32>
  %grad = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%logp, %labels : tensor<16x256xf32>, tensor<16xi64>) outs(%e5 : tensor<16x256xf32>) {
  ^bb0(%lp: f32, %l: i64, %c: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %l, %ji : i64
    %one = arith.constant 1.0 : f32
    %oh = arith.select %hit, %one, %zero : f32
    %p = math.exp %lp : f32
    %d = arith.subf %p, %oh : f32
    linalg.yield %d : f32
  } -> tensor<16x256xf32>
  %e6 = tensor.empty() : tensor<4x256xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<4x256xf32>) -> tensor<4x256xf32>
  %dw = linalg.generic {indexing_maps = [#tn_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %grad : tensor<16x4xf32>, tensor<16x256xf32>) outs(%f6 : tensor<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x256xf32>
  %e7 = tensor.empty() : tensor<16x4xf32>
  %f7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %dh = linalg.generic {indexing_maps = [#mm_a, #nt_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%grad, %w : tensor<16x256xf32>, tensor<4x256xf32>) outs(%f7 : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %loss, %dw, %dh : tensor<16xf32>, tensor<4x256xf32>, tensor<16x4xf32>
}

// Deterministic inputs: h and w are sin and cos of their index (logits of a
// few units), t a softmax-like target (1/200 on the unmasked words).
func.func @main() {
  %eh = tensor.empty() : tensor<16x4xf32>
  %h = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%eh : tensor<16x4xf32>) {
  ^bb0(%c: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %k = arith.muli %i, %c4 : index
    %s = arith.addi %k, %j : index
    %si = arith.index_cast %s : index to i64
    %f = arith.sitofp %si : i64 to f32
    %v = math.sin %f : f32
    linalg.yield %v : f32
  } -> tensor<16x4xf32>
  %ew = tensor.empty() : tensor<4x256xf32>
  %w = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%ew : tensor<4x256xf32>) {
  ^bb0(%c: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %k = arith.muli %j, %c7 : index
    %s = arith.addi %k, %i : index
    %si = arith.index_cast %s : index to i64
    %f = arith.sitofp %si : i64 to f32
    %v = math.cos %f : f32
    linalg.yield %v : f32
  } -> tensor<4x256xf32>
  %el = tensor.empty() : tensor<16xi64>
  %labels = linalg.generic {indexing_maps = [#vec], iterator_types = ["parallel"]} outs(%el : tensor<16xi64>) {
  ^bb0(%c: i64):
    %i = linalg.index 0 : index
    %c37 = arith.constant 37 : index
    %c100 = arith.constant 100 : index
    %c256 = arith.constant 256 : index
    %k = arith.muli %i, %c37 : index
    %k2 = arith.addi %k, %c100 : index
    %m = arith.remui %k2, %c256 : index
    %li = arith.index_cast %m : index to i64
    linalg.yield %li : i64
  } -> tensor<16xi64>
  %loss, %dw, %dh = call @head(%h, %w, %labels) : (tensor<16x4xf32>, tensor<4x256xf32>, tensor<16xi64>) -> (tensor<16xf32>, tensor<4x256xf32>, tensor<16x4xf32>)
  %l = tensor.cast %loss : tensor<16xf32> to tensor<*xf32>
  call @printMemrefF32(%l) : (tensor<*xf32>) -> ()
  %a = tensor.cast %dw : tensor<4x256xf32> to tensor<*xf32>
  call @printMemrefF32(%a) : (tensor<*xf32>) -> ()
  %b = tensor.cast %dh : tensor<16x4xf32> to tensor<*xf32>
  call @printMemrefF32(%b) : (tensor<*xf32>) -> ()
  return
}
