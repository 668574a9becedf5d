//===- Rematerialize.cpp - The --lms-rematerialize pass -------------------===//
//
// Translates each function into the graph core with its in-place chains
// contracted (RematGraph), runs a rematerialization planner there, and
// writes the plan back as lms.recompute regions. The planning lives in
// lib/Graph.
//
//===----------------------------------------------------------------------===//

#include "LMS/Transforms/Rematerialize.h"
#include "LMS/Analysis/CostModel.h"
#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/FunctionPlanning.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/SwapRewrite.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSREMATERIALIZE
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

#include <functional>

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpIndex;
using ::lms::TensorIndex;

/// Whether the IR can clone `op` into a recompute region and get the same
/// values: no memory effects (recursively), tensor results, not an lms op.
static bool canRecompute(Operation *op) {
  // Unregistered ops may do anything, unless they say they are pure (the
  // graph.node ops of `lms-plan --mlir`).
  Dialect *dialect = op->getDialect();
  if (dialect && isa<LMSDialect>(dialect))
    return false;
  if (!dialect && !op->hasAttr("lms.recomputable"))
    return false;
  if (op->hasTrait<OpTrait::IsTerminator>() || op->getNumResults() == 0 ||
      op->getNumSuccessors() != 0)
    return false;
  for (Type type : op->getResultTypes())
    if (!isa<RankedTensorType>(type))
      return false;
  return !dialect || isMemoryEffectFree(op);
}

void mlir::lms::contractionOf(const FunctionGraph &fg,
                              std::vector<uint8_t> &joinsPrevious,
                              std::vector<uint8_t> &recomputable) {
  const ::lms::Graph &g = fg.getGraph();
  OpIndex n = static_cast<OpIndex>(g.numOps());
  recomputable.assign(n, 0);
  joinsPrevious.assign(n, 0);
  for (OpIndex i = 0; i < n; ++i)
    recomputable[i] = canRecompute(fg.getOp(i));
  // Op i may join the ops before it when every buffer it writes in place
  // is held by a result of an earlier op that only op i reads (an
  // allocation and a fill before the op that writes into it; a max-pool
  // writing its values and indices into two such buffers).
  for (OpIndex i = 1; i < n; ++i) {
    const ::lms::Op &op = g.op(i);
    if (op.updates.empty())
      continue;
    Operation *writer = fg.getOp(i);
    bool all = true;
    for (TensorIndex buffer : op.updates) {
      bool held = false;
      for (Value operand : writer->getOperands()) {
        std::optional<TensorIndex> b = fg.lookupBuffer(operand);
        Operation *def = operand.getDefiningOp();
        if (b && *b == buffer && def && def->getBlock() == writer->getBlock() &&
            fg.lookupOp(def) && operand.hasOneUse())
          held = true;
      }
      all &= held;
    }
    joinsPrevious[i] = all;
  }
}

FailureOr<RematGraph> RematGraph::build(const FunctionGraph &fg,
                                        const ::lms::DeviceSpec &device) {
  std::vector<uint8_t> joinsPrevious, irRecomputable;
  contractionOf(fg, joinsPrevious, irRecomputable);
  ::lms::ContractedGraph contracted = ::lms::contractChains(
      fg.getGraph(), joinsPrevious, irRecomputable, &device);
  RematGraph result;
  result.graph = std::move(contracted.graph);
  result.members = std::move(contracted.members);
  std::string problem = result.graph.verify();
  if (!problem.empty())
    return emitError(fg.getFunction()->getLoc())
           << "internal error: the contracted graph is malformed: " << problem;
  return result;
}

namespace {

/// Writes the recomputations of a plan into the function of a FunctionGraph
/// (rewriteWithRecomputes): for each recomputation of a group, the ops to
/// clone (the group, and the views around it that must be re-derived), an
/// lms.recompute holding them, and the later uses redirected to it.
class RecomputeWriter {
public:
  RecomputeWriter(const FunctionGraph &fg, const RematGraph &rg,
                  RecomputeStats *stats)
      : fg(fg), rg(rg), block(*fg.getBlock()), originalIds(block.getParentOp()),
        stats(stats) {}

  void run(const ::lms::Plan &plan) {
    // Which group each op is in, and how many recomputations of each group
    // are still to be written.
    groupOf.assign(fg.getGraph().numOps(), -1);
    for (auto [group, ops] : llvm::enumerate(rg.members))
      for (OpIndex op : ops)
        groupOf[op] = static_cast<OpIndex>(group);
    recomputesLeft.assign(rg.members.size(), 0);
    {
      std::vector<uint8_t> seen(rg.members.size(), 0);
      for (const ::lms::Step &step : plan)
        if (step.kind == ::lms::Step::Compute && seen[step.index]++)
          ++recomputesLeft[step.index];
    }
    std::vector<uint8_t> done(rg.members.size(), 0);
    std::vector<OpIndex> pending;
    for (const ::lms::Step &step : plan) {
      if (step.kind != ::lms::Step::Compute)
        continue;
      OpIndex group = step.index;
      if (done[group]) {
        pending.push_back(group);
        continue;
      }
      done[group] = 1;
      OpIndex anchorPos = rg.members[group].front();
      Operation *anchor = fg.getInsertionAnchor(anchorPos);
      for (OpIndex r : pending) {
        --recomputesLeft[r];
        recompute(r, anchor, anchorPos);
      }
      pending.clear();
    }
  }

private:
  /// The value that stands for `v` now: the latest recomputation of the
  /// original value `v` is or stands for, or `v`.
  Value currentOf(Value v) const {
    auto original = originalOf.find(v);
    auto it = current.find(original == originalOf.end() ? v : original->second);
    return it == current.end() ? v : it->second;
  }

  /// The position of the op of the block that holds `use`, if any.
  std::optional<OpIndex> positionOf(OpOperand &use) const {
    Operation *top = block.findAncestorOpInBlock(*use.getOwner());
    return top ? fg.lookupOp(top) : std::optional<OpIndex>();
  }

  /// Whether the op at `index` is in a group the plan recomputes again
  /// after the recomputation being written (its copy will read what the op
  /// reads, through the values that stand for them then).
  bool recomputedLater(OpIndex index) const {
    OpIndex group = groupOf[index];
    return group >= 0 && recomputesLeft[group] > 0;
  }

  /// Whether `v`, or the value that stands for it now, is read from
  /// `anchorPos` on, directly or through views (of which an earlier
  /// recomputation may have taken over the later uses).
  bool usedFrom(Value v, OpIndex anchorPos) const {
    auto readFrom = [&](Value value) {
      return llvm::any_of(value.getUses(), [&](OpOperand &use) {
        std::optional<OpIndex> index = positionOf(use);
        if (index && (*index >= anchorPos || recomputedLater(*index)))
          return true;
        Operation *user = use.getOwner();
        return user->getBlock() == &block && isViewLikeOp(user) &&
               use.getOperandNumber() == 0 &&
               llvm::any_of(user->getResults(),
                            [&](Value r) { return usedFrom(r, anchorPos); });
      });
    };
    return readFrom(v) || (currentOf(v) != v && readFrom(currentOf(v)));
  }

  /// Views of the chain's results (a reshape made right after the producer,
  /// read much later) are re-derived in the region too: a later use through
  /// the original view would keep the original buffer alive. So are the
  /// views of an earlier recomputation's value that stands for a result (a
  /// view made after that recomputation and read after this one: it would
  /// keep the earlier copy alive).
  void addLateViews(SmallVectorImpl<Operation *> &ops,
                    llvm::SmallPtrSetImpl<Operation *> &members,
                    OpIndex anchorPos) const {
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < ops.size(); ++k)
        for (Value result : ops[k]->getResults())
          for (Value source : sourcesOf(result))
            for (Operation *user : source.getUsers()) {
              if (members.contains(user) || user->getBlock() != &block ||
                  !isViewLikeOp(user) || user->getNumOperands() == 0 ||
                  user->getOperand(0) != source ||
                  !llvm::any_of(user->getResults(), [&](Value r) {
                    return usedFrom(r, anchorPos);
                  }))
                continue;
              std::optional<OpIndex> index = fg.lookupOp(user);
              if (!index || *index >= anchorPos)
                continue;
              ops.push_back(user);
              members.insert(user);
              grew = true;
            }
    }
  }

  /// `v`, and the value that stands for it now when that is another.
  SmallVector<Value, 2> sourcesOf(Value v) const {
    SmallVector<Value, 2> sources{v};
    if (Value now = currentOf(v); now != v)
      sources.push_back(now);
    return sources;
  }

  /// The views the chain reads of values recomputed before: the region
  /// re-derives them from the recomputed value (the original view would keep
  /// the original buffer alive).
  void addViewsOfRecomputed(SmallVectorImpl<Operation *> &ops,
                            llvm::SmallPtrSetImpl<Operation *> &members) const {
    auto viewSource = [&](Value v) -> Value {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &block || !isViewLikeOp(def) ||
          def->getNumOperands() == 0)
        return Value();
      return def->getOperand(0);
    };
    auto rootReplaced = [&](Value v) {
      for (Value source = viewSource(v); source; source = viewSource(source))
        if (current.count(source))
          return true;
      return false;
    };
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < ops.size(); ++k) {
        SmallVector<Value> reads(ops[k]->getOperands());
        for (Region &region : ops[k]->getRegions()) {
          llvm::SetVector<Value> captured;
          getUsedValuesDefinedAbove(region, captured);
          reads.append(captured.begin(), captured.end());
        }
        for (Value v : reads) {
          Operation *def = v.getDefiningOp();
          if (!def || members.contains(def) || current.count(v) ||
              !rootReplaced(v))
            continue;
          ops.push_back(def);
          members.insert(def);
          grew = true;
        }
      }
    }
  }

  /// Values the chain reads from outside (operands, and values its regions
  /// capture).
  /// A value that stands for a result of the chain (the value of an
  /// earlier recomputation that an added view reads) is not one: the region
  /// reads its own copy (see recompute).
  llvm::SetVector<Value>
  externalsOf(ArrayRef<Operation *> ops,
              const llvm::SmallPtrSetImpl<Operation *> &members) const {
    llvm::SetVector<Value> externals;
    auto outside = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && members.contains(def))
        return false;
      auto original = originalOf.find(v);
      if (original == originalOf.end())
        return true;
      Operation *originalDef = original->second.getDefiningOp();
      return !originalDef || !members.contains(originalDef);
    };
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        if (outside(v))
          externals.insert(v);
      for (Region &region : op->getRegions()) {
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(region, captured);
        for (Value v : captured)
          if (outside(v))
            externals.insert(v);
      }
    }
    return externals;
  }

  /// The results the region yields: those read outside the chain, by the
  /// original or by the value that stands for it now (an earlier
  /// recomputation took over the original's later uses: without this, a
  /// second recomputation of a multi-result chain, such as a pooling with
  /// indices, left a result it did not yield to the first one, which then
  /// stayed alive to its last use).
  SmallVector<Value>
  yieldedOf(ArrayRef<Operation *> ops,
            const llvm::SmallPtrSetImpl<Operation *> &members) const {
    auto insideGroup = [&](Operation *op) {
      Operation *top = block.findAncestorOpInBlock(*op);
      return top && members.contains(top);
    };
    auto readOutside = [&](Value v) {
      return llvm::any_of(v.getUsers(),
                          [&](Operation *user) { return !insideGroup(user); });
    };
    SmallVector<Value> yielded;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (readOutside(result) ||
            (currentOf(result) != result && readOutside(currentOf(result))))
          yielded.push_back(result);
    return yielded;
  }

  /// Recomputes `group` before `anchor` (at position `anchorPos`).
  void recompute(OpIndex group, Operation *anchor, OpIndex anchorPos) {
    SmallVector<Operation *> ops;
    llvm::SmallPtrSet<Operation *, 8> members;
    for (OpIndex i : rg.members[group]) {
      ops.push_back(fg.getOp(i));
      members.insert(fg.getOp(i));
    }
    addLateViews(ops, members, anchorPos);
    addViewsOfRecomputed(ops, members);
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    llvm::SetVector<Value> externals = externalsOf(ops, members);
    SmallVector<Value> yielded = yieldedOf(ops, members);

    OpBuilder builder(anchor);
    SmallVector<Value> inputs;
    for (Value v : externals)
      inputs.push_back(currentOf(v));
    SmallVector<Type> types;
    for (Value v : yielded)
      types.push_back(v.getType());
    auto op = RecomputeOp::create(builder, ops.back()->getLoc(), types, inputs);
    Block &body = op.getBody().front();
    IRMapping mapping;
    for (auto [external, argument] :
         llvm::zip(externals.getArrayRef(), body.getArguments()))
      mapping.map(external, argument);
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    for (Operation *member : ops) {
      // Which op it copies, for --lms-strip (there may be equal ones).
      Operation *clone = inner.clone(*member, mapping);
      originalIds.markCopy(clone, member);
      // The views added for the value that stands for a result read the
      // copy (they come after the member in the block).
      for (Value result : member->getResults())
        if (Value now = currentOf(result); now != result)
          mapping.map(now, mapping.lookup(result));
    }
    SmallVector<Value> results;
    for (Value v : yielded)
      results.push_back(mapping.lookup(v));
    YieldOp::create(inner, ops.back()->getLoc(), results);

    // From the anchor on, the uses read the recomputed values.
    for (auto [k, original] : llvm::enumerate(yielded)) {
      Value value = currentOf(original);
      Value replacement = op.getResult(k);
      value.replaceUsesWithIf(replacement, [&](OpOperand &use) {
        std::optional<OpIndex> index = positionOf(use);
        return index && *index >= anchorPos;
      });
      current[original] = replacement;
      originalOf[replacement] = original;
    }
    if (stats) {
      ++stats->recomputes;
      stats->opsCloned += ops.size();
    }
  }

  const FunctionGraph &fg;
  const RematGraph &rg;
  Block &block;
  OriginalIds originalIds;
  RecomputeStats *stats;
  /// Original value -> the recomputation that stands for it now.
  DenseMap<Value, Value> current;
  /// Recomputed value -> the original value it stands for.
  DenseMap<Value, Value> originalOf;
  /// The group of each op, and the recomputations of each group the plan
  /// makes after the one being written.
  std::vector<OpIndex> groupOf;
  std::vector<int> recomputesLeft;
};

} // namespace

void mlir::lms::rewriteWithRecomputes(const FunctionGraph &fg,
                                      const RematGraph &rg,
                                      const ::lms::Plan &plan,
                                      RecomputeStats *stats) {
  RecomputeWriter(fg, rg, stats).run(plan);
}

namespace {

struct LMSRematerializePass
    : public mlir::lms::impl::LMSRematerializeBase<LMSRematerializePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    RematKnobs knobs;
    knobs.planner = planner;
    knobs.timeLimitSeconds = timeLimit;
    knobs.iterations = iterations;
    knobs.seed = seed;
    if (failed(verifyRematKnobs(module, knobs)))
      return signalPassFailure();
    FailureOr<PlanningContext> context = resolvePlanningContext(
        module, alignment, dynamicBytes, device, budget, arena);
    if (failed(context))
      return signalPassFailure();
    // Callees first: each callee is summarized once, after its rewrite.
    context->graphOptions.callSummaries = makeCalleesFirstCache(module);
    if (arena && context->graphOptions.callSummaries)
      context->graphOptions.arenaModels = makeArenaModelCache();

    bool failedAny = false;
    for (FunctionOpInterface func : functionsCalleesFirst(module))
      if (failed(runOnFunction(func, *context, knobs)))
        failedAny = true;
    finishPlanning(module);
    if (failedAny)
      return signalPassFailure();
    if (printStatistics)
      llvm::errs() << "lms-rematerialize: " << totals.recomputes
                   << " recomputes, " << totals.opsCloned << " ops-cloned, "
                   << static_cast<uint64_t>(totals.extraSeconds * 1e6 + 0.5)
                   << " extra-compute-us" << fidelityStatistics(totals.replans)
                   << bodyStatistics(totals.bodies) << "\n";
  }

  RematStats totals;

  LogicalResult runOnFunction(FunctionOpInterface func,
                              const PlanningContext &context,
                              const RematKnobs &knobs) {
    FailureOr<uint64_t> limit = resolveFunctionBudget(func, context);
    if (failed(limit))
      return failure();
    FailureOr<RematStats> stats = rematerializeFunction(
        func, context.graphOptions, context.device, *limit, knobs);
    if (failed(stats))
      return failure();
    numRecomputes += stats->recomputes;
    numOpsCloned += stats->opsCloned;
    extraMicroseconds +=
        static_cast<uint64_t>(std::max(0.0, stats->extraSeconds) * 1e6 + 0.5);
    totals.recomputes += stats->recomputes;
    totals.opsCloned += stats->opsCloned;
    totals.extraSeconds += stats->extraSeconds;
    totals.replans += stats->replans;
    totals.bodies += stats->bodies;
    return success();
  }
};

} // namespace
