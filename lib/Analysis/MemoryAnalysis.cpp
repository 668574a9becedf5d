//===- MemoryAnalysis.cpp - Liveness and peak memory of functions ---------===//

#include "LMS/Analysis/MemoryAnalysis.h"
#include "GraphBuilder.h"
#include "LMS/Graph/Units.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::TensorIndex;

FunctionGraphAnalysis::FunctionGraphAnalysis(Operation *func)
    : graph(FunctionGraph::build(func)) {}

//===----------------------------------------------------------------------===//
// ModuleGraphAnalysis
//===----------------------------------------------------------------------===//

struct ModuleGraphAnalysis::Entry {
  GraphOptions options;
  DenseMap<Operation *, std::unique_ptr<FunctionGraph>> graphs;
};

ModuleGraphAnalysis::ModuleGraphAnalysis(Operation *) {}
ModuleGraphAnalysis::~ModuleGraphAnalysis() = default;
ModuleGraphAnalysis::ModuleGraphAnalysis(ModuleGraphAnalysis &&) = default;

/// Every field of the timing device that a call's time reads, exactly.
static std::string deviceKey(const std::optional<::lms::DeviceSpec> &device) {
  if (!device)
    return "";
  return llvm::formatv("{0}/{1}/{2}/{3}/{4}/{5}/{6}", device->name,
                       llvm::format("%a", device->peakFlops),
                       llvm::format("%a", device->memoryBandwidth),
                       llvm::format("%a", device->h2dBandwidth),
                       llvm::format("%a", device->d2hBandwidth),
                       llvm::format("%a", device->opOverhead),
                       llvm::format("%a", device->copyLatency))
      .str();
}

ModuleGraphAnalysis::Key
ModuleGraphAnalysis::keyOf(const GraphOptions &options) {
  return Key(options.alignment, options.dynamicBytes.has_value(),
             options.dynamicBytes.value_or(0), options.keepArgumentsResident,
             options.useBufferizationAnalysis, deviceKey(options.timingDevice));
}

ModuleGraphAnalysis::Entry &
ModuleGraphAnalysis::entryFor(const GraphOptions &options) {
  std::unique_ptr<Entry> &entry = entries[keyOf(options)];
  if (!entry) {
    entry = std::make_unique<Entry>();
    entry->options = options;
    entry->options.callSummaries = makeCallSummaryCache(ModuleAccess::ReadOnly);
    entry->options.arenaModels = nullptr;
  }
  return *entry;
}

GraphOptions ModuleGraphAnalysis::withSharedCache(const GraphOptions &options) {
  GraphOptions shared = options;
  shared.callSummaries = entryFor(options).options.callSummaries;
  return shared;
}

FailureOr<const FunctionGraph *>
ModuleGraphAnalysis::getGraph(Operation *func, const GraphOptions &options) {
  Entry &entry = entryFor(options);
  auto found = entry.graphs.find(func);
  if (found != entry.graphs.end()) {
    ++numReused;
    // A pass that changed the module but said it did not is caught here.
    checkCachedBuild(func, nullptr, entry.options, *found->second);
    return static_cast<const FunctionGraph *>(found->second.get());
  }
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, entry.options);
  if (failed(graph))
    return failure();
  ++numBuilt;
  auto &kept = entry.graphs[func];
  kept = std::make_unique<FunctionGraph>(std::move(*graph));
  return static_cast<const FunctionGraph *>(kept.get());
}

static std::string functionName(Operation *func) {
  if (auto symbol = func->getAttrOfType<StringAttr>("sym_name"))
    return "@" + symbol.getValue().str();
  return func->getName().getStringRef().str();
}

//===----------------------------------------------------------------------===//
// BufferLiveness
//===----------------------------------------------------------------------===//

BufferLiveness::BufferLiveness(Operation *func, AnalysisManager &am) {
  auto &translation = am.getAnalysis<FunctionGraphAnalysis>();
  if (!translation.isValid())
    return;
  graph = &translation.getFunctionGraph();
  intervals = ::lms::computeLiveIntervals(graph->getGraph());
}

BufferLiveness::BufferLiveness(const FunctionGraph &graph)
    : graph(&graph), intervals(::lms::computeLiveIntervals(graph.getGraph())) {}

template <typename Pred>
static SmallVector<Value> collect(const FunctionGraph &graph, Pred pred) {
  SmallVector<Value> values;
  for (TensorIndex t = 0;
       t < static_cast<TensorIndex>(graph.getGraph().numTensors()); ++t)
    if (pred(t))
      values.push_back(graph.getAllocatingValue(t));
  return values;
}

SmallVector<Value> BufferLiveness::getLiveIn(Operation *op) const {
  std::optional<OpIndex> index = graph ? graph->lookupOp(op) : std::nullopt;
  if (!index)
    return {};
  return collect(*graph,
                 [&](TensorIndex t) { return intervals.isLiveIn(t, *index); });
}

SmallVector<Value> BufferLiveness::getLiveOut(Operation *op) const {
  std::optional<OpIndex> index = graph ? graph->lookupOp(op) : std::nullopt;
  if (!index)
    return {};
  return collect(*graph,
                 [&](TensorIndex t) { return intervals.isLiveOut(t, *index); });
}

SmallVector<Value> BufferLiveness::getDying(Operation *op) const {
  std::optional<OpIndex> index = graph ? graph->lookupOp(op) : std::nullopt;
  if (!index)
    return {};
  return collect(*graph, [&](TensorIndex t) {
    return intervals.isLiveDuring(t, *index) && !intervals.isLiveOut(t, *index);
  });
}

bool BufferLiveness::isLiveDuring(Value value, Operation *op) const {
  if (!graph)
    return false;
  std::optional<OpIndex> index = graph->lookupOp(op);
  std::optional<TensorIndex> t = graph->lookupBuffer(value);
  return index && t && intervals.isLiveDuring(*t, *index);
}

void BufferLiveness::print(raw_ostream &os) const {
  if (!graph)
    return;
  const ::lms::Graph &g = graph->getGraph();
  os << "// liveness of " << functionName(graph->getFunction()) << "\n";
  // Sweep: tensors sorted by start, then kept in a set ordered by index.
  std::vector<std::vector<TensorIndex>> starting(g.numOps() + 1);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(g.numTensors()); ++t) {
    if (intervals.end[t] < intervals.start[t] &&
        intervals.start[t] != ::lms::kEntry)
      continue;
    starting[intervals.start[t] + 1].push_back(t);
  }
  std::set<TensorIndex> live(starting[0].begin(), starting[0].end());
  auto printSet = [&](StringRef label, auto pred) {
    os << " " << label << ": {";
    bool first = true;
    for (TensorIndex t : live)
      if (pred(t)) {
        os << (first ? "" : ", ") << graph->getTensorName(t);
        first = false;
      }
    os << "}";
  };
  for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i) {
    // Drop the tensors that ended before this op.
    for (auto it = live.begin(); it != live.end();)
      it = intervals.end[*it] < i ? live.erase(it) : std::next(it);
    live.insert(starting[i + 1].begin(), starting[i + 1].end());
    os << "op " << i << " " << g.op(i).name << ":";
    printSet("live-in",
             [&](TensorIndex t) { return intervals.isLiveIn(t, i); });
    printSet("live-out",
             [&](TensorIndex t) { return intervals.isLiveOut(t, i); });
    printSet("dying", [&](TensorIndex t) {
      return intervals.isLiveDuring(t, i) && !intervals.isLiveOut(t, i);
    });
    os << "\n";
  }
}

//===----------------------------------------------------------------------===//
// MemoryPeakAnalysis
//===----------------------------------------------------------------------===//

MemoryPeakAnalysis::MemoryPeakAnalysis(Operation *func, AnalysisManager &am) {
  auto &translation = am.getAnalysis<FunctionGraphAnalysis>();
  if (!translation.isValid())
    return;
  graph = &translation.getFunctionGraph();
  profile = ::lms::evaluateSchedule(graph->getGraph());
}

MemoryPeakAnalysis::MemoryPeakAnalysis(const FunctionGraph &graph)
    : graph(&graph), profile(::lms::evaluateSchedule(graph.getGraph())) {}

Operation *MemoryPeakAnalysis::getPeakOp() const {
  if (!graph || profile.peakOp < 0)
    return nullptr;
  return graph->getOp(profile.peakOp);
}

SmallVector<std::pair<Value, uint64_t>>
MemoryPeakAnalysis::getLiveAtPeak() const {
  SmallVector<std::pair<Value, uint64_t>> live;
  if (!graph)
    return live;
  for (TensorIndex t : profile.residentAtPeak)
    live.push_back(
        {graph->getAllocatingValue(t), graph->getGraph().tensor(t).bytes});
  return live;
}

::lms::OpMemory MemoryPeakAnalysis::getOpMemory(Operation *op) const {
  std::optional<OpIndex> index = graph ? graph->lookupOp(op) : std::nullopt;
  if (!index || static_cast<size_t>(*index) >= profile.computeSteps.size())
    return {};
  // The reference plan computes every op once, in order.
  return profile.computeSteps[*index].second;
}

void MemoryPeakAnalysis::print(raw_ostream &os) const {
  if (!graph)
    return;
  os << "// memory of " << functionName(graph->getFunction()) << ": peak "
     << profile.peakBytes << " bytes";
  if (Operation *op = getPeakOp())
    os << " at op " << profile.peakOp << " " << op->getName();
  os << ", host peak " << profile.hostPeakBytes << " bytes\n";
  os << "// live at the peak:";
  for (auto [value, bytes] : getLiveAtPeak())
    os << " " << graph->getValueName(value) << " (" << bytes << ")";
  os << "\n";
  for (auto [index, memory] : profile.computeSteps)
    os << "op " << index << " " << graph->getGraph().op(index).name
       << ": before " << memory.before << " during " << memory.during
       << " after " << memory.after << "\n";
}
