//===- SwapTest.cpp - Swap plans, simulation and planners -----------------===//
//
// Hand-computed plans and timelines, and property tests: on thousands of
// seeded random DAGs and random budgets between the smallest reachable peak
// and the peak, every planner's plan is valid and LMS's fits the budget.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Memory.h"

#include "gtest/gtest.h"

#include <random>

using namespace lms;

namespace {

/// A device where one FLOP takes 1 s and one byte takes 1 s to copy each way.
DeviceSpec unitDevice() {
  DeviceSpec d;
  d.name = "unit";
  d.peakFlops = 1;
  d.memoryBandwidth = 0;
  d.h2dBandwidth = 1;
  d.d2hBandwidth = 1;
  return d;
}

/// x (arg, 10) used by op0 and op5; ops 1..4 each make a 1-byte temporary
/// chain; op5 returns. Every op costs 1 FLOP.
struct LongGap {
  Graph g;
  TensorIndex x, c[5], out;
  LongGap(uint64_t xBytes = 10) {
    x = g.addTensor("x", xBytes);
    for (int i = 0; i < 5; ++i)
      c[i] = g.addTensor("c" + std::to_string(i), 1);
    out = g.addTensor("out", 1);
    g.addOp("op0", {x}, {c[0]}, {1, 0});
    for (int i = 1; i < 5; ++i)
      g.addOp("op" + std::to_string(i), {c[i - 1]}, {c[i]}, {1, 0});
    g.addOp("op5", {x, c[4]}, {out}, {1, 0});
    g.setLiveOut(out);
  }
};

} // namespace

TEST(SwapTest, ApplyInsertsOpsInOrderAndRewiresUses) {
  LongGap e;
  SwapPlan plan;
  SwapDecision d;
  d.tensor = e.x;
  d.lastUse = 0;
  d.nextUse = 5;
  d.swapOutAfter = 0;
  d.releaseAfter = 1;
  d.swapInBefore = 4;
  plan.decisions.push_back(d);
  ASSERT_EQ(verifySwapPlan(e.g, plan), "");
  SwappedGraph s = applySwapPlan(e.g, plan);
  std::vector<std::string> names;
  for (const Op &op : s.graph.getOps())
    names.push_back(op.name);
  std::vector<std::string> expected = {"op0",           "lms.swap_out", "op1",
                                       "lms.swap_wait", "op2",          "op3",
                                       "lms.swap_in",   "op4",          "op5"};
  EXPECT_EQ(names, expected);
  // op5 reads the swapped-in copy, not x.
  TensorIndex in = s.graph.op(6).outputs[0];
  EXPECT_TRUE(llvm::is_contained(s.graph.op(8).inputs, in));
  EXPECT_FALSE(llvm::is_contained(s.graph.op(8).inputs, e.x));
  // x is held until the wait: 10 + 1 (c0) + 1 (c1) at op1; then released
  // until the swap-in before op4.
  MemoryProfile before = evaluateSchedule(e.g);
  MemoryProfile after = evaluateSchedule(s.graph);
  EXPECT_EQ(before.peakBytes, 12u);
  EXPECT_EQ(after.peakBytes, 12u);
  for (auto [op, memory] : after.computeSteps)
    if (s.graph.op(op).name == "op2" || s.graph.op(op).name == "op3") {
      EXPECT_EQ(memory.during, 2u);
    }
  EXPECT_EQ(after.hostPeakBytes, 10u);
}

TEST(SwapTest, VerifyRejectsBadPlans) {
  LongGap e;
  SwapDecision d;
  d.tensor = e.x;
  d.lastUse = 0;
  d.nextUse = 5;
  d.swapOutAfter = 0;
  d.releaseAfter = 3;
  d.swapInBefore = 2;
  EXPECT_NE(verifySwapPlan(e.g, {{d}}).find("swap-in must lie"),
            std::string::npos);
  d.releaseAfter = 0;
  d.nextUse = 4;
  EXPECT_NE(verifySwapPlan(e.g, {{d}}).find("nextUse is not a use"),
            std::string::npos);
  SwapDecision live = d;
  live.tensor = e.out;
  EXPECT_NE(verifySwapPlan(e.g, {{live}}).find("live-out"), std::string::npos);
}

TEST(SwapTest, SimulatorTimesCopiesAndStalls) {
  DeviceSpec unit = unitDevice();
  LongGap e(/*xBytes=*/2);
  // No swaps: 6 ops of 1 s.
  Timeline base = simulate(e.g, unit);
  EXPECT_DOUBLE_EQ(base.totalSeconds, 6);
  EXPECT_DOUBLE_EQ(base.stallSeconds, 0);
  // Copy-out of 2 s hidden behind op1..op2, released after op2; copy-in of
  // 2 s from before op3, ready when op5 needs it: no stall.
  SwapDecision hidden{e.x, 0, 5, 0, 2, 3, false};
  Timeline t1 = simulate(applySwapPlan(e.g, {{hidden}}).graph, unit);
  EXPECT_DOUBLE_EQ(t1.totalSeconds, 6);
  EXPECT_EQ(t1.d2hBytes, 2u);
  EXPECT_EQ(t1.h2dBytes, 2u);
  // Synchronous swap-out (release right away) and a just-in-time swap-in:
  // 2 s stalled on each side.
  SwapDecision sync{e.x, 0, 5, 0, 0, 5, false};
  Timeline t2 = simulate(applySwapPlan(e.g, {{sync}}).graph, unit);
  EXPECT_DOUBLE_EQ(t2.totalSeconds, 10);
  EXPECT_DOUBLE_EQ(t2.stallSeconds, 4);
}

namespace {
/// x (10 bytes) is read by op0 and op5; a chain of temporaries c0..c4 (sizes
/// given) runs in between; op5 writes `out` (1 byte). Every op takes 1 s and
/// x takes 1 s to copy either way.
struct Chain {
  Graph g;
  TensorIndex x;
  explicit Chain(std::vector<uint64_t> sizes) {
    x = g.addTensor("x", 10);
    std::vector<TensorIndex> c;
    for (size_t i = 0; i < sizes.size(); ++i)
      c.push_back(g.addTensor("c" + std::to_string(i), sizes[i]));
    TensorIndex out = g.addTensor("out", 1);
    g.addOp("op0", {x}, {c[0]}, {1, 0});
    for (size_t i = 1; i < c.size(); ++i)
      g.addOp("op" + std::to_string(i), {c[i - 1]}, {c[i]}, {1, 0});
    g.addOp("op5", {x, c.back()}, {out}, {1, 0});
    g.setLiveOut(out);
  }
};
DeviceSpec tenBytesPerSecond() {
  DeviceSpec d = unitDevice();
  d.h2dBandwidth = d.d2hBandwidth = 10;
  return d;
}
} // namespace

TEST(SwapTest, PlannerHidesCopiesBehindCompute) {
  // op0 11, op1 12, op2 20, op3 20, op4 12, op5 12: only op2 and op3 are
  // over a budget of 12. The copy-out hides behind op1 (release after op1),
  // the copy-in behind op4 (prefetch before op4): no stall.
  Chain e({1, 1, 9, 1, 1});
  EXPECT_EQ(evaluateSchedule(e.g).peakBytes, 20u);
  llvm::Expected<SwapResult> result = planSwaps(e.g, tenBytesPerSecond(), 12);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->plan.decisions.size(), 1u);
  const SwapDecision &d = result->plan.decisions[0];
  EXPECT_EQ(d.tensor, e.x);
  EXPECT_EQ(d.lastUse, 0);
  EXPECT_EQ(d.nextUse, 5);
  EXPECT_EQ(d.releaseAfter, 1);
  EXPECT_EQ(d.swapInBefore, 4);
  EXPECT_EQ(result->peakBytes, 12u);
  EXPECT_DOUBLE_EQ(result->timeline.stallSeconds, 0);
  EXPECT_DOUBLE_EQ(result->timeline.totalSeconds, 6);
}

TEST(SwapTest, PlannerAccountsTheStallWhenTheBudgetForbidsOverlap) {
  // op1..op4 are at 20, op5 at 16: a budget of 16 needs x off the device
  // from op1 to op4, so the copy-out is synchronous (after op0) and the
  // copy-in happens just before op5: 1 s stalled on each side.
  Chain e({5, 5, 5, 5, 5});
  llvm::Expected<SwapResult> result = planSwaps(e.g, tenBytesPerSecond(), 16);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->plan.decisions.size(), 1u);
  const SwapDecision &d = result->plan.decisions[0];
  EXPECT_EQ(d.releaseAfter, 0);
  EXPECT_EQ(d.swapInBefore, 5);
  EXPECT_EQ(result->peakBytes, 16u);
  EXPECT_DOUBLE_EQ(result->timeline.stallSeconds, 2);
  // Below 16 (op5 needs x, c4 and out) it is infeasible.
  Infeasible why;
  llvm::Expected<SwapResult> tooSmall =
      planSwaps(e.g, tenBytesPerSecond(), 15, {}, &why);
  ASSERT_FALSE(static_cast<bool>(tooSmall));
  llvm::consumeError(tooSmall.takeError());
  EXPECT_EQ(why.smallestBudget, 16u);
  EXPECT_EQ(why.op, 5);
}

TEST(SwapTest, ArgumentsAtEntryAreAFloor) {
  // Two arguments of 10 bytes: at entry both are on the device, whatever
  // the plan.
  Graph g;
  TensorIndex a = g.addTensor("a", 10), b = g.addTensor("b", 10);
  TensorIndex t = g.addTensor("t", 1), u = g.addTensor("u", 1);
  g.addOp("op0", {a}, {t});
  g.addOp("op1", {t}, {u});
  g.addOp("op2", {b, u}, {});
  EXPECT_EQ(entryBytes(g), 20u);
  auto [smallest, at] = smallestSwapPeak(g, {});
  EXPECT_EQ(smallest, 20u);
  EXPECT_EQ(at, kEntry);
  Infeasible why;
  llvm::Expected<SwapResult> result = planSwaps(g, unitDevice(), 19, {}, &why);
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::consumeError(result.takeError());
  EXPECT_EQ(why.op, kEntry);
  EXPECT_NE(why.reason.find("arguments"), std::string::npos);
}

TEST(SwapTest, InfeasibleBudgetNamesTheOp) {
  DeviceSpec unit = unitDevice();
  LongGap e;
  // op5 needs x (10), c4 (1) and out (1).
  Infeasible why;
  llvm::Expected<SwapResult> result = planSwaps(e.g, unit, 11, {}, &why);
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::consumeError(result.takeError());
  EXPECT_EQ(why.smallestBudget, 12u);
  EXPECT_EQ(why.op, 5);
  EXPECT_NE(why.reason.find("operands, results and temporaries need"),
            std::string::npos);
}

TEST(SwapTest, HostCopiesAreReusedForAnUnchangedValue) {
  // w is used at op0, op3 and op6 with long gaps between.
  Graph g;
  TensorIndex w = g.addTensor("w", 8);
  TensorIndex prev = g.addTensor("t0", 1);
  g.addOp("op0", {w}, {prev}, {1, 0});
  for (int i = 1; i <= 6; ++i) {
    TensorIndex next = g.addTensor("t" + std::to_string(i), 1);
    if (i % 3 == 0)
      g.addOp("op" + std::to_string(i), {w, prev}, {next}, {1, 0});
    else
      g.addOp("op" + std::to_string(i), {prev}, {next}, {1, 0});
    prev = next;
  }
  g.setLiveOut(prev);
  SwapPlan plan = planSwapEverything(g, unitDevice()).plan;
  ASSERT_EQ(plan.decisions.size(), 2u);
  EXPECT_FALSE(plan.decisions[0].reuseHostCopy);
  EXPECT_TRUE(plan.decisions[1].reuseHostCopy);
  EXPECT_EQ(verifySwapPlan(g, plan), "");
  Timeline tl = simulate(applySwapPlan(g, plan).graph, unitDevice());
  EXPECT_EQ(tl.d2hBytes, 8u);
  EXPECT_EQ(tl.h2dBytes, 16u);
}

namespace {

/// A random DAG: some arguments, ops reading 1-3 earlier tensors (often a far
/// one, to make gaps), one or two outputs of random size, a final op that
/// reads a few live tensors (the return).
Graph randomGraph(std::mt19937 &rng) {
  Graph g;
  std::uniform_int_distribution<int> numArgs(1, 4), numOps(4, 40),
      size(1, 1000), numInputs(1, 3), numOutputs(1, 2), coin(0, 3);
  std::vector<TensorIndex> tensors;
  for (int i = 0, n = numArgs(rng); i < n; ++i)
    tensors.push_back(g.addTensor("arg" + std::to_string(i), size(rng)));
  int n = numOps(rng);
  for (int i = 0; i < n; ++i) {
    std::vector<TensorIndex> inputs;
    for (int k = 0, m = numInputs(rng); k < m; ++k) {
      size_t window =
          coin(rng) == 0 ? tensors.size() : std::min<size_t>(3, tensors.size());
      std::uniform_int_distribution<size_t> pick(tensors.size() - window,
                                                 tensors.size() - 1);
      inputs.push_back(tensors[pick(rng)]);
    }
    std::vector<TensorIndex> outputs;
    for (int k = 0, m = numOutputs(rng); k < m; ++k) {
      TensorIndex t =
          g.addTensor("t" + std::to_string(g.numTensors()), size(rng));
      g.tensor(t).rank = 2;
      outputs.push_back(t);
    }
    std::uniform_int_distribution<int> flops(1, 100);
    g.addOp("op" + std::to_string(i), inputs, outputs,
            {static_cast<double>(flops(rng)), 0});
    tensors.insert(tensors.end(), outputs.begin(), outputs.end());
  }
  std::vector<TensorIndex> returned = {tensors.back()};
  if (tensors.size() > 2)
    returned.push_back(tensors[tensors.size() / 2]);
  g.addOp("return", returned, {});
  return g;
}

} // namespace

TEST(SwapTest, PropertyEveryPlannerIsValidAndLMSFits) {
  std::mt19937 rng(20261130);
  DeviceSpec device;
  device.peakFlops = 100;
  device.h2dBandwidth = 2000;
  device.d2hBandwidth = 2000;
  int planned = 0, tflmsFits = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Graph g = randomGraph(rng);
    ASSERT_EQ(g.verify(), "");
    uint64_t peak = evaluateSchedule(g).peakBytes;
    uint64_t smallest = smallestSwapPeak(g, {}).first;
    ASSERT_LE(smallest, peak);
    std::uniform_int_distribution<uint64_t> pick(smallest, peak);
    uint64_t budget = pick(rng);
    Infeasible why;
    llvm::Expected<SwapResult> ours = planSwaps(g, device, budget, {}, &why);
    ASSERT_TRUE(static_cast<bool>(ours))
        << "trial " << trial << ": " << llvm::toString(ours.takeError());
    ASSERT_EQ(verifySwapPlan(g, ours->plan), "") << "trial " << trial;
    ASSERT_LE(ours->peakBytes, budget) << "trial " << trial;
    // The rewritten graph measures what the planner says.
    SwappedGraph swapped = applySwapPlan(g, ours->plan);
    ASSERT_EQ(evaluateSchedule(swapped.graph).peakBytes, ours->peakBytes);
    ++planned;
    // Below the smallest reachable peak, the planner says so.
    if (smallest > 0) {
      llvm::Expected<SwapResult> tooSmall =
          planSwaps(g, device, smallest - 1, {}, &why);
      ASSERT_FALSE(static_cast<bool>(tooSmall)) << "trial " << trial;
      llvm::consumeError(tooSmall.takeError());
      ASSERT_EQ(why.smallestBudget, smallest);
    }
    llvm::Expected<SwapResult> tflms = planSwapsTFLMS(g, device, budget);
    if (tflms) {
      ASSERT_EQ(verifySwapPlan(g, tflms->plan), "") << "trial " << trial;
      ASSERT_LE(tflms->peakBytes, budget);
      ++tflmsFits;
    } else {
      llvm::consumeError(tflms.takeError());
    }
    SwapResult all = planSwapEverything(g, device);
    ASSERT_EQ(verifySwapPlan(g, all.plan), "") << "trial " << trial;
  }
  EXPECT_EQ(planned, 3000);
  // TFLMS's rules cannot reach every budget LMS reaches.
  EXPECT_LT(tflmsFits, planned);
}
