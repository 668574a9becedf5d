//===- Pipelines.cpp - LMS pass pipelines ---------------------------------===//

#include "LMS/Pipelines/Pipelines.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Conversion/Passes.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::lms;

/// Recompute inlining, bufferization (function boundaries, identity layouts)
/// and deallocation after the last use.
static void addBufferization(OpPassManager &pm, bool arena) {
  // What the arena model counts in the caller's arena, recorded for
  // --lms-carve-arena while the IR is the one the analyses saw.
  if (arena) {
    LMSMarkArenaSlotsOptions slots;
    slots.alignment = kArenaAlignment;
    pm.addPass(createLMSMarkArenaSlots(slots));
  }
  pm.addPass(createLMSInlineRecomputes());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createLMSUploadConstants());
  pm.addPass(createLMSDeallocate());
}

/// How the lowering holds device buffers: each its own allocation, or one
/// arena per function (with the budget it must fit, when in bytes).
struct ArenaLowering {
  bool enabled = false;
  std::string budget;
};

/// The lms ops and device buffers to async GPU-dialect copies, and with an
/// arena the buffers carved out of it.
static void addCopies(OpPassManager &pm, bool computeOnGPU,
                      const ArenaLowering &arena) {
  ConvertLMSToGPUOptions toGPU;
  toGPU.copyHostCallOperands = computeOnGPU;
  pm.addPass(createConvertLMSToGPU(toGPU));
  pm.addPass(createLMSMemRefToGPU());
  if (!arena.enabled)
    return;
  LMSCarveArenaOptions carve;
  carve.alignment = kArenaAlignment;
  // A percentage budget was resolved by the planner; only bytes bind here.
  llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(arena.budget);
  if (size && !size->isPercent && !arena.budget.empty())
    carve.budget = arena.budget;
  if (!size)
    llvm::consumeError(size.takeError());
  pm.addPass(createLMSCarveArena(carve));
}

/// --lms-insert-swaps when the pipeline is given a budget.
static void addSwapPlanning(OpPassManager &pm, const std::string &budget,
                            const std::string &device, bool arena) {
  if (budget.empty())
    return;
  LMSInsertSwapsOptions swaps;
  swaps.budget = budget;
  swaps.device = device;
  swaps.alignment = kArenaAlignment;
  swaps.arena = arena;
  pm.addPass(createLMSInsertSwaps(swaps));
}

/// Compute on the CPU: everything to the LLVM dialect.
static void addHostLowering(OpPassManager &pm,
                            const ArenaLowering &arena = {}) {
  addBufferization(pm, arena.enabled);
  addCopies(pm, /*computeOnGPU=*/false, arena);
  pm.addPass(createConvertLinalgToLoopsPass());
  // Subviews with dynamic offsets (slices indexed by a loop variable) expand
  // into affine.apply: expand first, then lower affine.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM lowering (math.erf in GELU) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
/// Drops the compile times that the NVVM serializer records in each
/// `gpu.object`'s properties (`LLVMIRToISATimeInMs`, `ISAToBinaryTimeInMs`),
/// so that the same input gives the same output on any machine under any
/// load.
struct DropCompileTimesPass
    : public PassWrapper<DropCompileTimesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropCompileTimesPass)
  StringRef getArgument() const override { return "lms-drop-compile-times"; }
  StringRef getDescription() const override {
    return "Drop the compile times recorded in gpu.object properties";
  }
  void runOnOperation() override {
    getOperation().walk([](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (Attribute attr : binary.getObjects()) {
        auto object = dyn_cast<gpu::ObjectAttr>(attr);
        DictionaryAttr properties = object ? object.getProperties() : nullptr;
        if (!properties) {
          objects.push_back(attr);
          continue;
        }
        SmallVector<NamedAttribute> kept;
        for (NamedAttribute property : properties)
          if (!property.getName().getValue().ends_with("TimeInMs"))
            kept.push_back(property);
        objects.push_back(gpu::ObjectAttr::get(
            object.getContext(), object.getTarget(), object.getFormat(),
            object.getObject(), DictionaryAttr::get(object.getContext(), kept),
            object.getKernels()));
      }
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};
} // namespace

namespace {
/// Puts each linalg op on buffers that has no parallel loop (a full
/// reduction, an op on 0-d buffers) into a parallel loop of one iteration,
/// so that it becomes a kernel of one thread: lowered as it is, its loops
/// stay sequential host code, which reads device buffers on the host (a
/// segmentation fault on a GPU, where device memory is not host memory; the
/// emulated device could not tell). Ops already inside a parallel loop or a
/// kernel are left alone.
struct ReductionsToKernelsPass
    : public PassWrapper<ReductionsToKernelsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReductionsToKernelsPass)
  StringRef getArgument() const override { return "lms-reductions-to-kernels"; }
  StringRef getDescription() const override {
    return "Put linalg ops without parallel loops into a one-iteration "
           "scf.parallel (a one-thread kernel)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, scf::SCFDialect>();
  }
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumParallelLoops() == 0 &&
          !op->getParentOfType<scf::ParallelOp>() &&
          !op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
      op->moveBefore(parallel.getBody()->getTerminator());
    }
  }
};
} // namespace

/// Compute in GPU kernels: linalg to parallel loops to gpu.launch before the
/// lms ops are lowered, so that a kernel reading a swapped-in buffer waits
/// for the copy on its own stream; then upstream's NVVM pipeline.
static void addGPULowering(OpPassManager &pm, const std::string &chip,
                           const std::string &features,
                           const std::string &format,
                           const ArenaLowering &arena = {}) {
  addBufferization(pm, arena.enabled);
  pm.addNestedPass<func::FuncOp>(std::make_unique<ReductionsToKernelsPass>());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addPass(createConvertParallelLoopToGpuPass());
  addCopies(pm, /*computeOnGPU=*/true, arena);
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = chip;
  nvvm.cubinFeatures = features;
  nvvm.cubinFormat = format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  pm.addPass(std::make_unique<DropCompileTimesPass>());
}

void mlir::lms::buildLMSPipeline(OpPassManager &pm,
                                 const LMSPipelineOptions &options) {
  // Without a lowering the planning passes choose (256 with an arena, as
  // it will be lowered; exact bytes without).
  uint64_t alignment = options.lower == LMSLowering::None ? 0 : kArenaAlignment;
  // What the schedule and the report count: as the planners do.
  uint64_t countedAlignment = planningAlignment(alignment, options.arena);
  // The host's arena holds the entry functions' arguments: marked before
  // the planners, which then plan against that arena.
  if (options.arenaArguments)
    pm.addPass(createLMSMarkArenaArguments());
  switch (options.strategy) {
  case LMSStrategy::Plan: {
    LMSPlanOptions plan;
    plan.budget = options.budget;
    plan.device = options.device;
    plan.alignment = alignment;
    plan.arena = options.arena;
    plan.hostBudget = options.hostBudget;
    plan.split = options.split;
    pm.addPass(createLMSPlan(plan));
    break;
  }
  case LMSStrategy::Swap: {
    LMSInsertSwapsOptions swaps;
    swaps.budget = options.budget;
    swaps.device = options.device;
    swaps.alignment = alignment;
    swaps.arena = options.arena;
    swaps.hostBudget = options.hostBudget;
    pm.addPass(createLMSInsertSwaps(swaps));
    break;
  }
  case LMSStrategy::Remat: {
    LMSRematerializeOptions remat;
    remat.budget = options.budget;
    remat.device = options.device;
    remat.alignment = alignment;
    remat.arena = options.arena;
    pm.addPass(createLMSRematerialize(remat));
    break;
  }
  case LMSStrategy::Schedule: {
    LMSScheduleOptions schedule;
    schedule.alignment = countedAlignment;
    pm.addPass(createLMSSchedule(schedule));
    break;
  }
  case LMSStrategy::None:
    break;
  }
  if (!options.report.empty()) {
    LMSReportMemoryOptions report;
    report.format = ReportFormat::Json;
    report.file = options.report;
    report.device = options.device;
    report.budget = options.budget;
    report.alignment = countedAlignment;
    pm.addPass(createLMSReportMemory(report));
  }
  switch (options.lower) {
  case LMSLowering::None:
    break;
  case LMSLowering::Host:
    addHostLowering(pm, {options.arena, options.budget});
    break;
  case LMSLowering::GPU:
    addGPULowering(pm, options.chip, options.features, "isa",
                   {options.arena, options.budget});
    break;
  }
}

void mlir::lms::buildLMSHostPipeline(OpPassManager &pm,
                                     const LMSHostPipelineOptions &options) {
  addSwapPlanning(pm, options.budget, options.device, options.arena);
  addHostLowering(pm, {options.arena, options.budget});
}

void mlir::lms::buildLMSGPUPipeline(OpPassManager &pm,
                                    const LMSGPUPipelineOptions &options) {
  addSwapPlanning(pm, options.budget, options.device, options.arena);
  addGPULowering(pm, options.chip, options.features, options.format,
                 {options.arena, options.budget});
}

void mlir::lms::registerLMSPipelines() {
  PassPipelineRegistration<LMSPipelineOptions>(
      "lms-pipeline",
      "The LMS flow in one pipeline: planning and rewrite "
      "(strategy=plan|schedule|"
      "swap|remat|none) for the budget, an optional memory report, and an "
      "optional lowering (lower=none|host|gpu)",
      buildLMSPipeline);
  PassPipelineRegistration<LMSHostPipelineOptions>(
      "lms-host-pipeline",
      "From tensors to LLVM with compute on the CPU and device memory through "
      "the LMS runtime: [swap planning], [--lms-mark-arena-slots], "
      "recompute inlining, one-shot bufferization, --lms-deallocate, "
      "--convert-lms-to-gpu, --lms-memref-to-gpu, [--lms-carve-arena], "
      "lowering to LLVM",
      buildLMSHostPipeline);
  PassPipelineRegistration<LMSGPUPipelineOptions>(
      "lms-gpu-pipeline",
      "From tensors to LLVM with compute in GPU kernels (NVVM): [swap "
      "planning], [--lms-mark-arena-slots], recompute inlining, one-shot "
      "bufferization, --lms-deallocate, --convert-lms-to-gpu, "
      "--lms-memref-to-gpu, parallel loops to kernels, [--lms-carve-arena], "
      "gpu-lower-to-nvvm-pipeline",
      buildLMSGPUPipeline);
}
