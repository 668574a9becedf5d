/*===-- LMS-c/LMS.h - C API of LMS (large model support) ----------*- C -*-===*\
|*                                                                            *|
|* The C entry points of LMS, on top of MLIR's C API (mlir-c/IR.h,            *|
|* mlir-c/Pass.h): register the `lms` dialect and the LMS passes, and run a   *|
|* pass pipeline (textual, or the LMS flow built from options) on a module.   *|
|* Link libLMS-C.so (it carries MLIR's core C API too).                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LMS_C_LMS_H
#define LMS_C_LMS_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The dialect handle of `lms` (mlirDialectHandleInsertDialect and friends).
 *  It inserts the dialect only; lmsRegisterDialect also adds its interface
 *  models (bufferization), which lowering needs. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(LMS, lms);

/** Adds the `lms` dialect and its interface models to `registry`. */
MLIR_CAPI_EXPORTED void lmsRegisterDialect(MlirDialectRegistry registry);

/** Registers every LMS pass and pipeline (lms-pipeline, lms-host-pipeline,
 *  lms-gpu-pipeline) with the global registry, so that textual pipelines
 *  (mlirParsePassPipeline, lmsRunPassPipeline) can name them. Idempotent. */
MLIR_CAPI_EXPORTED void lmsRegisterPasses(void);

/** Sets the budget the planning passes use when neither a pass option nor a
 *  function's lms.budget gives one (what --lms-budget sets in lms-opt). An
 *  empty string clears it. */
MLIR_CAPI_EXPORTED void lmsSetDefaultBudget(MlirStringRef budget);

/** Options of the LMS flow (lms-pipeline). NULL or "" members take the
 *  defaults: budget from lms.budget / lmsSetDefaultBudget / the device,
 *  device from the module's DLTI spec, strategy "plan", lower "none",
 *  no report. */
typedef struct LMSPipelineOptions {
  const char *budget;   /**< "12GiB", "1000000", "60%" */
  const char *device;   /**< "v100-16g", "h200", ... */
  const char *strategy; /**< "plan" | "swap" | "remat" | "schedule" | "none" */
  const char *lower;    /**< "none" | "host" | "gpu" */
  const char *report;   /**< JSON memory report to this file ("-": stdout) */
  int noArena; /**< nonzero: the budget bounds only the live bytes, and a
                    lowering allocates each buffer on its own; zero (the
                    default): the budget bounds the arena the buffers are
                    placed in, and a lowering carves each function's
                    buffers out of one arena (lmsGetArenaBytes says how
                    large) */
  const char *hostBudget; /**< host memory an offloading plan may hold at
                               once ("64GB"); NULL or "": the device
                               preset's host memory */
  int noSplit; /**< nonzero: strategy "plan" does not split the op that sets
                    the smallest feasible budget into loops over slices */
  int arenaArguments; /**< nonzero: the host allocates each entry function's
                           arena and places in it the arguments the function
                           owns (--lms-mark-arena-arguments): after a lowering
                           the function takes the arena as its last argument
                           (lmsGetArenaBytes), and lmsGetArgumentOffset and
                           lmsGetResultOffset give where its arguments go
                           and its results are */
} LMSPipelineOptions;

/** Adds the LMS flow to `passManager` (on builtin.module). Returns failure,
 *  and calls `errorCallback` with the reason, when an option is invalid. */
MLIR_CAPI_EXPORTED MlirLogicalResult
lmsAddPipeline(MlirOpPassManager passManager, const LMSPipelineOptions *options,
               MlirStringCallback errorCallback, void *userData);

/** Parses `pipeline` (e.g. "builtin.module(lms-insert-swaps{budget=1MiB})")
 *  and runs it on `module`. Parse errors go to `errorCallback`; errors of the
 *  passes go to the context's diagnostic handlers (stderr by default).
 *  Returns failure if parsing or any pass fails. */
MLIR_CAPI_EXPORTED MlirLogicalResult
lmsRunPassPipeline(MlirModule module, MlirStringRef pipeline,
                   MlirStringCallback errorCallback, void *userData);

/** Runs the LMS flow with `options` on `module` (lmsAddPipeline, then run). */
MLIR_CAPI_EXPORTED MlirLogicalResult
lmsRunPipeline(MlirModule module, const LMSPipelineOptions *options,
               MlirStringCallback errorCallback, void *userData);

/** The peak device bytes the LMS memory analysis finds in the function
 *  `symbol` of `module` (after a rewrite: the peak the plan achieves).
 *  Returns -1 when there is no such function or it cannot be analysed (the
 *  reason goes to the diagnostic handlers). */
MLIR_CAPI_EXPORTED int64_t lmsGetPeakBytes(MlirModule module,
                                           MlirStringRef symbol);

/** The device arena the function `symbol` of `module` needs: after a
 *  lowering with `arena`, the size of the one device allocation it carves
 *  its buffers from (what a host allocates once); before, the arena its
 *  analysed buffers need when placed at offsets with the runtime's
 *  256-byte granularity. Returns -1 when there is no such function or it
 *  cannot be analysed (the reason goes to the diagnostic handlers). */
MLIR_CAPI_EXPORTED int64_t lmsGetArenaBytes(MlirModule module,
                                            MlirStringRef symbol);

/** With the host's arena (arenaArguments, lms.arena_arguments), after a
 *  lowering: the offset in the arena at which the host writes argument
 *  `index` (of the function as written, before the lowering dropped it from
 *  the signature) of the function `symbol`, or -1 where that argument stays
 *  an argument (one the function borrows, returns, gives to a callee, or of
 *  dynamic shape). Returns -2 when there is no such function or argument,
 *  or the function has no such layout. */
MLIR_CAPI_EXPORTED int64_t lmsGetArgumentOffset(MlirModule module,
                                                MlirStringRef symbol,
                                                intptr_t index);

/** The same for result `index`: where the host reads it in the arena after
 *  the call, or -1 where it is an allocation of its own (which the host
 *  frees); -2 as for lmsGetArgumentOffset. */
MLIR_CAPI_EXPORTED int64_t lmsGetResultOffset(MlirModule module,
                                              MlirStringRef symbol,
                                              intptr_t index);

#ifdef __cplusplus
}
#endif

#endif /* LMS_C_LMS_H */
