// Upstream mlir-opt (Debian's /usr/lib/llvm-22/bin/mlir-opt) with the LMS
// plugins. mlir-opt fixes its pass flags before plugins load, so plugin
// passes are named in --pass-pipeline (or -p); their options work there, and
// so does the global --lms-budget the pass plugin registers.

// RUN: mlir-opt %lms_src_root/examples/mlp_train.mlir --load-dialect-plugin=%lms_lib_dir/LMSDialectPlugin.so \
// RUN:   --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   --pass-pipeline='builtin.module(lms-insert-swaps{budget=48MiB})' \
// RUN:   | FileCheck %s

// RUN: mlir-opt %lms_src_root/examples/mlp_train.mlir --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   --pass-pipeline='builtin.module(lms-insert-swaps)' --lms-budget=48MiB \
// RUN:   | FileCheck %s

// The analyses run there too.
// RUN: mlir-opt %lms_src_root/examples/mlp_train.mlir --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   -p 'builtin.module(lms-report-memory)' -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=REPORT

// The output of the plugin passes parses again in mlir-opt with the dialect
// plugin and goes through the LMS lowering pipeline to LLVM.
// RUN: mlir-opt %lms_src_root/examples/mlp_train.mlir --load-dialect-plugin=%lms_lib_dir/LMSDialectPlugin.so \
// RUN:   --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   -p 'builtin.module(lms-insert-swaps{budget=48MiB})' \
// RUN: | mlir-opt --load-dialect-plugin=%lms_lib_dir/LMSDialectPlugin.so \
// RUN:   --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   -p 'builtin.module(lms-host-pipeline)' | FileCheck %s --check-prefix=LLVM

// Errors of the passes are diagnostics at the function, with a failing exit.
// RUN: not mlir-opt %lms_src_root/examples/mlp_train.mlir --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   -p 'builtin.module(lms-insert-swaps{budget=1KiB})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SMALL

// On the bundled MLP training step (peak 76.1 MiB).
// CHECK-LABEL: func.func @mlp_step
// CHECK: %[[H:.*]] = lms.swap_out %{{.*}} : tensor<1024x1024xf32> -> !lms.host<tensor<1024x1024xf32>>
// CHECK: lms.swap_in %[[H]]
// REPORT: @mlp_step: peak 76.1 MiB (79822848 bytes)
// COM: (The function keeps its lms.arena_bytes attribute: the arena a host
// COM: allocates.)
// LLVM: llvm.func @mlp_step
// LLVM-NOT: {{lms\.[a-z_]+([^a-z_ ]| [^=])|gpu\.}}
// COM: With arena=true (the default) the arguments and returned gradients
// COM: are allocations of their own beside the arena.
// SMALL: error: budget 1.00 KiB (1024 bytes) is below the smallest feasible budget 40.1 MiB (42008576 bytes) of this op
// SMALL: note: with arena=true the budget holds the arena and, beside it, 28.1 MiB (29425664 bytes) of @mlp_step's arguments, results and buffers that cross calls
