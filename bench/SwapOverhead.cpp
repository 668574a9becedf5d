//===- SwapOverhead.cpp - Swap planners side by side ----------------------===//
//
// For each model (an MLIR file), device preset and budget (a fraction of the
// model's peak), runs LMS's swap planner, the TFLMS v2 baseline and
// swap-everything on the same graph (the one --lms-insert-swaps plans on) and
// prints the simulated overhead against unlimited memory: a markdown table
// and, with --json, the rows.
//
//   lms-bench-swap model.mlir... [--presets v100-16g,h200] \
//       [--budgets 0.9,0.7,0.5,0.3] [--json out.json]
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;

static llvm::cl::list<std::string> inputs(llvm::cl::Positional,
                                          llvm::cl::desc("<model.mlir>..."),
                                          llvm::cl::OneOrMore);
static llvm::cl::list<std::string> presets("presets",
                                           llvm::cl::desc("Device presets"),
                                           llvm::cl::CommaSeparated);
static llvm::cl::list<double> budgets("budgets",
                                      llvm::cl::desc("Budgets, fractions of "
                                                     "the peak"),
                                      llvm::cl::CommaSeparated);
static llvm::cl::opt<std::string>
    jsonPath("json", llvm::cl::desc("Write JSON here"), llvm::cl::init(""));

namespace {
struct Outcome {
  bool fits = false;
  double overhead = 0; // stall / compute
  double seconds = 0;  // planning time
  uint64_t d2h = 0, h2d = 0;
  size_t decisions = 0;
};

std::string cell(const Outcome &o) {
  if (!o.fits)
    return "does not fit";
  return llvm::formatv("{0:P1}", o.overhead).str();
}
} // namespace

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "LMS swap planner benchmark\n");
  if (presets.empty())
    for (const ::lms::DeviceSpec &spec : ::lms::getDevicePresets())
      presets.push_back(spec.name);
  if (budgets.empty())
    for (double b : {0.9, 0.7, 0.5, 0.3})
      budgets.push_back(b);

  DialectRegistry registry;
  registerAllDialects(registry);
  registry.insert<mlir::lms::LMSDialect>();
  MLIRContext context(registry);
  context.allowUnregisteredDialects();

  llvm::json::Array rows;
  llvm::outs()
      << "| model | device | budget | LMS | TFLMS v2 | swap everything "
         "| LMS plan s |\n|---|---|---|---|---|---|---|\n";
  int lmsBetterOrEqual = 0, tflmsFits = 0, lmsOnly = 0, cases = 0;
  std::string summary = "\n| model | ops | peak | smallest feasible budget |\n"
                        "|---|---|---|---|\n";
  for (const std::string &path : inputs) {
    llvm::SourceMgr sourceMgr;
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(path, sourceMgr, ParserConfig(&context));
    if (!module) {
      llvm::errs() << "cannot parse " << path << "\n";
      return 1;
    }
    // The largest function of the module.
    FunctionOpInterface func;
    size_t most = 0;
    for (auto f : module->getOps<FunctionOpInterface>())
      if (!f.isExternal() &&
          f.getFunctionBody().front().getOperations().size() >= most) {
        most = f.getFunctionBody().front().getOperations().size();
        func = f;
      }
    FailureOr<mlir::lms::FunctionGraph> graph =
        mlir::lms::FunctionGraph::build(func);
    if (failed(graph))
      return 1;
    const ::lms::Graph &g = graph->getGraph();
    mlir::lms::SwapCandidates candidates(*graph);
    ::lms::SwapOptions options;
    options.valueAfterGap = [&](::lms::TensorIndex t, ::lms::OpIndex a,
                                ::lms::OpIndex b) {
      return candidates.valueAfterGap(t, a, b);
    };
    options.canReuseAfter = [&](::lms::TensorIndex t, ::lms::OpIndex a) {
      return candidates.canReuseAfter(t, a);
    };
    uint64_t peak = ::lms::evaluateSchedule(g).peakBytes;
    uint64_t smallest = ::lms::smallestSwapPeak(g, options).first;
    std::string model = llvm::sys::path::stem(path).str();
    summary += llvm::formatv("| {0} | {1} | {2} | {3} ({4:P0} of the peak) |\n",
                             model, g.numOps(), ::lms::formatBytes(peak),
                             ::lms::formatBytes(smallest),
                             peak ? static_cast<double>(smallest) / peak : 0.0)
                   .str();
    for (const std::string &preset : presets) {
      std::optional<::lms::DeviceSpec> device =
          ::lms::lookupDevicePreset(preset);
      if (!device) {
        llvm::errs() << "unknown preset " << preset << "\n";
        return 1;
      }
      for (double fraction : budgets) {
        uint64_t budget = static_cast<uint64_t>(peak * fraction);
        auto run = [&](auto planner) {
          Outcome o;
          auto t0 = std::chrono::steady_clock::now();
          llvm::Expected<::lms::SwapResult> r = planner();
          o.seconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
          if (!r) {
            llvm::consumeError(r.takeError());
            return o;
          }
          o.fits = r->peakBytes <= budget;
          o.overhead =
              r->timeline.computeSeconds > 0
                  ? r->timeline.stallSeconds / r->timeline.computeSeconds
                  : 0;
          o.d2h = r->timeline.d2hBytes;
          o.h2d = r->timeline.h2dBytes;
          o.decisions = r->plan.decisions.size();
          return o;
        };
        Outcome ours =
            run([&] { return ::lms::planSwaps(g, *device, budget, options); });
        Outcome tflms = run(
            [&] { return ::lms::planSwapsTFLMS(g, *device, budget, options); });
        Outcome all = run([&]() -> llvm::Expected<::lms::SwapResult> {
          return ::lms::planSwapEverything(g, *device, options);
        });
        ++cases;
        if (tflms.fits) {
          ++tflmsFits;
          if (ours.fits && ours.overhead <= tflms.overhead + 1e-9)
            ++lmsBetterOrEqual;
        } else if (ours.fits) {
          ++lmsOnly;
        }
        llvm::outs() << llvm::formatv(
            "| {0} | {1} | {2:P0} ({3}) | {4} | {5} | {6} | {7:F3} |\n", model,
            preset, fraction, ::lms::formatBytes(budget), cell(ours),
            cell(tflms), cell(all), ours.seconds);
        auto json = [](const Outcome &o) {
          return llvm::json::Object{
              {"fits", o.fits},
              {"overhead", o.overhead},
              {"d2h_bytes", o.d2h},
              {"h2d_bytes", o.h2d},
              {"swaps", static_cast<int64_t>(o.decisions)},
              {"plan_seconds", o.seconds}};
        };
        rows.push_back(
            llvm::json::Object{{"model", model},
                               {"device", preset},
                               {"budget_fraction", fraction},
                               {"budget_bytes", budget},
                               {"peak_bytes", peak},
                               {"smallest_bytes", smallest},
                               {"num_ops", static_cast<int64_t>(g.numOps())},
                               {"lms", json(ours)},
                               {"tflms", json(tflms)},
                               {"swap_all", json(all)}});
      }
    }
  }
  llvm::outs() << summary;
  llvm::outs() << llvm::formatv(
      "\n{0} cases; TFLMS fits {1}; LMS at most TFLMS's overhead in {2} of "
      "those; LMS fits {3} budgets TFLMS cannot.\n",
      cases, tflmsFits, lmsBetterOrEqual, lmsOnly);
  if (!jsonPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return 1;
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"benchmark", "swap-overhead"},
                                     {"rows", std::move(rows)}}))
       << "\n";
  }
  return 0;
}
