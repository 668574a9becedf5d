//===- AnalysisCache.cpp - What the builds of a pass share ----------------===//
//
// Bufferization's in-place decisions for the graphs (One-Shot Bufferize's
// analysis, run on the module or on the functions a build reads), the cache
// a pass shares between its builds (CallSummaryCache: callee summaries,
// call depths, symbol tables, decisions, with what keeps them valid declared
// by ModuleAccess), and the check of every cached build against a fresh one
// (LMS_CHECK_ANALYSIS_CACHE). The translation itself is FunctionGraph.cpp.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace mlir::lms;

namespace mlir {
namespace lms {

std::shared_ptr<CallSummaryCache> makeCallSummaryCache(ModuleAccess access) {
  return std::make_shared<CallSummaryCache>(access);
}

SymbolTableCollection &getSymbolTables(CallSummaryCache &cache) {
  return cache.symbolTables;
}

void forgetCallSummaries(CallSummaryCache &cache) {
  cache.entries.clear();
  cache.summarized.clear();
}

} // namespace lms
} // namespace mlir

/// Beyond this many ops in a module the bufferization analysis is skipped
/// (the rule alone is linear).
static constexpr size_t kMaxAnalysedOps = 200000;

InPlaceDecisions mlir::lms::getBufferizationDecisions(
    ModuleOp module, ArrayRef<Operation *> functions, bool referencedOnly) {
  InPlaceDecisions decisions;
  DenseSet<Operation *> wanted(functions.begin(), functions.end());
  DenseSet<StringAttr> referenced;
  if (referencedOnly)
    for (Operation *func : functions)
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(&func->getRegion(0)))
        for (const SymbolTable::SymbolUse &use : *uses)
          referenced.insert(use.getSymbolRef().getRootReference());
  // Upstream's own pass, as the lowering runs it, in its analysis-only mode
  // on a module of copies of those functions (and of the module's other
  // symbols: globals): it annotates every op with the in-place decision of
  // each operand.
  OpBuilder builder(module->getContext());
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  copy->getOperation()->setAttrs(module->getAttrDictionary());
  builder.setInsertionPointToEnd(copy->getBody());
  SmallVector<std::pair<Operation *, Operation *>> copied;
  for (Operation &op : module.getBody()->getOperations()) {
    if (isa<FunctionOpInterface>(op) && !wanted.contains(&op)) {
      // Other functions only as declarations, for their symbols.
      auto other = cast<FunctionOpInterface>(op);
      if (referencedOnly && !referenced.contains(other.getNameAttr()))
        continue;
      Operation *decl = other->cloneWithoutRegions();
      builder.insert(decl);
      if (!other.isExternal())
        SymbolTable::setSymbolVisibility(decl,
                                         SymbolTable::Visibility::Private);
      continue;
    }
    Operation *clone = builder.clone(op);
    if (wanted.contains(&op))
      copied.push_back({&op, clone});
  }
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowUnknownOps = true;
  bufferize.testAnalysisOnly = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  {
    // Where the analysis rejects the IR, there are no decisions; its
    // diagnostics are not the user's business here.
    ScopedDiagnosticHandler silence(module->getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(pm.run(*copy)))
      return decisions;
  }
  // Each copy has the same ops in the same order as its original. Only ops
  // that bufferization knows (a BufferizableOpInterface model) decide.
  for (auto [original, clone] : copied) {
    SmallVector<Operation *> originals, clones;
    original->walk([&](Operation *op) { originals.push_back(op); });
    clone->walk([&](Operation *op) { clones.push_back(op); });
    if (originals.size() != clones.size())
      continue;
    for (auto [op, cloned] : llvm::zip(originals, clones)) {
      auto marks =
          cloned->getAttrOfType<ArrayAttr>("__inplace_operands_attr__");
      if (!marks || marks.size() != op->getNumOperands() ||
          !isa<bufferization::BufferizableOpInterface>(op))
        continue;
      // The lowering inlines recomputations before it bufferizes: inside
      // one the analysis decided for a region it never sees (it copies a
      // view that a recomputation yields); the rule applies there.
      if (op->getParentOfType<RecomputeOp>())
        continue;
      SmallVector<int8_t> &inPlace = decisions[op];
      for (Attribute mark : marks) {
        StringRef text = cast<StringAttr>(mark).getValue();
        inPlace.push_back(text == "true" ? 1 : text == "false" ? 0 : -1);
      }
    }
  }
  return decisions;
}

/// A hash of the IR under `root` that changes when any op, attribute,
/// property, operand or result type changes (ops by identity).
static llvm::hash_code hashIR(Operation *root) {
  llvm::hash_code hash = 0;
  root->walk([&](Operation *op) {
    hash = llvm::hash_combine(hash, op, op->getName().getAsOpaquePointer(),
                              op->getRawDictionaryAttrs().getAsOpaquePointer(),
                              op->hashProperties());
    for (Value operand : op->getOperands())
      hash = llvm::hash_combine(hash, operand.getAsOpaquePointer());
    for (Type type : op->getResultTypes())
      hash = llvm::hash_combine(hash, type.getAsOpaquePointer());
  });
  return hash;
}

namespace {
/// The decisions of the last module analysed, reused while its IR is
/// unchanged (the analyses build the graphs of a module's functions many
/// times; the bufferization analysis of the whole module runs once).
struct DecisionCache {
  std::mutex mutex;
  Operation *module = nullptr;
  llvm::hash_code hash = 0;
  std::shared_ptr<const InPlaceDecisions> decisions;
};
DecisionCache &decisionCache() {
  static DecisionCache cache;
  return cache;
}
} // namespace

/// The module of `scope`, or null.
static ModuleOp topModule(Operation *scope) {
  Operation *top = scope;
  while (top->getParentOp())
    top = top->getParentOp();
  return dyn_cast<ModuleOp>(top);
}

/// Whether bufferization's analysis runs on the ops under `roots`: some
/// value is a tensor, and they are at most kMaxAnalysedOps ops (beyond, the
/// rule alone decides: it is linear).
static bool worthAnalysing(ArrayRef<Operation *> roots) {
  size_t numOps = 0;
  bool hasTensors = false;
  for (Operation *root : roots)
    root->walk([&](Operation *op) {
      ++numOps;
      hasTensors |= llvm::any_of(op->getResultTypes(),
                                 [](Type t) { return isa<TensorType>(t); });
    });
  return hasTensors && numOps <= kMaxAnalysedOps;
}

/// The functions of `module` with a body.
static SmallVector<Operation *> functionsWithBodies(ModuleOp module) {
  SmallVector<Operation *> functions;
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      functions.push_back(func);
  return functions;
}

void GraphBuilder::analyzeInPlace(Operation *scope) {
  if (!options.useBufferizationAnalysis)
    return;
  CallSummaryCache *shared = options.callSummaries.get();
  if (!shared) {
    analyzeModuleInPlace(scope);
    return;
  }
  // A module that does not change: its decisions, once.
  if (shared->access == ModuleAccess::ReadOnly) {
    if (!shared->decisionsKnown) {
      analyzeModuleInPlace(scope);
      shared->decisions = inPlaceOperands;
      shared->decisionsKnown = true;
    }
    inPlaceOperands = shared->decisions;
    return;
  }
  // A pass that rewrites functions: the decisions while the functions this
  // build reads are the ones they were made for (a hash of each, not of the
  // module: a build then costs its own function).
  Operation *func = isa<FunctionOpInterface>(scope)
                        ? scope
                        : scope->getParentOfType<FunctionOpInterface>();
  ModuleOp module = topModule(scope);
  if (!module || !func)
    return analyzeModuleInPlace(scope);
  SmallVector<Operation *> changed;
  auto wholeModule = [&] {
    analyzeFunctions(module, functionsWithBodies(module),
                     /*referencedOnly=*/false);
  };
  if (!shared->decisionsKnown) {
    // The first build: the whole module, once.
    wholeModule();
    findCallers(module);
    shared->decisionsKnown = true;
  } else if (!sharedDecisionsCurrent(func, changed)) {
    // A function changed (or is new): it and its callees, unless the
    // functions without decisions are most of the module anyway.
    if (!shared->functionHashes.count(func))
      findCallers(module);
    for (Operation *function : changed)
      forgetCallers(function);
    SmallVector<Operation *> functions = withCallees(func);
    size_t all = functionsWithBodies(module).size();
    size_t without = all > shared->functionHashes.size()
                         ? all - shared->functionHashes.size()
                         : 0;
    if (2 * (without + functions.size()) >= all)
      wholeModule();
    else
      analyzeFunctions(module, functions, /*referencedOnly=*/true);
  }
  perFunctionDecisions = true;
}

void GraphBuilder::findCallers(ModuleOp module) {
  CallSummaryCache &shared = *options.callSummaries;
  shared.callers.clear();
  DenseSet<Operation *> present;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    present.insert(func);
    func->walk([&](CallOpInterface call) {
      if (auto callee = dyn_cast_or_null<FunctionOpInterface>(
              call.resolveCallableInTable(&symbolTables)))
        shared.callers[callee].push_back(func);
    });
  }
  SmallVector<Operation *> gone;
  for (auto &[func, hash] : shared.functionHashes)
    if (!present.contains(func))
      gone.push_back(func);
  for (Operation *func : gone) {
    shared.functionHashes.erase(func);
    shared.functionDecisions.erase(func);
  }
}

void GraphBuilder::forgetCallers(Operation *func) {
  CallSummaryCache &shared = *options.callSummaries;
  SmallVector<Operation *> worklist{func};
  DenseSet<Operation *> seen{func};
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    auto it = shared.callers.find(next);
    if (it == shared.callers.end())
      continue;
    for (Operation *caller : it->second)
      if (seen.insert(caller).second) {
        shared.functionHashes.erase(caller);
        shared.functionDecisions.erase(caller);
        worklist.push_back(caller);
      }
  }
}

/// The function of `module` that holds `op` (null for other ops).
static Operation *topLevelFunction(Operation *op) {
  while (op && op->getParentOp() && !isa<ModuleOp>(op->getParentOp()))
    op = op->getParentOp();
  return op && isa<FunctionOpInterface>(op) ? op : nullptr;
}

SmallVector<Operation *> GraphBuilder::withCallees(Operation *func) {
  SmallVector<Operation *> functions{func};
  DenseSet<Operation *> seen{func};
  for (size_t i = 0; i < functions.size(); ++i)
    functions[i]->walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbolTables));
      if (callee && !callee.isExternal() && seen.insert(callee).second)
        functions.push_back(callee);
    });
  return functions;
}

void GraphBuilder::analyzeFunctions(ModuleOp module,
                                    ArrayRef<Operation *> functions,
                                    bool referencedOnly) {
  CallSummaryCache &shared = *options.callSummaries;
  DenseMap<Operation *, InPlaceDecisions> perFunction;
  bool analysed = worthAnalysing(functions);
  if (analysed) {
    InPlaceDecisions all =
        getBufferizationDecisions(module, functions, referencedOnly);
    for (auto &[op, inPlace] : all)
      if (Operation *func = topLevelFunction(op))
        perFunction[func][op] = std::move(inPlace);
  }
  for (Operation *func : functions) {
    shared.functionHashes[func] = hashIR(func);
    shared.functionDecisions[func] =
        analysed ? std::make_shared<const InPlaceDecisions>(
                       std::move(perFunction[func]))
                 : nullptr;
  }
}

bool GraphBuilder::sharedDecisionsCurrent(
    Operation *func, SmallVectorImpl<Operation *> &changed) {
  CallSummaryCache &shared = *options.callSummaries;
  SmallVector<Operation *> worklist{func};
  DenseSet<Operation *> seen{func};
  // All of them, not up to the first that changed: the callers of each
  // that changed must be analysed again.
  bool current = true;
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    auto it = shared.functionHashes.find(next);
    if (it == shared.functionHashes.end()) {
      current = false;
    } else if (it->second != hashIR(next)) {
      changed.push_back(next);
      current = false;
    }
    next->walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbolTables));
      if (!callee) {
        // A symbol the tables do not know (yet): analyse again.
        if (isa<SymbolRefAttr>(call.getCallableForCallee()))
          current = false;
        return;
      }
      if (!callee.isExternal() && !shared.summarized.contains(callee) &&
          seen.insert(callee).second)
        worklist.push_back(callee);
    });
  }
  return current;
}

void GraphBuilder::analyzeModuleInPlace(Operation *scope) {
  ModuleOp module = topModule(scope);
  if (!module || !worthAnalysing(module.getOperation()))
    return;
  llvm::hash_code hash = hashIR(module);
  DecisionCache &cache = decisionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.module != module.getOperation() || cache.hash != hash) {
    cache.decisions = std::make_shared<const InPlaceDecisions>(
        getBufferizationDecisions(module, functionsWithBodies(module)));
    cache.module = module.getOperation();
    cache.hash = hash;
  }
  inPlaceOperands = cache.decisions;
}

std::optional<bool> GraphBuilder::bufferizesInPlace(OpOperand &operand) const {
  const InPlaceDecisions *decisions = inPlaceOperands.get();
  if (perFunctionDecisions) {
    Operation *func = topLevelFunction(operand.getOwner());
    if (func != lastFunction) {
      auto found = cache.functionDecisions.find(func);
      lastFunction = func;
      lastDecisions = found == cache.functionDecisions.end()
                          ? nullptr
                          : found->second.get();
    }
    decisions = lastDecisions;
  }
  if (!decisions)
    return std::nullopt;
  auto it = decisions->find(operand.getOwner());
  if (it == decisions->end() ||
      operand.getOperandNumber() >= it->second.size() ||
      it->second[operand.getOperandNumber()] < 0)
    return std::nullopt;
  return it->second[operand.getOperandNumber()] == 1;
}

/// Whether builds with a shared cache check it against a build without
/// (LMS_CHECK_ANALYSIS_CACHE=1; the test suites set it).
static bool checkingCaches() {
  static const bool checking = [] {
    const char *value = std::getenv("LMS_CHECK_ANALYSIS_CACHE");
    if (!value || StringRef(value) == "0" || StringRef(value).empty())
      return false;
    if (StringRef(value) == "1")
      return true;
    llvm::report_fatal_error(llvm::Twine("LMS_CHECK_ANALYSIS_CACHE must be 1 "
                                         "or 0, not '") +
                                 value + "'",
                             /*gen_crash_diag=*/false);
  }();
  return checking;
}

/// The first difference between two graphs, or "" when they are equal.
static std::string graphDifference(const ::lms::Graph &a,
                                   const ::lms::Graph &b) {
  if (a.numOps() != b.numOps() || a.numTensors() != b.numTensors())
    return llvm::formatv("{0} ops and {1} tensors instead of {2} and {3}",
                         a.numOps(), a.numTensors(), b.numOps(),
                         b.numTensors());
  for (size_t i = 0; i < a.numOps(); ++i) {
    const ::lms::Op &x = a.op(i), &y = b.op(i);
    if (x.name != y.name || x.kind != y.kind || x.inputs != y.inputs ||
        x.outputs != y.outputs || x.updates != y.updates ||
        x.transientBytes != y.transientBytes ||
        x.recomputable != y.recomputable || x.cost.flops != y.cost.flops ||
        x.cost.bytes != y.cost.bytes || x.cost.seconds != y.cost.seconds ||
        x.cost.kernels != y.cost.kernels || x.cost.h2dBytes != y.cost.h2dBytes)
      return llvm::formatv("op {0} ({1}) differs", i, x.name);
  }
  for (size_t t = 0; t < a.numTensors(); ++t) {
    const ::lms::Tensor &x = a.tensor(t), &y = b.tensor(t);
    if (x.name != y.name || x.bytes != y.bytes || x.producer != y.producer ||
        x.space != y.space || x.liveOut != y.liveOut ||
        x.hostBacked != y.hostBacked || x.users != y.users)
      return llvm::formatv("tensor {0} ({1}) differs", t, x.name);
  }
  return "";
}

void mlir::lms::checkCachedBuild(Operation *owner, Block *block,
                                 const GraphOptions &options,
                                 const FunctionGraph &graph) {
  if (!options.callSummaries || !checkingCaches())
    return;
  GraphOptions fresh = options;
  fresh.callSummaries = nullptr;
  FailureOr<FunctionGraph> reference = failure();
  {
    ScopedDiagnosticHandler silence(owner->getContext(),
                                    [](Diagnostic &) { return success(); });
    reference = block ? FunctionGraph::buildNested(*block, fresh)
                      : FunctionGraph::build(owner, fresh);
  }
  std::string difference =
      failed(reference)
          ? std::string("the build without it fails")
          : graphDifference(graph.getGraph(), reference->getGraph());
  if (difference.empty())
    return;
  std::string where;
  if (auto func = dyn_cast<FunctionOpInterface>(owner))
    where = ("@" + func.getName()).str();
  else
    where = owner->getName().getStringRef().str();
  llvm::report_fatal_error(
      llvm::Twine("lms: the graph of ") + where +
          " built with the pass's analysis cache differs from one built "
          "without it (" +
          difference +
          "): the module changed in a way the cache was not told of (or a "
          "pass that changed it preserved the module's graph analysis)",
      /*gen_crash_diag=*/false);
}
