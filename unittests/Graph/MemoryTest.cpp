//===- MemoryTest.cpp - Plans and peak memory -----------------------------===//
//
// Peaks computed by hand for small graphs, plans with swaps and
// recomputations, and the errors of invalid plans.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Memory.h"

#include "llvm/ADT/STLExtras.h"

#include "ExampleGraph.h"

#include "gtest/gtest.h"

using namespace lms;

namespace {

MemoryProfile mustEvaluate(const Graph &g, const Plan &plan) {
  llvm::Expected<MemoryProfile> profile = evaluatePlan(g, plan);
  EXPECT_TRUE(static_cast<bool>(profile));
  if (!profile) {
    ADD_FAILURE() << llvm::toString(profile.takeError());
    return {};
  }
  return std::move(*profile);
}

std::string errorOf(const Graph &g, const Plan &plan) {
  llvm::Expected<MemoryProfile> profile = evaluatePlan(g, plan);
  if (profile)
    return "";
  return llvm::toString(profile.takeError());
}

} // namespace

TEST(MemoryTest, ReferencePlanFreesAfterLastUse) {
  Example e;
  Plan plan = referencePlan(e.g);
  Plan expected = {Step::compute(0), Step::compute(1), Step::free(e.x),
                   Step::free(e.z),  Step::compute(2), Step::free(e.a),
                   Step::free(e.y)};
  EXPECT_EQ(plan, expected);
}

TEST(MemoryTest, ScheduleProfileByHand) {
  Example e;
  MemoryProfile p = evaluateSchedule(e.g);
  EXPECT_EQ(p.peakBytes, 360u);
  EXPECT_EQ(p.peakOp, 1);
  ASSERT_EQ(p.computeSteps.size(), 3u);
  auto mem = [&](int i) { return p.computeSteps[i].second; };
  EXPECT_EQ(mem(0).before, 100u);
  EXPECT_EQ(mem(0).during, 150u);
  EXPECT_EQ(mem(0).after, 150u);
  EXPECT_EQ(mem(1).before, 150u);
  EXPECT_EQ(mem(1).during, 360u);
  EXPECT_EQ(mem(1).after, 300u);
  EXPECT_EQ(mem(2).before, 300u);
  EXPECT_EQ(mem(2).during, 330u);
  EXPECT_EQ(mem(2).after, 30u);
  std::vector<TensorIndex> expected = {e.y, e.a, e.x, e.z};
  EXPECT_EQ(p.residentAtPeak, expected);
  EXPECT_EQ(p.hostPeakBytes, 0u);
}

TEST(MemoryTest, TransientBytesCountOnlyDuringTheirOp) {
  Example e;
  e.g.setTransientBytes(2, 1000);
  MemoryProfile p = evaluateSchedule(e.g);
  EXPECT_EQ(p.peakBytes, 1330u);
  EXPECT_EQ(p.peakOp, 2);
  EXPECT_EQ(p.computeSteps[2].second.after, 30u);
}

TEST(MemoryTest, UnusedArgumentIsNeverCounted) {
  Graph g;
  TensorIndex unused = g.addTensor("unused", 1000);
  TensorIndex a = g.addTensor("a", 8);
  TensorIndex b = g.addTensor("b", 4);
  g.addOp("f", {a}, {b});
  g.setLiveOut(b);
  Plan plan = referencePlan(g);
  EXPECT_EQ(plan.front(), Step::free(unused));
  MemoryProfile p = evaluateSchedule(g);
  EXPECT_EQ(p.peakBytes, 12u);
  EXPECT_EQ(p.peakOp, 0);
}

TEST(MemoryTest, SwapPlanLowersThePeakAndHoldsHostBytes) {
  Example e;
  Plan plan = e.swapPlan();
  MemoryProfile p = mustEvaluate(e.g, plan);
  EXPECT_EQ(p.peakBytes, 330u);
  EXPECT_EQ(p.peakOp, 2);
  EXPECT_EQ(p.hostPeakBytes, 100u);
  std::vector<uint64_t> steps = {150, 150, 50,  260, 210, 200,
                                 300, 330, 230, 30,  30};
  EXPECT_EQ(p.stepBytes, steps);
}

TEST(MemoryTest, RecomputationPlan) {
  Example e;
  // Free x after op0 ... no: recompute x before op1 after freeing it.
  Plan plan = e.recomputePlan();
  MemoryProfile p = mustEvaluate(e.g, plan);
  EXPECT_EQ(p.peakBytes, 360u);
  EXPECT_EQ(p.computeSteps.size(), 4u);
}

TEST(MemoryTest, PeakStepCanBeASwapIn) {
  Graph g;
  TensorIndex a = g.addTensor("a", 100);
  TensorIndex b = g.addTensor("b", 1);
  g.addOp("f", {a}, {b});
  g.setLiveOut(b);
  Plan plan = {Step::swapOut(a), Step::free(a), Step::swapIn(a),
               Step::compute(0), Step::free(a)};
  MemoryProfile p = mustEvaluate(g, plan);
  EXPECT_EQ(p.peakBytes, 101u);
  EXPECT_EQ(p.peakOp, 0);
  Plan early = {Step::swapOut(a), Step::free(a), Step::swapIn(a)};
  MemoryProfile q = mustEvaluate(g, early);
  EXPECT_EQ(q.peakBytes, 100u);
  EXPECT_EQ(q.peakOp, -1);
  EXPECT_EQ(q.peakStep, 0u);
}

TEST(MemoryTest, InvalidPlansNameTheStep) {
  Example e;
  EXPECT_NE(errorOf(e.g, {Step::compute(1)})
                .find("step 0: op 1 ('op1') needs tensor 1 ('x'), which is "
                      "not resident"),
            std::string::npos);
  EXPECT_NE(errorOf(e.g, {Step::free(e.x)})
                .find("step 0: free of tensor 1 ('x'), which is not resident"),
            std::string::npos);
  EXPECT_NE(errorOf(e.g, {Step::swapIn(e.a)}).find("which has no host copy"),
            std::string::npos);
  EXPECT_NE(errorOf(e.g, {Step::swapOut(e.a), Step::swapIn(e.a)})
                .find("step 1: swap-in of tensor 0 ('a'), which is resident"),
            std::string::npos);
  EXPECT_NE(errorOf(e.g, {Step::compute(9)}).find("op index 9 out of range"),
            std::string::npos);
  EXPECT_NE(errorOf(e.g, {Step::free(-2)}).find("tensor index -2 out of range"),
            std::string::npos);
}

TEST(MemoryTest, LiveIntervals) {
  Example e;
  LiveIntervals live = computeLiveIntervals(e.g);
  EXPECT_TRUE(live.isLiveIn(e.a, 0));
  EXPECT_TRUE(live.isLiveIn(e.a, 2));
  EXPECT_FALSE(live.isLiveOut(e.a, 2));
  EXPECT_FALSE(live.isLiveIn(e.x, 0));
  EXPECT_TRUE(live.isLiveDuring(e.x, 0));
  EXPECT_TRUE(live.isLiveOut(e.x, 0));
  EXPECT_FALSE(live.isLiveOut(e.x, 1));
  EXPECT_TRUE(live.isLiveDuring(e.z, 1));
  EXPECT_FALSE(live.isLiveOut(e.z, 1));
  EXPECT_TRUE(live.isLiveOut(e.w, 2));
}

TEST(MemoryTest, MinimumFeasibleBytes) {
  Example e;
  auto [bytes, op] = minimumFeasibleBytes(e.g);
  // op1: x + y + z = 260; op2: a + y + w = 330.
  EXPECT_EQ(bytes, 330u);
  EXPECT_EQ(op, 2);
}

TEST(MemoryTest, HostTensorsAreFreedFromHostMemory) {
  // A swap-out-like op producing a host tensor, its wait and a swap-in.
  Graph g;
  TensorIndex a = g.addTensor("a", 64);
  TensorIndex h = g.addTensor("h", 64, MemorySpace::Host);
  TensorIndex u = g.addTensor("u", 64);
  g.addOp("swap_out", {a}, {h}, {}, OpKind::SwapOut);
  g.addOp("swap_wait", {h, a}, {}, {}, OpKind::SwapWait);
  g.addOp("swap_in", {h}, {u}, {}, OpKind::SwapIn);
  g.setLiveOut(u);
  Plan plan = referencePlan(g);
  EXPECT_TRUE(llvm::is_contained(plan, Step::freeHost(h)));
  MemoryProfile p = evaluateSchedule(g);
  EXPECT_EQ(p.peakBytes, 64u);
  EXPECT_EQ(p.hostPeakBytes, 64u);
  ASSERT_EQ(p.computeSteps.size(), 3u);
  EXPECT_EQ(p.computeSteps[1].second.after, 0u);
  EXPECT_EQ(p.computeSteps[2].second.during, 64u);
}

TEST(MemoryTest, NothingReadsATensorAfterItsSwapWait) {
  // a is offloaded and its wait releases it; an op reading a after the wait
  // reads a freed buffer, even where the plan never frees a.
  Graph g;
  TensorIndex x = g.addTensor("x", 16);
  TensorIndex a = g.addTensor("a", 64);
  TensorIndex h = g.addTensor("h", 64, MemorySpace::Host);
  TensorIndex b = g.addTensor("b", 64);
  OpIndex makeA = g.addOp("make_a", {x}, {a});
  g.addOp("swap_out", {a}, {h}, {}, OpKind::SwapOut);
  OpIndex wait = g.addOp("swap_wait", {h, a}, {}, {}, OpKind::SwapWait);
  OpIndex useA = g.addOp("use_a", {a}, {b});
  g.setLiveOut(b);
  Plan kept = {Step::compute(makeA), Step::compute(1), Step::compute(wait),
               Step::compute(useA)};
  llvm::Expected<MemoryProfile> bad = evaluatePlan(g, kept);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "step 3: op 3 ('use_a') reads tensor 1 ('a') after swap-wait op 2 "
            "released it");
  // Computing a again after the wait makes a copy the op may read.
  Plan again = {Step::compute(makeA), Step::compute(1),
                Step::compute(wait),  Step::free(a),
                Step::compute(makeA), Step::compute(useA)};
  llvm::Expected<MemoryProfile> good = evaluatePlan(g, again);
  ASSERT_TRUE(static_cast<bool>(good)) << llvm::toString(good.takeError());
  EXPECT_EQ(good->peakBytes, 16u + 64u + 64u);
}
