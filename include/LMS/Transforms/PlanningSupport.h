//===- PlanningSupport.h - What the planning passes share -------*- C++ -*-===//

#ifndef LMS_TRANSFORMS_PLANNINGSUPPORT_H
#define LMS_TRANSFORMS_PLANNINGSUPPORT_H

#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Graph/Device.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Transforms/Strip.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace mlir {
namespace lms {

/// The state of a function to go back to as often as needed: each trial of a
/// planning pass rewrites the function in place, and restore() undoes it.
/// The undo keeps the function's own ops: the ops a rewrite inserted are
/// erased, and each op of the snapshot gets back its operands, attributes,
/// properties and position (from a copy taken at the snapshot). So handles
/// to the function's ops (the transform interpreter's) stay valid, and
/// analyses keyed by its ops see the ops they knew. Only when a rewrite
/// erased an op of the snapshot (no planning pass does) is the body replaced
/// by a copy of the snapshot instead.
class BodySnapshot {
public:
  explicit BodySnapshot(FunctionOpInterface func);
  BodySnapshot(const BodySnapshot &) = delete;
  BodySnapshot &operator=(const BodySnapshot &) = delete;
  ~BodySnapshot();

  void restore();

private:
  /// Pairs each op (and block) of the function with its copy in `backup`.
  void record();

  FunctionOpInterface func;
  Operation *backup;
  /// The function's ops (the function first) and their copies, in walk
  /// order; the same for blocks.
  std::vector<std::pair<Operation *, Operation *>> ops;
  std::vector<std::pair<Block *, Block *>> blocks;
};

/// What every planning entry point (pass or transform op) resolves once for
/// its scope: the graph options, the device, and the budget option (its own,
/// else `--lms-budget`).
struct PlanningContext {
  GraphOptions graphOptions;
  ::lms::DeviceSpec device;
  std::string budgetOption;
  /// A percentage budget option resolved once, before any rewrite, against
  /// the unplanned peak of the whole program (the largest peak of an entry
  /// function, callees included): the bytes every function is planned for.
  std::optional<uint64_t> programBudgetBytes;
  /// That unplanned program peak.
  uint64_t programPeakBytes = 0;
  /// Functions called from a function with a budget: the budget left at
  /// their tightest call site (the caller's budget minus what it keeps live
  /// across the call), so that caller and callee fit together.
  llvm::DenseMap<Operation *, uint64_t> callSiteBudgets;
};

/// What a budget bounds in `graph`: its live-bytes peak, or with
/// options.arena the arena its buffers are placed in: the live peak plus
/// the bytes placement wastes (exactly the arena for a function without
/// calls; a call is counted by its callee's peak, as the analysis does).
uint64_t budgetedBytes(const FunctionGraph &graph, const GraphOptions &options);

/// With options.arena, the buffers the lowering gives allocations of their
/// own rather than a place in the arena (arguments, results, buffers that
/// cross calls, dynamic shapes; per tensor of the graph) and the most bytes
/// of them at once in the function as it is.
struct OwnAllocations {
  std::vector<uint8_t> own;
  uint64_t peakBytes = 0;
  /// Per op: the frame a call into a function with an arena model holds in
  /// the arena, or -1 (reserveOwnAllocations' callFrames).
  std::vector<int64_t> callFrames;
};
OwnAllocations ownAllocations(const FunctionGraph &graph,
                              const GraphOptions &options);

class SwapCandidates;

/// The graph offloading plans against with an arena: `graph`'s, with the
/// allocations of their own held at their peak beside the arena from entry
/// (::lms::reserveOwnAllocations), since offloading one of them frees
/// nothing the arena can use. --lms-insert-swaps plans on it with
/// arena=true and --lms-report-memory takes its smallest feasible budget
/// with the arena from it, so the two bounds are one.
struct ArenaSwapGraph {
  ::lms::Graph graph;
  OwnAllocations allocations;
  /// candidates.valueAfterGap for the tensors the arena holds, -1 (nothing
  /// to offload) for the allocations of their own. Keeps its own copy of
  /// the marks: valid while `candidates` lives.
  std::function<int(::lms::TensorIndex, ::lms::OpIndex, ::lms::OpIndex)>
  valueAfterGap(const SwapCandidates &candidates) const;
};
ArenaSwapGraph arenaSwapGraph(const FunctionGraph &graph,
                              const GraphOptions &options);

/// Per result of `graph`'s function: whether its buffer is one the function
/// allocates itself to return it, which the function's frame variant takes
/// from a slot of its caller's arena instead of allocating it
/// (--lms-carve-arena). Returned copies (of a buffer
/// returned twice, of a borrowed argument) are; an argument, a callee's
/// result, a constant, a view smaller than its buffer and a buffer made by an
/// op with regions (a loop's own) are not. Empty when the graph is not a
/// function's body.
SmallVector<bool> resultSlots(const FunctionGraph &graph);

/// What the arena model of `graph`'s function takes from and gives to slots
/// of an arena: its results that a frame variant takes from its caller's
/// arena (resultSlots), and the calls of its body whose results go into
/// slots of its own arena (where that lowers its need). Written into the IR
/// by --lms-mark-arena-slots for --lms-carve-arena.
struct ArenaSlots {
  SmallVector<bool> results;
  SmallVector<Operation *> calls;
};
ArenaSlots arenaSlots(const FunctionGraph &graph, const GraphOptions &options);

class ArenaModel;

/// A cache of callees' arena models for GraphOptions::arenaModels: only for
/// a pass that plans callees first and never changes a function after it
/// was planned (as makeCalleesFirstCache).
std::shared_ptr<ArenaModelCache> makeArenaModelCache();

/// budgetedBytes for several functions of a module (a report), computing
/// the model of each callee once. Valid while the module does not change.
class BudgetedBytes {
public:
  explicit BudgetedBytes(const GraphOptions &options);
  ~BudgetedBytes();
  uint64_t operator()(const FunctionGraph &graph);

private:
  GraphOptions options;
  std::unique_ptr<ArenaModel> model;
};

/// The unplanned peak of the program in `module`: the largest peak (without
/// LMS ops) of an entry function, a function no other function calls, with
/// its callees counted at their call sites.
FailureOr<uint64_t> programPeak(ModuleOp module, const GraphOptions &options);

/// Fills `context.callSiteBudgets`: for every function called from another
/// one, the smallest budget left at a call site (the caller's budget minus
/// the device bytes it keeps live across the call, its operands aside).
LogicalResult computeCallSiteBudgets(ModuleOp module, PlanningContext &context);

/// Makes every call pass ownership exactly as the memory analyses count it:
/// a callee owns the operands passed at their buffer's last use and borrows
/// the others (FunctionGraph::borrowedCallOperands). A call that lends some
/// operand calls a private copy of its callee, `@<callee>_lms_borrow_<o|b
/// per operand>`, whose lent arguments carry `lms.borrowed` (kept resident
/// there, never freed or written); one copy per callee and set of lent
/// arguments. The planning passes run it first, so that each copy is planned
/// for the way it is called; --lms-deallocate runs it again on buffers.
LogicalResult specializeBorrowingCallees(ModuleOp module,
                                         const GraphOptions &options);

/// Makes One-Shot Bufferize's decisions explicit before a rewrite: every
/// operand that bufferization would not write in place gets a
/// `bufferization.alloc_tensor copy(...)` marked `lms.copy` (upstream's
/// tensor copy insertion), so that the decisions the plan is made on cannot
/// change when the rewrite adds readers (a swap-out) or new values.
/// Fails, changing nothing, where the analysis rejects the module.
LogicalResult materializeBufferizationCopies(ModuleOp module);

/// After a planning pass: when it rewrote nothing, undoes what
/// resolvePlanningContext prepared (materialized copies, borrowing copies
/// of callees), so that a module that fits is left as it was. `reordered`:
/// the pass moved ops (--lms-plan's scheduling) and measured the new order
/// with what was prepared, which then stays.
void finishPlanning(ModuleOp module, bool reordered = false);

/// Resolves a PlanningContext for `scope` (a module or an op in one); for a
/// module, first makes borrowing copies of callees
/// (specializeBorrowingCallees) and then the call-site budgets; emits
/// the error at `scope` and fails on a malformed option or unknown device.
/// With `arena` the budgets bound the arena (GraphOptions::arena). An
/// `alignment` of 0 chooses one: kArenaAlignment with `arena` (the
/// granularity the arena lowering carves at, so that a plan that fits fits
/// as lowered), else 1 (exact bytes).
FailureOr<PlanningContext>
resolvePlanningContext(Operation *scope, uint64_t alignment,
                       StringRef dynamicBytes, StringRef device,
                       StringRef budget, bool arena = false);

/// The budget of `func` in bytes under `context` (resolveBudgetBytes on the
/// function's graph).
FailureOr<uint64_t> resolveFunctionBudget(FunctionOpInterface func,
                                          const PlanningContext &context);

/// The functions of `module` with a body, callees before their callers (so
/// that a caller is planned with its callees' final peaks).
SmallVector<FunctionOpInterface> functionsCalleesFirst(ModuleOp module);

/// For a pass that plans and rewrites the functions of `module` in the order
/// of functionsCalleesFirst, each only while it is planned: a cache of
/// callee summaries valid for the whole loop, since a callee is summarized
/// only by its callers' builds, after its own rewrite. Null when functions
/// call each other in a cycle (a callee may then be summarized before it is
/// rewritten): each build then summarizes its callees.
std::shared_ptr<CallSummaryCache> makeCalleesFirstCache(ModuleOp module);

/// The budget of `func` in bytes: its `lms.budget` attribute, else `option`
/// (a pass option or --lms-budget), else the device's capacity. Percentages
/// are of the function's peak without LMS ops. Emits an error and fails on a
/// malformed size.
FailureOr<uint64_t> resolveBudgetBytes(FunctionOpInterface func,
                                       StringRef option,
                                       const ::lms::DeviceSpec &device,
                                       const GraphOptions &graphOptions,
                                       const FunctionGraph &graph);

/// Emits the error of a budget no plan can meet, at the op that needs more
/// (or at the function when its arguments alone exceed it), and fails.
/// `ownPeakBytes` (planned with an arena): the bytes of the allocations of
/// their own the budget holds all along, named in a note.
LogicalResult reportInfeasible(FunctionOpInterface func,
                               const FunctionGraph &graph, uint64_t budget,
                               const ::lms::Infeasible &infeasible,
                               std::optional<uint64_t> ownPeakBytes = {});

/// The note of an error of planning with arena=true: the bytes of `func`'s
/// allocations of their own that the budget holds beside the arena.
void noteOwnAllocations(InFlightDiagnostic &diag, FunctionOpInterface func,
                        uint64_t ownPeakBytes);

} // namespace lms
} // namespace mlir

#endif // LMS_TRANSFORMS_PLANNINGSUPPORT_H
