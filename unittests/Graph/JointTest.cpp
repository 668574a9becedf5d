//===- JointTest.cpp - Recompute and offload together ---------------------===//
//
// The contraction of in-place chains (multi-output writers such as a
// max-pool with indices), the graph a recomputation plan stands for, and
// the joint planner on a training chain whose expensive activations are
// better offloaded and whose cheap ones better recomputed.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Joint.h"
#include "LMS/Graph/Memory.h"

#include "gtest/gtest.h"

using namespace lms;

namespace {

/// x -> pad -> [empty v, fill v, empty i, fill i, empty w, fill w,
/// pool(writes v and i in place, reads pad and w)] -> use(v), use(i).
struct PoolChain {
  Graph g;
  TensorIndex x, padded, v, i, w, useV, useI;
  OpIndex pool;
  PoolChain() {
    x = g.addTensor("x", 8);
    padded = g.addTensor("pad", 10);
    v = g.addTensor("v", 4);
    i = g.addTensor("i", 8);
    w = g.addTensor("w", 1);
    useV = g.addTensor("useV", 4);
    useI = g.addTensor("useI", 8);
    g.addOp("tensor.pad", {x}, {padded}, {1, 0});
    g.addOp("tensor.empty", {}, {v});
    g.addOp("linalg.fill", {v}, {}, {1, 0});
    g.addUpdate(2, v);
    g.addOp("tensor.empty", {}, {i});
    g.addOp("linalg.fill", {i}, {}, {1, 0});
    g.addUpdate(4, i);
    g.addOp("tensor.empty", {}, {w});
    g.addOp("linalg.fill", {w}, {}, {1, 0});
    g.addUpdate(6, w);
    pool = g.addOp("pool", {padded, w, v, i}, {}, {5, 0});
    g.addUpdate(pool, v);
    g.addUpdate(pool, i);
    g.addOp("useV", {v}, {useV}, {1, 0});
    g.addOp("useI", {i}, {useI}, {1, 0});
    g.setLiveOut(useV);
    g.setLiveOut(useI);
  }
  /// What the IR says: each fill and the pool overwrite single-use values.
  std::vector<uint8_t> joins() const {
    std::vector<uint8_t> j(g.numOps(), 0);
    j[2] = j[4] = j[6] = j[pool] = 1;
    return j;
  }
};

} // namespace

TEST(JointTest, ContractionJoinsAWriterOfSeveralBuffersWithTheirChains) {
  PoolChain p;
  ContractedGraph c = contractChains(p.g, p.joins(), {}, nullptr);
  // pad, [empty v .. pool], useV, useI.
  ASSERT_EQ(c.graph.numOps(), 4u);
  EXPECT_EQ(c.members[1], (std::vector<OpIndex>{1, 2, 3, 4, 5, 6, 7}));
  const Op &unit = c.graph.op(1);
  EXPECT_TRUE(unit.recomputable);
  EXPECT_TRUE(unit.updates.empty());
  EXPECT_EQ(unit.inputs, (llvm::SmallVector<TensorIndex, 4>{p.padded}));
  EXPECT_EQ(unit.outputs, (llvm::SmallVector<TensorIndex, 2>{p.v, p.i, p.w}));
  EXPECT_EQ(unit.cost.seconds.value_or(-1), 8.0);
  // The contracted graph is a graph: the planners run on it.
  EXPECT_EQ(c.graph.verify(), "");
}

TEST(JointTest, ContractionLeavesAWriterWhoseChainIsReadElsewhere) {
  PoolChain p;
  // The window is also read after the pool: it cannot be folded in, and a
  // pool that writes buffers made outside its unit is not recomputable.
  Graph &g = p.g;
  TensorIndex extra = g.addTensor("extra", 1);
  g.addOp("readsWindow", {p.w}, {extra});
  g.setLiveOut(extra);
  ContractedGraph c = contractChains(g, p.joins(), {}, nullptr);
  // pad, [empty v, fill v], [empty i, fill i], [empty w, fill w], pool,
  // useV, useI, readsWindow.
  EXPECT_EQ(c.graph.numOps(), 8u);
  for (size_t k = 0; k < c.members.size(); ++k) {
    if (llvm::is_contained(c.members[k], p.pool)) {
      EXPECT_FALSE(c.graph.op(k).recomputable);
    }
  }
  // Nor when the IR cannot clone one of the chain's ops.
  PoolChain q;
  std::vector<uint8_t> clonable(q.g.numOps(), 1);
  clonable[3] = 0;
  ContractedGraph d = contractChains(q.g, q.joins(), clonable, nullptr);
  EXPECT_GT(d.graph.numOps(), 4u);
}

TEST(JointTest, GraphOfAPlanMakesRecomputationsOpsOfTheirOwn) {
  // a = f(x); b = g(a); c = h(b); out = k(a, c). Recompute a before k.
  Graph g;
  TensorIndex x = g.addTensor("x", 1), a = g.addTensor("a", 10),
              b = g.addTensor("b", 10), c = g.addTensor("c", 10),
              out = g.addTensor("out", 1);
  g.addOp("f", {x}, {a}, {1, 0});
  g.addOp("g", {a}, {b}, {1, 0});
  g.addOp("h", {b}, {c}, {1, 0});
  g.addOp("k", {a, c}, {out}, {1, 0});
  g.setLiveOut(out);
  Plan plan = {Step::compute(0), Step::compute(1), Step::free(a),
               Step::compute(2), Step::free(b),    Step::compute(0),
               Step::free(x),    Step::compute(3)};
  llvm::Expected<MemoryProfile> planned = evaluatePlan(g, plan);
  ASSERT_TRUE(static_cast<bool>(planned))
      << llvm::toString(planned.takeError());
  Graph m = graphOfPlan(g, plan);
  ASSERT_EQ(m.verify(), "");
  ASSERT_EQ(m.numOps(), 5u);
  ASSERT_EQ(m.numTensors(), 6u);
  // The second f makes a new tensor, which k reads; the first a dies at g.
  EXPECT_EQ(m.op(3).outputs.size(), 1u);
  TensorIndex again = m.op(3).outputs[0];
  EXPECT_NE(again, a);
  EXPECT_EQ(m.op(4).inputs[0], again);
  EXPECT_EQ(m.lastUse(a), 1);
  // Frees at last uses, as the plan does.
  EXPECT_TRUE(m.tensor(out).liveOut);
  EXPECT_EQ(evaluateSchedule(m).peakBytes, planned->peakBytes);
}

namespace {

/// A training step of n layers: forward f_i makes activation a_i (10 bytes)
/// from a_{i-1}; the loss; backward b_i makes gradient g_i from g_{i+1} and
/// a_i. Even layers are expensive (8 s), odd layers cheap (1 s); backward
/// ops take 8 s. The link moves 10 bytes in `copySeconds` each way.
struct TrainingChain {
  Graph g;
  explicit TrainingChain(int n) {
    TensorIndex x = g.addTensor("x", 1);
    std::vector<TensorIndex> a;
    TensorIndex previous = x;
    for (int i = 0; i < n; ++i) {
      a.push_back(g.addTensor("a" + std::to_string(i), 10));
      g.addOp("f" + std::to_string(i), {previous}, {a.back()},
              {i % 2 == 0 ? 8.0 : 1.0, 0});
      previous = a.back();
    }
    TensorIndex grad = g.addTensor("loss", 1);
    g.addOp("loss", {previous}, {grad}, {1, 0});
    for (int i = n - 1; i >= 0; --i) {
      TensorIndex next = g.addTensor("g" + std::to_string(i), 1);
      g.addOp("b" + std::to_string(i), {grad, a[i]}, {next}, {8, 0});
      grad = next;
    }
    g.setLiveOut(grad);
  }
};

DeviceSpec chainDevice(double copySeconds) {
  DeviceSpec d;
  d.name = "chain";
  d.peakFlops = 1;
  d.h2dBandwidth = d.d2hBandwidth = 10 / copySeconds;
  return d;
}

} // namespace

/// No trial of `joint` is faster than its choice.
static void expectNoTrialFaster(const JointResult &joint) {
  for (const JointTrial &trial : joint.trials) {
    if (!trial.seconds)
      continue;
    EXPECT_LE(joint.seconds, *trial.seconds * (1 + 1e-9))
        << "share " << trial.rematShare << ", link " << trial.link << ", kept "
        << trial.kept;
  }
}

TEST(JointTest, JointPlanIsNeverSlowerThanEitherAloneAndBeatsBoth) {
  TrainingChain t(12);
  uint64_t peak = evaluateSchedule(t.g).peakBytes;
  uint64_t budget = peak / 3;
  // Copies take 6 s: the link carries some activations behind compute,
  // not all of them.
  DeviceSpec device = chainDevice(6);
  JointOptions options;
  llvm::Expected<JointResult> joint = planJoint(t.g, device, budget, options);
  ASSERT_TRUE(static_cast<bool>(joint)) << llvm::toString(joint.takeError());
  EXPECT_LE(joint->peakBytes, budget);
  std::optional<double> offloadOnly, recomputeOnly;
  for (const JointTrial &trial : joint->trials) {
    if (trial.kept == 0 && trial.rematShare == 0 && trial.link == 0)
      offloadOnly = trial.seconds;
    if (trial.kept == 0 && trial.rematShare == 1)
      recomputeOnly = trial.seconds;
  }
  ASSERT_TRUE(offloadOnly && recomputeOnly);
  EXPECT_LT(joint->seconds, *offloadOnly);
  EXPECT_LT(joint->seconds, *recomputeOnly);
  // A mix: a share of the excess, or recomputation where the links cannot
  // carry it.
  EXPECT_TRUE(joint->link > 0 ||
              (joint->rematShare > 0 && joint->rematShare < 1));
  EXPECT_GT(joint->offloadedTensors, 0u);
  EXPECT_GT(joint->recomputes, 0u);
  // The fastest plan found: no trial is faster (the choice carries the work
  // limit it was planned with, so a rerun with more work that is slower is
  // not chosen).
  expectNoTrialFaster(*joint);
  // Deterministic.
  llvm::Expected<JointResult> again = planJoint(t.g, device, budget, options);
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ(again->seconds, joint->seconds);
  EXPECT_EQ(again->rematShare, joint->rematShare);
  EXPECT_EQ(again->link, joint->link);
  EXPECT_EQ(again->keptOps, joint->keptOps);
}

TEST(JointTest, HostBudgetLeavesTheWorkToRecomputation) {
  TrainingChain t(12);
  uint64_t budget = evaluateSchedule(t.g).peakBytes / 3;
  JointOptions options;
  options.hostLimit = 5; // less than one activation
  llvm::Expected<JointResult> joint =
      planJoint(t.g, chainDevice(6), budget, options);
  ASSERT_TRUE(static_cast<bool>(joint)) << llvm::toString(joint.takeError());
  EXPECT_EQ(joint->rematShare, 1);
  EXPECT_EQ(joint->offloadedTensors, 0u);
  EXPECT_LE(joint->hostPeakBytes, 5u);
  // Nothing fits below what the largest op needs: both limits are named.
  llvm::Expected<JointResult> none = planJoint(t.g, chainDevice(6), 5, options);
  ASSERT_FALSE(static_cast<bool>(none));
  std::string message = llvm::toString(none.takeError());
  EXPECT_NE(message.find("no joint plan fits"), std::string::npos) << message;
}

TEST(JointTest, AFastLinkOffloadsEverything) {
  TrainingChain t(12);
  uint64_t budget = evaluateSchedule(t.g).peakBytes / 3;
  DeviceSpec fast = chainDevice(0.01);
  llvm::Expected<JointResult> joint = planJoint(t.g, fast, budget, {});
  ASSERT_TRUE(static_cast<bool>(joint)) << llvm::toString(joint.takeError());
  EXPECT_EQ(joint->rematShare, 0);
  EXPECT_EQ(joint->recomputes, 0u);
  EXPECT_NEAR(joint->seconds, scheduleCost(t.g, &fast), 0.1);
}

TEST(JointTest, ASlowLinkTakesWhatItCarriesAwayFromTheEnds) {
  // Copies of an activation take 40 s: the link carries a few activations
  // behind the compute of a long chain, far less than a quarter of the
  // excess. Recomputing all of it is the fastest of the shares (as on
  // ResNet-50 on PCIe). Recomputation that leaves to offloading only what
  // the link can carry out since the start and back before the end (a
  // quarter of its time) is faster still; before the link levels, a share
  // between seven eighths and all of the excess was the best found.
  TrainingChain t(48);
  uint64_t budget = evaluateSchedule(t.g).peakBytes / 4;
  DeviceSpec device = chainDevice(40);
  llvm::Expected<JointResult> joint = planJoint(t.g, device, budget, {});
  ASSERT_TRUE(static_cast<bool>(joint)) << llvm::toString(joint.takeError());
  ASSERT_GE(joint->trials.size(), 8u);
  ASSERT_EQ(joint->trials[1].rematShare, 1);
  ASSERT_TRUE(joint->trials[1].seconds.has_value());
  double recomputeOnly = *joint->trials[1].seconds;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(joint->trials[i].link, 0);
    EXPECT_GE(joint->trials[i].seconds.value_or(1e30), recomputeOnly) << i;
  }
  // Then the link levels: half, a quarter and an eighth of its time.
  EXPECT_EQ(joint->trials[5].link, 0.5);
  EXPECT_EQ(joint->trials[6].link, 0.25);
  EXPECT_EQ(joint->trials[7].link, 0.125);
  EXPECT_LT(joint->seconds, recomputeOnly);
  EXPECT_GT(joint->link, 0);
  EXPECT_EQ(joint->rematShare, 0);
  EXPECT_GT(joint->offloadedTensors, 0u);
  EXPECT_GT(joint->recomputes, 0u);
  EXPECT_LE(joint->peakBytes, budget);
  // Its recomputation budget is the profile's largest entry: above the
  // device budget, below the peak.
  std::vector<uint64_t> profile =
      linkProfile(contractChains(t.g, {}, {}, &device).graph, device, budget,
                  evaluateSchedule(t.g).peakBytes - budget, joint->link);
  EXPECT_EQ(joint->rematBudget, *llvm::max_element(profile));
  EXPECT_GT(joint->rematBudget, budget);
  expectNoTrialFaster(*joint);
}

TEST(JointTest, LinkProfileRisesFromBothEndsAndIsCapped) {
  // Four ops of 1, 2, 3 and 4 s; the link moves 10 bytes a second.
  Graph g;
  TensorIndex x = g.addTensor("x", 1);
  TensorIndex previous = x;
  for (int i = 0; i < 4; ++i) {
    TensorIndex next = g.addTensor("t" + std::to_string(i), 1);
    g.addOp("op" + std::to_string(i), {previous}, {next}, {double(i + 1), 0});
    previous = next;
  }
  g.setLiveOut(previous);
  DeviceSpec device = chainDevice(1);
  // Before each op: 0, 1, 3 and 6 s of compute; after it starts: 10, 9, 7
  // and 4 s. Half the link's time: 5 bytes a second of the nearer end.
  EXPECT_EQ(linkProfile(g, device, 100, 1000, 0.5),
            (std::vector<uint64_t>{100, 105, 115, 120}));
  // Capped at 12 bytes above the budget.
  EXPECT_EQ(linkProfile(g, device, 100, 12, 0.5),
            (std::vector<uint64_t>{100, 105, 112, 112}));
  // The slower link sets the rate.
  device.h2dBandwidth = 5;
  EXPECT_EQ(linkProfile(g, device, 100, 1000, 0.5),
            (std::vector<uint64_t>{100, 102, 107, 110}));
}
