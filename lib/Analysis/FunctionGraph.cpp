//===- FunctionGraph.cpp - IR to graph translation ------------------------===//
//
// The memory model is documented in FunctionGraph.h; this file implements it
// in one linear pass over each block (plus one pass to find last uses).
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/CostModel.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/thread.h"

#include "llvm/Support/MathExtras.h"
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>

using namespace mlir;
using namespace mlir::lms;
using ::lms::kEntry;
using ::lms::MemorySpace;
using ::lms::OpCost;
using ::lms::OpIndex;
using ::lms::OpKind;
using ::lms::TensorIndex;

FunctionGraph::FunctionGraph(FunctionGraph &&) = default;
FunctionGraph &FunctionGraph::operator=(FunctionGraph &&) = default;
FunctionGraph::~FunctionGraph() = default;

std::optional<OpIndex> FunctionGraph::lookupOp(Operation *op) const {
  auto it = opIndex.find(op);
  if (it == opIndex.end())
    return std::nullopt;
  return it->second;
}

std::optional<TensorIndex> FunctionGraph::lookupBuffer(Value value) const {
  auto it = bufferOf.find(value);
  if (it == bufferOf.end())
    return std::nullopt;
  return it->second;
}

std::string FunctionGraph::getValueName(Value value) const {
  if (!value)
    return "<none>";
  if (!asmState) {
    Operation *scope = function;
    while (scope->getParentOp() &&
           !scope->hasTrait<OpTrait::IsIsolatedFromAbove>())
      scope = scope->getParentOp();
    asmState = std::make_unique<AsmState>(scope);
  }
  std::string name;
  llvm::raw_string_ostream os(name);
  value.printAsOperand(os, *asmState);
  return name;
}

static bool isBufferType(Type type) {
  return isa<TensorType, BaseMemRefType, HostType>(type);
}

/// The largest buffer the analysis sizes: 1 PiB, beyond any device, and
/// small enough that sums of many such sizes do not overflow 64 bits.
static constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 50;
/// What staticBytes gives a type larger than kMaxBufferBytes.
static constexpr uint64_t kTooLarge = ~uint64_t(0);

/// Whether `use` is the destination of a linalg op whose payload does not
/// read it (the op overwrites it).
static bool isUnreadDestination(OpOperand &use) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return linalgOp && linalgOp.isDpsInit(&use) &&
         !linalgOp.payloadUsesValueFromOperand(&use);
}

/// Whether `value` is a view of a buffer (made by a view-like op), not the
/// whole buffer (an allocation, or a result written in place into one).
static bool isViewValue(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isViewLikeOp(def);
}

/// The value `value` is a view of (through view-like ops), or itself.
static Value viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isViewLikeOp(def) || def->getNumOperands() == 0)
      break;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    value = view && view.getViewSource() ? view.getViewSource()
                                         : def->getOperand(0);
  }
  return value;
}

/// Whether `value` is the device copy of a resident constant, which its
/// function frees at its end (never given to a callee).
static bool isResidentCopy(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasAttr(kResidentConstantsAttr);
}

/// Whether the function that `arg` belongs to borrows it: as `borrowed` says
/// for a callee analysed at a call site, or as its arg_attrs say
/// (`lms.borrowed`, set on the copies --lms-deallocate makes of callees).
static bool isBorrowedArgument(BlockArgument arg, ArrayRef<bool> borrowed) {
  if (!borrowed.empty())
    return arg.getArgNumber() < borrowed.size() && borrowed[arg.getArgNumber()];
  auto func =
      dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), kBorrowedArgAttr);
}

/// Whether `op` fetches a constant again and nothing else: an lms.recompute
/// without operands whose body is one host constant, yielded. The lowering
/// inlines it and uploads the constant right before its first user, which
/// is then the first user of the recomputation's result. (A body that also
/// makes views of the constant is uploaded where the recomputation stands:
/// the first view reads the constant there, as for a constant of the block
/// with views; such a fetch is scheduled in place, like any op.)
static bool isConstantFetch(Operation *op) {
  auto recompute = dyn_cast<RecomputeOp>(op);
  if (!recompute || recompute->getNumOperands() != 0)
    return false;
  Block &body = recompute.getBody().front();
  return llvm::hasSingleElement(body.without_terminator()) &&
         isHostConstant(&body.front());
}

/// The ops of `block` in the order the analyses schedule them: block order,
/// except that each host constant (a constant tensor or a global load; on
/// buffers, `memref.get_global`) is moved right before its first user, the
/// first op of the block that uses it or holds a use of it in its regions.
/// Unused constants stay where they are.
static SmallVector<Operation *>
scheduleOrder(Block &block, SmallPtrSetImpl<Operation *> &deferred,
              bool residentConstants) {
  SmallVector<Operation *> order;
  DenseMap<Operation *, SmallVector<Operation *, 1>> deferredBefore;
  // Resident constants: all uploaded at entry, before the first op.
  if (residentConstants) {
    for (Operation &op : block)
      if (isHostConstant(&op) && !op.use_empty())
        order.push_back(&op);
    deferred.insert(order.begin(), order.end());
    for (Operation &op : block)
      if (!deferred.contains(&op))
        order.push_back(&op);
    // Those already at the start did not move.
    for (Operation &op : block) {
      if (!deferred.contains(&op))
        break;
      deferred.erase(&op);
    }
    return order;
  }
  for (Operation &op : block) {
    if (!isHostConstant(&op) && !isa<memref::GetGlobalOp>(op) &&
        !isConstantFetch(&op))
      continue;
    // The first use that reads it (an op that overwrites a constant it is
    // given as destination gets a new buffer and never reads it).
    Operation *first = nullptr;
    for (OpOperand &use : op.getUses()) {
      if (isHostConstant(&op) && isUnreadDestination(use))
        continue;
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    if (first && first != &op) {
      deferredBefore[first].push_back(&op);
      deferred.insert(&op);
    }
  }
  if (deferredBefore.empty()) {
    for (Operation &op : block)
      order.push_back(&op);
    return order;
  }
  for (Operation &op : block) {
    if (deferred.contains(&op))
      continue;
    auto it = deferredBefore.find(&op);
    if (it != deferredBefore.end())
      order.append(it->second.begin(), it->second.end());
    order.push_back(&op);
  }
  return order;
}

namespace mlir {
namespace lms {

/// The peak and total cost of what an op with regions or a call runs.
struct CalleeSummary {
  /// Transient bytes of the op (negative for a call, see
  /// GraphBuilder::summarizeCallee).
  int64_t peakBytes = 0;
  OpCost cost;
  /// For a call, per result: the argument of the callee whose own buffer
  /// it returns (the argument, or a view of it, returned without a copy),
  /// or -1 for a buffer of its own.
  SmallVector<int> resultArguments;
};

/// Summaries of callees, by callee and borrowed arguments; the call depth
/// of each function built; the module's symbol tables; and its in-place
/// decisions (so that a build costs its own function, not the module:
/// building every function of a deep call chain was quadratic).
class CallSummaryCache {
public:
  explicit CallSummaryCache(ModuleAccess access) : access(access) {}

  ModuleAccess access;
  std::map<std::pair<Operation *, std::vector<bool>>, CalleeSummary> entries;
  /// The functions with an entry (under any borrowed arguments).
  DenseSet<Operation *> summarized;
  DenseMap<Operation *, unsigned> callDepths;
  bool decisionsKnown = false;
  /// With ModuleAccess::ReadOnly: the module's decisions.
  std::shared_ptr<const InPlaceDecisions> decisions;
  /// With ModuleAccess::RewritesFunctions: per function (of the module), its
  /// decisions (null where the analysis did not run), and the hash of its
  /// IR when they were made. A function that changed drops its callers'
  /// (theirs may depend on it); the next build of one analyses it with its
  /// callees, not the module.
  DenseMap<Operation *, std::shared_ptr<const InPlaceDecisions>>
      functionDecisions;
  DenseMap<Operation *, llvm::hash_code> functionHashes;
  /// The callers of each function (made with the first decisions, again
  /// when a function appears).
  DenseMap<Operation *, SmallVector<Operation *>> callers;
  SymbolTableCollection symbolTables;
};

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

/// Translates blocks into graphs; shared by a function and everything it
/// reaches (regions, callees), with caches for type sizes and callees (and
/// the callees of other builds, with GraphOptions::callSummaries).
class GraphBuilder {
public:
  GraphBuilder(const GraphOptions &options, Operation *scope)
      : options(options), layout(DataLayout::closest(scope)) {
    Operation *top = scope;
    while (top->getParentOp())
      top = top->getParentOp();
    residentConstants = top->hasAttr(kResidentConstantsAttr);
    analyzeInPlace(scope);
  }

  FailureOr<FunctionGraph> buildFunction(Operation *func);
  /// Callees summarized anew may nest at most `levels` deep (the stack of
  /// the thread that builds); deeper, the build fails and ranOutOfStack().
  void limitNesting(unsigned levels) { levelsLeft = levels; }
  bool ranOutOfStack() const { return outOfStack; }
  LogicalResult buildNestedBlock(Block &block, FunctionGraph &fg) {
    return buildBlock(block, /*regionMode=*/true, fg);
  }

private:
  using Summary = CalleeSummary;

  /// `borrowed`: for a function body, which arguments the function borrows
  /// from its caller (resident to the end, read-only); empty: none, unless
  /// the function's arg_attrs say so (`lms.borrowed`).
  LogicalResult buildBlock(Block &block, bool regionMode, FunctionGraph &fg,
                           ArrayRef<bool> borrowed = {});
  FailureOr<Summary> summarizeBlock(Operation *owner, Block &block);
  FailureOr<Summary> summarizeRegions(Operation *op);
  /// `borrowed`: per call operand, whether the callee borrows it (the
  /// caller still uses it after the call, or it is not the caller's to give).
  FailureOr<Summary> summarizeCall(CallOpInterface call,
                                   ArrayRef<bool> borrowed);
  FailureOr<Summary> summarizeCallee(FunctionOpInterface callee,
                                     ArrayRef<bool> borrowed);

  /// Bytes of a value of static shape (unaligned), or nullopt.
  std::optional<uint64_t> staticBytes(Type type);
  /// Bytes of a new buffer for `value`, with bounds for dynamic shapes;
  /// emits an error naming the value when there is none.
  FailureOr<uint64_t> allocationBytes(Value value, FunctionGraph &fg);
  uint64_t align(uint64_t bytes) const {
    return options.alignment > 1 ? llvm::alignTo(bytes, options.alignment)
                                 : bytes;
  }

  /// Asks One-Shot Bufferize's analysis, as the lowering runs it (function
  /// boundaries, identity layouts), which destinations are written in place,
  /// so that the graph's buffers are the ones bufferization makes. Without
  /// it (ops the analysis rejects, a module over kMaxAnalysedOps ops) the
  /// rule of FunctionGraph.h decides alone.
  void analyzeInPlace(Operation *scope);
  /// The decisions of the module as it is now (cached while unchanged).
  void analyzeModuleInPlace(Operation *scope);
  /// With a cache shared by a pass that rewrites functions: whether its
  /// decisions were made for the IR that a build of `func` reads (`func`,
  /// and the callees it will summarize: those without a summary yet);
  /// `changed`: those of them with decisions made for other IR.
  bool sharedDecisionsCurrent(Operation *func,
                              SmallVectorImpl<Operation *> &changed);
  /// Analyses `functions` (with their callees among them) into the shared
  /// per-function decisions.
  void analyzeFunctions(ModuleOp module, ArrayRef<Operation *> functions,
                        bool referencedOnly);
  /// `func` and the functions it calls, directly or not.
  SmallVector<Operation *> withCallees(Operation *func);
  /// Fills the shared cache's callers; drops the decisions of functions
  /// that are gone.
  void findCallers(ModuleOp module);
  /// Drops the decisions of the functions that call `func`, directly or not.
  void forgetCallers(Operation *func);
  /// Whether bufferization writes `operand` (a destination or a view's
  /// source) in place; nullopt when the analysis has no say.
  std::optional<bool> bufferizesInPlace(OpOperand &operand) const;

  const GraphOptions &options;
  /// The module keeps constants resident from entry (`lms.resident_constants`).
  bool residentConstants = false;
  DataLayout layout;
  /// Per op: the in-place decision of each operand (1 in place, 0 a copy,
  /// -1 not a tensor operand), where bufferization's analysis made one.
  /// Shared with the module-wide cache (a build does not copy them).
  std::shared_ptr<const InPlaceDecisions> inPlaceOperands;
  /// With a cache of ModuleAccess::RewritesFunctions: the decisions are the
  /// cache's, per function (the last function looked up, kept).
  bool perFunctionDecisions = false;
  mutable Operation *lastFunction = nullptr;
  mutable const InPlaceDecisions *lastDecisions = nullptr;
  DenseMap<Type, std::optional<uint64_t>> typeBytes;
  /// Callee summaries, symbol tables, call depths: the options' cache when
  /// they have one, else this builder's own.
  CallSummaryCache ownCache{ModuleAccess::RewritesFunctions};
  CallSummaryCache &cache =
      options.callSummaries ? *options.callSummaries : ownCache;
  std::map<std::pair<Operation *, std::vector<bool>>, Summary>
      &calleeSummaries = cache.entries;
  SmallPtrSet<Operation *, 4> calleesInProgress;
  SymbolTableCollection &symbolTables = cache.symbolTables;
  unsigned levelsLeft = std::numeric_limits<unsigned>::max();
  bool outOfStack = false;
};

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

std::optional<uint64_t> GraphBuilder::staticBytes(Type type) {
  if (auto host = dyn_cast<HostType>(type))
    type = host.getValueType();
  auto it = typeBytes.find(type);
  if (it != typeBytes.end())
    return it->second;
  std::optional<uint64_t> bytes;
  auto shaped = dyn_cast<ShapedType>(type);
  if (shaped && shaped.hasStaticShape()) {
    Type element = shaped.getElementType();
    if (isa<IntegerType, FloatType, IndexType, ComplexType, VectorType>(
            element) ||
        isa<DataLayoutTypeInterface>(element)) {
      // Checked: a size past kMaxBufferBytes (or one whose product
      // overflows) is kTooLarge, an error where a buffer needs it.
      uint64_t total = layout.getTypeSize(element).getFixedValue();
      for (int64_t dim : shaped.getShape())
        if (__builtin_mul_overflow(total, static_cast<uint64_t>(dim), &total) ||
            total > kMaxBufferBytes) {
          total = kTooLarge;
          break;
        }
      bytes = total;
    }
  }
  typeBytes[type] = bytes;
  return bytes;
}

FailureOr<uint64_t> GraphBuilder::allocationBytes(Value value,
                                                  FunctionGraph &fg) {
  if (std::optional<uint64_t> bytes = staticBytes(value.getType())) {
    if (*bytes == kTooLarge) {
      emitError(value.getLoc())
          << "cannot size " << fg.getValueName(value) << " of type "
          << value.getType() << ": it takes more than " << kMaxBufferBytes
          << " bytes (1 PiB), beyond any device";
      return failure();
    }
    return align(*bytes);
  }
  // A user-given bound: on the defining op, or in the function's arg_attrs.
  Attribute bound;
  StringRef name = LMSDialect::getMaxBytesAttrName();
  if (auto result = dyn_cast<OpResult>(value)) {
    bound = result.getOwner()->getAttr(name);
    if (auto array = dyn_cast_or_null<ArrayAttr>(bound))
      bound = result.getResultNumber() < array.size()
                  ? array[result.getResultNumber()]
                  : Attribute();
  } else {
    auto arg = cast<BlockArgument>(value);
    if (auto func =
            dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      if (arg.getOwner()->isEntryBlock())
        bound = func.getArgAttr(arg.getArgNumber(), name);
  }
  if (auto integer = dyn_cast_or_null<IntegerAttr>(bound)) {
    if (integer.getValue().isNegative()) {
      emitError(value.getLoc())
          << "'" << name << "' of " << fg.getValueName(value)
          << " must not be negative";
      return failure();
    }
    if (integer.getValue().getActiveBits() > 64 ||
        integer.getValue().getZExtValue() > kMaxBufferBytes) {
      emitError(value.getLoc())
          << "'" << name << "' of " << fg.getValueName(value)
          << " must be at most " << kMaxBufferBytes << " bytes (1 PiB)";
      return failure();
    }
    return align(integer.getValue().getZExtValue());
  }
  if (bound) {
    emitError(value.getLoc())
        << "'" << name << "' of " << fg.getValueName(value)
        << " must be an integer number of bytes (or an "
           "array of them, one per result), got "
        << bound;
    return failure();
  }
  if (options.dynamicBytes)
    return align(*options.dynamicBytes);
  auto shaped =
      cast<ShapedType>(isa<HostType>(value.getType())
                           ? cast<HostType>(value.getType()).getValueType()
                           : value.getType());
  InFlightDiagnostic diag = emitError(value.getLoc())
                            << "cannot size " << fg.getValueName(value)
                            << " of type " << value.getType() << ": ";
  if (!shaped.hasStaticShape())
    diag << (shaped.hasRank() ? "its shape is dynamic" : "it is unranked");
  else
    diag << "its element type has no size in the data layout";
  diag << "; give an upper bound in bytes with an '" << name
       << "' attribute on its defining op (or in the function's arg_attrs), "
          "or with the 'dynamic-bytes' option";
  return failure();
}

/// The static trip count of a loop, if known.
static std::optional<uint64_t> staticTripCount(Operation *op) {
  auto loop = dyn_cast<LoopLikeOpInterface>(op);
  if (!loop)
    return std::nullopt;
  std::optional<APInt> count = loop.getStaticTripCount();
  if (!count)
    return std::nullopt;
  return count->getZExtValue();
}

FailureOr<GraphBuilder::Summary> GraphBuilder::summarizeBlock(Operation *owner,
                                                              Block &block) {
  FunctionGraph inner;
  inner.function = owner;
  inner.block = &block;
  if (failed(buildBlock(block, /*regionMode=*/true, inner)))
    return failure();
  Summary summary;
  ::lms::MemoryProfile profile = ::lms::evaluateSchedule(
      inner.getGraph(), ::lms::EvalOptions{/*recordSteps=*/false});
  summary.peakBytes = static_cast<int64_t>(profile.peakBytes);
  for (const ::lms::Op &op : inner.getGraph().getOps()) {
    summary.cost.flops += op.cost.flops;
    summary.cost.bytes += op.cost.bytes;
  }
  return summary;
}

FailureOr<GraphBuilder::Summary> GraphBuilder::summarizeRegions(Operation *op) {
  Summary total;
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    if (!region.hasOneBlock()) {
      op->emitError("cannot analyse a region with several blocks "
                    "(unstructured control flow); use structured control "
                    "flow such as scf");
      return failure();
    }
    FailureOr<Summary> summary = summarizeBlock(op, region.front());
    if (failed(summary))
      return failure();
    total.peakBytes = std::max(total.peakBytes, summary->peakBytes);
    total.cost.flops += summary->cost.flops;
    total.cost.bytes += summary->cost.bytes;
  }
  if (std::optional<uint64_t> trips = staticTripCount(op)) {
    total.cost.flops *= static_cast<double>(*trips);
    total.cost.bytes *= static_cast<double>(*trips);
  }
  return total;
}

FailureOr<GraphBuilder::Summary>
GraphBuilder::summarizeCall(CallOpInterface call, ArrayRef<bool> borrowed) {
  Operation *callee = call.resolveCallableInTable(&symbolTables);
  auto func = dyn_cast_or_null<FunctionOpInterface>(callee);
  if (!func || func.isExternal())
    return Summary{};
  std::pair<Operation *, std::vector<bool>> key(
      callee, std::vector<bool>(borrowed.begin(), borrowed.end()));
  auto cached = calleeSummaries.find(key);
  if (cached != calleeSummaries.end())
    return cached->second;
  if (!calleesInProgress.insert(callee).second) {
    call->emitWarning("recursive call: the peak memory inside it is not "
                      "counted");
    return Summary{};
  }
  if (levelsLeft == 0) {
    outOfStack = true;
    calleesInProgress.erase(callee);
    return failure();
  }
  --levelsLeft;
  FailureOr<Summary> summary = summarizeCallee(func, borrowed);
  ++levelsLeft;
  calleesInProgress.erase(callee);
  if (failed(summary)) {
    if (!outOfStack)
      call->emitRemark("in a call from here");
    return failure();
  }
  calleeSummaries[key] = *summary;
  cache.summarized.insert(callee);
  return summary;
}

/// A callee is analysed as a function: its arguments are live from entry
/// through their last use (the callee may free them) and its results to the
/// end. Both are the call's operands and results, which the caller counts, so
/// the call's transient bytes are the callee's peak minus them, which may be
/// negative: while the call runs, the caller holds the callee's peak plus
/// whatever else is live.
FailureOr<GraphBuilder::Summary>
GraphBuilder::summarizeCallee(FunctionOpInterface callee,
                              ArrayRef<bool> borrowed) {
  Region &body = callee.getFunctionBody();
  if (!body.hasOneBlock()) {
    callee->emitError("cannot analyse a function with several blocks "
                      "(unstructured control flow); use structured control "
                      "flow such as scf");
    return failure();
  }
  FunctionGraph inner;
  inner.function = callee;
  inner.block = &body.front();
  if (failed(buildBlock(body.front(), /*regionMode=*/false, inner, borrowed)))
    return failure();
  const ::lms::Graph &g = inner.getGraph();
  Summary summary;
  uint64_t peak =
      ::lms::evaluateSchedule(g, ::lms::EvalOptions{/*recordSteps=*/false})
          .peakBytes;
  uint64_t boundary = inner.getBoundaryBytes();
  summary.peakBytes =
      static_cast<int64_t>(peak) - static_cast<int64_t>(boundary);
  // Results that are an argument's buffer: the terminator returns the
  // buffer itself where it makes no copy (the first time it returns it, and
  // not a borrowed argument: see the return rule in buildBlock).
  Operation *terminator = body.front().getTerminator();
  llvm::SmallDenseSet<TensorIndex> returned;
  for (Value operand : terminator->getOperands()) {
    int argument = -1;
    std::optional<TensorIndex> t = inner.lookupBuffer(operand);
    if (t && returned.insert(*t).second && g.tensor(*t).producer == kEntry &&
        g.tensor(*t).space == MemorySpace::Device &&
        (!g.tensor(*t).liveOut || options.keepArgumentsResident))
      if (auto arg = dyn_cast<BlockArgument>(inner.getAllocatingValue(*t)))
        if (arg.getOwner() == &body.front())
          argument = static_cast<int>(arg.getArgNumber());
    summary.resultArguments.push_back(argument);
  }
  for (const ::lms::Op &op : g.getOps()) {
    summary.cost.flops += op.cost.flops;
    summary.cost.bytes += op.cost.bytes;
  }
  return summary;
}

uint64_t FunctionGraph::getBoundaryBytes() const {
  uint64_t boundary = 0;
  llvm::SmallDenseSet<TensorIndex> counted;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (graph.tensor(t).producer == kEntry &&
        graph.tensor(t).space == MemorySpace::Device &&
        counted.insert(t).second)
      boundary += graph.tensor(t).bytes;
  // What it returns: its operands, and the copies it returns instead of a
  // buffer returned twice or a borrowed argument.
  if (graph.numOps() > 0)
    for (auto side :
         {llvm::ArrayRef<TensorIndex>(graph.op(graph.numOps() - 1).inputs),
          llvm::ArrayRef<TensorIndex>(graph.op(graph.numOps() - 1).outputs)})
      for (TensorIndex t : side)
        if (graph.tensor(t).space == MemorySpace::Device &&
            counted.insert(t).second)
          boundary += graph.tensor(t).bytes;
  return boundary;
}

LogicalResult GraphBuilder::buildBlock(Block &block, bool regionMode,
                                       FunctionGraph &fg,
                                       ArrayRef<bool> borrowed) {
  ::lms::Graph &graph = fg.graph;

  // The schedule: the ops of the block in order, except that a host constant
  // is uploaded right before its first user (where the lowering uploads it),
  // not where the producer wrote it.
  SmallPtrSet<Operation *, 8> deferred;
  bool resident = residentConstants && !regionMode;
  SmallVector<Operation *> order = scheduleOrder(block, deferred, resident);

  // Pass 1: the values each top-level op uses (its operands and the values of
  // this block that its regions capture), and the last use of every value.
  std::vector<SmallVector<Value, 4>> uses;
  uses.reserve(order.size());
  DenseMap<Value, OpIndex> lastUse;
  OpIndex index = 0;
  for (Operation *opPtr : order) {
    Operation &op = *opPtr;
    SmallVector<Value, 4> &opUses = uses.emplace_back();
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isBufferType(operand.get().getType()))
        continue;
      // A constant given as a destination the op overwrites is not read.
      Operation *def = operand.get().getDefiningOp();
      if (def && isHostConstant(def) && isUnreadDestination(operand))
        continue;
      opUses.push_back(operand.get());
    }
    // Linalg payloads capture tensors too (a gather reads a table with
    // tensor.extract): they are uses of the op like its operands.
    if (op.getNumRegions() > 0)
      op.walk([&](Operation *nested) {
        if (nested == &op)
          return;
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &block &&
              isBufferType(operand.getType()))
            opUses.push_back(operand);
      });
    for (Value v : opUses)
      lastUse[v] = index;
    ++index;
  }
  auto lastUseOf = [&](Value v, OpIndex fallback) {
    auto it = lastUse.find(v);
    return it == lastUse.end() ? fallback : it->second;
  };

  // Per buffer: the last use over all its aliases so far, and whether an op
  // may write into it in place (constants are read-only).
  std::vector<OpIndex> bufferLastUse;
  std::vector<uint8_t> writable;
  // In a nested block: values of this block that are (views of) a buffer of
  // the enclosing function, written in place here; views of them allocate
  // nothing either.
  DenseSet<Value> enclosingAliases;
  auto inEnclosing = [&](Value value) {
    Value root = viewRoot(value);
    return enclosingAliases.contains(root) ||
           root.getParentRegion()->isProperAncestor(block.getParent());
  };
  auto newBuffer = [&](Value value, uint64_t bytes, MemorySpace space,
                       OpIndex producerIndex, bool isWritable) {
    TensorIndex t = graph.addTensor("", bytes, space);
    fg.tensorValues.push_back(value);
    fg.bufferOf[value] = t;
    bufferLastUse.push_back(lastUseOf(value, producerIndex));
    writable.push_back(isWritable);
    return t;
  };
  auto addAlias = [&](Value value, TensorIndex t, OpIndex at) {
    fg.bufferOf[value] = t;
    bufferLastUse[t] = std::max(bufferLastUse[t], lastUseOf(value, at));
  };

  // Block arguments are live on entry; inside a region they are the
  // enclosing op's operands, counted outside.
  for (BlockArgument arg : block.getArguments()) {
    if (!isBufferType(arg.getType()))
      continue;
    uint64_t bytes = 0;
    if (!regionMode) {
      FailureOr<uint64_t> size = allocationBytes(arg, fg);
      if (failed(size))
        return failure();
      bytes = *size;
    }
    MemorySpace space =
        isa<HostType>(arg.getType()) ? MemorySpace::Host : MemorySpace::Device;
    bool isBorrowed = !regionMode && isBorrowedArgument(arg, borrowed);
    TensorIndex t = newBuffer(arg, bytes, space, kEntry, !isBorrowed);
    if ((options.keepArgumentsResident || isBorrowed) && !regionMode)
      graph.setLiveOut(t);
  }

  auto bytesOfValue = [&](Value v) -> uint64_t {
    if (std::optional<uint64_t> bytes = staticBytes(v.getType()))
      return std::min(*bytes, kMaxBufferBytes);
    auto it = fg.bufferOf.find(v);
    return it == fg.bufferOf.end() ? 0 : graph.tensor(it->second).bytes;
  };

  // Pass 2: ops in order.
  index = 0;
  for (Operation *opPtr : order) {
    Operation &op = *opPtr;
    fg.ops.push_back(&op);
    fg.opIndex[&op] = index;
    SmallVector<TensorIndex, 4> inputs;
    for (Value v : uses[index])
      if (std::optional<TensorIndex> t = fg.lookupBuffer(v))
        inputs.push_back(*t);

    SmallVector<TensorIndex, 2> outputs;
    SmallVector<TensorIndex, 1> updates;
    OpKind kind = OpKind::Compute;
    auto allocate = [&](Value result, MemorySpace space,
                        std::optional<uint64_t> knownBytes) -> LogicalResult {
      uint64_t bytes;
      if (knownBytes) {
        bytes = *knownBytes;
      } else {
        FailureOr<uint64_t> size = allocationBytes(result, fg);
        if (failed(size))
          return failure();
        bytes = *size;
      }
      // Constants are read-only: bufferization copies them before a write.
      bool hostData = isHostConstant(&op);
      // An unused constant or empty tensor allocates nothing: bufferization
      // drops it (a constant is uploaded at its first use, and has none).
      if (result.use_empty() &&
          (hostData || isa<tensor::EmptyOp, bufferization::AllocTensorOp>(op)))
        bytes = 0;
      // Nor does a constant whose value nobody reads (the destination of
      // ops that overwrite it): bufferization never uploads it.
      if (hostData && !result.use_empty() &&
          llvm::all_of(result.getUses(), isUnreadDestination))
        bytes = 0;
      outputs.push_back(newBuffer(result, bytes, space, index, !hostData));
      // It can be dropped and read again only when reading it has no
      // effect to order against (a constant, not a mutable global that a
      // store may change in between). Resident constants stay to the end.
      if (hostData && resident)
        graph.setLiveOut(outputs.back());
      else if (hostData && isMemoryEffectFree(&op))
        graph.tensor(outputs.back()).hostBacked = true;
      return success();
    };

    // A call: the callee owns an operand passed at its buffer's last use
    // (it may free it early); it borrows the others, which the caller frees.
    std::optional<Summary> callSummary;
    SmallVector<bool> borrowedOperands;
    if (auto call = dyn_cast<CallOpInterface>(op);
        call && op.getNumRegions() == 0) {
      for (Value operand : call->getOperands()) {
        std::optional<TensorIndex> t = fg.lookupBuffer(operand);
        // The rule of FunctionGraph::borrowedCallOperands, on the graph
        // built so far (later aliases only extend bufferLastUse through
        // uses after the call, already counted).
        bool owned = t && !isViewValue(operand) && !isResidentCopy(operand) &&
                     !(regionMode && isa<BlockArgument>(operand)) &&
                     !graph.tensor(*t).liveOut && bufferLastUse[*t] <= index &&
                     graph.tensor(*t).space == MemorySpace::Device &&
                     llvm::count(call->getOperands(), operand) == 1;
        borrowedOperands.push_back(!owned);
      }
      FailureOr<Summary> summary = summarizeCall(call, borrowedOperands);
      if (failed(summary))
        return failure();
      callSummary = std::move(*summary);
      fg.callBorrowed[&op] = borrowedOperands;
    }
    // The argument buffer a call result is, when the callee returns an
    // argument it owns (or a view of it) without a copy.
    auto returnedArgument = [&](OpResult result) -> std::optional<TensorIndex> {
      auto call = dyn_cast<CallOpInterface>(op);
      if (!callSummary || !call ||
          call.getArgOperands().size() != op.getNumOperands() ||
          result.getResultNumber() >= callSummary->resultArguments.size())
        return std::nullopt;
      int argument = callSummary->resultArguments[result.getResultNumber()];
      if (argument < 0 ||
          static_cast<unsigned>(argument) >= op.getNumOperands() ||
          borrowedOperands[argument])
        return std::nullopt;
      return fg.lookupBuffer(op.getOperand(argument));
    };

    if (auto swapOut = dyn_cast<SwapOutOp>(op)) {
      kind = OpKind::SwapOut;
      std::optional<TensorIndex> source = fg.lookupBuffer(swapOut.getSource());
      std::optional<uint64_t> bytes;
      if (source)
        bytes = graph.tensor(*source).bytes;
      if (failed(allocate(swapOut.getResult(), MemorySpace::Host, bytes)))
        return failure();
    } else if (auto wait = dyn_cast<SwapWaitOp>(op)) {
      kind = OpKind::SwapWait;
      // The source stays resident until the copy is known to be complete.
      if (SwapOutOp swapOut = wait.getSwapOut())
        if (std::optional<TensorIndex> source =
                fg.lookupBuffer(swapOut.getSource())) {
          inputs.push_back(*source);
          bufferLastUse[*source] = std::max(bufferLastUse[*source], index);
        }
    } else if (auto swapIn = dyn_cast<SwapInOp>(op)) {
      kind = OpKind::SwapIn;
      std::optional<TensorIndex> handle = fg.lookupBuffer(swapIn.getHandle());
      std::optional<uint64_t> bytes;
      if (handle)
        bytes = graph.tensor(*handle).bytes;
      if (failed(allocate(swapIn.getResult(), MemorySpace::Device, bytes)))
        return failure();
    } else {
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      auto loop = dyn_cast<LoopLikeOpInterface>(op);
      auto view = dyn_cast<ViewLikeOpInterface>(op);
      bool viewLike = isViewLikeOp(&op);
      auto recompute = dyn_cast<RecomputeOp>(op);
      for (OpResult result : op.getResults()) {
        if (!isBufferType(result.getType()))
          continue;
        if (std::optional<TensorIndex> buffer = returnedArgument(result)) {
          addAlias(result, *buffer, index);
          continue;
        }
        // A recomputation that yields a buffer and views of it (a constant
        // and its reshapes) makes one buffer: the lowering inlines it, and
        // the views alias it.
        if (recompute) {
          Value root = viewRoot(
              recompute.getYield()->getOperand(result.getResultNumber()));
          std::optional<TensorIndex> shared;
          for (OpResult earlier :
               op.getResults().take_front(result.getResultNumber()))
            if (viewRoot(recompute.getYield()->getOperand(
                    earlier.getResultNumber())) == root)
              if ((shared = fg.lookupBuffer(earlier)))
                break;
          if (shared) {
            addAlias(result, *shared, index);
            continue;
          }
        }
        // Results tied to an init operand: in place when the init's buffer is
        // not used after this op.
        Value init;
        OpOperand *tiedInit = nullptr;
        if (dps && dps.hasPureTensorSemantics())
          tiedInit = dps.getTiedOpOperand(result);
        else if (loop)
          tiedInit = loop.getTiedLoopInit(result);
        if (tiedInit)
          init = tiedInit->get();
        if (init) {
          std::optional<TensorIndex> buffer = fg.lookupBuffer(init);
          // Bufferization's decision where its analysis has one (it also
          // writes in place into an init nobody reads later, and into the
          // slice of a matching extract/insert pair); else the rule: in
          // place at the init buffer's last use. Never into read-only data
          // (a constant) or a borrowed argument.
          std::optional<bool> analysed = bufferizesInPlace(*tiedInit);
          bool inPlace =
              buffer && writable[*buffer] &&
              (analysed ? *analysed : bufferLastUse[*buffer] <= index);
          if (inPlace) {
            addAlias(result, *buffer, index);
            updates.push_back(*buffer);
            continue;
          }
          // In a nested block, written in place into (a view of) a buffer
          // of the enclosing function: no new buffer here either.
          if (!buffer && regionMode && analysed && *analysed) {
            enclosingAliases.insert(result);
            continue;
          }
        } else {
          // Views alias their source and keep it alive, except where
          // bufferization copies the view (a write to the source while the
          // view is still read): then the view is a new buffer.
          OpOperand *source = nullptr;
          if (view && view.getViewSource()) {
            for (OpOperand &operand : op.getOpOperands())
              if (operand.get() == view.getViewSource())
                source = &operand;
          } else if (viewLike && op.getNumOperands() > 0) {
            source = &op.getOpOperand(0);
          }
          std::optional<bool> analysed =
              source ? bufferizesInPlace(*source) : std::nullopt;
          if (source && (!analysed || *analysed)) {
            if (std::optional<TensorIndex> buffer =
                    fg.lookupBuffer(source->get())) {
              addAlias(result, *buffer, index);
              continue;
            }
            // In a nested block, a view of a buffer of the enclosing
            // function (a slice of a captured tensor, a view of such a
            // slice, or of a result written in place into one) allocates
            // nothing: the buffer is counted there, resident across the op.
            if (regionMode && inEnclosing(source->get()))
              continue;
          }
        }
        // A global's buffer is host memory; the lowering uploads a device
        // copy of it before its first use (--lms-upload-constants), which is
        // the allocation counted on the device.
        MemorySpace space =
            isa<HostType>(result.getType()) || isa<memref::GetGlobalOp>(op)
                ? MemorySpace::Host
                : MemorySpace::Device;
        if (failed(allocate(result, space, std::nullopt)))
          return failure();
      }
    }

    OpCost cost = estimateOpCost(&op, bytesOfValue);
    int64_t transient = 0;
    if (op.getNumRegions() > 0 && !isa<linalg::LinalgOp>(op)) {
      FailureOr<Summary> summary = summarizeRegions(&op);
      if (failed(summary))
        return failure();
      transient = summary->peakBytes;
      cost.flops += summary->cost.flops;
      cost.bytes += summary->cost.bytes;
    } else if (callSummary) {
      transient = callSummary->peakBytes;
      cost.flops += callSummary->cost.flops;
      cost.bytes += callSummary->cost.bytes;
    }

    // A function returns each result as a buffer its caller owns: a buffer
    // returned a second time (a value and a view of it) or an argument it
    // borrows is returned as a copy (--lms-deallocate makes it), which
    // exists from the return on.
    if (!regionMode && op.hasTrait<OpTrait::ReturnLike>()) {
      llvm::SmallDenseSet<TensorIndex> returned;
      for (Value operand : op.getOperands()) {
        std::optional<TensorIndex> t = fg.lookupBuffer(operand);
        if (!t || graph.tensor(*t).space != MemorySpace::Device)
          continue;
        bool borrowed = graph.tensor(*t).producer == kEntry &&
                        graph.tensor(*t).liveOut &&
                        !options.keepArgumentsResident;
        if (returned.insert(*t).second && !borrowed)
          continue;
        TensorIndex copy =
            graph.addTensor("", graph.tensor(*t).bytes, MemorySpace::Device);
        fg.tensorValues.push_back(operand);
        bufferLastUse.push_back(index);
        writable.push_back(true);
        outputs.push_back(copy);
      }
    }

    OpIndex added = graph.addOp(op.getName().getStringRef().str(), inputs,
                                outputs, cost, kind);
    graph.setTransientBytes(added, transient);
    for (TensorIndex t : updates)
      if (llvm::is_contained(graph.op(added).inputs, t))
        graph.addUpdate(added, t);

    // Inside a region, what the terminator yields becomes the enclosing op's
    // results, which the enclosing graph counts for the whole op.
    if (regionMode && op.hasTrait<OpTrait::IsTerminator>())
      for (TensorIndex t : inputs)
        graph.setBytes(t, 0);
    ++index;
  }

  // Insertion anchors: an op scheduled out of its block position (a host
  // constant moved to its first user) anchors at the next op that is not.
  fg.anchors.assign(order.size(), static_cast<OpIndex>(order.size()));
  OpIndex next = static_cast<OpIndex>(order.size());
  for (OpIndex i = static_cast<OpIndex>(order.size()) - 1; i >= 0; --i) {
    if (!deferred.contains(order[i]))
      next = i;
    fg.anchors[i] = next;
  }
  return success();
}

FailureOr<FunctionGraph> GraphBuilder::buildFunction(Operation *func) {
  FunctionGraph fg;
  fg.function = func;
  if (func->getNumRegions() != 1 || func->getRegion(0).empty()) {
    func->emitError("cannot analyse a function without a body");
    return failure();
  }
  Region &body = func->getRegion(0);
  if (!body.hasOneBlock()) {
    func->emitError("cannot analyse a function with several blocks "
                    "(unstructured control flow); use structured control "
                    "flow such as scf");
    return failure();
  }
  fg.block = &body.front();
  if (failed(buildBlock(body.front(), /*regionMode=*/false, fg)))
    return failure();
  return fg;
}

SmallVector<bool>
FunctionGraph::borrowedCallOperands(CallOpInterface call) const {
  SmallVector<bool> borrowed;
  Operation *top = block->findAncestorOpInBlock(*call);
  std::optional<OpIndex> index = top ? lookupOp(top) : std::nullopt;
  bool functionBody =
      block->isEntryBlock() && isa_and_nonnull<FunctionOpInterface>(function);
  // An external callee (a host function) frees nothing: the caller does.
  auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
  bool external = !callee || callee.isExternal();
  // The decision the translation made (and counted).
  if (auto it = callBorrowed.find(call.getOperation());
      !external && top == call.getOperation() && it != callBorrowed.end())
    return it->second;
  for (Value operand : call->getOperands()) {
    std::optional<TensorIndex> t = lookupBuffer(operand);
    bool owned = !external && index && top == call.getOperation() && t &&
                 !isViewValue(operand) && !isResidentCopy(operand) &&
                 !(!functionBody && isa<BlockArgument>(operand)) &&
                 !graph.tensor(*t).liveOut &&
                 graph.tensor(*t).space == MemorySpace::Device &&
                 graph.lastUse(*t) == *index &&
                 llvm::count(call->getOperands(), operand) == 1;
    borrowed.push_back(!owned);
  }
  return borrowed;
}

Operation *FunctionGraph::getInsertionAnchor(::lms::OpIndex index) const {
  if (index < 0 || static_cast<size_t>(index) >= anchors.size())
    return nullptr;
  ::lms::OpIndex anchor = anchors[index];
  return anchor < static_cast<::lms::OpIndex>(ops.size()) ? ops[anchor]
                                                          : nullptr;
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
        x.cost.h2dBytes != y.cost.h2dBytes)
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

/// With LMS_CHECK_ANALYSIS_CACHE=1: `graph`, built with the options' shared
/// cache, must be the graph a build without it makes (else the module
/// changed behind the cache's back: a fatal error naming the difference).
static void checkCachedBuild(Operation *owner, Block *block,
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
          "): the module changed in a way the cache was not told of",
      /*gen_crash_diag=*/false);
}

FailureOr<FunctionGraph>
FunctionGraph::buildNested(Block &block, const GraphOptions &options) {
  Operation *owner = block.getParentOp();
  FunctionGraph fg;
  fg.function = owner;
  fg.block = &block;
  {
    GraphBuilder builder(options, owner);
    if (failed(builder.buildNestedBlock(block, fg)))
      return failure();
  }
  checkCachedBuild(owner, &block, options, fg);
  return fg;
}

/// The longest chain of calls from `root` (0 without calls), computed
/// without recursion; recursive calls end a chain.
static unsigned callDepth(Operation *root,
                          DenseMap<Operation *, unsigned> &depth,
                          SymbolTableCollection &symbols) {
  if (auto it = depth.find(root); it != depth.end())
    return it->second;
  DenseSet<Operation *> onStack;
  // (function, its callees, next callee to visit)
  struct Frame {
    Operation *func;
    SmallVector<Operation *> callees;
    size_t next = 0;
  };
  SmallVector<Frame> stack;
  auto push = [&](Operation *func) {
    Frame frame{func, {}, 0};
    func->walk([&](CallOpInterface call) {
      if (auto callee = dyn_cast_or_null<FunctionOpInterface>(
              call.resolveCallableInTable(&symbols)))
        if (!callee.isExternal())
          frame.callees.push_back(callee);
    });
    onStack.insert(func);
    stack.push_back(std::move(frame));
  };
  push(root);
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.next < frame.callees.size()) {
      Operation *callee = frame.callees[frame.next++];
      if (!depth.count(callee) && !onStack.contains(callee))
        push(callee);
      continue;
    }
    unsigned deepest = 0;
    for (Operation *callee : frame.callees)
      if (auto it = depth.find(callee); it != depth.end())
        deepest = std::max(deepest, it->second + 1);
    depth[frame.func] = deepest;
    onStack.erase(frame.func);
    stack.pop_back();
  }
  return depth[root];
}

/// Builds the graph of `func` on a stack deep enough for its calls.
static FailureOr<FunctionGraph> buildOnStack(Operation *func,
                                             const GraphOptions &options) {
  // The translation recurses into callees (and regions): a deep chain of
  // calls gets a thread with a stack to match (a few KiB per level).
  constexpr unsigned kShallow = 256;
  // First on this thread, while the callees it summarizes anew nest no
  // deeper than kShallow (with a shared cache, a function whose callees
  // are summarized: a thread per build cost more than the build). Its
  // diagnostics are held until it is known to stand.
  {
    SmallVector<Diagnostic> held;
    FailureOr<FunctionGraph> result = failure();
    bool outOfStack = false;
    {
      ScopedDiagnosticHandler hold(func->getContext(), [&](Diagnostic &diag) {
        held.push_back(std::move(diag));
        return success();
      });
      GraphBuilder builder(options, func);
      builder.limitNesting(kShallow);
      result = builder.buildFunction(func);
      outOfStack = builder.ranOutOfStack();
    }
    if (!outOfStack) {
      DiagnosticEngine &engine = func->getContext()->getDiagEngine();
      for (Diagnostic &diag : held)
        engine.emit(std::move(diag));
      return result;
    }
  }
  // The depths of the functions a walk visits are kept with the callee
  // summaries: the next build starts from them.
  DenseMap<Operation *, unsigned> ownDepths;
  SymbolTableCollection ownSymbols;
  unsigned depth = options.callSummaries
                       ? callDepth(func, options.callSummaries->callDepths,
                                   options.callSummaries->symbolTables)
                       : callDepth(func, ownDepths, ownSymbols);
  FailureOr<FunctionGraph> result = failure();
  uint64_t stackBytes = std::min<uint64_t>((uint64_t(depth) + 64) * (64u << 10),
                                           uint64_t(2) << 30);
  llvm::thread worker(std::optional<unsigned>(stackBytes), [&] {
    GraphBuilder builder(options, func);
    result = builder.buildFunction(func);
  });
  worker.join();
  return result;
}

FailureOr<FunctionGraph> FunctionGraph::build(Operation *func,
                                              const GraphOptions &options) {
  FailureOr<FunctionGraph> graph = buildOnStack(func, options);
  if (succeeded(graph))
    checkCachedBuild(func, /*block=*/nullptr, options, *graph);
  return graph;
}
