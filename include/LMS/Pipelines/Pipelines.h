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
// to the LLVM dialect.
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
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary format: isa (PTX), bin or fatbin"),
      llvm::cl::init("isa")};
};

void buildLMSHostPipeline(OpPassManager &pm,
                          const LMSHostPipelineOptions &options);
void buildLMSGPUPipeline(OpPassManager &pm,
                         const LMSGPUPipelineOptions &options);

/// Registers lms-host-pipeline and lms-gpu-pipeline.
void registerLMSPipelines();

} // namespace lms
} // namespace mlir

#endif // LMS_PIPELINES_PIPELINES_H
