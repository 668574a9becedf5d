// RUN: lms-opt %s --lms-print-liveness --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=READ
// RUN: lms-opt %s --lms-print-liveness --lms-insert-swaps="budget=8KiB arena=false" --lms-report-memory=arena=false -o /dev/null | FileCheck %s --check-prefix=REWRITE
// RUN: lms-opt %s --lms-insert-swaps="budget=8KiB arena=false" | lms-opt --pass-pipeline='builtin.module(func.func(lms-strip))' | FileCheck %s --check-prefix=STRIP

// COM: The graphs of a module are an analysis of the module
// COM: (ModuleGraphAnalysis), kept across the passes that preserve it:
// COM: --lms-print-liveness builds them, --lms-report-memory takes them as
// COM: they are (the suite runs with LMS_CHECK_ANALYSIS_CACHE=1, which
// COM: compares every graph handed out again with a fresh build, so a stale
// COM: one aborts). A pass that rewrites the module drops them: after
// COM: --lms-insert-swaps the report is of the rewritten @main.

// READ: // memory of @main: peak 12288 bytes at op 4 func.call
// READ: // memory of @twice: peak 8192 bytes
// READ: @main: peak 12.0 KiB (12288 bytes) at op 4 'func.call'
// READ-NOT: lms ops:
// READ: @twice: peak 8.00 KiB (8192 bytes)

// REWRITE: // memory of @main: peak 12288 bytes at op 4 func.call
// REWRITE: @main: peak 8.00 KiB (8192 bytes)
// REWRITE: lms ops: 1 swap-out, 0 swap-wait, 1 swap-in, 0 recompute
// REWRITE-NEXT: peak without LMS: 12.0 KiB (12288 bytes)
// REWRITE: @twice: peak 8.00 KiB (8192 bytes)

// COM: The passes that need only their own function (--lms-strip,
// COM: --lms-inline-recomputes, --lms-upload-constants) nest on func.func,
// COM: where the pass manager runs functions in parallel.
// STRIP-LABEL: func.func @main
// STRIP-NOT: lms.
// STRIP: call @twice
// STRIP-NOT: lms.
// STRIP: return

func.func @main(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.exp ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %y = linalg.exp ins(%x : tensor<1024xf32>) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %z = func.call @twice(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %w = linalg.add ins(%x, %x : tensor<1024xf32>, tensor<1024xf32>) outs(%z : tensor<1024xf32>) -> tensor<1024xf32>
  return %w : tensor<1024xf32>
}
func.func private @twice(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.add ins(%a, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %x : tensor<1024xf32>
}
