//===- Report.cpp - Liveness and memory reports ---------------------------===//
//
// The --lms-print-liveness and --lms-report-memory passes: they translate each
// function into the graph core, evaluate it and print what they found. They
// never change the IR.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/MemoryAnalysis.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Chart.h"
#include "LMS/Graph/Placement.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/Strip.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"

#include "llvm/Support/ToolOutputFile.h"
#include <cmath>

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSPRINTLIVENESS
#define GEN_PASS_DEF_LMSREPORTMEMORY
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::TensorIndex;

namespace {

/// The functions of a module that have a body, in order.
SmallVector<FunctionOpInterface> functionsWithBodies(ModuleOp module) {
  SmallVector<FunctionOpInterface> funcs;
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      funcs.push_back(func);
  return funcs;
}

std::string locationString(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// Where the report goes: a file or stdout.
class ReportOutput {
public:
  LogicalResult open(Operation *scope, StringRef path) {
    if (path == "-" || path.empty())
      return success();
    std::string error;
    file = openOutputFile(path, &error);
    if (!file) {
      scope->emitError() << "cannot open report file '" << path
                         << "': " << error;
      return failure();
    }
    return success();
  }
  raw_ostream &os() { return file ? file->os() : llvm::outs(); }
  void keep() {
    if (file)
      file->keep();
  }

private:
  std::unique_ptr<llvm::ToolOutputFile> file;
};

//===----------------------------------------------------------------------===//
// --lms-print-liveness
//===----------------------------------------------------------------------===//

struct LMSPrintLivenessPass
    : public mlir::lms::impl::LMSPrintLivenessBase<LMSPrintLivenessPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<GraphOptions> options =
        makeGraphOptions(module, alignment, dynamicBytes, keepArguments);
    if (failed(options))
      return signalPassFailure();
    // The module does not change: the graphs of an earlier pass that left
    // it as it was are taken as they are, and the ones built here are kept
    // for the next (ModuleGraphAnalysis: each callee summarized once, the
    // module's in-place decisions made once).
    auto &graphs = getAnalysis<ModuleGraphAnalysis>();
    bool failedAny = false;
    for (FunctionOpInterface func : functionsWithBodies(module)) {
      FailureOr<const FunctionGraph *> graph = graphs.getGraph(func, *options);
      if (failed(graph)) {
        failedAny = true;
        continue;
      }
      BufferLiveness(**graph).print(llvm::outs());
      MemoryPeakAnalysis(**graph).print(llvm::outs());
    }
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

//===----------------------------------------------------------------------===//
// --lms-report-memory
//===----------------------------------------------------------------------===//

/// Everything the report says about one function.
struct FunctionReport {
  std::string name;
  Operation *func = nullptr;
  /// Kept by the module's graph analysis.
  const FunctionGraph *graph = nullptr;
  ::lms::MemoryProfile profile;
  uint64_t minFeasibleBytes = 0;
  OpIndex minFeasibleOp = -1;
  /// The same with the arena (arena=true): the allocations of their own
  /// held beside it at their peak and never offloaded.
  uint64_t arenaMinFeasibleBytes = 0;
  OpIndex arenaMinFeasibleOp = -1;
  ::lms::Timeline timeline;
  double flops = 0;
  unsigned swapOuts = 0, swapWaits = 0, swapIns = 0, recomputes = 0;
  std::optional<::lms::ByteSize> budget;
  /// The same function without LMS rewriting, when it has lms ops.
  std::optional<FunctionGraph> strippedGraph;
  ::lms::MemoryProfile strippedProfile;
  /// Every device buffer of the schedule at its offset in one arena.
  ::lms::Placement placement;
  /// For each step of the schedule's plan, the op it runs or follows.
  std::vector<OpIndex> stepOp;

  /// What a budget with arena=true bounds: the device memory as
  /// --lms-carve-arena lowers the function (budgetedBytes).
  uint64_t arenaMeasure = 0;
  uint64_t arenaBytes() const { return arenaMeasure; }
  double arenaRatio() const {
    return profile.peakBytes
               ? static_cast<double>(arenaBytes()) / profile.peakBytes
               : 1.0;
  }

  bool hasLMSOps() const {
    return swapOuts + swapWaits + swapIns + recomputes > 0;
  }
  /// The budget in bytes, with percentages of the peak without LMS.
  std::optional<uint64_t> budgetBytes() const {
    if (!budget)
      return std::nullopt;
    uint64_t reference =
        strippedGraph ? strippedProfile.peakBytes : profile.peakBytes;
    return budget->resolve(reference);
  }
};

struct LMSReportMemoryPass
    : public mlir::lms::impl::LMSReportMemoryBase<LMSReportMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Counted as the planning passes count: in the arena lowering's 256-byte
    // granules with arena=true, so that a verdict of "fits" holds as lowered.
    alignment = planningAlignment(alignment, arena);
    FailureOr<GraphOptions> options =
        makeGraphOptions(module, alignment, dynamicBytes, keepArguments);
    if (failed(options))
      return signalPassFailure();
    // The module does not change: its graphs are taken from (and kept in)
    // the module's graph analysis, as in --lms-print-liveness.
    graphs = &getAnalysis<ModuleGraphAnalysis>();
    FailureOr<::lms::DeviceSpec> spec = resolveDevice(module, device);
    if (failed(spec))
      return signalPassFailure();
    deviceSpec = *spec;
    // Calls are timed on the device of the report.
    options->timingDevice = *spec;
    *options = graphs->withSharedCache(*options);

    // A stripped copy of the module, for the curves without LMS.
    OwningOpRef<ModuleOp> stripped;
    bool anyLMS = false;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<LMSDialect>(op->getDialect()))
        anyLMS = true;
    });
    if (anyLMS) {
      // Clone, remember which clone is which op (the walks visit both in the
      // same order), then strip: ops that are not lms ops survive stripping.
      stripped = module.clone();
      SmallVector<Operation *> originals, clones;
      module.walk([&](Operation *op) { originals.push_back(op); });
      stripped->walk([&](Operation *op) { clones.push_back(op); });
      for (auto [original, clone] : llvm::zip(originals, clones))
        if (!isa_and_nonnull<LMSDialect>(original->getDialect()))
          cloneOf[original] = clone;
      stripLMSOps(*stripped);
    }

    // The stripped module is another module: its own decisions and
    // summaries.
    GraphOptions strippedOptions = *options;
    strippedOptions.callSummaries =
        makeCallSummaryCache(ModuleAccess::ReadOnly);
    GraphOptions arenaOptions = *options;
    arenaOptions.arena = true;
    // One arena model per function, shared by the measure and the
    // allocations of their own (a deep chain of calls is modelled once).
    arenaOptions.arenaModels = makeArenaModelCache();
    ownOptions = &arenaOptions;
    BudgetedBytes measure(arenaOptions);
    arenaMeasure = &measure;
    std::vector<FunctionReport> reports;
    bool failedAny = false;
    for (FunctionOpInterface func : functionsWithBodies(module)) {
      FunctionReport report;
      if (failed(analyse(func, *options, stripped ? *stripped : ModuleOp(),
                         strippedOptions, report))) {
        failedAny = true;
        continue;
      }
      reports.push_back(std::move(report));
    }
    arenaMeasure = nullptr;
    ownOptions = nullptr;
    if (failedAny)
      return signalPassFailure();

    ReportOutput output;
    if (failed(output.open(module, file)))
      return signalPassFailure();
    switch (format) {
    case ReportFormat::Json:
      printJson(output.os(), reports);
      break;
    case ReportFormat::Svg:
      printSvg(output.os(), reports);
      break;
    case ReportFormat::Text:
      printText(output.os(), reports);
      break;
    }
    output.keep();
    markAllAnalysesPreserved();
  }

  LogicalResult analyse(FunctionOpInterface func, const GraphOptions &options,
                        ModuleOp stripped, const GraphOptions &strippedOptions,
                        FunctionReport &report) {
    report.name = func.getName().str();
    report.func = func;
    FailureOr<const FunctionGraph *> graph = graphs->getGraph(func, options);
    if (failed(graph))
      return failure();
    FailureOr<std::optional<::lms::ByteSize>> budgetOrNone =
        getBudget(func, budget);
    if (failed(budgetOrNone))
      return failure();
    report.budget = *budgetOrNone;
    report.graph = *graph;
    const ::lms::Graph &g = report.graph->getGraph();
    report.profile = ::lms::evaluateSchedule(g);
    ::lms::Plan plan = ::lms::referencePlan(g);
    ::lms::PlacementOptions placementOptions;
    placementOptions.alignment = alignment;
    llvm::Expected<::lms::Placement> placement =
        ::lms::placePlan(g, plan, placementOptions);
    if (!placement)
      return func.emitError() << "cannot place the buffers in an arena: "
                              << llvm::toString(placement.takeError());
    report.placement = std::move(*placement);
    report.arenaMeasure = (*arenaMeasure)(*report.graph);
    OpIndex current = -1;
    for (const ::lms::Step &step : plan) {
      if (step.kind == ::lms::Step::Compute)
        current = step.index;
      report.stepOp.push_back(current);
    }
    // The smallest budget --lms-insert-swaps can meet on this function.
    SwapCandidates candidates(*report.graph);
    ::lms::SwapOptions swapOptions;
    swapOptions.valueAfterGap = [&](TensorIndex t, OpIndex a, OpIndex b) {
      return candidates.valueAfterGap(t, a, b);
    };
    std::tie(report.minFeasibleBytes, report.minFeasibleOp) =
        ::lms::smallestSwapPeak(g, swapOptions);
    // With the arena, what offloading can reach when the arguments, results
    // and buffers that cross calls are allocations of their own beside the
    // arena at their peak (as --lms-insert-swaps plans with arena=true).
    {
      ArenaSwapGraph arena = arenaSwapGraph(*report.graph, *ownOptions);
      ::lms::SwapOptions arenaSwapOptions;
      arenaSwapOptions.valueAfterGap = arena.valueAfterGap(candidates);
      std::tie(report.arenaMinFeasibleBytes, report.arenaMinFeasibleOp) =
          ::lms::smallestSwapPeak(arena.graph, arenaSwapOptions);
    }
    report.timeline = ::lms::simulate(g, deviceSpec);
    for (const ::lms::Op &op : g.getOps()) {
      report.flops += op.cost.flops;
      report.swapOuts += op.kind == ::lms::OpKind::SwapOut;
      report.swapIns += op.kind == ::lms::OpKind::SwapIn;
      report.swapWaits += op.kind == ::lms::OpKind::SwapWait;
    }
    func.walk([&](RecomputeOp) { ++report.recomputes; });
    if (stripped && report.hasLMSOps()) {
      auto strippedFunc = dyn_cast_or_null<FunctionOpInterface>(
          SymbolTable::lookupSymbolIn(stripped, func.getNameAttr()));
      if (strippedFunc) {
        FailureOr<FunctionGraph> strippedGraph =
            FunctionGraph::build(strippedFunc, strippedOptions);
        if (failed(strippedGraph))
          return failure();
        report.strippedGraph.emplace(std::move(*strippedGraph));
        report.strippedProfile =
            ::lms::evaluateSchedule(report.strippedGraph->getGraph());
      }
    }
    return success();
  }

  void printText(raw_ostream &os, const std::vector<FunctionReport> &reports) {
    for (const FunctionReport &r : reports) {
      const FunctionGraph &fg = *r.graph;
      const ::lms::Graph &g = fg.getGraph();
      os << "@" << r.name << ": peak "
         << ::lms::formatBytes(r.profile.peakBytes) << " ("
         << r.profile.peakBytes << " bytes)";
      if (r.profile.peakOp >= 0) {
        Operation *op = fg.getOp(r.profile.peakOp);
        os << " at op " << r.profile.peakOp << " '" << op->getName() << "' ("
           << locationString(op->getLoc()) << ")";
      }
      os << "\n";
      size_t shown = std::min<size_t>(top, r.profile.residentAtPeak.size());
      os << "  live at the peak (largest " << shown << " of "
         << r.profile.residentAtPeak.size() << "):\n";
      for (size_t i = 0; i < shown; ++i) {
        TensorIndex t = r.profile.residentAtPeak[i];
        Value value = fg.getAllocatingValue(t);
        os << llvm::formatv("    {0,10}  {1}  {2} ({3})\n",
                            ::lms::formatBytes(g.tensor(t).bytes),
                            fg.getTensorName(t), value.getType(),
                            locationString(value.getLoc()));
      }
      os << "  host memory peak: "
         << ::lms::formatBytes(r.profile.hostPeakBytes);
      if (deviceSpec.hostCapacityBytes)
        os << " (" << deviceSpec.name << " host memory: "
           << ::lms::formatBytes(deviceSpec.hostCapacityBytes) << ")";
      os << "\n";
      const ::lms::Placement &placed = r.placement;
      os << "  arena: " << ::lms::formatBytes(r.arenaBytes()) << " ("
         << r.arenaBytes() << " bytes) for a live peak of "
         << ::lms::formatBytes(r.profile.peakBytes)
         << llvm::formatv(": ratio {0:F4}, fragmentation {1:P2}",
                          r.arenaRatio(), placed.fragmentation())
         << " (" << placed.buffers.size() << " buffers, " << placed.strategy
         << ")\n";
      os << "  smallest feasible budget: "
         << ::lms::formatBytes(r.minFeasibleBytes) << " (" << r.minFeasibleBytes
         << " bytes, ";
      if (r.minFeasibleOp >= 0)
        os << "op " << r.minFeasibleOp << " '"
           << fg.getOp(r.minFeasibleOp)->getName() << "')\n";
      else
        os << "the arguments at entry)\n";
      if (arena && r.arenaMinFeasibleBytes > r.minFeasibleBytes) {
        os << "  smallest feasible budget with the arena: "
           << ::lms::formatBytes(r.arenaMinFeasibleBytes) << " ("
           << r.arenaMinFeasibleBytes << " bytes, ";
        if (r.arenaMinFeasibleOp >= 0)
          os << "op " << r.arenaMinFeasibleOp << " '"
             << fg.getOp(r.arenaMinFeasibleOp)->getName() << "'";
        else
          os << "the allocations of their own beside the arena";
        os << ")\n";
      }
      if (r.hasLMSOps()) {
        os << "  lms ops: " << r.swapOuts << " swap-out, " << r.swapWaits
           << " swap-wait, " << r.swapIns << " swap-in, " << r.recomputes
           << " recompute\n";
        if (r.strippedGraph)
          os << "  peak without LMS: "
             << ::lms::formatBytes(r.strippedProfile.peakBytes) << " ("
             << r.strippedProfile.peakBytes << " bytes)\n";
      }
      if (std::optional<uint64_t> bytes = r.budgetBytes()) {
        os << "  budget: " << ::lms::formatBytes(*bytes) << " (" << *bytes
           << " bytes): ";
        // The verdict on what the budget bounds: the arena lowering's
        // device memory (the default), or the live bytes (arena=false),
        // with the arena lowering's need added when it differs.
        if (arena) {
          os << (r.arenaBytes() <= *bytes ? "fits" : "exceeded");
          if (r.arenaBytes() > *bytes)
            os << " (the arena lowering needs "
               << ::lms::formatBytes(r.arenaBytes()) << ")";
        } else {
          os << (r.profile.peakBytes <= *bytes ? "fits" : "exceeded");
          if (r.profile.peakBytes <= *bytes && r.arenaBytes() > *bytes)
            os << "; lowered with arena=true it would need "
               << ::lms::formatBytes(r.arenaBytes());
        }
        os << "\n";
      }
      const ::lms::Timeline &tl = r.timeline;
      os << "  estimated time on " << deviceSpec.name << ": "
         << ::lms::formatSeconds(tl.totalSeconds) << " over " << g.numOps()
         << " ops (compute " << ::lms::formatSeconds(tl.computeSeconds);
      if (tl.d2hBytes + tl.h2dBytes > 0)
        os << ", stall " << ::lms::formatSeconds(tl.stallSeconds) << ": "
           << llvm::formatv("{0:P1}", tl.computeSeconds > 0
                                          ? tl.stallSeconds / tl.computeSeconds
                                          : 0.0)
           << " over unlimited memory; " << ::lms::formatBytes(tl.d2hBytes)
           << " to host, " << ::lms::formatBytes(tl.h2dBytes) << " to device";
      os << ")\n";
    }
  }

  void printJson(raw_ostream &os, const std::vector<FunctionReport> &reports) {
    llvm::json::OStream json(os, 2);
    json.object([&] {
      json.attributeObject("device", [&] {
        json.attribute("name", deviceSpec.name);
        json.attribute("capacity_bytes", deviceSpec.capacityBytes);
        if (deviceSpec.physicalBytes)
          json.attribute("physical_bytes", deviceSpec.physicalBytes);
        json.attribute("peak_flops", deviceSpec.peakFlops);
        json.attribute("memory_bandwidth", deviceSpec.memoryBandwidth);
        json.attribute("h2d_bandwidth", deviceSpec.h2dBandwidth);
        json.attribute("d2h_bandwidth", deviceSpec.d2hBandwidth);
      });
      json.attribute("alignment", static_cast<uint64_t>(alignment));
      json.attributeArray("functions", [&] {
        for (const FunctionReport &r : reports)
          printJsonFunction(json, r);
      });
    });
    os << "\n";
  }

  /// A JSON number, or null where the value is not finite (JSON has no
  /// inf or nan).
  static llvm::json::Value jsonNumber(double value) {
    if (!std::isfinite(value))
      return nullptr;
    return value;
  }

  void printJsonFunction(llvm::json::OStream &json, const FunctionReport &r) {
    const FunctionGraph &fg = *r.graph;
    const ::lms::Graph &g = fg.getGraph();
    json.object([&] {
      json.attribute("name", r.name);
      json.attribute("num_ops", static_cast<uint64_t>(g.numOps()));
      json.attribute("peak_bytes", r.profile.peakBytes);
      json.attribute("host_peak_bytes", r.profile.hostPeakBytes);
      json.attribute("min_feasible_bytes", r.minFeasibleBytes);
      if (r.profile.peakOp >= 0) {
        Operation *op = fg.getOp(r.profile.peakOp);
        json.attributeObject("peak_op", [&] {
          json.attribute("index", static_cast<int64_t>(r.profile.peakOp));
          json.attribute("name", op->getName().getStringRef());
          json.attribute("loc", locationString(op->getLoc()));
        });
      } else {
        json.attribute("peak_op", nullptr);
      }
      json.attributeArray("live_at_peak", [&] {
        size_t shown = std::min<size_t>(top, r.profile.residentAtPeak.size());
        for (size_t i = 0; i < shown; ++i) {
          TensorIndex t = r.profile.residentAtPeak[i];
          json.object([&] {
            json.attribute("value", fg.getTensorName(t));
            json.attribute("bytes", g.tensor(t).bytes);
            json.attribute("loc",
                           locationString(fg.getAllocatingValue(t).getLoc()));
          });
        }
      });
      json.attribute("min_feasible_op", static_cast<int64_t>(r.minFeasibleOp));
      json.attribute("flops", jsonNumber(r.flops));
      json.attribute("estimated_time_s", jsonNumber(r.timeline.totalSeconds));
      json.attribute("estimated_compute_s",
                     jsonNumber(r.timeline.computeSeconds));
      json.attribute("estimated_stall_s", jsonNumber(r.timeline.stallSeconds));
      json.attribute("d2h_bytes", r.timeline.d2hBytes);
      json.attribute("h2d_bytes", r.timeline.h2dBytes);
      if (std::optional<uint64_t> bytes = r.budgetBytes())
        json.attribute("budget_bytes", *bytes);
      printJsonArena(json, r);
      json.attributeObject("lms_ops", [&] {
        json.attribute("swap_out", static_cast<int64_t>(r.swapOuts));
        json.attribute("swap_wait", static_cast<int64_t>(r.swapWaits));
        json.attribute("swap_in", static_cast<int64_t>(r.swapIns));
        json.attribute("recompute", static_cast<int64_t>(r.recomputes));
      });
      if (r.strippedGraph)
        json.attribute("peak_bytes_without_lms", r.strippedProfile.peakBytes);
      json.attributeArray("timeline", [&] {
        for (auto [index, memory] : r.profile.computeSteps)
          json.object([&] {
            json.attribute("index", static_cast<int64_t>(index));
            json.attribute("name", g.op(index).name);
            json.attribute("before", memory.before);
            json.attribute("live_bytes", memory.during);
            json.attribute("after", memory.after);
          });
      });
    });
  }

  /// The arena: its size against the live peak, and every buffer with its
  /// offset and the ops it is alive over.
  void printJsonArena(llvm::json::OStream &json, const FunctionReport &r) {
    const FunctionGraph &fg = *r.graph;
    const ::lms::Placement &arena = r.placement;
    json.attributeObject("arena", [&] {
      json.attribute("bytes", r.arenaBytes());
      json.attribute("live_peak_bytes", r.profile.peakBytes);
      json.attribute("fragmentation", jsonNumber(arena.fragmentation()));
      // The placement the offsets below belong to (a call is a block of
      // its transient bytes there).
      // The smallest budget offloading reaches with the arena.
      json.attribute("min_feasible_bytes", r.arenaMinFeasibleBytes);
      json.attribute("placed_bytes", arena.arenaBytes);
      json.attribute("placed_live_peak_bytes", arena.livePeakBytes);
      json.attribute("order", arena.strategy);
      json.attributeArray("buffers", [&] {
        for (auto [i, life] : llvm::enumerate(arena.buffers))
          json.object([&] {
            json.attribute(
                "value",
                life.tensor >= 0
                    ? fg.getTensorName(life.tensor)
                    : llvm::formatv("transient of op {0}", life.op).str());
            json.attribute("bytes", life.bytes);
            json.attribute("offset", arena.offsets[i]);
            auto [first, last] = opRange(r, life);
            json.attribute("first_op", static_cast<int64_t>(first));
            json.attribute("last_op", static_cast<int64_t>(last));
            // The plan steps [begin, end) it is alive over: what the
            // placement saw (lms-bench-placement --reports places them
            // again).
            json.attribute("begin_step", static_cast<int64_t>(life.begin));
            json.attribute("end_step", static_cast<int64_t>(life.end));
          });
      });
    });
  }

  /// The ops a buffer is alive over: from the op that allocates it (-1 when
  /// it is resident on entry) to the last op before its release.
  static std::pair<OpIndex, OpIndex> opRange(const FunctionReport &r,
                                             const ::lms::BufferLife &life) {
    const ::lms::Graph &g = r.graph->getGraph();
    bool onEntry = life.tensor >= 0 && life.begin == 0 &&
                   g.tensor(life.tensor).producer == ::lms::kEntry;
    OpIndex first = !onEntry && life.begin < r.stepOp.size()
                        ? r.stepOp[life.begin]
                        : OpIndex(-1);
    OpIndex last = life.end > 0 && life.end - 1 < r.stepOp.size()
                       ? r.stepOp[life.end - 1]
                       : first;
    return {first, last};
  }

  void printSvg(raw_ostream &os, const std::vector<FunctionReport> &reports) {
    std::vector<::lms::Chart> charts;
    for (const FunctionReport &r : reports) {
      const FunctionGraph &fg = *r.graph;
      const ::lms::Graph &g = fg.getGraph();
      ::lms::Chart chart;
      chart.title = "@" + r.name + " on " + deviceSpec.name;
      chart.budget = r.budgetBytes();
      if (r.strippedGraph) {
        // x is the index among the ops that are not lms ops, so that the
        // curves with and without LMS line up.
        ::lms::ChartSeries without{"without LMS", "#1f77b4", {}};
        for (auto [index, memory] : r.strippedProfile.computeSteps)
          without.points.push_back({static_cast<double>(index), memory.during});
        chart.series.push_back(std::move(without));
        ::lms::ChartSeries with{"with LMS", "#ff7f0e", {}};
        // x of an op is the index of its copy in the program without LMS; an
        // lms op sits half-way after the op before it.
        double previous = -0.5;
        for (auto [index, memory] : r.profile.computeSteps) {
          Operation *op = fg.getOp(index);
          bool isLMS = isa_and_nonnull<LMSDialect>(op->getDialect());
          double x = previous + 0.5;
          if (!isLMS) {
            auto clone = cloneOf.find(op);
            std::optional<OpIndex> strippedIndex =
                clone == cloneOf.end()
                    ? std::nullopt
                    : r.strippedGraph->lookupOp(clone->second);
            x = strippedIndex ? static_cast<double>(*strippedIndex)
                              : previous + 1;
            previous = x;
          }
          with.points.push_back({x, memory.during});
          if (!isLMS)
            continue;
          ::lms::ChartMarker marker;
          marker.x = x;
          std::string what;
          if (auto swapOut = dyn_cast<SwapOutOp>(op)) {
            marker.kind = ::lms::ChartMarker::SwapOut;
            what = "swap-out of " + fg.getValueName(swapOut.getSource());
          } else if (auto wait = dyn_cast<SwapWaitOp>(op)) {
            marker.kind = ::lms::ChartMarker::SwapWait;
            what = "swap wait of " + fg.getValueName(wait.getHandle());
          } else if (auto swapIn = dyn_cast<SwapInOp>(op)) {
            marker.kind = ::lms::ChartMarker::SwapIn;
            what = "swap-in of " + fg.getValueName(swapIn.getHandle());
          } else if (isa<RecomputeOp>(op)) {
            marker.kind = ::lms::ChartMarker::Recompute;
            what = "recompute";
          } else {
            continue;
          }
          marker.label = what + " (" + locationString(op->getLoc()) + ")";
          chart.markers.push_back(std::move(marker));
        }
        chart.series.push_back(std::move(with));
      } else {
        ::lms::ChartSeries series{"live device bytes", "#1f77b4", {}};
        for (auto [index, memory] : r.profile.computeSteps)
          series.points.push_back({static_cast<double>(index), memory.during});
        chart.series.push_back(std::move(series));
      }
      (void)g;
      charts.push_back(std::move(chart));
      charts.push_back(addressMap(r));
    }
    os << ::lms::renderSvg(charts);
  }

  /// The arena's address map: each buffer a rectangle over the ops it is
  /// alive over, at its offset (as XLA's and PyTorch's memory viewers draw).
  ::lms::Chart addressMap(const FunctionReport &r) {
    const FunctionGraph &fg = *r.graph;
    const ::lms::Placement &arena = r.placement;
    ::lms::Chart chart;
    chart.title = llvm::formatv("@{0}: arena {1} for a live peak of {2} "
                                "(fragmentation {3:P1})",
                                r.name, ::lms::formatBytes(arena.arenaBytes),
                                ::lms::formatBytes(arena.livePeakBytes),
                                arena.fragmentation())
                      .str();
    chart.yLabel = "offset in the arena";
    chart.budget = r.budgetBytes();
    for (auto [i, life] : llvm::enumerate(arena.buffers)) {
      if (life.bytes == 0 || life.begin >= life.end)
        continue;
      auto [first, last] = opRange(r, life);
      std::string name =
          life.tensor >= 0
              ? fg.getTensorName(life.tensor)
              : llvm::formatv("transient of op {0}", life.op).str();
      chart.rects.push_back(
          {static_cast<double>(first), static_cast<double>(last + 1),
           arena.offsets[i], arena.offsets[i] + life.bytes,
           llvm::formatv("{0}: {1} at offset {2}, ops {3}..{4}", name,
                         ::lms::formatBytes(life.bytes), arena.offsets[i],
                         first, last)
               .str()});
    }
    return chart;
  }

  /// The arena lowering's need, with the callees' models shared (set
  /// while runOnOperation runs).
  BudgetedBytes *arenaMeasure = nullptr;
  /// The options of that measure (arena=true, its model cache).
  const GraphOptions *ownOptions = nullptr;
  ModuleGraphAnalysis *graphs = nullptr;
  ::lms::DeviceSpec deviceSpec;
  /// Ops of the module (not lms ops) to their copies in the stripped module.
  DenseMap<Operation *, Operation *> cloneOf;
};

} // namespace
