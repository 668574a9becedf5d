// The dialect plugin makes upstream mlir-opt parse, verify and print lms ops,
// and brings their bufferization models: upstream's one-shot-bufferize turns
// the swaps of a hand-planned program into swaps of buffers.

// RUN: mlir-opt %lms_src_root/examples/swapped_mlp.mlir \
// RUN:   --load-dialect-plugin=%lms_lib_dir/LMSDialectPlugin.so | FileCheck %s
// CHECK: %[[H:.*]] = lms.swap_out %{{.*}} : tensor<64x256xf32> -> !lms.host<tensor<64x256xf32>>
// CHECK: lms.swap_wait %[[H]] : !lms.host<tensor<64x256xf32>>
// CHECK: lms.recompute
// CHECK: lms.yield
// CHECK: lms.swap_in %[[H]] : !lms.host<tensor<64x256xf32>> -> tensor<64x256xf32>

// RUN: mlir-opt %lms_src_root/examples/swapped_mlp.mlir \
// RUN:   --load-dialect-plugin=%lms_lib_dir/LMSDialectPlugin.so \
// RUN:   --load-pass-plugin=%lms_lib_dir/LMSPassPlugin.so \
// RUN:   -p 'builtin.module(lms-inline-recomputes,one-shot-bufferize{bufferize-function-boundaries})' \
// RUN:   | FileCheck %s --check-prefix=BUF
// BUF: %[[H:.*]] = lms.swap_out %{{.*}} : memref<64x256xf32, {{.*}}> -> !lms.host<memref<64x256xf32>>
// BUF: lms.swap_in %[[H]] : !lms.host<memref<64x256xf32>> -> memref<64x256xf32>
// BUF-NOT: bufferization.to_tensor

// Without the plugin, upstream mlir-opt does not know the dialect.
// RUN: not mlir-opt %lms_src_root/examples/swapped_mlp.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPLUGIN
// NOPLUGIN: error: Dialect `lms' not found for custom op 'lms.swap_out'

// A missing plugin file is reported.
// RUN: not mlir-opt %lms_src_root/examples/swapped_mlp.mlir \
// RUN:   --load-dialect-plugin=%lms_lib_dir/NoSuchPlugin.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: NoSuchPlugin.so
