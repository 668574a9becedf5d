// COM: On a generated MLP training step (tools/gen-models/mlp_train.py
// COM: --batch 512 --inputs 256 --width 512 --layers 4 --classes 16).

// COM: The result fits, by the memory report of the rewritten program.
// RUN: lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps=arena=false --lms-budget=50% -o %t.swapped
// RUN: lms-opt %t.swapped -lms-report-memory="budget=50% arena=false" -o /dev/null | FileCheck %s --check-prefix=FITS
// FITS: lms ops: {{[1-9][0-9]*}} swap-out, {{[0-9]+}} swap-wait, {{[1-9][0-9]*}} swap-in, 0 recompute
// FITS: budget: {{.*}}: fits

// COM: Idempotent: a second run with the same budget adds nothing (the
// COM: percentage is of the peak without LMS).
// RUN: lms-opt %t.swapped -lms-insert-swaps=arena=false --lms-budget=50% -o %t.twice
// RUN: diff %t.swapped %t.twice

// COM: Composes with --lms-strip: stripping gives back the original program.
// RUN: lms-opt %t.swapped -lms-strip -o %t.stripped
// RUN: lms-opt %S/Inputs/mlp.mlir -o %t.original
// RUN: diff %t.stripped %t.original

// COM: The pass option wins over --lms-budget (10% is infeasible).
// RUN: lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps="budget=50% arena=false" --lms-budget=10% -o %t.option
// RUN: diff %t.swapped %t.option
// RUN: not lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps=arena=false --lms-budget=10% -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// INFEASIBLE: error: budget {{.*}} is below the smallest feasible budget

// COM: Statistics (stats=true, since Debian's LLVM has no pass statistics).
// RUN: lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps="stats=true arena=false" --lms-budget=50% -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: lms-insert-swaps: {{[1-9][0-9]*}} tensors-swapped, {{[1-9][0-9]*}} swap-outs, {{[1-9][0-9]*}} swap-ins, {{[1-9][0-9]*}} bytes-to-host, {{[1-9][0-9]*}} bytes-to-device, {{[0-9]+}} estimated-stall-us

// COM: The baselines run through the same pass and also fit.
// RUN: lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps="planner=tflms arena=false" --lms-budget=80% -o %t.tflms
// RUN: lms-opt %t.tflms -lms-report-memory="budget=80% arena=false" -o /dev/null | FileCheck %s --check-prefix=FITS
// RUN: lms-opt %S/Inputs/mlp.mlir -lms-insert-swaps="planner=swap-all arena=false" -o /dev/null
