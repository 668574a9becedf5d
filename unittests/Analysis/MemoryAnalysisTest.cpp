//===- MemoryAnalysisTest.cpp - The analyses through getAnalysis<> --------===//
//
// A pass obtains BufferLiveness and MemoryPeakAnalysis with getAnalysis<>()
// on a function, as any pass of a host compiler would.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

/// What the test pass saw.
struct Observed {
  uint64_t peak = 0;
  std::string peakOp;
  std::vector<uint64_t> liveAtPeak;
  size_t liveInAtExp = 0, dyingAtExp = 0;
  bool valid = false;
  int runs = 0;
};

struct ObservingPass
    : public PassWrapper<ObservingPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ObservingPass)
  explicit ObservingPass(Observed &observed) : observed(observed) {}
  StringRef getArgument() const final { return "test-observe-memory"; }

  void runOnOperation() override {
    auto &peak = getAnalysis<mlir::lms::MemoryPeakAnalysis>();
    auto &liveness = getAnalysis<mlir::lms::BufferLiveness>();
    observed.valid = peak.isValid() && liveness.isValid();
    ++observed.runs;
    if (!observed.valid)
      return signalPassFailure();
    observed.peak = peak.getPeakBytes();
    observed.peakOp = peak.getPeakOp()->getName().getStringRef().str();
    for (auto [value, bytes] : peak.getLiveAtPeak())
      observed.liveAtPeak.push_back(bytes);
    getOperation().walk([&](linalg::ExpOp exp) {
      observed.liveInAtExp = liveness.getLiveIn(exp).size();
      observed.dyingAtExp = liveness.getDying(exp).size();
    });
    markAllAnalysesPreserved();
  }
  Observed &observed;
};

class MemoryAnalysisTest : public ::testing::Test {
protected:
  MemoryAnalysisTest() {
    registry.insert<func::FuncDialect, linalg::LinalgDialect,
                    tensor::TensorDialect, mlir::lms::LMSDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  DialectRegistry registry;
  MLIRContext context;
};

} // namespace

TEST_F(MemoryAnalysisTest, PassesGetTheAnalysesFromTheManager) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%a: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %x = linalg.exp ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %x : tensor<16xf32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  Observed observed;
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<ObservingPass>(observed));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(observed.valid);
  // %a (64) and the empty tensor (64) are live at the peak, reached when the
  // output is allocated.
  EXPECT_EQ(observed.peak, 128u);
  EXPECT_EQ(observed.peakOp, "tensor.empty");
  EXPECT_EQ(observed.liveAtPeak, (std::vector<uint64_t>{64, 64}));
  // Before the exp: %a and the output buffer; %a dies there.
  EXPECT_EQ(observed.liveInAtExp, 2u);
  EXPECT_EQ(observed.dyingAtExp, 1u);
}

TEST_F(MemoryAnalysisTest, InvalidFunctionsFailThePassWithADiagnostic) {
  context.allowUnregisteredDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  Observed observed;
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(std::make_unique<ObservingPass>(observed));
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_FALSE(observed.valid);
  EXPECT_NE(diagnostics.find("its shape is dynamic"), std::string::npos);
}
