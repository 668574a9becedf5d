//===- FunctionGraph.h - IR to graph translation ----------------*- C++ -*-===//
//
// Translates the body of a function (tensor or bufferized IR, ops of any
// dialect) into the MLIR-free Graph of LMS/Graph, keeping the mapping back to
// the IR. The memory model is the one of DESIGN.md section 3:
//
// * a graph tensor is a *buffer*: a destination-style result written in place
//   shares its init's buffer, view-like ops alias their source and keep it
//   alive, `tensor.empty`, `memref.alloc`, `gpu.alloc` and every other result
//   allocate;
// * a destination-style op (or a loop's result) writes in place into its
//   init where One-Shot Bufferize's analysis, run as the lowering runs it,
//   says so (it also writes into an init nobody reads later, and into the
//   slice of a matching extract/insert pair); where the analysis has no say,
//   in place when the init is not used later; never into a constant or a
//   borrowed argument; otherwise its result is a new buffer;
// * arguments are live from entry through their last use, returned values
//   to the end, a result nobody uses only while its op runs;
// * an op with regions is one node whose transient bytes are the peak inside
//   it (block arguments and yielded values are the op's operands and
//   results, already counted outside); a call counts its callee's peak,
//   with the operands passed at their last use owned by the callee (it
//   frees them after their last use in it) and the others borrowed (resident
//   through the call, freed by the caller); no copy is made either way;
// * `lms.swap_out` results are host buffers, and the source of a swap-out
//   stays resident until its `lms.swap_wait` (or the swap-out itself when
//   there is none);
// * a host constant (a constant tensor or a global load) is host-backed
//   data: its device copy is counted from right before its first user (where
//   the lowering uploads it) through its last use, it is read-only (an op
//   that writes into it gets a new buffer), and on buffers the global
//   (`memref.get_global`) itself is host memory;
// * sizes come from the types and the data layout (an i1 takes a byte),
//   rounded up to the alignment; dynamic shapes need an upper bound (the
//   `lms.max_bytes` attribute or the `dynamic-bytes` option) or are an error
//   naming the value.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_ANALYSIS_FUNCTIONGRAPH_H
#define LMS_ANALYSIS_FUNCTIONGRAPH_H

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Graph.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace mlir {
class SymbolTableCollection;
class AsmState;
class CallOpInterface;
class ModuleOp;
namespace lms {

/// Argument attribute of a function that borrows that argument from its
/// callers: the function neither frees nor writes it, the caller frees it
/// after the call.
constexpr llvm::StringLiteral kBorrowedArgAttr =
    LMSDialect::getBorrowedAttrName();

/// Per op: One-Shot Bufferize's in-place decision for each operand (1 in
/// place, 0 a copy, -1 not a tensor operand).
using InPlaceDecisions = DenseMap<Operation *, SmallVector<int8_t>>;

/// Runs upstream's One-Shot Bufferize analysis, as the LMS pipelines
/// bufferize (function boundaries, identity layouts, unknown ops allowed),
/// on copies of `functions` (ops of `module`; the module's other symbols
/// come along) and returns its decisions for their ops. Empty where the
/// analysis rejects the IR. The IR is not changed. With
/// `referencedOnly`, the other functions come along (as declarations) only
/// where `functions` name them: a few functions of a large module cost
/// their own size (their callees must then be among `functions`, or they
/// count as external).
InPlaceDecisions getBufferizationDecisions(ModuleOp module,
                                           ArrayRef<Operation *> functions,
                                           bool referencedOnly = false);

/// Unit attribute of a module whose constants stay resident on the device
/// from function entry to the end (for users who preload weights): the
/// analyses count them so, the planners never drop them, and
/// --lms-upload-constants uploads them at entry.
constexpr llvm::StringLiteral kResidentConstantsAttr = "lms.resident_constants";

/// What a pass does to the module while a CallSummaryCache lives.
enum class ModuleAccess {
  /// Nothing changes it (a pass that only reads it): the builds share the
  /// module's in-place decisions and symbol tables as they are.
  ReadOnly,
  /// Functions are rewritten one at a time, callees before their callers,
  /// and a callee is summarized only after its own rewrite (its callers'
  /// builds). The decisions are kept per function with a hash of its IR; a
  /// build checks the functions it reads (its own, and the callees it
  /// summarizes anew) and, where one changed or is new, analyses that
  /// function with its callees (the module when the functions without
  /// decisions are half of it) and drops the decisions of the changed one's
  /// callers, which their builds then make again.
  /// Symbols are added or removed only through getSymbolTables (or with
  /// its tables invalidated); a rewritten callee whose summary was kept
  /// must be forgotten (forgetCallSummaries).
  RewritesFunctions,
};

/// The analysis shared by the graphs built with one GraphOptions: summaries
/// of callees (their peak and cost at a call), call depths, the module's
/// symbol tables and its in-place decisions, so that a build costs its own
/// function and its new callees, not the module (quadratic in the depth of
/// a call chain before). With LMS_CHECK_ANALYSIS_CACHE=1 every build with a
/// cache is compared with a build without one and a difference is a fatal
/// error (the test suites run so).
class CallSummaryCache;
std::shared_ptr<CallSummaryCache>
makeCallSummaryCache(ModuleAccess access = ModuleAccess::RewritesFunctions);
/// The cache's symbol tables, to add or remove symbols through.
SymbolTableCollection &getSymbolTables(CallSummaryCache &cache);
/// Drops the callee summaries (after a change to a summarized callee).
void forgetCallSummaries(CallSummaryCache &cache);
/// The arena models of callees (LMS/Transforms/PlanningSupport.h); carried
/// here only so that the planning passes can share them.
class ArenaModelCache;

/// Options of the IR-to-graph translation.
struct GraphOptions {
  /// Allocation alignment in bytes: every buffer is rounded up to it.
  uint64_t alignment = 1;
  /// Upper bound in bytes for values of dynamic shape that carry no
  /// `lms.max_bytes` attribute. Without it such values are an error.
  std::optional<uint64_t> dynamicBytes;
  /// Keep function arguments resident to the end (the callee may otherwise
  /// free or offload them after their last use).
  bool keepArgumentsResident = false;
  /// Decide in-place destinations by asking One-Shot Bufferize's analysis
  /// (as the lowering runs it) instead of by the last-use rule alone.
  bool useBufferizationAnalysis = true;
  /// Budgets bound the arena the buffers are placed in (every buffer at an
  /// offset, LMS/Graph/Placement.h), not only the sum of live bytes.
  bool arena = false;
  /// The device a call is timed on: a call runs its callee's kernels, and
  /// waits as long as the callee's own timeline on this device stalls for
  /// its offloads and fetches. Without one a call takes its callee's
  /// kernels only.
  std::optional<::lms::DeviceSpec> timingDevice;
  /// A cache of callee summaries shared by the builds with these options
  /// (see CallSummaryCache); null: each build summarizes its callees.
  std::shared_ptr<CallSummaryCache> callSummaries;
  /// With arena: the arena models of callees computed once each, valid
  /// while no callee changes (a pass that plans callees first); null: each
  /// model computes its callees' (makeArenaModelCache).
  std::shared_ptr<ArenaModelCache> arenaModels;
};

/// The graph of one function body (a single block), with the mapping from
/// graph ops and tensors back to the IR.
class FunctionGraph {
public:
  /// Translates the body of `func` (an op with one region of one block, such
  /// as `func.func`). Emits diagnostics and fails on what cannot be
  /// translated: several blocks, values of unknown size.
  static FailureOr<FunctionGraph> build(Operation *func,
                                        const GraphOptions &options = {});

  /// Translates a block nested in an op of a function (the body of an
  /// `scf.for`, say) as the analyses see it inside that op: its arguments
  /// and the values its terminator yields count zero bytes (they belong to
  /// the enclosing op's operands and results).
  static FailureOr<FunctionGraph> buildNested(Block &block,
                                              const GraphOptions &options = {});

  /// Per operand of `call` (an op of this graph's block or nested in one):
  /// whether the callee borrows it. The callee owns an operand (and frees it
  /// after its last use there) only when the call is the last use of the
  /// operand's buffer, the operand is that buffer itself (not a view),
  /// passed once, on the device, and this function may give it away (not an
  /// argument it borrows itself, not a block argument of a nested region).
  SmallVector<bool> borrowedCallOperands(CallOpInterface call) const;

  /// The op before which an op inserted at graph position `index` (before
  /// graph op `index`) goes in the IR: graph op `index` itself, except for
  /// a host constant, which the graph schedules right before its first user
  /// while the IR keeps it where the producer wrote it; then the next op of
  /// the schedule that is not such a constant. Null at the end.
  Operation *getInsertionAnchor(::lms::OpIndex index) const;

  FunctionGraph(FunctionGraph &&);
  FunctionGraph &operator=(FunctionGraph &&);
  ~FunctionGraph();

  const ::lms::Graph &getGraph() const { return graph; }
  /// The function (or, for a nested block, the op that holds it).
  Operation *getFunction() const { return function; }
  /// The block the graph describes.
  Block *getBlock() const { return block; }

  /// The op of the function body at graph index `index`.
  Operation *getOp(::lms::OpIndex index) const { return ops[index]; }
  /// The graph index of a top-level op of the body, if it is one.
  std::optional<::lms::OpIndex> lookupOp(Operation *op) const;

  /// The value that allocates buffer `t` (an op result or a block argument).
  Value getAllocatingValue(::lms::TensorIndex t) const {
    return tensorValues[t];
  }
  /// The buffer of an SSA value (any alias of it), if it has one.
  std::optional<::lms::TensorIndex> lookupBuffer(Value value) const;

  /// The SSA name of a value ("%0", "%arg1", "%x") as the printer shows it
  /// for this function.
  std::string getValueName(Value value) const;

  /// The device bytes a caller counts for a call of this function: its
  /// arguments, what it returns, and the copies it returns instead of a
  /// buffer returned twice or a borrowed argument (the terminator's
  /// outputs).
  uint64_t getBoundaryBytes() const;

  /// What the function returns, per operand of its return (empty for a
  /// nested block): the buffer the caller receives, which is the operand's
  /// own or the copy returned in its place (a buffer returned a second time,
  /// an argument the function borrows; the terminator's outputs), and
  /// whether it is such a copy. No tensor for an operand without a device
  /// buffer.
  struct ReturnedBuffer {
    std::optional<::lms::TensorIndex> tensor;
    bool copy = false;
  };
  ArrayRef<ReturnedBuffer> getReturnedBuffers() const {
    return returnedBuffers;
  }
  /// The name of the allocating value of buffer `t`.
  std::string getTensorName(::lms::TensorIndex t) const {
    return getValueName(tensorValues[t]);
  }

private:
  FunctionGraph() = default;
  friend class GraphBuilder;
  friend class AliasModel;
  friend class BlockTranslator;

  Operation *function = nullptr;
  Block *block = nullptr;
  ::lms::Graph graph;
  SmallVector<Operation *> ops;
  /// Per graph op: the graph index of its insertion anchor.
  SmallVector<::lms::OpIndex> anchors;
  SmallVector<Value> tensorValues;
  DenseMap<Value, ::lms::TensorIndex> bufferOf;
  DenseMap<Operation *, ::lms::OpIndex> opIndex;
  /// Per call of the block into a function with a body: which operands the
  /// callee borrows, as decided when the call was translated (before its
  /// results, which may be an owned argument the callee returns, extended
  /// the operand's buffer). An external callee borrows every operand.
  DenseMap<Operation *, SmallVector<bool>> callBorrowed;
  SmallVector<ReturnedBuffer> returnedBuffers;
  mutable std::unique_ptr<AsmState> asmState;
};

} // namespace lms
} // namespace mlir

#endif // LMS_ANALYSIS_FUNCTIONGRAPH_H
