//===- MemoryAnalysis.h - Liveness and peak memory of functions -*- C++ -*-===//
//
// Analyses of one function (an op with a single-block body, such as
// `func.func`), usable from any pass:
//
//   auto &peak = getAnalysis<MemoryPeakAnalysis>();   // on a function op
//   if (!peak.isValid()) return signalPassFailure();  // diagnostics emitted
//   peak.getPeakBytes(); peak.getPeakOp(); peak.getLiveAtPeak();
//
//   auto &live = getAnalysis<BufferLiveness>();
//   live.getLiveIn(op); live.getLiveOut(op); live.getDying(op);
//
// Both share one FunctionGraphAnalysis (the translation to the graph core,
// with default GraphOptions). Passes that need other options take the graphs
// from the module's ModuleGraphAnalysis, keyed by their options, and
// construct the analyses from them:
//
//   auto &graphs = getAnalysis<ModuleGraphAnalysis>();  // on the module
//   FailureOr<const FunctionGraph *> graph = graphs.getGraph(func, options);
//   MemoryPeakAnalysis peak(**graph);
//   ...
//   markAllAnalysesPreserved();  // when the pass changed nothing
//
// Buffers, not SSA values, are what is live (see FunctionGraph.h); a buffer
// is named by the value that allocates it.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_ANALYSIS_MEMORYANALYSIS_H
#define LMS_ANALYSIS_MEMORYANALYSIS_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Graph/Memory.h"

#include "mlir/Pass/AnalysisManager.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace mlir {
namespace lms {

/// The translation of a function into the graph core, cached by the analysis
/// manager. Invalid when the function cannot be translated; the diagnostics
/// were emitted when it was built.
class FunctionGraphAnalysis {
public:
  explicit FunctionGraphAnalysis(Operation *func);
  bool isValid() const { return succeeded(graph); }
  const FunctionGraph &getFunctionGraph() const { return *graph; }

private:
  FailureOr<FunctionGraph> graph;
};

/// The graphs of a module's functions, built at most once per function and
/// set of graph options while the module does not change, and kept by the
/// analysis manager across passes that preserve it (the read-only passes,
/// --lms-print-liveness and --lms-report-memory, do). The builds for one set
/// of options share one read-only analysis cache (callee summaries,
/// bufferization's in-place decisions, symbol tables: ModuleAccess::ReadOnly).
/// A pass that changes the module must not preserve it; the pass manager then
/// drops it, as any analysis not marked preserved. With
/// LMS_CHECK_ANALYSIS_CACHE=1 a graph handed out again is compared with a
/// fresh build, so a pass that preserves it wrongly is a fatal error.
class ModuleGraphAnalysis {
public:
  explicit ModuleGraphAnalysis(Operation *module);
  ~ModuleGraphAnalysis();
  ModuleGraphAnalysis(ModuleGraphAnalysis &&);

  /// The graph of `func` (a function of the module) built with `options`
  /// (their caches are not used: the analysis has its own per set of
  /// options). A failed build is not kept: its diagnostics are emitted
  /// again by the next request.
  FailureOr<const FunctionGraph *> getGraph(Operation *func,
                                            const GraphOptions &options);
  /// `options` with the analysis's shared cache for them, for builds the
  /// analysis does not keep (graphs of nested blocks, say).
  GraphOptions withSharedCache(const GraphOptions &options);

  /// How many graphs the analysis built, and how many requests it answered
  /// with a graph built before.
  unsigned getNumBuilt() const { return numBuilt; }
  unsigned getNumReused() const { return numReused; }

private:
  struct Entry;
  /// What of GraphOptions changes a graph (not its caches).
  /// (`arena` does not: it changes what a budget bounds, not the graph.)
  /// The timing device is keyed by its fields (deviceKey).
  using Key = std::tuple<uint64_t, bool, uint64_t, bool, bool, std::string>;
  static Key keyOf(const GraphOptions &options);
  Entry &entryFor(const GraphOptions &options);

  std::map<Key, std::unique_ptr<Entry>> entries;
  unsigned numBuilt = 0, numReused = 0;
};

/// For every op of the function body: the buffers live before it (live-in),
/// after it (live-out), and those whose last use it is (dying).
class BufferLiveness {
public:
  BufferLiveness(Operation *func, AnalysisManager &am);
  explicit BufferLiveness(const FunctionGraph &graph);

  bool isValid() const { return graph != nullptr; }
  const FunctionGraph &getFunctionGraph() const { return *graph; }

  /// Allocating values of the buffers live before `op` runs (defined earlier
  /// and used by `op` or later), in order of definition.
  SmallVector<Value> getLiveIn(Operation *op) const;
  /// Buffers still live after `op`.
  SmallVector<Value> getLiveOut(Operation *op) const;
  /// Buffers resident while `op` runs and released right after it.
  SmallVector<Value> getDying(Operation *op) const;
  /// Whether the buffer of `value` is live while `op` runs.
  bool isLiveDuring(Value value, Operation *op) const;

  /// One line per op: index, name, live-in, live-out, dying.
  void print(raw_ostream &os) const;

private:
  const FunctionGraph *graph = nullptr;
  ::lms::LiveIntervals intervals;
};

/// The peak device memory of the function in its textual order.
class MemoryPeakAnalysis {
public:
  MemoryPeakAnalysis(Operation *func, AnalysisManager &am);
  explicit MemoryPeakAnalysis(const FunctionGraph &graph);

  bool isValid() const { return graph != nullptr; }
  const FunctionGraph &getFunctionGraph() const { return *graph; }
  const ::lms::MemoryProfile &getProfile() const { return profile; }

  uint64_t getPeakBytes() const { return profile.peakBytes; }
  uint64_t getHostPeakBytes() const { return profile.hostPeakBytes; }
  /// The op during which the peak is reached (null for an empty body).
  Operation *getPeakOp() const;
  /// The buffers resident at the peak with their bytes, largest first.
  SmallVector<std::pair<Value, uint64_t>> getLiveAtPeak() const;
  /// Device bytes before, during and after `op` (a top-level op of the
  /// body); all zero for other ops.
  ::lms::OpMemory getOpMemory(Operation *op) const;

  void print(raw_ostream &os) const;

private:
  const FunctionGraph *graph = nullptr;
  ::lms::MemoryProfile profile;
};

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_MEMORYANALYSIS_H
