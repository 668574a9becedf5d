//===- Pipelines.h - LMS pass pipelines -------------------------*- C++ -*-===//
//
// Registered pipelines from tensors to LLVM:
//
//   lms-host-pipeline  compute on the CPU, device memory through the LMS
//                      runtime (the emulated device, or CUDA managed by it);
//   lms-gpu-pipeline   compute mapped to GPU kernels (NVVM, sm_90 by default).
//
// Both optionally plan first (`budget=` runs --lms-insert-swaps), then inline
// recomputations, bufferize (function boundaries, identity layouts), free
// buffers after their last use (--lms-deallocate), lower the lms ops and the
// device buffers to async GPU-dialect copies (--convert-lms-to-gpu), and go
// to the LLVM dialect. The GPU pipeline maps linalg to gpu.launch before
// --convert-lms-to-gpu, so that kernels reading swapped-in buffers wait for
// the copy on their stream rather than behind a host wait.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_PIPELINES_PIPELINES_H
#define LMS_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace lms {

struct LMSHostPipelineOptions
    : public PassPipelineOptions<LMSHostPipelineOptions> {
  PassOptions::Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Plan swaps first with --lms-insert-swaps and this "
                     "budget (bytes with a unit, or a percentage)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> device{
      *this, "device", llvm::cl::desc("Device preset for the planner"),
      llvm::cl::init("")};
  PassOptions::Option<bool> arena{
      *this, "arena",
      llvm::cl::desc("Carve each function's device buffers out of one arena "
                     "at planned offsets (--lms-carve-arena; a call's "
                     "results in slots of its caller's arena where "
                     "--lms-mark-arena-slots marks them), and make the "
                     "budget bound that arena when planning"),
      llvm::cl::init(true)};
};

struct LMSGPUPipelineOptions
    : public PassPipelineOptions<LMSGPUPipelineOptions> {
  PassOptions::Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Plan swaps first with --lms-insert-swaps and this "
                     "budget (bytes with a unit, or a percentage)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> device{
      *this, "device", llvm::cl::desc("Device preset for the planner"),
      llvm::cl::init("")};
  PassOptions::Option<bool> arena{
      *this, "arena",
      llvm::cl::desc("Carve each function's device buffers out of one arena "
                     "at planned offsets (--lms-carve-arena; a call's "
                     "results in slots of its caller's arena where "
                     "--lms-mark-arena-slots marks them), and make the "
                     "budget bound that arena when planning"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> chip{*this, "chip",
                                        llvm::cl::desc("GPU architecture"),
                                        llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{*this, "features",
                                            llvm::cl::desc("PTX features"),
                                            llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary format: isa (PTX), bin or fatbin"),
      llvm::cl::init("isa")};
};

/// How buildLMSPipeline() fits the budget.
enum class LMSStrategy { Plan, Swap, Remat, Schedule, None };
/// What buildLMSPipeline() does after the rewrite.
enum class LMSLowering { None, Host, GPU };

/// Options of `lms-pipeline` / buildLMSPipeline(): the whole LMS flow a host
/// compiler adds in one call — memory analysis, planning, the rewrite, and
/// (optionally) the lowering to LLVM.
struct LMSPipelineOptions : public PassPipelineOptions<LMSPipelineOptions> {
  PassOptions::Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Device-memory budget (bytes with a unit, or a "
                     "percentage of each function's peak); empty: a "
                     "function's lms.budget, then --lms-budget, then the "
                     "device's capacity"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> device{
      *this, "device",
      llvm::cl::desc("Device preset (v100-16g, a100-40g, h200, ...); empty: "
                     "the module's DLTI spec, else the default device"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> hostBudget{
      *this, "host-budget",
      llvm::cl::desc("Host memory an offloading plan may hold at once "
                     "(bytes with a unit); empty: --lms-host-budget, then "
                     "the device preset's host memory"),
      llvm::cl::init("")};
  PassOptions::Option<LMSStrategy> strategy{
      *this, "strategy", llvm::cl::desc("How to fit the budget"),
      llvm::cl::init(LMSStrategy::Plan),
      llvm::cl::values(
          clEnumValN(LMSStrategy::Plan, "plan",
                     "the combined planner (--lms-plan): offload, recompute "
                     "or a mix, whichever the simulator times fastest"),
          clEnumValN(LMSStrategy::Swap, "swap",
                     "offload to host memory (--lms-insert-swaps)"),
          clEnumValN(LMSStrategy::Remat, "remat",
                     "recompute (--lms-rematerialize)"),
          clEnumValN(LMSStrategy::Schedule, "schedule",
                     "only reorder ops for a smaller peak (--lms-schedule); "
                     "the budget is not enforced"),
          clEnumValN(LMSStrategy::None, "none", "no rewrite"))};
  PassOptions::Option<LMSLowering> lower{
      *this, "lower", llvm::cl::desc("What follows the rewrite"),
      llvm::cl::init(LMSLowering::None),
      llvm::cl::values(
          clEnumValN(LMSLowering::None, "none", "stay on tensors with lms ops"),
          clEnumValN(LMSLowering::Host, "host",
                     "lms-host-pipeline's lowering (compute on the CPU)"),
          clEnumValN(LMSLowering::GPU, "gpu",
                     "lms-gpu-pipeline's lowering (compute in NVVM "
                     "kernels)"))};
  PassOptions::Option<bool> split{
      *this, "split",
      llvm::cl::desc("With strategy=plan, split the op that sets the "
                     "smallest feasible budget into loops over slices when "
                     "that budget is above the budget (--lms-split)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> report{
      *this, "report",
      llvm::cl::desc("Write the memory report (JSON) of the rewritten "
                     "program to this file (- for stdout); empty: none"),
      llvm::cl::init("")};
  PassOptions::Option<bool> arena{
      *this, "arena",
      llvm::cl::desc("The budget bounds the arena every device buffer is "
                     "placed in (at an offset), not only the live bytes; "
                     "with a lowering, each function's buffers are carved "
                     "out of one arena (--lms-carve-arena)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> arenaArguments{
      *this, "arena-arguments",
      llvm::cl::desc("The host places the arguments of each entry function "
                     "(public, with buffer arguments, called by no function "
                     "of the module) in the arena it passes "
                     "(--lms-mark-arena-arguments first; the layout is in "
                     "lms.arena_bytes, lms.argument_offsets and "
                     "lms.result_offsets)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (lower=gpu)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (lower=gpu)"),
      llvm::cl::init("+ptx80")};
};

/// Adds the LMS flow to `pm` (a pass manager on builtin.module): planning
/// and rewrite with `options.strategy`, the optional memory report, and the
/// optional lowering:
///
///   LMSPipelineOptions options;
///   options.budget = "12GiB";
///   options.lower = LMSLowering::Host;
///   buildLMSPipeline(pm, options);
void buildLMSPipeline(OpPassManager &pm, const LMSPipelineOptions &options);

void buildLMSHostPipeline(OpPassManager &pm,
                          const LMSHostPipelineOptions &options);
void buildLMSGPUPipeline(OpPassManager &pm,
                         const LMSGPUPipelineOptions &options);

/// Registers lms-pipeline, lms-host-pipeline and lms-gpu-pipeline.
void registerLMSPipelines();

} // namespace lms
} // namespace mlir

#endif // LMS_PIPELINES_PIPELINES_H
