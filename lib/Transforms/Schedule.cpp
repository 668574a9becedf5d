//===- Schedule.cpp - The --lms-schedule pass -----------------------------===//
//
// Translates each function body into the graph core, adds the orderings the
// IR fixes (SSA uses, side effects, the terminator), lets the graph core's
// scheduler find an order with a smaller peak, and moves the ops into it.
// The new order is measured again on the rewritten IR and undone when it is
// not better (bufferization may decide differently in the new order).
//
//===----------------------------------------------------------------------===//

#include "LMS/Transforms/Schedule.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Schedule.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <functional>

#define DEBUG_TYPE "lms-schedule"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSSCHEDULE
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;

namespace {
enum class Access { None, Read, Write };
} // namespace

/// Whether `op` is an unregistered op the user declares free of side
/// effects: marked `lms.recomputable` (the graph.node ops of `lms-plan
/// --mlir`), or of one of `pureDialects` and not one of the ops of the HLO
/// dialects that talk to other devices or the host. Its regions count too.
static bool isDeclaredPure(Operation *op, ArrayRef<std::string> pureDialects) {
  if (op->getDialect())
    return false;
  if (op->hasAttr("lms.recomputable"))
    return true;
  StringRef name = op->getName().getStringRef();
  auto [dialect, opName] = name.split('.');
  if (!llvm::is_contained(pureDialects, dialect))
    return false;
  static constexpr llvm::StringLiteral effectful[] = {"custom_call",
                                                      "send",
                                                      "recv",
                                                      "infeed",
                                                      "outfeed",
                                                      "after_all",
                                                      "all_reduce",
                                                      "all_gather",
                                                      "all_to_all",
                                                      "reduce_scatter",
                                                      "collective_permute",
                                                      "collective_broadcast",
                                                      "optimization_barrier"};
  return !llvm::is_contained(effectful, opName);
}

/// How `op` (with what it holds in its regions) touches memory.
static Access memoryAccess(Operation *op, ArrayRef<std::string> pureDialects) {
  if (!op->getDialect()) {
    if (!isDeclaredPure(op, pureDialects))
      return Access::Write;
    bool pure = true;
    op->walk([&](Operation *inner) {
      if (inner != op && !isDeclaredPure(inner, pureDialects) &&
          !isMemoryEffectFree(inner))
        pure = false;
    });
    return pure ? Access::None : Access::Write;
  }
  if (isMemoryEffectFree(op))
    return Access::None;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return Access::Write;
  Access access = Access::None;
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      continue;
    if (isa<MemoryEffects::Read>(effect.getEffect()))
      access = Access::Read;
    else
      return Access::Write;
  }
  return access;
}

std::vector<std::pair<OpIndex, OpIndex>>
mlir::lms::orderingConstraints(const FunctionGraph &graph,
                               ArrayRef<std::string> pureDialects) {
  std::vector<std::pair<OpIndex, OpIndex>> edges;
  Block *block = graph.getBlock();
  OpIndex numOps = static_cast<OpIndex>(graph.getGraph().numOps());
  for (OpIndex i = 0; i < numOps; ++i) {
    Operation *op = graph.getOp(i);
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def)
          continue;
        Operation *top = block->findAncestorOpInBlock(*def);
        if (!top || top == op)
          continue;
        // A host constant whose first use only overwrites it is scheduled
        // (counted) at its first reading use, after this one: its place in
        // the IR does not matter to the analysis, and moveInto puts it
        // before its users again.
        if (std::optional<OpIndex> from = graph.lookupOp(top);
            from && *from < i)
          edges.push_back({*from, i});
      }
    });
  }
  // Effects, in the graph's order (the block's, constants at first use).
  OpIndex lastWriter = -1;
  SmallVector<OpIndex> readers;
  for (OpIndex i = 0; i < numOps; ++i) {
    Access access = memoryAccess(graph.getOp(i), pureDialects);
    if (access == Access::None)
      continue;
    if (lastWriter >= 0)
      edges.push_back({lastWriter, i});
    if (access == Access::Read) {
      readers.push_back(i);
      continue;
    }
    for (OpIndex reader : readers)
      edges.push_back({reader, i});
    readers.clear();
    lastWriter = i;
  }
  if (Operation *terminator = block->empty() ? nullptr : &block->back();
      terminator && terminator->hasTrait<OpTrait::IsTerminator>()) {
    if (std::optional<OpIndex> last = graph.lookupOp(terminator))
      for (OpIndex i = 0; i < numOps; ++i)
        if (i != *last)
          edges.push_back({i, *last});
  }
  llvm::sort(edges);
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

/// Moves the ops of `block` into `order` (its terminator stays last). An op
/// whose value is used before its place in `order` (a constant the graph
/// counts at a later, reading use) goes right before that first use.
static void moveInto(Block &block, ArrayRef<Operation *> order) {
  Operation *terminator = &block.back();
  llvm::SmallPtrSet<Operation *, 32> placed;
  SmallVector<Operation *> legal;
  // Definitions first; such ops have no operands of the block (constants),
  // so the worklist stays short.
  std::function<void(Operation *)> place = [&](Operation *op) {
    if (!placed.insert(op).second)
      return;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (Operation *top = block.findAncestorOpInBlock(*def);
              top && top != op)
            place(top);
    });
    legal.push_back(op);
  };
  for (Operation *op : order)
    place(op);
  for (Operation *op : legal)
    if (op != terminator)
      op->moveBefore(terminator);
}

/// Schedules the block of `graph`: asks the graph core for an order with a
/// smaller peak (stopping at `targetBytes`, 0: none), moves the ops into it,
/// and keeps it only when `measure` — the analysis of the rewritten IR,
/// where bufferization decides again — confirms a peak below `before`;
/// otherwise the block is restored. Returns the construction the kept order
/// came from, nullopt when the block is unchanged, or the graph core's
/// error.
static llvm::Expected<std::optional<std::string>>
reorderBlock(const FunctionGraph &graph, const ScheduleKnobs &knobs,
             uint64_t targetBytes, uint64_t before,
             llvm::function_ref<std::optional<uint64_t>()> measure) {
  Block &block = *graph.getBlock();
  // Every op of the block must be a graph op to be placed.
  if (graph.getGraph().numOps() != block.getOperations().size() ||
      !block.back().hasTrait<OpTrait::IsTerminator>())
    return std::nullopt;
  ::lms::ScheduleOptions scheduleOptions;
  scheduleOptions.edges = orderingConstraints(graph, knobs.pureDialects);
  scheduleOptions.searchIterations = knobs.iterations;
  scheduleOptions.seed = knobs.seed;
  scheduleOptions.targetBytes = targetBytes;
  llvm::Expected<::lms::ScheduleResult> scheduled =
      ::lms::scheduleForMemory(graph.getGraph(), scheduleOptions);
  if (!scheduled)
    return scheduled.takeError();
  LLVM_DEBUG(llvm::dbgs() << "lms-schedule: graph "
                          << scheduled->originalPeakBytes << " -> "
                          << scheduled->peakBytes << " bytes ("
                          << scheduled->method << ")\n");
  if (!scheduled->changed() ||
      scheduled->peakBytes >= scheduled->originalPeakBytes)
    return std::nullopt;
  SmallVector<Operation *> original;
  for (Operation &op : block)
    original.push_back(&op);
  SmallVector<Operation *> order;
  for (OpIndex i : scheduled->order)
    order.push_back(graph.getOp(i));
  moveInto(block, order);
  std::optional<uint64_t> peak = measure();
  if (!peak || *peak >= before) {
    LLVM_DEBUG(llvm::dbgs() << "lms-schedule: not confirmed by the analysis "
                               "of the rewritten IR, undone\n");
    moveInto(block, original);
    return std::nullopt;
  }
  return scheduled->method;
}

/// Reorders the blocks nested in the body of `func` (loop bodies, branches
/// of an scf.if; not the scalar bodies of linalg ops, nor LMS regions),
/// innermost first. A block's new order is kept when its own peak drops;
/// when the function's peak (`functionPeak` before) rises after all of
/// them, all are undone. Returns whether a block changed.
static bool scheduleNestedBlocks(FunctionOpInterface func,
                                 const GraphOptions &options,
                                 const ScheduleKnobs &knobs,
                                 uint64_t functionPeak) {
  SmallVector<Block *> blocks;
  Block &body = func.getFunctionBody().front();
  auto opaque = [](Operation *op) {
    return isa<linalg::LinalgOp>(op) ||
           (op->getDialect() && isa<LMSDialect>(op->getDialect()));
  };
  // Post-order: inner blocks before the blocks that hold them.
  body.walk<WalkOrder::PostOrder>([&](Operation *op) {
    for (Operation *at = op; at && at != func.getOperation();
         at = at->getParentOp())
      if (opaque(at))
        return;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (block.getOperations().size() > 2 &&
            block.back().hasTrait<OpTrait::IsTerminator>())
          blocks.push_back(&block);
  });
  // A nested block the analysis cannot translate is left alone quietly:
  // the function's own analysis reports what matters.
  ScopedDiagnosticHandler quiet(func->getContext(),
                                [](Diagnostic &) { return success(); });
  SmallVector<std::pair<Block *, SmallVector<Operation *>>> changed;
  for (Block *block : blocks) {
    FailureOr<FunctionGraph> graph =
        FunctionGraph::buildNested(*block, options);
    if (failed(graph))
      continue;
    SmallVector<Operation *> original;
    for (Operation &op : *block)
      original.push_back(&op);
    uint64_t before = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
    llvm::Expected<std::optional<std::string>> method = reorderBlock(
        *graph, knobs, /*targetBytes=*/0, before,
        [&]() -> std::optional<uint64_t> {
          FailureOr<FunctionGraph> after =
              FunctionGraph::buildNested(*block, options);
          if (failed(after))
            return std::nullopt;
          return ::lms::evaluateSchedule(after->getGraph()).peakBytes;
        });
    if (!method) {
      llvm::consumeError(method.takeError());
      continue;
    }
    if (*method)
      changed.push_back({block, std::move(original)});
  }
  if (changed.empty())
    return false;
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
  if (succeeded(graph) && budgetedBytes(*graph, options) <= functionPeak)
    return true;
  for (auto &[block, original] : llvm::reverse(changed))
    moveInto(*block, original);
  return false;
}

FailureOr<FunctionSchedule>
mlir::lms::scheduleFunction(FunctionOpInterface func,
                            const GraphOptions &options,
                            const ScheduleKnobs &knobs) {
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
  if (failed(graph))
    return failure();
  FunctionSchedule result;
  result.peakBefore = result.peakAfter = budgetedBytes(*graph, options);
  result.method = "given";
  // Nested blocks first: their peaks are the transient bytes of the ops
  // that hold them.
  if (scheduleNestedBlocks(func, options, knobs, result.peakBefore)) {
    graph = FunctionGraph::build(func, options);
    if (failed(graph))
      return failure();
    result.peakAfter = budgetedBytes(*graph, options);
    result.changed = true;
    result.method = "nested";
  }
  uint64_t measured = result.peakAfter;
  llvm::Expected<std::optional<std::string>> method =
      reorderBlock(*graph, knobs, knobs.targetBytes, result.peakAfter,
                   [&]() -> std::optional<uint64_t> {
                     FailureOr<FunctionGraph> after =
                         FunctionGraph::build(func, options);
                     if (failed(after))
                       return std::nullopt;
                     return measured = budgetedBytes(*after, options);
                   });
  if (!method)
    return func.emitError("internal error: scheduling failed: ")
           << llvm::toString(method.takeError());
  if (!*method)
    return result;
  result.peakAfter = measured;
  result.changed = true;
  result.method = result.method == "nested" ? "nested, " + **method : **method;
  return result;
}

namespace {

struct LMSSchedulePass
    : public mlir::lms::impl::LMSScheduleBase<LMSSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<GraphOptions> options = makeGraphOptions(
        module, alignment, dynamicBytes, /*keepArguments=*/false);
    if (failed(options))
      return signalPassFailure();
    // Callees are scheduled before their callers are built, so each callee
    // is summarized once, in its final order.
    options->callSummaries = makeCallSummaryCache();
    ScheduleKnobs knobs;
    knobs.iterations = iterations;
    knobs.seed = seed;
    knobs.pureDialects.assign(pureDialects.begin(), pureDialects.end());
    bool failedAny = false;
    // Callees first: a caller counts its callees' peaks at its calls.
    for (FunctionOpInterface func : functionsCalleesFirst(module)) {
      FailureOr<FunctionSchedule> done =
          scheduleFunction(func, *options, knobs);
      if (failed(done)) {
        failedAny = true;
        continue;
      }
      numReordered += done->changed;
      if (printStatistics)
        llvm::errs() << "lms-schedule: @" << func.getName() << ": peak "
                     << done->peakBefore << " -> " << done->peakAfter
                     << " bytes"
                     << (done->changed ? " (" + done->method + ")"
                                       : std::string(", unchanged"))
                     << "\n";
    }
    if (failedAny)
      return signalPassFailure();
  }
};

} // namespace
