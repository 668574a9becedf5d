// COM: Property check of --lms-rematerialize on generated training steps, over
// COM: a range of budgets: each run either fits (the analysis of the output is
// COM: within the budget, and --lms-strip gives back the original program) or
// COM: fails with a clean error; some budgets need recomputations.
// RUN: %python %gen_models/mlp_train.py --batch 64 --inputs 32 --width 64 --layers 4 --classes 8 -o %t.mlp.mlir
// RUN: %python %S/Inputs/remat_property.py lms-opt %t.mlp.mlir 95 85 75 70 65 60 | FileCheck %s --check-prefix=MLP
// MLP: 95%: {{[0-9]+}} bytes: peak {{[0-9]+}} fits, {{[1-9][0-9]*}} recomputes, strip gives back the original
// MLP: 65%: {{[0-9]+}} bytes: peak {{[0-9]+}} fits, {{[1-9][0-9]*}} recomputes, strip gives back the original
// MLP: 60%: {{[0-9]+}} bytes: clean error
// MLP: 5 budgets needed recomputations
// COM: The same on live bytes (arena=false): percentages of the live peak.
// RUN: %python %S/Inputs/remat_property.py lms-opt %t.mlp.mlir 95 65 60 --live | FileCheck %s --check-prefix=LIVE
// LIVE: 95%: {{[0-9]+}} bytes: peak {{[0-9]+}} fits, {{[1-9][0-9]*}} recomputes, strip gives back the original
// LIVE: 65%: {{[0-9]+}} bytes: peak {{[0-9]+}} fits, {{[1-9][0-9]*}} recomputes, strip gives back the original
// LIVE: 60%: {{[0-9]+}} bytes: clean error
// LIVE: 2 budgets needed recomputations
// RUN: %python %gen_models/conv_train.py -o %t.cnn.mlir
// RUN: %python %S/Inputs/remat_property.py lms-opt %t.cnn.mlir 95 85 75 | FileCheck %s --check-prefix=CNN
// CNN: 95%: {{[0-9]+}} bytes: peak {{[0-9]+}} fits, {{[1-9][0-9]*}} recomputes, strip gives back the original
// CNN: 2 budgets needed recomputations
