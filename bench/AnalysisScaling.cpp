//===- AnalysisScaling.cpp - Analysis time against function size ----------===//
//
// Builds synthetic functions of n ops in memory (a chain, and a wide DAG whose
// ops read two random values among the last 64) and times the translation to
// the graph core plus the peak and liveness evaluation, which is what every
// LMS pass pays before planning. Prints a table and writes JSON.
//
//   lms-bench-analysis [--sizes 1000,10000,100000] [--json out.json]
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Memory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <random>

using namespace mlir;

static llvm::cl::list<int64_t> sizes("sizes",
                                     llvm::cl::desc("Function sizes in ops"),
                                     llvm::cl::CommaSeparated);
static llvm::cl::opt<std::string>
    jsonPath("json", llvm::cl::desc("Write JSON here"), llvm::cl::init(""));
static llvm::cl::opt<int> repeats("repeats",
                                  llvm::cl::desc("Timed runs per case"),
                                  llvm::cl::init(3));

/// A function of `n` arith.addf ops on tensor<256xf32>: a chain (each op reads
/// the previous result) or a wide DAG (two random values among the last 64).
static func::FuncOp buildFunction(OpBuilder &builder, Location loc,
                                  StringRef name, int64_t n, bool wide) {
  auto type = RankedTensorType::get({256}, builder.getF32Type());
  auto func = func::FuncOp::create(builder, loc, name,
                                   builder.getFunctionType({type}, {type}));
  Block *body = func.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  std::mt19937 rng(42);
  SmallVector<Value> values = {body->getArgument(0)};
  for (int64_t i = 0; i < n; ++i) {
    Value lhs, rhs;
    if (wide) {
      size_t window = std::min<size_t>(64, values.size());
      std::uniform_int_distribution<size_t> pick(values.size() - window,
                                                 values.size() - 1);
      lhs = values[pick(rng)];
      rhs = values[pick(rng)];
    } else {
      lhs = rhs = values.back();
    }
    values.push_back(arith::AddFOp::create(b, loc, lhs, rhs));
  }
  func::ReturnOp::create(b, loc, values.back());
  return func;
}

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "LMS analysis scaling benchmark\n");
  if (sizes.empty())
    for (int64_t n : {1000, 10000, 100000})
      sizes.push_back(n);

  MLIRContext context;
  context.loadDialect<func::FuncDialect, arith::ArithDialect>();
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();

  llvm::json::Array rows;
  llvm::outs() << llvm::formatv("| {0,-6} | {1,9} | {2,12} | {3,12} | {4,12} "
                                "| {5,10} |\n",
                                "shape", "ops", "translate s", "evaluate s",
                                "total s", "ns per op");
  llvm::outs() << "|--------|-----------|--------------|--------------|"
                  "--------------|------------|\n";
  for (bool wide : {false, true}) {
    for (int64_t n : sizes) {
      OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
      builder.setInsertionPointToEnd(module->getBody());
      func::FuncOp func =
          buildFunction(builder, loc, wide ? "wide" : "chain", n, wide);
      double bestTranslate = 1e30, bestEvaluate = 1e30;
      uint64_t peak = 0;
      for (int r = 0; r < repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        FailureOr<mlir::lms::FunctionGraph> graph =
            mlir::lms::FunctionGraph::build(func);
        auto t1 = std::chrono::steady_clock::now();
        if (failed(graph))
          return 1;
        ::lms::MemoryProfile profile =
            ::lms::evaluateSchedule(graph->getGraph());
        ::lms::LiveIntervals live =
            ::lms::computeLiveIntervals(graph->getGraph());
        auto t2 = std::chrono::steady_clock::now();
        peak = profile.peakBytes;
        (void)live;
        bestTranslate = std::min(
            bestTranslate, std::chrono::duration<double>(t1 - t0).count());
        bestEvaluate = std::min(bestEvaluate,
                                std::chrono::duration<double>(t2 - t1).count());
      }
      double total = bestTranslate + bestEvaluate;
      llvm::outs() << llvm::formatv(
          "| {0,-6} | {1,9} | {2,12:F4} | {3,12:F4} | {4,12:F4} | {5,10:F0} "
          "|\n",
          wide ? "wide" : "chain", n, bestTranslate, bestEvaluate, total,
          total / static_cast<double>(n) * 1e9);
      rows.push_back(llvm::json::Object{{"shape", wide ? "wide" : "chain"},
                                        {"ops", n},
                                        {"translate_s", bestTranslate},
                                        {"evaluate_s", bestEvaluate},
                                        {"total_s", total},
                                        {"peak_bytes", peak}});
    }
  }
  if (!jsonPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonPath, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "cannot write " << jsonPath << ": " << ec.message()
                   << "\n";
      return 1;
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"benchmark", "analysis-scaling"},
                                     {"rows", std::move(rows)}}))
       << "\n";
  }
  return 0;
}
