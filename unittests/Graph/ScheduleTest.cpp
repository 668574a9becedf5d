//===- ScheduleTest.cpp - Memory-aware op scheduling ----------------------===//
//
// Orders worked out by hand (two branches interleaved, a branch finished
// first), the constraints an order must keep (data, in-place writes, the
// caller's edges), errors, and random DAGs: every order found is valid,
// its peak is the evaluator's, never worse than the given order, and the
// same on every run.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Schedule.h"
#include "LMS/Graph/Memory.h"

#include "gtest/gtest.h"

#include <random>

using namespace lms;

namespace {

ScheduleResult mustSchedule(const Graph &g, const ScheduleOptions &options) {
  llvm::Expected<ScheduleResult> r = scheduleForMemory(g, options);
  EXPECT_TRUE(static_cast<bool>(r));
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  return *r;
}

/// Two independent branches, each a big tensor reduced to a small one,
/// written interleaved: both big tensors are live at once.
///   a1 = big(x); b1 = big(x); a2 = small(a1); b2 = small(b1); out(a2, b2)
Graph interleavedBranches() {
  Graph g;
  TensorIndex x = g.addTensor("x", 10);
  TensorIndex a1 = g.addTensor("a1", 100), b1 = g.addTensor("b1", 100);
  TensorIndex a2 = g.addTensor("a2", 1), b2 = g.addTensor("b2", 1);
  TensorIndex out = g.addTensor("out", 1);
  g.addOp("a1", {x}, {a1});
  g.addOp("b1", {x}, {b1});
  g.addOp("a2", {a1}, {a2});
  g.addOp("b2", {b1}, {b2});
  g.addOp("out", {a2, b2}, {out});
  g.setLiveOut(out);
  return g;
}

TEST(ScheduleTest, FinishesABranchBeforeStartingTheNext) {
  Graph g = interleavedBranches();
  // Given: x + a1 + b1 live while b1 runs.
  EXPECT_EQ(evaluateSchedule(g).peakBytes, 210u);
  ScheduleResult r = mustSchedule(g, {});
  EXPECT_EQ(r.originalPeakBytes, 210u);
  // Best: x, a1 -> a2, then b1 (x + a2 + b1 = 111).
  EXPECT_EQ(r.peakBytes, 111u);
  EXPECT_TRUE(r.changed());
  EXPECT_FALSE(static_cast<bool>(verifyOrder(g, r.order)));
  EXPECT_EQ(evaluateSchedule(reorderGraph(g, r.order)).peakBytes, r.peakBytes);
}

TEST(ScheduleTest, KeepsTheCallersEdges) {
  Graph g = interleavedBranches();
  ScheduleOptions options;
  // a1, b1, a2 in this order (side effects the graph does not show).
  options.edges = {{0, 1}, {1, 2}};
  ScheduleResult r = mustSchedule(g, options);
  EXPECT_EQ(r.peakBytes, 210u);
  EXPECT_FALSE(static_cast<bool>(verifyOrder(g, r.order, options.edges)));
  // The order without the edge breaks it.
  ScheduleResult free = mustSchedule(g, {});
  llvm::Error err = verifyOrder(g, free.order, options.edges);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("runs before op 1"),
            std::string::npos);
}

TEST(ScheduleTest, InPlaceWritesStayAfterReadersOfTheOldContents) {
  // r reads t's contents before w overwrites t in place; moving w first
  // would lower the peak (w frees nothing, r allocates) but change r's input.
  Graph g;
  TensorIndex t = g.addTensor("t", 10);
  TensorIndex big = g.addTensor("big", 100), small = g.addTensor("s", 1);
  OpIndex r = g.addOp("r", {t}, {big});
  OpIndex s = g.addOp("s", {big}, {small});
  OpIndex w = g.addOp("w", {t}, {});
  g.addUpdate(w, t);
  g.setLiveOut(small);
  g.setLiveOut(t);
  ScheduleResult result = mustSchedule(g, {});
  EXPECT_FALSE(static_cast<bool>(verifyOrder(g, result.order)));
  std::vector<int> pos(3);
  for (auto [k, op] : llvm::enumerate(result.order))
    pos[op] = static_cast<int>(k);
  EXPECT_LT(pos[r], pos[w]);
  EXPECT_LT(pos[r], pos[s]);
}

TEST(ScheduleTest, RejectsBadEdges) {
  Graph g = interleavedBranches();
  ScheduleOptions options;
  options.edges = {{0, 7}};
  llvm::Expected<ScheduleResult> r = scheduleForMemory(g, options);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("outside 0..4"),
            std::string::npos);
  // An edge against the data flow: out before a1 is a cycle.
  options.edges = {{4, 0}};
  r = scheduleForMemory(g, options);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("violates"), std::string::npos);
  options.edges = {{2, 2}};
  r = scheduleForMemory(g, options);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("before itself"),
            std::string::npos);
}

TEST(ScheduleTest, VerifyOrderNamesTheViolation) {
  Graph g = interleavedBranches();
  llvm::Error err = verifyOrder(g, {2, 0, 1, 3, 4});
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("op 2 ('a2') runs before op 0"),
            std::string::npos);
  err = verifyOrder(g, {0, 0, 1, 3, 4});
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("twice"), std::string::npos);
  err = verifyOrder(g, {0, 1});
  ASSERT_TRUE(static_cast<bool>(err));
  llvm::consumeError(std::move(err));
}

TEST(ScheduleTest, StopsAtTheTarget) {
  Graph g = interleavedBranches();
  ScheduleOptions options;
  options.targetBytes = 300; // the given order already fits
  ScheduleResult r = mustSchedule(g, options);
  EXPECT_LE(r.peakBytes, 300u);
  EXPECT_LE(r.evaluations, 3u);
}

/// A random layered DAG with liveness-heavy fan-out, in a random
/// topological order.
Graph randomDag(uint64_t seed, int numOps) {
  std::mt19937_64 random(seed);
  Graph g;
  std::vector<TensorIndex> outs;
  TensorIndex arg = g.addTensor("arg", 1 + random() % 50);
  for (int i = 0; i < numOps; ++i) {
    std::vector<TensorIndex> inputs;
    if (outs.empty() || random() % 8 == 0)
      inputs.push_back(arg);
    int fanIn = 1 + static_cast<int>(random() % 3);
    for (int k = 0; k < fanIn && !outs.empty(); ++k) {
      TensorIndex t =
          outs[outs.size() - 1 - random() % std::min<size_t>(outs.size(), 12)];
      if (std::find(inputs.begin(), inputs.end(), t) == inputs.end())
        inputs.push_back(t);
    }
    TensorIndex out = g.addTensor("t" + std::to_string(i), 1 + random() % 1000);
    OpIndex op = g.addOp("op" + std::to_string(i), inputs, {out});
    if (random() % 10 == 0)
      g.setTransientBytes(op, static_cast<int64_t>(random() % 300));
    outs.push_back(out);
  }
  g.setLiveOut(outs.back());
  return g;
}

TEST(ScheduleTest, RandomDagsGiveValidDeterministicOrders) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Graph g = randomDag(seed, 20 + static_cast<int>(seed) * 5);
    ScheduleOptions options;
    options.searchIterations = 3000;
    options.seed = seed;
    ScheduleResult r = mustSchedule(g, options);
    ASSERT_FALSE(static_cast<bool>(verifyOrder(g, r.order))) << seed;
    EXPECT_EQ(r.originalPeakBytes, evaluateSchedule(g).peakBytes) << seed;
    EXPECT_EQ(evaluateSchedule(reorderGraph(g, r.order)).peakBytes, r.peakBytes)
        << seed;
    EXPECT_LE(r.peakBytes, r.originalPeakBytes) << seed;
    improved += r.peakBytes < r.originalPeakBytes;
    ScheduleResult again = mustSchedule(g, options);
    EXPECT_EQ(again.order, r.order) << seed;
  }
  // Random orders of random DAGs leave room: most get better.
  EXPECT_GE(improved, 20);
}

/// Bytes above `target` summed over the ops of the schedule order.
double excessAbove(const Graph &g, uint64_t target) {
  double excess = 0;
  for (auto &[op, memory] : evaluateSchedule(g).computeSteps)
    if (memory.during > target)
      excess += static_cast<double>(memory.during - target);
  return excess;
}

TEST(ScheduleTest, LeastExcessNeverLeavesMoreAboveTheTarget) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Graph g = randomDag(seed, 60);
    uint64_t target = evaluateSchedule(g).peakBytes * 6 / 10;
    ScheduleOptions options;
    options.searchIterations = 3000;
    options.targetBytes = target;
    options.goal = ScheduleGoal::LeastExcess;
    ScheduleResult r = mustSchedule(g, options);
    ASSERT_FALSE(static_cast<bool>(verifyOrder(g, r.order))) << seed;
    Graph reordered = reorderGraph(g, r.order);
    EXPECT_EQ(evaluateSchedule(reordered).peakBytes, r.peakBytes) << seed;
    EXPECT_LE(excessAbove(reordered, target), excessAbove(g, target)) << seed;
  }
}

} // namespace
