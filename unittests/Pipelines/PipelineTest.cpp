//===- PipelineTest.cpp - A host builds its pass manager with LMS ---------===//
//
// What a host compiler does: register the dialect, build a PassManager with
// buildLMSPipeline(), run it on the bundled MLP training step, and check the
// result by the memory analysis (fits the budget), by what ops it holds, and
// by the pipeline's textual form.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/InitLMS.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

constexpr uint64_t kPeak = 79822848;   // the MLP's peak without LMS
constexpr uint64_t kBudget = 50331648; // 48 MiB

class PipelineTest : public ::testing::Test {
protected:
  PipelineTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    mlir::lms::registerLMSDialect(registry);
    // lower=gpu serializes kernels: LLVM IR translations.
    mlir::lms::registerLMSGPUTranslations(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parseMLP() {
    return parseSourceFile<ModuleOp>(LMS_SOURCE_DIR "/examples/mlp_train.mlir",
                                     &context);
  }

  uint64_t peakOf(ModuleOp module) {
    auto func = module.lookupSymbol<func::FuncOp>("mlp_step");
    EXPECT_TRUE(func);
    FailureOr<mlir::lms::FunctionGraph> graph =
        mlir::lms::FunctionGraph::build(func);
    EXPECT_TRUE(succeeded(graph));
    return mlir::lms::MemoryPeakAnalysis(*graph).getPeakBytes();
  }

  template <typename OpT> int count(ModuleOp module) {
    int n = 0;
    module.walk([&](OpT) { ++n; });
    return n;
  }

  LogicalResult run(ModuleOp module,
                    const mlir::lms::LMSPipelineOptions &options) {
    PassManager pm(&context);
    mlir::lms::buildLMSPipeline(pm, options);
    return pm.run(module);
  }

  MLIRContext context;
};

TEST_F(PipelineTest, EachStrategyFitsTheBudget) {
  struct Case {
    mlir::lms::LMSStrategy strategy;
    bool swaps, recomputes;
  };
  for (Case c : {Case{mlir::lms::LMSStrategy::Swap, true, false},
                 Case{mlir::lms::LMSStrategy::Remat, false, true},
                 Case{mlir::lms::LMSStrategy::Plan, false, false}}) {
    OwningOpRef<ModuleOp> module = parseMLP();
    ASSERT_TRUE(module);
    ASSERT_EQ(peakOf(*module), kPeak);
    mlir::lms::LMSPipelineOptions options;
    options.budget = "48MiB";
    options.strategy = c.strategy;
    ASSERT_TRUE(succeeded(run(*module, options)));
    EXPECT_LE(peakOf(*module), kBudget);
    if (c.swaps) {
      EXPECT_GT(count<mlir::lms::SwapOutOp>(*module), 0);
    }
    if (c.recomputes) {
      EXPECT_GT(count<mlir::lms::RecomputeOp>(*module), 0);
    }
    // Whatever it chose, the plan rewrote the program.
    EXPECT_GT(count<mlir::lms::SwapOutOp>(*module) +
                  count<mlir::lms::RecomputeOp>(*module),
              0);
  }
}

TEST_F(PipelineTest, StrategyNoneLeavesTheProgram) {
  OwningOpRef<ModuleOp> module = parseMLP();
  ASSERT_TRUE(module);
  mlir::lms::LMSPipelineOptions options;
  options.budget = "48MiB";
  options.strategy = mlir::lms::LMSStrategy::None;
  ASSERT_TRUE(succeeded(run(*module, options)));
  EXPECT_EQ(peakOf(*module), kPeak);
  EXPECT_EQ(count<mlir::lms::SwapOutOp>(*module), 0);
}

TEST_F(PipelineTest, LowersToLLVMWithNothingLeft) {
  OwningOpRef<ModuleOp> module = parseMLP();
  ASSERT_TRUE(module);
  mlir::lms::LMSPipelineOptions options;
  options.budget = "48MiB";
  options.strategy = mlir::lms::LMSStrategy::Swap;
  options.lower = mlir::lms::LMSLowering::Host;
  ASSERT_TRUE(succeeded(run(*module, options)));
  int leftover = 0, llvmFuncs = 0;
  module->walk([&](Operation *op) {
    StringRef ns = op->getName().getDialectNamespace();
    leftover += ns == "lms" || ns == "gpu" || ns == "linalg" || ns == "tensor";
    llvmFuncs += op->getName().getStringRef() == "llvm.func";
  });
  EXPECT_EQ(leftover, 0);
  EXPECT_GT(llvmFuncs, 0);
}

TEST_F(PipelineTest, LowersForTheGPU) {
  OwningOpRef<ModuleOp> module = parseMLP();
  ASSERT_TRUE(module);
  mlir::lms::LMSPipelineOptions options;
  options.budget = "48MiB";
  options.strategy = mlir::lms::LMSStrategy::Swap;
  options.lower = mlir::lms::LMSLowering::GPU;
  ASSERT_TRUE(succeeded(run(*module, options)));
  int leftover = 0, launches = 0, binaries = 0;
  module->walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    StringRef ns = op->getName().getDialectNamespace();
    leftover += ns == "lms" || ns == "linalg" || name == "gpu.memcpy" ||
                name == "gpu.alloc" || name == "gpu.wait";
    launches += name == "gpu.launch_func";
    binaries += name == "gpu.binary";
  });
  EXPECT_EQ(leftover, 0);
  EXPECT_GT(launches, 0);
  EXPECT_GT(binaries, 0); // one per outlined kernel module
}

TEST_F(PipelineTest, ImpossibleBudgetFails) {
  OwningOpRef<ModuleOp> module = parseMLP();
  ASSERT_TRUE(module);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  mlir::lms::LMSPipelineOptions options;
  options.budget = "1KiB";
  EXPECT_TRUE(failed(run(*module, options)));
  EXPECT_NE(diagnostics.find("below the smallest feasible budget"),
            std::string::npos)
      << diagnostics;
}

TEST_F(PipelineTest, TextualFormAndRegistration) {
  mlir::lms::LMSPipelineOptions options;
  options.budget = "12GiB";
  options.strategy = mlir::lms::LMSStrategy::Remat;
  OpPassManager pm("builtin.module");
  mlir::lms::buildLMSPipeline(pm, options);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  EXPECT_NE(text.find("lms-rematerialize"), std::string::npos) << text;
  EXPECT_NE(text.find("budget=12GiB"), std::string::npos) << text;

  // After registration, the passes and the pipeline parse by name; bad
  // option values are rejected.
  mlir::lms::registerLMSPasses();
  mlir::lms::registerLMSPipelines();
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  EXPECT_TRUE(succeeded(
      parsePassPipeline("builtin.module(lms-insert-swaps{budget=1MiB},"
                        "lms-pipeline{strategy=swap lower=host})",
                        errorStream)))
      << errors;
  mlir::lms::LMSPipelineOptions bad;
  EXPECT_TRUE(failed(bad.parseFromString("strategy=bogus", errorStream)));
}

TEST_F(PipelineTest, PlanningKeepsTheFunctionsOps) {
  // A function whose first plans do not fit (test/Transforms/arena-replan.test:
  // the arenas of the first plans are over the budget by fragmentation, two
  // replans; --lms-plan tries several candidates besides). Each plan that is
  // undone is undone in place: every op the function had is still the same
  // op afterwards (a transform script's handles to them stay valid).
  // --lms-plan without splitting (a split makes loops of the ops it slices)
  // or reordering (its plan here would be an order, with no lms op).
  mlir::lms::registerLMSPasses();
  context.allowUnregisteredDialects();
  for (const char *pipeline :
       {"lms-insert-swaps{budget=75 arena=true alignment=1}",
        "lms-plan{budget=75 arena=true alignment=1 split=false "
        "schedule=false}"}) {
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
        LMS_SOURCE_DIR "/test/Transforms/arena-budget.mlir", &context);
    ASSERT_TRUE(module);
    auto step = module->lookupSymbol<func::FuncOp>("frag");
    ASSERT_TRUE(step);
    std::vector<std::pair<Operation *, std::string>> before;
    step.walk([&](Operation *op) {
      before.emplace_back(op, op->getName().getStringRef().str());
    });

    PassManager pm(&context);
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    ASSERT_TRUE(succeeded(parsePassPipeline(pipeline, pm, errorStream)))
        << errors;
    ASSERT_TRUE(succeeded(pm.run(*module))) << pipeline;

    llvm::DenseMap<Operation *, std::string> after;
    step.walk(
        [&](Operation *op) { after[op] = op->getName().getStringRef().str(); });
    unsigned lmsOps = 0;
    step.walk([&](Operation *op) {
      lmsOps += isa<mlir::lms::SwapInOp, mlir::lms::RecomputeOp>(op);
    });
    EXPECT_GT(lmsOps, 0u) << pipeline;
    for (auto &[op, name] : before) {
      auto found = after.find(op);
      ASSERT_NE(found, after.end())
          << pipeline << ": an op of @frag was replaced: " << name;
      EXPECT_EQ(found->second, name);
    }
  }
}

} // namespace
