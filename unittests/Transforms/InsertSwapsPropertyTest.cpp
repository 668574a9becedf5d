//===- InsertSwapsPropertyTest.cpp - --lms-insert-swaps on random IR ------===//
//
// Thousands of seeded random functions on tensors (unknown ops, in-place
// linalg ops, views, constants as torch-mlir writes them, shared zero-filled
// inits, calls of one-op helpers with values used again) and random budgets
// between the smallest feasible and the peak: after the pass the module
// verifies, its analysed peak fits the budget, and --lms-strip gives back
// the original program.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/Strip.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <random>
#include <string>

using namespace mlir;

namespace {

class RandomProgram {
public:
  RandomProgram(MLIRContext &context, std::mt19937 &rng)
      : context(context), rng(rng), builder(&context),
        loc(builder.getUnknownLoc()) {}

  OwningOpRef<ModuleOp> build() {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    // One-op helpers, as ByteIR outlines them: exp of each size.
    builder.setInsertionPointToEnd(module->getBody());
    for (int64_t size : sizes) {
      auto type = RankedTensorType::get({size}, builder.getF32Type());
      auto helper =
          func::FuncOp::create(builder, loc, "helper" + std::to_string(size),
                               builder.getFunctionType({type}, {type}));
      helper.setPrivate();
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToEnd(helper.addEntryBlock());
      Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType());
      auto exp = linalg::ExpOp::create(
          builder, loc, ValueRange{helper.getArgument(0)}, ValueRange{empty});
      func::ReturnOp::create(builder, loc, exp->getResults());
    }
    builder.setInsertionPointToEnd(module->getBody());
    std::uniform_int_distribution<int> numArgs(1, 3), numOps(4, 30);
    SmallVector<Type> argTypes;
    for (int i = 0, n = numArgs(rng); i < n; ++i)
      argTypes.push_back(randomType());
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType(argTypes, {}));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    values.assign(body->getArguments().begin(), body->getArguments().end());
    for (int i = 0, n = numOps(rng); i < n; ++i)
      addOp();
    // Return the last value and one from the middle.
    SmallVector<Value> returned = {values.back()};
    if (values.size() > 2)
      returned.push_back(values[values.size() / 2]);
    func::ReturnOp::create(builder, loc, returned);
    func.setFunctionType(
        builder.getFunctionType(argTypes, ValueRange(returned).getTypes()));
    return module;
  }

private:
  static constexpr int64_t sizes[] = {16, 64, 256, 1024};

  RankedTensorType randomType() {
    std::uniform_int_distribution<int> pick(0, 3);
    return RankedTensorType::get({sizes[pick(rng)]}, builder.getF32Type());
  }

  /// An existing value, usually recent, sometimes far back (gaps).
  Value pickValue() {
    std::uniform_int_distribution<int> coin(0, 3);
    size_t window =
        coin(rng) == 0 ? values.size() : std::min<size_t>(3, values.size());
    std::uniform_int_distribution<size_t> pick(values.size() - window,
                                               values.size() - 1);
    return values[pick(rng)];
  }

  void addOp() {
    std::uniform_int_distribution<int> kind(0, 13);
    int k = kind(rng);
    if (k == 10) {
      // A constant, dense or splat, as torch-mlir writes weights.
      RankedTensorType type = randomType();
      std::uniform_int_distribution<int> coin(0, 1);
      Attribute value;
      if (coin(rng)) {
        value = DenseElementsAttr::get(type, builder.getF32FloatAttr(0.5f));
      } else {
        SmallVector<float> data(type.getNumElements());
        for (size_t i = 0; i < data.size(); ++i)
          data[i] = static_cast<float>(i % 7) / 8;
        value = DenseElementsAttr::get(type, ArrayRef<float>(data));
      }
      values.push_back(
          arith::ConstantOp::create(builder, loc, cast<TypedAttr>(value)));
      return;
    }
    if (k == 11) {
      // A zero-filled init, which later exps may share as their outs.
      RankedTensorType type = randomType();
      Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType());
      Value zero =
          arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0));
      values.push_back(linalg::FillOp::create(builder, loc, ValueRange{zero},
                                              ValueRange{empty})
                           ->getResult(0));
      return;
    }
    if (k >= 12) {
      // A call of a helper; the operand may be used again later.
      Value operand = pickValue();
      auto type = cast<RankedTensorType>(operand.getType());
      if (!llvm::is_contained(sizes, type.getDimSize(0)))
        return;
      auto call = func::CallOp::create(
          builder, loc, "helper" + std::to_string(type.getDimSize(0)),
          TypeRange{type}, ValueRange{operand});
      values.push_back(call.getResult(0));
      return;
    }
    if (k <= 5) {
      // An unknown op: 1-3 operands, 1-2 results of random sizes.
      std::uniform_int_distribution<int> numOperands(1, 3), numResults(1, 2);
      SmallVector<Value> operands;
      for (int i = 0, n = numOperands(rng); i < n; ++i)
        operands.push_back(pickValue());
      SmallVector<Type> results;
      for (int i = 0, n = numResults(rng); i < n; ++i)
        results.push_back(randomType());
      OperationState state(loc, "test.op");
      state.addOperands(operands);
      state.addTypes(results);
      std::uniform_int_distribution<int> flops(1, 1000000);
      state.addAttribute("lms.cost", builder.getI64IntegerAttr(flops(rng)));
      Operation *op = builder.create(state);
      values.append(op->result_begin(), op->result_end());
    } else if (k <= 8) {
      // linalg.exp into an init of the same shape: an earlier value (in place
      // when it is not used later) or a fresh tensor.empty.
      Value input = pickValue();
      auto type = cast<RankedTensorType>(input.getType());
      Value init;
      for (Value v : llvm::reverse(values))
        if (v.getType() == type && v != input && kind(rng) < 5) {
          init = v;
          break;
        }
      if (!init) {
        init = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                       type.getElementType());
        values.push_back(init);
      }
      auto exp = linalg::ExpOp::create(builder, loc, ValueRange{input},
                                       ValueRange{init});
      values.push_back(exp->getResult(0));
    } else {
      // A view: the first half of a value (of at least 2 elements).
      Value source = pickValue();
      auto type = cast<RankedTensorType>(source.getType());
      int64_t half = type.getDimSize(0) / 2;
      if (half == 0)
        return;
      auto slice = tensor::ExtractSliceOp::create(
          builder, loc, source, ArrayRef<OpFoldResult>{builder.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(half)},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
      values.push_back(slice.getResult());
    }
  }

  MLIRContext &context;
  std::mt19937 &rng;
  OpBuilder builder;
  Location loc;
  SmallVector<Value> values;
};

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

} // namespace

TEST(InsertSwapsProperty, RandomProgramsFitVerifyAndStrip) {
  DialectRegistry registry;
  registry
      .insert<func::FuncDialect, tensor::TensorDialect, linalg::LinalgDialect,
              arith::ArithDialect, math::MathDialect, mlir::lms::LMSDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.allowUnregisteredDialects();
  context.printOpOnDiagnostic(false);

  // LMS_PROPERTY_SEED and LMS_PROPERTY_TRIALS explore further than CI does.
  const char *seedText = getenv("LMS_PROPERTY_SEED");
  const char *trialsText = getenv("LMS_PROPERTY_TRIALS");
  std::mt19937 rng(seedText ? std::stoul(seedText) : 1130);
  int swappedPrograms = 0;
  const int trials = trialsText ? std::stoi(trialsText) : 1500;
  for (int trial = 0; trial < trials; ++trial) {
    RandomProgram generator(context, rng);
    OwningOpRef<ModuleOp> module = generator.build();
    ASSERT_TRUE(succeeded(verify(*module))) << "trial " << trial;
    std::string original = print(*module);
    auto func = *llvm::find_if(module->getOps<func::FuncOp>(),
                               [](func::FuncOp f) { return !f.isPrivate(); });

    FailureOr<mlir::lms::FunctionGraph> graph =
        mlir::lms::FunctionGraph::build(func);
    ASSERT_TRUE(succeeded(graph));
    mlir::lms::SwapCandidates candidates(*graph);
    ::lms::SwapOptions options;
    options.valueAfterGap = [&](::lms::TensorIndex t, ::lms::OpIndex a,
                                ::lms::OpIndex b) {
      return candidates.valueAfterGap(t, a, b);
    };
    options.canReuseAfter = [&](::lms::TensorIndex t, ::lms::OpIndex a) {
      return candidates.canReuseAfter(t, a);
    };
    uint64_t peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
    uint64_t smallest =
        ::lms::smallestSwapPeak(graph->getGraph(), options).first;
    ASSERT_LE(smallest, peak);
    std::uniform_int_distribution<uint64_t> pick(smallest, peak);
    uint64_t budget = pick(rng);

    // The budget of @f alone (the helpers it calls are planned inside what
    // is left at their call sites).
    func->setAttr(mlir::lms::LMSDialect::getBudgetAttrName(),
                  IntegerAttr::get(IntegerType::get(&context, 64), budget));
    // Budgets drawn between the live bytes' smallest feasible peak and the
    // peak: planned on live bytes (arena=false).
    PassManager pm(&context);
    mlir::lms::LMSInsertSwapsOptions passOptions;
    passOptions.arena = false;
    pm.addPass(mlir::lms::createLMSInsertSwaps(passOptions));
    ASSERT_TRUE(succeeded(pm.run(*module)))
        << "trial " << trial << ": budget " << budget << " in [" << smallest
        << ", " << peak << "]\n"
        << original;
    ASSERT_TRUE(succeeded(verify(*module))) << "trial " << trial;

    FailureOr<mlir::lms::FunctionGraph> after =
        mlir::lms::FunctionGraph::build(func);
    ASSERT_TRUE(succeeded(after));
    uint64_t peakAfter = ::lms::evaluateSchedule(after->getGraph()).peakBytes;
    ASSERT_LE(peakAfter, budget) << "trial " << trial;
    bool swapped = false;
    func.walk([&](mlir::lms::SwapInOp) { swapped = true; });
    swappedPrograms += swapped;

    mlir::lms::stripLMSOps(*module);
    func->removeAttr(mlir::lms::LMSDialect::getBudgetAttrName());
    ASSERT_EQ(print(*module), original) << "trial " << trial;
  }
  // Most budgets below the peak need swaps.
  EXPECT_GT(swappedPrograms, trials / 2);
}
