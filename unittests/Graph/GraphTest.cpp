//===- GraphTest.cpp - Graph construction and device presets --------------===//

#include "LMS/Graph/Graph.h"
#include "LMS/Graph/Chart.h"
#include "LMS/Graph/Device.h"

#include "gtest/gtest.h"

using namespace lms;

TEST(GraphTest, AddOpMaintainsUsersAndProducers) {
  Graph g;
  TensorIndex a = g.addTensor("a", 10);
  TensorIndex b = g.addTensor("b", 20);
  TensorIndex c = g.addTensor("c", 30);
  OpIndex op0 = g.addOp("f", {a}, {b});
  OpIndex op1 = g.addOp("g", {a, b, a}, {c});
  EXPECT_EQ(g.tensor(a).producer, kEntry);
  EXPECT_EQ(g.tensor(b).producer, op0);
  EXPECT_EQ(g.tensor(c).producer, op1);
  ASSERT_EQ(g.tensor(a).users.size(), 2u);
  EXPECT_EQ(g.tensor(a).users[1], op1);
  // Duplicate inputs are recorded once.
  EXPECT_EQ(g.op(op1).inputs.size(), 2u);
  EXPECT_EQ(g.verify(), "");
}

TEST(GraphTest, LastUse) {
  Graph g;
  TensorIndex arg = g.addTensor("arg", 1);
  TensorIndex unusedArg = g.addTensor("unused", 1);
  TensorIndex x = g.addTensor("x", 1);
  TensorIndex dead = g.addTensor("dead", 1);
  TensorIndex out = g.addTensor("out", 1);
  g.addOp("p", {arg}, {x, dead});
  g.addOp("q", {x}, {out});
  g.addOp("r", {}, {});
  g.setLiveOut(out);
  EXPECT_EQ(g.lastUse(arg), 0);
  EXPECT_EQ(g.lastUse(unusedArg), kEntry);
  EXPECT_EQ(g.lastUse(x), 1);
  EXPECT_EQ(g.lastUse(dead), 0);
  EXPECT_EQ(g.lastUse(out), 2);
}

TEST(GraphTest, VerifyCatchesBadIndices) {
  Graph g;
  TensorIndex a = g.addTensor("a", 1);
  g.addOp("f", {a}, {});
  g.op(0).inputs.push_back(7);
  EXPECT_NE(g.verify().find("out of range"), std::string::npos);
}

TEST(DeviceTest, PresetsExistAndTimesFollowTheRoofline) {
  for (const char *name : {"v100-16g", "v100-32g-nvlink", "a100-40g",
                           "h100-pcie", "h200", "gh200"}) {
    std::optional<DeviceSpec> spec = lookupDevicePreset(name);
    ASSERT_TRUE(spec) << name;
    EXPECT_GT(spec->capacityBytes, 0u);
    // What a process gets is less than the card's memory.
    EXPECT_LT(spec->capacityBytes, spec->physicalBytes) << name;
    EXPECT_GT(spec->capacityBytes, spec->physicalBytes * 9 / 10) << name;
    EXPECT_GT(spec->peakFlops, 0);
    EXPECT_GT(spec->h2dBandwidth, 0);
    EXPECT_GT(spec->d2hBandwidth, 0);
  }
  EXPECT_FALSE(lookupDevicePreset("tpu"));
  DeviceSpec v100 = *lookupDevicePreset("v100-16g");
  // The driver's 16160 MiB less 1 GiB for the context and workspaces.
  EXPECT_EQ(v100.capacityBytes, (16160ull << 20) - (1ull << 30));
  EXPECT_EQ(v100.physicalBytes, 16ull << 30);
  // Compute-bound: 15.7 GFLOP take 1 ms (+ launch overhead).
  OpCost compute{15.7e9, 1e3, std::nullopt};
  EXPECT_NEAR(v100.computeSeconds(compute), 1e-3 + v100.opOverhead, 1e-9);
  // Memory-bound: 900 MB take 1 ms.
  OpCost memory{1, 900e6, std::nullopt};
  EXPECT_NEAR(v100.computeSeconds(memory), 1e-3 + v100.opOverhead, 1e-9);
  // A fixed time wins.
  OpCost fixed{1e20, 1e20, 0.5};
  EXPECT_EQ(v100.computeSeconds(fixed), 0.5);
  // A loop's body kernel launched 100 times pays 100 launches: 100 x
  // (0.01 ms + overhead), not one launch of the total work.
  OpCost loop{15.7e9, 1e3, std::nullopt};
  loop.kernels.push_back({15.7e7, 10, std::nullopt, 100});
  EXPECT_NEAR(v100.computeSeconds(loop), 1e-3 + 100 * v100.opOverhead, 1e-9);
  // Pinned PCIe Gen3, 12 GB/s: 12 MB take 1 ms plus the copy latency.
  EXPECT_NEAR(v100.h2dSeconds(12000000), 1e-3 + v100.copyLatency, 1e-9);
  DeviceSpec gh200 = *lookupDevicePreset("gh200");
  EXPECT_GT(gh200.h2dBandwidth, gh200.d2hBandwidth);
}

// A call's kernels are its callee's, with its callees': merged where they
// take the same time on every device, so that a chain of calls does not
// carry a kernel per function below it (a chain of 4,000 functions built
// 8 million kernels). The time on each device is unchanged.
TEST(DeviceTest, CompactKernelsKeepsTheTimeOnEveryDevice) {
  OpCost cost{0, 0, std::nullopt};
  for (int level = 0; level < 1000; ++level) {
    // The same exp kernel in each function, a copy every tenth, a stall
    // of its own in each.
    cost.kernels.push_back({256, 2048, std::nullopt, 1});
    cost.kernels.push_back({1e6, 4e6, std::nullopt, 3});
    if (level % 10 == 0) {
      Kernel copy;
      copy.h2dBytes = 1024;
      cost.kernels.push_back(copy);
    }
    cost.kernels.push_back({0, 0, 1e-6 * (level % 7 + 1), 1});
  }
  OpCost compact = cost;
  compactKernels(compact.kernels);
  // The exp kernels, the larger kernels, the copies and one stall.
  EXPECT_EQ(compact.kernels.size(), 4u);
  EXPECT_EQ(compact.kernels[0].launches, 1000);
  EXPECT_EQ(compact.kernels[1].launches, 3000);
  EXPECT_EQ(compact.kernels[2].launches, 100);
  ASSERT_TRUE(compact.kernels[3].seconds);
  EXPECT_EQ(compact.kernels[3].launches, 1);
  for (const DeviceSpec &spec : getDevicePresets()) {
    double before = spec.computeSeconds(cost);
    EXPECT_NEAR(spec.computeSeconds(compact), before, before * 1e-12)
        << spec.name;
  }
  // Compacting again changes nothing; fewer than two kernels stay as they
  // are.
  std::vector<Kernel> again = compact.kernels;
  compactKernels(again);
  EXPECT_EQ(again, compact.kernels);
  std::vector<Kernel> one = {{0, 0, 2e-6, 5}};
  compactKernels(one);
  EXPECT_EQ(one[0].launches, 5);
}

TEST(ChartTest, SvgHasCurvesBudgetPeakAndMarkers) {
  Chart chart;
  chart.title = "f <before & after>";
  chart.series.push_back({"before", "#1f77b4", {{0, 100}, {1, 300}, {2, 50}}});
  chart.series.push_back({"after", "#ff7f0e", {{0, 100}, {1, 200}, {2, 50}}});
  chart.budget = 250;
  chart.markers.push_back({ChartMarker::SwapOut, 0.5, "swap out %x"});
  chart.markers.push_back({ChartMarker::SwapIn, 1.5, "swap in %x"});
  std::string svg = renderSvg(chart);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("f &lt;before &amp; after&gt;"), std::string::npos);
  EXPECT_NE(svg.find("budget 250 B"), std::string::npos);
  EXPECT_NE(svg.find("peak 300 B at op 1"), std::string::npos);
  EXPECT_NE(svg.find("peak 200 B at op 1"), std::string::npos);
  EXPECT_NE(svg.find("swap out %x"), std::string::npos);
  EXPECT_NE(svg.find(">swap-in<"), std::string::npos);
  EXPECT_EQ(svg.find(">recompute<"), std::string::npos);
}
