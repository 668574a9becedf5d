// COM: On a machine with a CUDA device: the swapped step runs on the GPU
// COM: (lms-gpu-pipeline, LMS_RUNTIME=cuda) and computes what the CPU
// COM: computes, within float tolerance; the high-water mark fits the budget.
// REQUIRES: cuda-device
// RUN: %python %gen_models/mlp_train.py --batch 64 --inputs 32 --width 64 --layers 4 --classes 8 --with-main -o %t.mlir
// RUN: lms-opt %t.mlir --lms-host-pipeline -o %t.host.ll.mlir
// RUN: mlir-runner %t.host.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils > %t.host.out
// RUN: lms-opt %t.mlir --lms-gpu-pipeline=budget=100000 -o %t.gpu.ll.mlir
// RUN: env LMS_RUNTIME=cuda LMS_RUNTIME_STATS=%t.gpu.json mlir-runner %t.gpu.ll.mlir -e main -entry-point-result=void -shared-libs=%lms_runtime,%runner_utils,%c_runner_utils > %t.gpu.out
// RUN: %compare_outputs %t.host.out %t.gpu.out
// RUN: %check_stats %t.gpu.json --max-peak 100000 --no-leaks --min-h2d 1
