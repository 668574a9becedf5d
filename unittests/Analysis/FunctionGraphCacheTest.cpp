//===- FunctionGraphCacheTest.cpp - The shared analysis cache -------------===//
//
// A planning pass builds the graphs of a module's functions with one
// CallSummaryCache: the in-place decisions, symbol tables and callee
// summaries are shared, and a build of a function that was rewritten since
// the decisions were made analyses the module again. Across passes, the
// module's graph analysis (ModuleGraphAnalysis) keeps the graphs while the
// passes preserve it.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Memory.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::lms;

namespace {

/// @main writes the result of an exp into its argument's buffer (in place:
/// the argument is not read after it); the rewrite below returns the
/// argument too, which makes bufferization copy it first.
constexpr const char *kModule = R"mlir(
func.func @main(%a: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %x = linalg.exp ins(%a : tensor<1024xf32>) outs(%a : tensor<1024xf32>) -> tensor<1024xf32>
  %y = func.call @twice(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %y, %y : tensor<1024xf32>, tensor<1024xf32>
}
func.func private @twice(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.add ins(%a, %a : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %x : tensor<1024xf32>
}
)mlir";

/// Sets an environment variable for a scope (death tests in the threadsafe
/// style run the test again in a new process, which reads it).
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (previous)
      ::setenv(name, previous->c_str(), 1);
    else
      ::unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
};

class FunctionGraphCacheTest : public ::testing::Test {
protected:
  FunctionGraphCacheTest() {
    DialectRegistry registry;
    registry
        .insert<func::FuncDialect, linalg::LinalgDialect, tensor::TensorDialect,
                bufferization::BufferizationDialect, LMSDialect>();
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
    bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
        registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModule, &context);
  }

  /// Options whose builds share one cache for `access`.
  static GraphOptions withCache(ModuleAccess access) {
    GraphOptions options;
    options.callSummaries = makeCallSummaryCache(access);
    return options;
  }

  func::FuncOp main() { return module->lookupSymbol<func::FuncOp>("main"); }

  uint64_t peakOf(GraphOptions options) {
    FailureOr<FunctionGraph> graph = FunctionGraph::build(main(), options);
    EXPECT_TRUE(succeeded(graph));
    if (failed(graph))
      return 0;
    return ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
  }

  /// @main's graph as text: each op's tensors, each tensor's bytes and
  /// producer (a copy, or an operand passed in place, differs).
  std::string graphOf(GraphOptions options) {
    FailureOr<FunctionGraph> graph = FunctionGraph::build(main(), options);
    EXPECT_TRUE(succeeded(graph));
    std::string text;
    llvm::raw_string_ostream os(text);
    if (failed(graph))
      return text;
    const ::lms::Graph &g = graph->getGraph();
    for (const ::lms::Op &op : g.getOps()) {
      os << op.name << ":";
      for (auto t : op.inputs)
        os << " " << t;
      os << " ->";
      for (auto t : op.outputs)
        os << " " << t;
      os << "\n";
    }
    for (const ::lms::Tensor &tensor : g.getTensors())
      os << tensor.name << " " << tensor.bytes << " " << tensor.producer
         << "\n";
    return text;
  }

  /// Makes @main return its argument as well (so the exp cannot write it).
  void returnArgumentToo() {
    Operation *ret = main().getBody().front().getTerminator();
    ret->setOperand(1, main().getArgument(0));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(FunctionGraphCacheTest, RewrittenFunctionIsAnalysedAgain) {
  ASSERT_TRUE(module);
  GraphOptions options = withCache(ModuleAccess::RewritesFunctions);
  uint64_t before = peakOf(options);
  returnArgumentToo();
  uint64_t after = peakOf(options);
  GraphOptions fresh;
  // The copy of the argument is a buffer more: the stale decision (in place)
  // would leave the peak as it was.
  EXPECT_EQ(after, peakOf(fresh));
  EXPECT_GT(after, before);
}

TEST_F(FunctionGraphCacheTest, CheckingModeCatchesAChangeTheCacheMissed) {
  ASSERT_TRUE(module);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A read-only cache kept across a rewrite (a pass that broke its word):
  // the checking mode compares with a build without the cache and aborts.
  ScopedEnv check("LMS_CHECK_ANALYSIS_CACHE", "1");
  EXPECT_DEATH(
      {
        GraphOptions options = withCache(ModuleAccess::ReadOnly);
        (void)peakOf(options);
        returnArgumentToo();
        (void)peakOf(options);
      },
      "the graph of @main built with the pass's analysis cache differs from "
      "one built without it");
}

/// @main writes %b's exp into %a while %y, what @id returns, is still to
/// be read: bufferization copies %a for the call while @id returns its
/// argument, not once it returns a buffer of its own (a decision the graph
/// leaves to bufferization: the graphs agree either way). The @pad
/// functions make @id and its callers a small part of the module, so that
/// a change to @id analyses it and then @main without the rest.
constexpr const char *kCallerModule = R"mlir(
func.func @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %y = func.call @id(%a) : (tensor<1024xf32>) -> tensor<1024xf32>
  %w = linalg.exp ins(%b : tensor<1024xf32>) outs(%a : tensor<1024xf32>) -> tensor<1024xf32>
  return %w, %y : tensor<1024xf32>, tensor<1024xf32>
}
func.func private @id(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %x = linalg.exp ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %a : tensor<1024xf32>
}
func.func private @pad0(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func private @pad1(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func private @pad2(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func private @pad3(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func private @pad4(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func private @pad5(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
)mlir";

TEST_F(FunctionGraphCacheTest, InvalidCheckSettingIsRejected) {
  ASSERT_TRUE(module);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ScopedEnv check("LMS_CHECK_ANALYSIS_CACHE", "yes");
  EXPECT_DEATH(
      {
        GraphOptions options = withCache(ModuleAccess::ReadOnly);
        (void)peakOf(options);
      },
      "LMS_CHECK_ANALYSIS_CACHE must be 1 or 0, not 'yes'");
}

TEST_F(FunctionGraphCacheTest, CallersOfARewrittenCalleeAreAnalysedAgain) {
  module = parseSourceString<ModuleOp>(kCallerModule, &context);
  ASSERT_TRUE(module);
  auto id = module->lookupSymbol<func::FuncOp>("id");
  GraphOptions options = withCache(ModuleAccess::RewritesFunctions);
  (void)graphOf(options);
  // @id now returns its exp: a buffer of its own.
  Operation *ret = id.getBody().front().getTerminator();
  ret->setOperand(
      0, ret->getBlock()->getOperations().front().getNextNode()->getResult(0));
  // Its summary was made before (by @main's build): forgotten, as a pass
  // that rewrote a summarized callee must.
  forgetCallSummaries(*options.callSummaries);
  ASSERT_TRUE(succeeded(FunctionGraph::build(id, options)));
  std::string after = graphOf(options);
  GraphOptions fresh;
  // @id and then @main are analysed alone (with their callees, the @pad
  // functions as nothing), and agree with the analysis of the whole module.
  EXPECT_EQ(after, graphOf(fresh));
}

/// What a reading pass saw of the module's graph analysis.
struct GraphRequests {
  unsigned built = 0, reused = 0;
  uint64_t mainPeak = 0;
};

/// Reads the graph of every function through the module's graph analysis
/// and changes nothing (as --lms-print-liveness does).
struct ReadingPass : public PassWrapper<ReadingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReadingPass)
  ReadingPass(GraphRequests &seen, GraphOptions options)
      : seen(seen), options(std::move(options)) {}

  void runOnOperation() override {
    auto &graphs = getAnalysis<ModuleGraphAnalysis>();
    unsigned built = graphs.getNumBuilt(), reused = graphs.getNumReused();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<const FunctionGraph *> graph = graphs.getGraph(func, options);
      if (failed(graph))
        return signalPassFailure();
      if (func.getName() == "main")
        seen.mainPeak = ::lms::evaluateSchedule((*graph)->getGraph()).peakBytes;
    }
    seen.built = graphs.getNumBuilt() - built;
    seen.reused = graphs.getNumReused() - reused;
    markAllAnalysesPreserved();
  }
  GraphRequests &seen;
  GraphOptions options;
};

/// Makes @main return its argument too (bufferization then copies it
/// before the exp writes it); `preserve`: says, wrongly, that it changed
/// nothing.
struct RewritingPass
    : public PassWrapper<RewritingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RewritingPass)
  explicit RewritingPass(bool preserve) : preserve(preserve) {}

  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    Operation *ret = main.getBody().front().getTerminator();
    ret->setOperand(1, main.getArgument(0));
    if (preserve)
      markAllAnalysesPreserved();
  }
  bool preserve;
};

class ModuleGraphAnalysisTest : public FunctionGraphCacheTest {};

TEST_F(ModuleGraphAnalysisTest, GraphsAreKeptAcrossPassesThatPreserveThem) {
  ASSERT_TRUE(module);
  GraphRequests first, second;
  PassManager pm(&context);
  pm.addPass(std::make_unique<ReadingPass>(first, GraphOptions()));
  pm.addPass(std::make_unique<ReadingPass>(second, GraphOptions()));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  // @main and @twice, built once.
  EXPECT_EQ(first.built, 2u);
  EXPECT_EQ(first.reused, 0u);
  EXPECT_EQ(second.built, 0u);
  EXPECT_EQ(second.reused, 2u);
  EXPECT_EQ(second.mainPeak, first.mainPeak);
  EXPECT_EQ(first.mainPeak, peakOf(GraphOptions()));
}

TEST_F(ModuleGraphAnalysisTest, GraphsAreKeyedByTheirOptions) {
  ASSERT_TRUE(module);
  GraphRequests first, second;
  GraphOptions aligned;
  aligned.alignment = 4096;
  PassManager pm(&context);
  pm.addPass(std::make_unique<ReadingPass>(first, GraphOptions()));
  pm.addPass(std::make_unique<ReadingPass>(second, aligned));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(second.built, 2u);
  EXPECT_EQ(second.reused, 0u);
  EXPECT_EQ(second.mainPeak, peakOf(aligned));
}

TEST_F(ModuleGraphAnalysisTest, APassThatChangesTheModuleDropsThem) {
  ASSERT_TRUE(module);
  GraphRequests first, second;
  PassManager pm(&context);
  pm.addPass(std::make_unique<ReadingPass>(first, GraphOptions()));
  pm.addPass(std::make_unique<RewritingPass>(/*preserve=*/false));
  pm.addPass(std::make_unique<ReadingPass>(second, GraphOptions()));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(second.built, 2u);
  EXPECT_EQ(second.reused, 0u);
  // The copy of the argument is a buffer more.
  EXPECT_GT(second.mainPeak, first.mainPeak);
  EXPECT_EQ(second.mainPeak, peakOf(GraphOptions()));
}

TEST_F(ModuleGraphAnalysisTest, CheckingModeCatchesAPassThatPreservedWrongly) {
  ASSERT_TRUE(module);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ScopedEnv check("LMS_CHECK_ANALYSIS_CACHE", "1");
  EXPECT_DEATH(
      {
        GraphRequests first;
        GraphRequests second;
        PassManager pm(&context);
        pm.addPass(std::make_unique<ReadingPass>(first, GraphOptions()));
        pm.addPass(std::make_unique<RewritingPass>(/*preserve=*/true));
        pm.addPass(std::make_unique<ReadingPass>(second, GraphOptions()));
        (void)pm.run(*module);
      },
      "the graph of @main built with the pass's analysis cache differs from "
      "one built without it .*preserved the module's graph analysis");
}

} // namespace
