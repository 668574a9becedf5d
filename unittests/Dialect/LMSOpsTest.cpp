//===- LMSOpsTest.cpp - Unit tests of the lms operations ------------------===//
//
// Checks the memory effects that keep the lms ops from being folded, merged
// or hoisted, while unused ones remain dead code.
//
//===----------------------------------------------------------------------===//

#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::lms;

namespace {

class LMSOpsTest : public ::testing::Test {
protected:
  LMSOpsTest() {
    registry.insert<LMSDialect, func::FuncDialect, tensor::TensorDialect,
                    arith::ArithDialect>();
    context.appendDialectRegistry(registry);
  }

  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  template <typename OpTy> OpTy first(ModuleOp module) {
    OpTy found;
    module.walk([&](OpTy op) {
      if (!found)
        found = op;
    });
    return found;
  }

  DialectRegistry registry;
  MLIRContext context;
};

constexpr llvm::StringLiteral kProgram = R"mlir(
func.func @f(%t: tensor<4xf32>) -> tensor<4xf32> {
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<4xf32>
  %r = lms.recompute (%u) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = tensor.cast %x : tensor<4xf32> to tensor<4xf32>
    lms.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
)mlir";

TEST_F(LMSOpsTest, NoOpIsMemoryEffectFree) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  EXPECT_FALSE(isMemoryEffectFree(first<SwapOutOp>(*module)));
  EXPECT_FALSE(isMemoryEffectFree(first<SwapWaitOp>(*module)));
  EXPECT_FALSE(isMemoryEffectFree(first<SwapInOp>(*module)));
  EXPECT_FALSE(isMemoryEffectFree(first<RecomputeOp>(*module)));
  EXPECT_FALSE(isPure(first<SwapInOp>(*module)));
  EXPECT_FALSE(isPure(first<RecomputeOp>(*module)));
}

TEST_F(LMSOpsTest, EffectsAreOnTheDialectResources) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  auto swapIn = first<SwapInOp>(*module);
  EXPECT_TRUE(hasEffect<MemoryEffects::Allocate>(swapIn.getOperation(),
                                                 swapIn.getResult()));
  SmallVector<MemoryEffects::EffectInstance> effects;
  cast<MemoryEffectOpInterface>(swapIn.getOperation()).getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    EXPECT_FALSE(isa<MemoryEffects::Write>(effect.getEffect()));
    EXPECT_NE(effect.getResource(), SideEffects::DefaultResource::get());
  }
  auto recompute = first<RecomputeOp>(*module);
  effects.clear();
  recompute.getEffects(effects);
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_TRUE(isa<MemoryEffects::Allocate>(effects[0].getEffect()));
  EXPECT_EQ(effects[0].getResource(), DeviceMemoryResource::get());
}

TEST_F(LMSOpsTest, UnusedResultsAreDeadButWaitIsNot) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%t: tensor<4xf32>) {
  %h = lms.swap_out %t : tensor<4xf32> -> !lms.host<tensor<4xf32>>
  %u = lms.swap_in %h : !lms.host<tensor<4xf32>> -> tensor<4xf32>
  %r = lms.recompute (%t) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    lms.yield %x : tensor<4xf32>
  }
  lms.swap_wait %h : !lms.host<tensor<4xf32>>
  return
}
)mlir");
  ASSERT_TRUE(module);
  EXPECT_TRUE(wouldOpBeTriviallyDead(first<SwapInOp>(*module)));
  EXPECT_TRUE(wouldOpBeTriviallyDead(first<RecomputeOp>(*module)));
  EXPECT_FALSE(wouldOpBeTriviallyDead(first<SwapWaitOp>(*module)));
}

TEST_F(LMSOpsTest, SwapOutFindsItsWait) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  auto swapOut = first<SwapOutOp>(*module);
  auto wait = first<SwapWaitOp>(*module);
  EXPECT_EQ(swapOut.getWaitOp(), wait);
  EXPECT_EQ(wait.getSwapOut(), swapOut);
}

TEST_F(LMSOpsTest, BuilderMirrorsInputsAsBlockArguments) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  auto swapIn = first<SwapInOp>(*module);
  OpBuilder builder(swapIn->getNextNode());
  auto recompute =
      RecomputeOp::create(builder, swapIn.getLoc(), TypeRange{swapIn.getType()},
                          ValueRange{swapIn.getResult()});
  Block &body = recompute.getBody().front();
  ASSERT_EQ(body.getNumArguments(), 1u);
  EXPECT_EQ(body.getArgument(0).getType(), swapIn.getType());
  builder.setInsertionPointToEnd(&body);
  YieldOp::create(builder, swapIn.getLoc(), body.getArgument(0));
  EXPECT_TRUE(succeeded(verify(recompute)));
  recompute.erase();
}

} // namespace
