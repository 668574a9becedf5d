//===- Pipelines.cpp - LMS pass pipelines ---------------------------------===//

#include "LMS/Pipelines/Pipelines.h"
#include "LMS/Conversion/Passes.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::lms;

/// Planning (optional) and everything up to the GPU-dialect copies.
static void buildCommonPrefix(OpPassManager &pm, const std::string &budget,
                              const std::string &device, bool computeOnGPU) {
  if (!budget.empty()) {
    LMSInsertSwapsOptions swaps;
    swaps.budget = budget;
    swaps.device = device;
    pm.addPass(createLMSInsertSwaps(swaps));
  }
  pm.addPass(createLMSInlineRecomputes());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createLMSDeallocate());
  ConvertLMSToGPUOptions toGPU;
  toGPU.copyHostCallOperands = computeOnGPU;
  pm.addPass(createConvertLMSToGPU(toGPU));
}

void mlir::lms::buildLMSHostPipeline(OpPassManager &pm,
                                     const LMSHostPipelineOptions &options) {
  buildCommonPrefix(pm, options.budget, options.device,
                    /*computeOnGPU=*/false);
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::lms::buildLMSGPUPipeline(OpPassManager &pm,
                                    const LMSGPUPipelineOptions &options) {
  buildCommonPrefix(pm, options.budget, options.device,
                    /*computeOnGPU=*/true);
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createGpuMapParallelLoopsPass());
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::lms::registerLMSPipelines() {
  PassPipelineRegistration<LMSHostPipelineOptions>(
      "lms-host-pipeline",
      "From tensors to LLVM with compute on the CPU and device memory through "
      "the LMS runtime: [swap planning], recompute inlining, one-shot "
      "bufferization, --lms-deallocate, --convert-lms-to-gpu, lowering to LLVM",
      buildLMSHostPipeline);
  PassPipelineRegistration<LMSGPUPipelineOptions>(
      "lms-gpu-pipeline",
      "From tensors to LLVM with compute in GPU kernels (NVVM): [swap "
      "planning], recompute inlining, one-shot bufferization, "
      "--lms-deallocate, --convert-lms-to-gpu, parallel loops to kernels, "
      "gpu-lower-to-nvvm-pipeline",
      buildLMSGPUPipeline);
}
