// COM: A loop whose body alone keeps it over the budget is planned inside
// COM: (docs/InsertSwaps.md, "Inside loops"). Below what one iteration needs
// COM: (%c computed from %b: 32 KiB, where a budget of 20,000 leaves 19,488
// COM: beside the loop's operands), the error is at the loop and names the
// COM: room its body had; a note points at the op inside that needs more.
// COM: The loop reads only an argument from outside (%x, 256 bytes): fetched
// COM: per iteration, it would not leave the body enough, so the error is
// COM: the body's first attempt's. --lms-plan gives the error of offloading.
// COM: @borrowed: the loop-invariant %big (16 KiB) is an argument the
// COM: function borrows (lms.borrowed, as --lms-deallocate marks the callee
// COM: of a caller that reads it after the call): it stays on the device
// COM: (test/Integration/loop-fetch-argument.mlir fetches one it owns).
// RUN: lms-opt %s --lms-insert-swaps=budget=20000 -verify-diagnostics -o /dev/null
// RUN: lms-opt %s --lms-plan=budget=20000 -verify-diagnostics -o /dev/null
// RUN: not lms-opt %s --lms-rematerialize=budget=20000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMAT
// REMAT: :[[@LINE+9]]:8: error: cannot fit the body of this op into 19.0 KiB (19488 bytes), what the budget leaves beside its operands and results, recomputing: its smallest feasible budget is 32.0 KiB (32768 bytes)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @body_over(%x: tensor<64xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{cannot fit the body of this op into 19.0 KiB (19488 bytes), what the budget leaves beside its operands and results, offloading: budget 19488 is below the smallest feasible budget 32768}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<64xf32>) {
    %eb = tensor.empty() : tensor<64x64xf32>
    %b = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64xf32>) outs(%eb : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %ec = tensor.empty() : tensor<64x64xf32>
    // expected-note @+1 {{the op of the body that needs 32.0 KiB (32768 bytes): its operands, results and temporaries need 32.0 KiB}}
    %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<64x64xf32>) outs(%ec : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %rc = tensor.empty() : tensor<64xf32>
    %zc = linalg.fill ins(%zero : f32) outs(%rc : tensor<64xf32>) -> tensor<64xf32>
    %c2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<64x64xf32>) outs(%zc : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.addf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %s2 = linalg.add ins(%acc, %c2 : tensor<64xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
    scf.yield %s2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

func.func @borrowed(%big: tensor<64x64xf32> {lms.borrowed}, %init: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{cannot fit the body of this op into 3.28 KiB (3360 bytes), what the budget leaves beside its operands and results, offloading: budget 3360 is below the smallest feasible budget 16640}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<64xf32>) {
    %rb = tensor.empty() : tensor<64xf32>
    %zb = linalg.fill ins(%zero : f32) outs(%rb : tensor<64xf32>) -> tensor<64xf32>
    %b2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%big : tensor<64x64xf32>) outs(%zb : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.addf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %ea = tensor.empty() : tensor<64x64xf32>
    // expected-note @+1 {{the op of the body that needs 16.2 KiB (16640 bytes)}}
    %a = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]} ins(%b2 : tensor<64xf32>) outs(%ea : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<64x64xf32>
    %ra = tensor.empty() : tensor<64xf32>
    %za = linalg.fill ins(%zero : f32) outs(%ra : tensor<64xf32>) -> tensor<64xf32>
    %a2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x64xf32>) outs(%za : tensor<64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.maximumf %in, %o : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    %s2 = linalg.add ins(%acc, %a2 : tensor<64xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
    scf.yield %s2 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}
