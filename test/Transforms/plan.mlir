// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false arena=false" | FileCheck %s
// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false stats=true arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false strategy=swap arena=false" | FileCheck %s --check-prefix=SWAP
// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false strategy=swap arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=FITS
// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=FITS
// RUN: lms-opt %s --lms-plan="budget=32KiB arena=false" | FileCheck %s --check-prefix=SCHEDULED
// RUN: lms-opt %s --lms-plan="budget=32KiB stats=true arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHEDULED-STATS
// RUN: lms-opt %s --lms-plan="budget=32KiB arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=FITS
// RUN: lms-opt %s --lms-plan="budget=32KiB schedule=false strategy=joint stats=true arena=false" 2>&1 | FileCheck %s --check-prefix=JOINT
// RUN: not lms-opt %s --lms-plan="budget=32KiB strategy=magic arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not lms-opt %s --lms-plan="budget=32KiB split-fraction=0 arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not lms-opt %s --lms-plan="budget=32KiB split-fraction=1.5 arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not lms-opt %s --lms-plan="budget=32KiB split-fraction=0.5,2 arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FRACTION
// RUN: not lms-opt %s --lms-plan="budget=20KiB arena=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOO-SMALL

// COM: The value %a (4 KiB) waits across the 16 KiB %b. Copying it to the
// COM: host and back costs two copies the short step cannot hide; filling it
// COM: again costs one cheap op: the combined planner times both rewrites
// COM: (and the mixes) and keeps the recomputation.

// COM: By default the planner first reorders: %a's fill moves after the
// COM: reduction, right before its use, and the function fits with neither
// COM: a copy nor a recomputation (schedule=false above keeps the order).
// SCHEDULED-STATS: lms-plan: @f: scheduled, peak 36864 -> 32768 bytes
// SCHEDULED-STATS-NOT: offload
// SCHEDULED-LABEL: func.func @f
// SCHEDULED-NOT: lms.
// SCHEDULED: linalg.reduce
// SCHEDULED: linalg.fill
// SCHEDULED-NEXT: tensor.empty
// SCHEDULED-NEXT: linalg.add

// STATS: lms-plan: @f: budget 32768 bytes, peak 36864 bytes, without LMS {{[0-9.]+}} us
// STATS-NEXT:   offload 100% of the excess: {{[0-9.]+}} us, 1 tensors offloaded, 0 recomputes
// STATS-NEXT:   offload   0% of the excess: {{[0-9.]+}} us, 0 tensors offloaded, 1 recomputes  <- chosen
// STATS:        joint, per tensor        : {{[0-9.]+}} us, 0 tensors offloaded, 1 recomputes (recomputation removes 100% of the excess)

// COM: The joint planner alone: its trials (offloading alone, then
// COM: recomputation removing all, three quarters, ... of the excess), the
// COM: fastest (recomputing the fill) chosen and written.
// COM: (The trials' times are the graph core's estimates; the candidate's
// COM: is the rewritten function's.)
// JOINT: joint trial: recompute   0% of the excess, 0 units kept: {{[0-9.]+}} us
// JOINT-NEXT: joint trial: recompute 100% of the excess, 0 units kept: {{[0-9.]+}} us
// JOINT: joint, per tensor        : {{[0-9.]+}} us, 0 tensors offloaded, 1 recomputes (recomputation removes 100% of the excess)  <- chosen
// JOINT-LABEL: func.func @f
// JOINT-NOT:     lms.swap_out
// JOINT:         lms.recompute

// CHECK-LABEL: func.func @f
// CHECK-NOT:     lms.swap_out
// CHECK:         lms.recompute
// CHECK-NOT:     lms.swap_in

// SWAP-LABEL: func.func @f
// SWAP:         lms.swap_out
// SWAP:         lms.swap_in
// SWAP-NOT:     lms.recompute

// FITS: @f: peak {{.*}} ({{[0-9]+}} bytes)
// BAD: for the --strategy option: Cannot find option named 'magic'!
// FRACTION: error: invalid split-fraction {{.*}}: expected a fraction of the budget in (0, 1]
// COM: Below the floor (20,500 bytes: %x, %b and a temporary), --lms-plan
// COM: splits the exp and its sum into a loop over slices; the loop reads
// COM: the argument %x whole from outside, which it owns, so it is offloaded
// COM: before the loop and fetched in each iteration; the body then has
// COM: 16,384 bytes beside the loop's values and one of its ops needs 16,400.
// TOO-SMALL: error: cannot fit the body of this op into 16.0 KiB (16384 bytes), what the budget leaves beside its operands and results, offloading: budget 16384 is below the smallest feasible budget 16400
// TOO-SMALL: note: the op of the body that needs 16.0 KiB (16400 bytes)
func.func @f(%x: tensor<4x1024xf32>) -> tensor<1024xf32> {
  %cst = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %a = linalg.fill ins(%cst : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %e1 = tensor.empty() : tensor<4x1024xf32>
  %b = linalg.exp ins(%x : tensor<4x1024xf32>) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %c = linalg.reduce ins(%b : tensor<4x1024xf32>) outs(%f2 : tensor<1024xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e3 = tensor.empty() : tensor<1024xf32>
  %d = linalg.add ins(%c, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}
