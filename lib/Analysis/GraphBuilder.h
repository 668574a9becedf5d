//===- GraphBuilder.h - IR to graph translation, private ------*- C++ -*-===//
//
// Shared by FunctionGraph.cpp (the translation of blocks into graphs) and
// AnalysisCache.cpp (what builds share: callee summaries, call depths, symbol
// tables, bufferization's in-place decisions, and the check of all of it).
// Not installed.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_LIB_ANALYSIS_GRAPHBUILDER_H
#define LMS_LIB_ANALYSIS_GRAPHBUILDER_H

#include "LMS/Analysis/FunctionGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace mlir {
namespace lms {

/// The peak and total cost of what an op with regions or a call runs.
struct CalleeSummary {
  /// Transient bytes of the op (negative for a call, see
  /// GraphBuilder::summarizeCallee).
  int64_t peakBytes = 0;
  ::lms::OpCost cost;
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
  friend class BlockTranslator;
  using Summary = CalleeSummary;

  /// `borrowed`: for a function body, which arguments the function borrows
  /// from its caller (resident to the end, read-only); empty: none, unless
  /// the function's arg_attrs say so (`lms.borrowed`).
  LogicalResult buildBlock(Block &block, bool regionMode, FunctionGraph &fg,
                           ArrayRef<bool> borrowed = {});
  FailureOr<Summary> summarizeBlock(Operation *owner, Block &block);
  /// Adds the ops of `inner` to `summary`: their work, and the kernels they
  /// launch once lowered. `copiesInOrder`: offloads and fetches are timed
  /// on the host link in the order of the ops (a region's body); else they
  /// are left out (a callee's, which overlap its compute).
  void addKernels(FunctionGraph &inner, bool copiesInOrder, Summary &summary);
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

/// With LMS_CHECK_ANALYSIS_CACHE=1: `graph`, built with the options' shared
/// cache, must be the graph a build without it makes (else the module
/// changed behind the cache's back: a fatal error naming the difference).
/// `block`: the nested block built, or null for the function `owner`.
void checkCachedBuild(Operation *owner, Block *block,
                      const GraphOptions &options, const FunctionGraph &graph);

} // namespace lms
} // namespace mlir

#endif // LMS_LIB_ANALYSIS_GRAPHBUILDER_H
