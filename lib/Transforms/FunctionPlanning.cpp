//===- FunctionPlanning.cpp - Plan and rewrite one function ---------------===//

#include "LMS/Transforms/FunctionPlanning.h"
#include "LMS/Analysis/CostModel.h"
#include "LMS/Analysis/SwapCandidates.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Placement.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/Rematerialize.h"
#include "LMS/Transforms/SwapRewrite.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <set>

using namespace mlir;
using namespace mlir::lms;

/// The guarantee of every planning pass: the analysis of the rewritten
/// function fits.
static LogicalResult checkFits(FunctionOpInterface func,
                               const GraphOptions &graphOptions, uint64_t limit,
                               uint64_t plannedPeak, StringRef what) {
  FailureOr<FunctionGraph> after = FunctionGraph::build(func, graphOptions);
  if (failed(after))
    return failure();
  uint64_t peakAfter = budgetedBytes(*after, graphOptions);
  if (peakAfter > limit)
    return emitError(func.getLoc())
           << "internal error: after " << what << " the "
           << (graphOptions.arena ? "arena" : "peak") << " is " << peakAfter
           << " bytes, over the budget of " << limit
           << " bytes (the plan's peak: " << plannedPeak
           << "); please report this with the input";
  return success();
}

/// Rewrites `func` with `rewrite` and returns what the budget bounds after
/// it (its analysed peak, or arena).
/// With `keepBackup`, `snapshot` holds the function from before the rewrite,
/// which the caller restores (in place: the function keeps its ops, and
/// handles to them stay valid) or drops.
static FailureOr<uint64_t>
rewriteAndMeasure(FunctionOpInterface func, const GraphOptions &graphOptions,
                  bool keepBackup, std::optional<BodySnapshot> &snapshot,
                  llvm::function_ref<void()> rewrite) {
  snapshot.reset();
  if (keepBackup)
    snapshot.emplace(func);
  rewrite();
  FailureOr<FunctionGraph> after = FunctionGraph::build(func, graphOptions);
  if (failed(after)) {
    snapshot.reset();
    return failure();
  }
  return budgetedBytes(*after, graphOptions);
}

/// The error when, with arena=true, the last plan's arena is still over the
/// budget.
static LogicalResult arenaOverBudget(FunctionOpInterface func, uint64_t limit,
                                     uint64_t arena, int attempts) {
  return emitError(func.getLoc())
         << "cannot fit the budget " << ::lms::formatBytes(limit) << " ("
         << limit << " bytes) with the buffers placed in an arena: after "
         << attempts << " plans for less, the function still needs "
         << ::lms::formatBytes(arena) << " (" << arena
         << " bytes: its arena, and the buffers that cross calls as "
            "allocations of their own)";
}

/// Puts back the function that rewriteAndMeasure saved, and drops the copy.
static void restoreBody(std::optional<BodySnapshot> &snapshot) {
  snapshot->restore();
  snapshot.reset();
}

FailureOr<::lms::SwapMethod>
mlir::lms::parseSwapPlanner(Operation *at, StringRef name,
                            StringRef plannerOption) {
  if (std::optional<::lms::SwapMethod> method = ::lms::parseSwapMethod(name))
    return *method;
  return at->emitError() << "invalid " << plannerOption << " '" << name
                         << "': expected lms, tflms, swap-all or save-on-cpu";
}

FailureOr<::lms::RematMethod>
mlir::lms::parseRematPlanner(Operation *at, StringRef name,
                             StringRef plannerOption) {
  std::optional<::lms::RematMethod> method = ::lms::parseRematMethod(name);
  if (method && *method != ::lms::RematMethod::CheckpointAll)
    return *method;
  return at->emitError() << "invalid " << plannerOption << " '" << name
                         << "': expected heuristic, exact, moccasin, dtr, "
                            "chen-greedy, chen-sqrt or segments";
}

LogicalResult mlir::lms::verifyRematKnobs(Operation *at,
                                          const RematKnobs &knobs,
                                          StringRef plannerOption,
                                          StringRef timeLimitOption) {
  // Every planner but checkpoint-all (which cannot fit a budget; the
  // options do not offer it).
  ::lms::RematMethod method = knobs.planner;
  if (method == ::lms::RematMethod::CheckpointAll)
    return at->emitError() << "invalid " << plannerOption
                           << " 'checkpoint-all': it cannot fit a budget";
  if (method == ::lms::RematMethod::Exact && !::lms::haveExactSolver())
    return at->emitError()
           << plannerOption
           << "=exact needs CBC: this build has no MILP solver (install "
              "coinor-libcbc-dev and rebuild)";
  if (method == ::lms::RematMethod::Moccasin && !::lms::haveConstraintSolver())
    return at->emitError()
           << plannerOption
           << "=moccasin needs Gecode: this build has no constraint solver "
              "(install libgecode-dev and rebuild)";
  if (!(knobs.timeLimitSeconds >= 0))
    return at->emitError() << "invalid " << timeLimitOption << " "
                           << knobs.timeLimitSeconds
                           << ": expected a number of seconds >= 0";
  return success();
}

FailureOr<uint64_t>
mlir::lms::resolveHostBudget(Operation *scope, StringRef option,
                             const ::lms::DeviceSpec &device) {
  std::string text = option.str();
  StringRef source = "host-budget";
  if (text.empty()) {
    text = getGlobalHostBudget();
    source = "--lms-host-budget";
  }
  if (text.empty())
    return device.hostCapacityBytes;
  llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(text);
  if (!size)
    return emitError(scope->getLoc())
           << "invalid " << source << " '" << text
           << "': " << llvm::toString(size.takeError());
  if (size->isPercent)
    return emitError(scope->getLoc())
           << "invalid " << source << " '" << text
           << "': a host budget is a size in bytes, not a percentage";
  if (size->bytes == 0)
    return emitError(scope->getLoc())
           << "invalid " << source << " '" << text << "': must be positive";
  return size->bytes;
}

std::string mlir::lms::fidelityStatistics(uint64_t replans) {
  return replans ? ", " + std::to_string(replans) + " replans" : "";
}

std::string mlir::lms::bodyStatistics(uint64_t bodies, uint64_t fetched) {
  std::string text;
  if (bodies)
    text += ", " + std::to_string(bodies) + " bodies-planned";
  if (fetched)
    text += ", " + std::to_string(fetched) + " fetched-per-iteration";
  return text;
}

/// The live-bytes peak of a block's graph: what its enclosing op counts as
/// transient bytes (GraphBuilder::summarizeBlock).
static uint64_t blockPeak(const FunctionGraph &graph) {
  return ::lms::evaluateSchedule(graph.getGraph(),
                                 ::lms::EvalOptions{/*recordSteps=*/false})
      .peakBytes;
}

/// Whether `value` is defined inside `op` (in one of its regions).
static bool definedInside(Operation *op, Value value) {
  Region *region = value.getParentRegion();
  return region && op->isAncestor(region->getParentOp());
}

/// The largest buffer that the op at `index` of `graph` (an op with
/// regions) reads from outside, through one value `x`, without writing it:
/// fetching it inside each iteration, from a host copy made before the op,
/// takes its bytes off what the op holds beside its body. The ops after it
/// that read the buffer must read `x` too, without writing it (they read
/// it back from the host copy). Null when there is none.
static Value fetchableCapture(const FunctionGraph &graph, ::lms::OpIndex index,
                              Operation *op) {
  const ::lms::Graph &g = graph.getGraph();
  Value best;
  uint64_t bestBytes = 0;
  for (::lms::TensorIndex t : g.op(index).inputs) {
    const ::lms::Tensor &tensor = g.tensor(t);
    // Returned values stay, and so do arguments the function does not own
    // (borrowed from its caller, or kept resident): both are live-out.
    if (tensor.space != ::lms::MemorySpace::Device || tensor.bytes == 0 ||
        tensor.liveOut || tensor.bytes <= bestBytes)
      continue;
    // Read only through one value `x` inside the regions and after the
    // op, never written there, and not through the op's operands.
    bool ok = llvm::none_of(op->getOperands(), [&](Value operand) {
      return graph.lookupBuffer(operand) == std::optional(t);
    });
    Value x;
    auto readsOnlyX = [&](Operation *reader, Operation *scope) {
      reader->walk([&](Operation *inner) {
        if (inner == op || !ok)
          return;
        for (OpOperand &use : inner->getOpOperands()) {
          Value v = use.get();
          if ((scope && definedInside(scope, v)) ||
              graph.lookupBuffer(v) != std::optional(t))
            continue;
          auto dps = dyn_cast<DestinationStyleOpInterface>(inner);
          if ((x && v != x) || (dps && dps.isDpsInit(&use)) ||
              isa<SwapOutOp, SwapInOp, SwapWaitOp, CallOpInterface>(inner) ||
              inner->hasTrait<OpTrait::IsTerminator>())
            ok = false;
          x = v;
        }
      });
    };
    readsOnlyX(op, op);
    for (::lms::OpIndex user : tensor.users)
      if (user > index && ok)
        readsOnlyX(graph.getOp(user), graph.getOp(user));
    auto type = x ? dyn_cast<RankedTensorType>(x.getType()) : nullptr;
    Operation *def = x ? x.getDefiningOp() : nullptr;
    std::optional<::lms::OpIndex> defined =
        def ? graph.lookupOp(def) : std::nullopt;
    // An argument of the function that it owns (a weight handed over by
    // the caller): there from entry. Not a region's argument (an
    // iteration's value).
    auto arg = dyn_cast_or_null<BlockArgument>(x);
    bool owned = arg && tensor.producer == ::lms::kEntry &&
                 arg.getOwner()->isEntryBlock() &&
                 isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
    // A view (a slice, a reshape) stays: its copy would not be its
    // buffer's.
    if (!ok || !type || !type.hasStaticShape() || (!defined && !owned) ||
        (def && isViewLikeOp(def)))
      continue;
    // `x` holds the buffer's contents when the op runs: no op between
    // writes the buffer in place.
    bool current = llvm::none_of(tensor.users, [&](::lms::OpIndex user) {
      return (!defined || user > *defined) && user < index &&
             llvm::is_contained(g.op(user).updates, t);
    });
    if (current) {
      best = x;
      bestBytes = tensor.bytes;
    }
  }
  return best;
}

/// Offloads `x` right before `op` and fetches it in each region of `op`
/// that reads it, right before the first op there that does: every
/// iteration reads a copy of its own, freed after its last use there. The
/// ops after `op` that read `x` read one more copy, fetched before the
/// first of them.
static unsigned fetchPerIteration(Operation *op, Value x) {
  unsigned swapIns = 0;
  auto type = cast<RankedTensorType>(x.getType());
  OpBuilder builder(op);
  Value handle = SwapOutOp::create(builder, x.getLoc(), HostType::get(type), x)
                     .getResult();
  Block *block = op->getBlock();
  Operation *later = nullptr;
  for (Operation *user : x.getUsers())
    if (Operation *top = block->findAncestorOpInBlock(*user))
      if (op->isBeforeInBlock(top) && (!later || top->isBeforeInBlock(later)))
        later = top;
  if (later) {
    OpBuilder after(later);
    Value back =
        SwapInOp::create(after, later->getLoc(), type, handle).getResult();
    ++swapIns;
    x.replaceUsesWithIf(back, [&](OpOperand &use) {
      Operation *top = block->findAncestorOpInBlock(*use.getOwner());
      return top && top != back.getDefiningOp() && op->isBeforeInBlock(top);
    });
  }
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    Operation *first = nullptr;
    for (Operation &inner : region.front()) {
      WalkResult reads = inner.walk([&](Operation *nested) {
        return llvm::is_contained(nested->getOperands(), x)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (reads.wasInterrupted()) {
        first = &inner;
        break;
      }
    }
    if (!first)
      continue;
    OpBuilder inside(first);
    Value fetched =
        SwapInOp::create(inside, first->getLoc(), type, handle).getResult();
    ++swapIns;
    x.replaceUsesWithIf(fetched, [&](OpOperand &use) {
      return region.isAncestor(use.getOwner()->getParentRegion());
    });
  }
  return swapIns;
}

FailureOr<RegionPlanning> mlir::lms::planRegionBodies(
    Block &block, llvm::function_ref<FailureOr<FunctionGraph>()> build,
    uint64_t limit, const GraphOptions &graphOptions, BodyPlanner planBody,
    bool fetchInside) {
  RegionPlanning planned;
  // Linalg payloads and recomputations hold no buffers of their own to
  // plan; a call's peak is its callee's, planned with the callee.
  SmallVector<Operation *> withRegions;
  for (Operation &op : block)
    if (op.getNumRegions() > 0 && !isa<RecomputeOp, linalg::LinalgOp>(op))
      withRegions.push_back(&op);
  std::optional<FunctionGraph> graph;
  for (Operation *op : withRegions) {
    // Diagnostics of body plans that a fetch may still make unnecessary.
    std::vector<Diagnostic> held;
    for (;;) {
      if (!graph) {
        FailureOr<FunctionGraph> built = build();
        if (failed(built))
          return failure();
        graph.emplace(std::move(*built));
      }
      const ::lms::Graph &g = graph->getGraph();
      std::optional<::lms::OpIndex> index = graph->lookupOp(op);
      if (!index)
        break;
      int64_t transient = g.op(*index).transientBytes;
      uint64_t bound = ::lms::feasibleBytesOf(g, *index);
      uint64_t beside =
          bound - static_cast<uint64_t>(std::max<int64_t>(transient, 0));
      // Within the budget, the planners of the block handle it.
      if (transient <= 0 || bound <= limit)
        break;
      Value capture =
          fetchInside ? fetchableCapture(*graph, *index, op) : Value();
      if (beside < limit) {
        uint64_t room = limit - beside;
        std::vector<Diagnostic> diagnostics;
        FailureOr<RegionPlanning> inside = [&] {
          // Held: a fetch may still help, and when none does, the
          // diagnostics of the first attempt say why (before any fetch).
          ScopedDiagnosticHandler hold(op->getContext(), [&](Diagnostic &d) {
            diagnostics.push_back(std::move(d));
            return success();
          });
          return planBodiesOf(op, room, graphOptions, planBody, fetchInside);
        }();
        if (succeeded(inside)) {
          planned.bodies += inside->bodies;
          planned.fetched += inside->fetched;
          planned.fetchedIns += inside->fetchedIns;
          if (inside->bodies || inside->fetched)
            graph.reset();
          break;
        }
        if (held.empty())
          held = std::move(diagnostics);
        if (!capture) {
          for (Diagnostic &d : held)
            op->getContext()->getDiagEngine().emit(std::move(d));
          return failure();
        }
      }
      // With its operands and results alone over the budget, or a body
      // that cannot fit what they leave, no body plan helps: fetch the
      // largest value it reads from outside inside each iteration instead
      // of holding it across the op. Without one, the block's planner
      // says why (or the body's, when it was tried).
      if (!capture) {
        for (Diagnostic &d : held)
          op->getContext()->getDiagEngine().emit(std::move(d));
        if (!held.empty())
          return failure();
        break;
      }
      planned.fetchedIns += fetchPerIteration(op, capture);
      ++planned.fetched;
      graph.reset();
    }
  }
  return planned;
}

FailureOr<RegionPlanning>
mlir::lms::planBodiesOf(Operation *op, uint64_t room,
                        const GraphOptions &graphOptions, BodyPlanner planBody,
                        bool fetchInside) {
  RegionPlanning planned;
  for (Region &region : op->getRegions()) {
    if (!region.hasOneBlock())
      continue;
    Block &body = region.front();
    FailureOr<FunctionGraph> inner =
        FunctionGraph::buildNested(body, graphOptions);
    if (failed(inner))
      return failure();
    if (blockPeak(*inner) <= room)
      continue;
    FailureOr<RegionPlanning> deeper = planRegionBodies(
        body, [&] { return FunctionGraph::buildNested(body, graphOptions); },
        room, graphOptions, planBody, fetchInside);
    if (failed(deeper))
      return failure();
    if (deeper->bodies || deeper->fetched) {
      planned.bodies += deeper->bodies;
      planned.fetched += deeper->fetched;
      planned.fetchedIns += deeper->fetchedIns;
      inner = FunctionGraph::buildNested(body, graphOptions);
      if (failed(inner))
        return failure();
      if (blockPeak(*inner) <= room)
        continue;
    }
    if (failed(planBody(body, *inner, room)))
      return failure();
    // The guarantee, as checkFits gives it for a function.
    FailureOr<FunctionGraph> after =
        FunctionGraph::buildNested(body, graphOptions);
    if (failed(after))
      return failure();
    if (uint64_t peak = blockPeak(*after); peak > room)
      return emitError(op->getLoc())
             << "internal error: after planning inside its body, the "
                "body peaks at "
             << peak << " bytes, over the " << room
             << " bytes planned for; please report this with the input";
    ++planned.bodies;
  }
  return planned;
}

/// The error when a body cannot be planned to fit `room`.
static InFlightDiagnostic bodyDoesNotFit(Operation *owner, uint64_t room,
                                         StringRef how) {
  InFlightDiagnostic diag = emitError(owner->getLoc());
  diag << "cannot fit the body of this op into " << ::lms::formatBytes(room)
       << " (" << room
       << " bytes), what the budget leaves beside its operands and results, "
       << how << ": ";
  return diag;
}

LogicalResult mlir::lms::offloadInBody(Block &body, const FunctionGraph &graph,
                                       uint64_t room,
                                       const GraphOptions &graphOptions,
                                       const ::lms::DeviceSpec &spec,
                                       const SwapKnobs &knobs,
                                       SwapStats *stats) {
  Operation *owner = body.getParentOp();
  SwapCandidates candidates(graph);
  ::lms::SwapOptions options = swapOptionsOf(knobs, candidates);
  ::lms::SwapMethod method = knobs.planner == ::lms::SwapMethod::SaveOnCpu
                                 ? ::lms::SwapMethod::LMS
                                 : knobs.planner;
  ::lms::Infeasible infeasible;
  llvm::Expected<::lms::SwapResult> result = ::lms::planSwapsWith(
      method, graph.getGraph(), spec, room, options, &infeasible);
  if (!result) {
    InFlightDiagnostic diag = bodyDoesNotFit(owner, room, "offloading")
                              << llvm::toString(result.takeError());
    if (infeasible.op >= 0 && infeasible.smallestBudget > 0)
      diag.attachNote(graph.getOp(infeasible.op)->getLoc())
          << "the op of the body that needs "
          << ::lms::formatBytes(infeasible.smallestBudget) << " ("
          << infeasible.smallestBudget << " bytes): " << infeasible.reason;
    return diag;
  }
  if (result->peakBytes > room)
    return bodyDoesNotFit(owner, room, "offloading")
           << "the plan peaks at " << result->peakBytes << " bytes";
  if (knobs.hostLimit && result->hostPeakBytes > knobs.hostLimit)
    return bodyDoesNotFit(owner, room, "offloading")
           << "it holds " << ::lms::formatBytes(result->hostPeakBytes)
           << " in host memory at once, over the host budget "
           << ::lms::formatBytes(knobs.hostLimit);
  rewriteWithSwaps(graph, candidates, result->plan);
  if (stats) {
    std::set<::lms::TensorIndex> tensors;
    for (const ::lms::SwapDecision &d : result->plan.decisions) {
      tensors.insert(d.tensor);
      stats->swapOuts += d.reuseHostCopy ? 0 : 1;
      ++stats->swapIns;
    }
    stats->tensors += tensors.size();
    stats->toHost += result->timeline.d2hBytes;
    stats->toDevice += result->timeline.h2dBytes;
    stats->stallSeconds += result->timeline.stallSeconds;
  }
  (void)graphOptions;
  return success();
}

LogicalResult
mlir::lms::recomputeInBody(Block &body, const FunctionGraph &graph,
                           uint64_t room, const GraphOptions &graphOptions,
                           const ::lms::DeviceSpec &spec,
                           const RematKnobs &knobs, RematStats *stats) {
  Operation *owner = body.getParentOp();
  FailureOr<RematGraph> rg = RematGraph::build(graph, spec);
  if (failed(rg))
    return failure();
  uint64_t lower = ::lms::rematLowerBound(rg->graph);
  if (room < lower)
    return bodyDoesNotFit(owner, room, "recomputing")
           << "its smallest feasible budget is " << ::lms::formatBytes(lower)
           << " (" << lower << " bytes)";
  ::lms::RematOptions options;
  if (knobs.timeLimitSeconds > 0)
    options.timeLimitSeconds = knobs.timeLimitSeconds;
  options.searchIterations = knobs.iterations;
  options.seed = knobs.seed;
  options.device = &spec;
  // The baselines that checkpoint a training step's forward pass have no
  // loss to split a body at: the heuristic plans bodies for them.
  ::lms::RematMethod method = knobs.planner;
  if (method == ::lms::RematMethod::ChenSqrt ||
      method == ::lms::RematMethod::ChenGreedy ||
      method == ::lms::RematMethod::Segments)
    method = ::lms::RematMethod::Heuristic;
  if (method == ::lms::RematMethod::Exact && knobs.timeLimitSeconds <= 0)
    options.timeLimitSeconds = 60;
  llvm::Expected<::lms::RematResult> result =
      ::lms::planRemat(rg->graph, room, method, options);
  if (!result)
    return bodyDoesNotFit(owner, room, "recomputing")
           << llvm::toString(result.takeError());
  RecomputeStats rewritten;
  rewriteWithRecomputes(graph, *rg, result->plan, &rewritten);
  if (stats) {
    stats->recomputes += rewritten.recomputes;
    stats->opsCloned += rewritten.opsCloned;
    stats->extraSeconds +=
        result->computeCost - ::lms::scheduleCost(rg->graph, &spec);
  }
  (void)graphOptions;
  return success();
}

/// Without an arena a rewrite realizes its plan: the rewritten function's
/// analysed peak is at most the plan's (the evaluator and the rewrite read
/// one list of insertions, and views are re-derived with what they view).
/// An excess is a fault of LMS, reported as such, never planned around.
static LogicalResult checkRealizesPlan(FunctionOpInterface func,
                                       StringRef rewrite, uint64_t after,
                                       uint64_t plan) {
  if (after <= plan)
    return success();
  return emitError(func.getLoc())
         << "internal error: the " << rewrite << " of @"
         << SymbolTable::getSymbolName(func).getValue() << " peaks at " << after
         << " bytes, over its plan's " << plan
         << " bytes (a rewrite must realize its plan); please report this "
            "with the input";
}

/// With an arena, planners first plan on a graph that holds the
/// allocations of their own (arguments, results, buffers crossing calls)
/// at their peak and never frees them early (reserveOwnAllocations): the
/// plan's peak is then what the rewrite needs, and most plans fit at once.
/// Where the peak of those allocations comes after entry (results
/// allocated while the arguments are still resident), offloading or
/// recomputing one of them can lower that peak, which such a plan never
/// does; so when planning that way fails, the function is planned again
/// on its live bytes, letting the replans find the margin. Only the
/// diagnostics of the attempt that decides are emitted: the second's when
/// it succeeds, else the first's (which name the smallest feasible budget
/// in the arena's terms).
/// Without an arena: one attempt, on live bytes.
template <typename Stats>
static FailureOr<Stats>
reservedThenLiveBytes(FunctionOpInterface func, bool arena,
                      llvm::function_ref<FailureOr<Stats>(bool)> plan) {
  if (!arena)
    return plan(false);
  MLIRContext *context = func->getContext();
  std::vector<Diagnostic> first, second;
  FailureOr<Stats> result = failure();
  BodySnapshot snapshot(func);
  {
    ScopedDiagnosticHandler hold(context, [&](Diagnostic &d) {
      first.push_back(std::move(d));
      return success();
    });
    result = plan(true);
  }
  if (failed(result)) {
    snapshot.restore();
    {
      ScopedDiagnosticHandler hold(context, [&](Diagnostic &d) {
        second.push_back(std::move(d));
        return success();
      });
      result = plan(false);
    }
    if (succeeded(result))
      first = std::move(second);
    else
      snapshot.restore();
  }
  for (Diagnostic &d : first)
    context->getDiagEngine().emit(std::move(d));
  return result;
}

std::vector<uint8_t> mlir::lms::backwardOpsOfLoss(FunctionOpInterface func,
                                                  const FunctionGraph &fg,
                                                  const ::lms::Graph &graph,
                                                  bool byTime) {
  Operation *terminator = func.getFunctionBody().front().getTerminator();
  if (terminator && terminator->getNumOperands() > 0)
    if (std::optional<::lms::TensorIndex> loss =
            fg.lookupBuffer(terminator->getOperand(0)))
      return byTime ? ::lms::opsAfterLoss(graph, *loss)
                    : ::lms::backwardOpsOf(graph, *loss);
  return {};
}

::lms::SwapOptions mlir::lms::swapOptionsOf(const SwapKnobs &knobs,
                                            const SwapCandidates &candidates) {
  ::lms::SwapOptions options;
  options.swapoutThreshold = knobs.swapoutThreshold;
  options.swapinAhead = knobs.swapinAhead;
  options.swapinGroupby = knobs.swapinGroupby;
  options.valueAfterGap = [&candidates](::lms::TensorIndex t, ::lms::OpIndex a,
                                        ::lms::OpIndex b) {
    return candidates.valueAfterGap(t, a, b);
  };
  options.canReuseAfter = [&candidates](::lms::TensorIndex t,
                                        ::lms::OpIndex a) {
    return candidates.canReuseAfter(t, a);
  };
  return options;
}

static FailureOr<SwapStats>
insertSwapsOnce(FunctionOpInterface func, const GraphOptions &graphOptions,
                const ::lms::DeviceSpec &spec, uint64_t limit,
                const SwapKnobs &knobs, bool reserveOwn);

llvm::Expected<::lms::SwapResult> mlir::lms::offloadAfterRecompute(
    FunctionOpInterface func, const GraphOptions &graphOptions,
    const ::lms::DeviceSpec &spec, const ::lms::Plan &plan, uint64_t limit,
    const SwapKnobs &knobs) {
  auto error = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   message.str());
  };
  GraphOptions liveOptions = graphOptions;
  liveOptions.arena = false;
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, liveOptions);
  if (failed(graph))
    return error("the function cannot be analysed");
  FailureOr<RematGraph> rg = RematGraph::build(*graph, spec);
  if (failed(rg))
    return error("the function cannot be analysed");
  BodySnapshot snapshot(func);
  rewriteWithRecomputes(*graph, *rg, plan);
  llvm::Expected<::lms::SwapResult> result =
      [&]() -> llvm::Expected<::lms::SwapResult> {
    FailureOr<FunctionGraph> after = FunctionGraph::build(func, liveOptions);
    if (failed(after))
      return error("the recomputed function cannot be analysed");
    const ::lms::Graph &g = after->getGraph();
    if (budgetedBytes(*after, liveOptions) <= limit)
      return ::lms::unswapped(g, spec);
    SwapCandidates candidates(*after);
    ::lms::SwapOptions options = swapOptionsOf(knobs, candidates);
    if (knobs.planner == ::lms::SwapMethod::SaveOnCpu)
      options.backwardOps = backwardOpsOfLoss(func, *after, g, true);
    return ::lms::planSwapsWith(knobs.planner, g, spec, limit, options);
  }();
  snapshot.restore();
  return result;
}

/// planRegionBodies on the function's block, with `planBody`.
FailureOr<RegionPlanning>
mlir::lms::planFunctionBodies(FunctionOpInterface func,
                              const GraphOptions &graphOptions, uint64_t limit,
                              BodyPlanner planBody, bool fetchInside) {
  Region &body = func.getFunctionBody();
  if (!body.hasOneBlock())
    return RegionPlanning();
  return planRegionBodies(
      body.front(), [&] { return FunctionGraph::build(func, graphOptions); },
      limit, graphOptions, planBody, fetchInside);
}

FailureOr<SwapStats> mlir::lms::insertSwapsInFunction(
    FunctionOpInterface func, const GraphOptions &graphOptions,
    const ::lms::DeviceSpec &spec, uint64_t limit, const SwapKnobs &knobs) {
  SwapStats inBodies;
  FailureOr<RegionPlanning> bodies = planFunctionBodies(
      func, graphOptions, limit,
      [&](Block &body, const FunctionGraph &graph, uint64_t room) {
        return offloadInBody(body, graph, room, graphOptions, spec, knobs,
                             &inBodies);
      },
      /*fetchInside=*/true);
  if (failed(bodies))
    return failure();
  FailureOr<SwapStats> stats = reservedThenLiveBytes<SwapStats>(
      func, graphOptions.arena, [&](bool reserve) {
        return insertSwapsOnce(func, graphOptions, spec, limit, knobs, reserve);
      });
  if (failed(stats))
    return failure();
  stats->bodies = bodies->bodies;
  stats->fetched = bodies->fetched;
  stats->tensors += inBodies.tensors + bodies->fetched;
  stats->swapOuts += inBodies.swapOuts + bodies->fetched;
  stats->swapIns += inBodies.swapIns + bodies->fetchedIns;
  stats->toHost += inBodies.toHost;
  stats->toDevice += inBodies.toDevice;
  stats->stallSeconds += inBodies.stallSeconds;
  return stats;
}

namespace {
/// A plan whose rewrite fit the budget with an arena after a replan, kept
/// while the target is raised again (raiseTarget).
struct RaisedFit {
  ::lms::SwapPlan plan;
  SwapStats stats;
  /// The highest target a plan fit under (the bisection's lower end).
  uint64_t target;
  /// The rewrite's arena need, and the plan's peak.
  uint64_t arenaBytes, peakBytes;
};
} // namespace

/// Replans with an arena raise the target only while the best fit leaves
/// more than 1/kRaiseGap of the budget unused (and more than the arena's
/// granularity, kArenaAlignment), and the targets that fit and went over
/// are more than that apart.
constexpr uint64_t kRaiseGap = 100;

/// The next target after a fit, between the highest target that fit and
/// the lowest that went over; none when they are close, or the fit uses
/// nearly all of the budget.
static std::optional<uint64_t>
raiseTarget(uint64_t limit, const RaisedFit &best, uint64_t overTarget) {
  uint64_t gap = std::max(limit / kRaiseGap, kArenaAlignment);
  if (best.arenaBytes + gap >= limit || overTarget <= best.target + gap)
    return std::nullopt;
  return best.target + (overTarget - best.target) / 2;
}

static FailureOr<SwapStats>
insertSwapsOnce(FunctionOpInterface func, const GraphOptions &graphOptions,
                const ::lms::DeviceSpec &spec, uint64_t limit,
                const SwapKnobs &knobs, bool reserveOwn) {
  // Without an arena: one plan, whose rewrite realizes it
  // (checkRealizesPlan). With an arena the placement adds bytes the plan
  // does not see: when the rewritten function's arena exceeds the budget,
  // the body is restored and planned again for a budget lowered by the
  // excess. The check after the last attempt is the guarantee.
  int kAttempts = graphOptions.arena ? 8 : 1;
  uint64_t target = limit;
  // The target of the last plan the planner made.
  uint64_t plannedTarget = limit;
  // With an arena, once a replan fits: the lowest target whose plan's arena
  // went over the budget, and the fitting plan that stalls least so far. A
  // plan for a target lowered by the whole excess can keep far less on the
  // device than the budget allows (a plan's placement may waste 10% where a
  // plan for a little less wastes nothing), so the target is raised again by
  // bisection between the two (raiseTarget), and the plan that stalls least
  // is kept.
  std::optional<uint64_t> overTarget;
  std::optional<RaisedFit> best;
  auto statsOf = [](const ::lms::SwapResult &result) {
    SwapStats stats;
    std::set<::lms::TensorIndex> tensors;
    for (const ::lms::SwapDecision &d : result.plan.decisions) {
      tensors.insert(d.tensor);
      stats.swapOuts += d.reuseHostCopy ? 0 : 1;
      ++stats.swapIns;
    }
    stats.tensors = tensors.size();
    stats.toHost = result.timeline.d2hBytes;
    stats.toDevice = result.timeline.h2dBytes;
    stats.stallSeconds = result.timeline.stallSeconds;
    return stats;
  };
  // Rewrites the function, restored to how it came, with the best plan.
  auto finishWithBest = [&](int attempt) -> FailureOr<SwapStats> {
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    SwapCandidates candidates(*graph);
    std::optional<BodySnapshot> unused;
    FailureOr<uint64_t> peakAfter =
        rewriteAndMeasure(func, graphOptions, false, unused, [&] {
          rewriteWithSwaps(*graph, candidates, best->plan);
        });
    if (failed(peakAfter) ||
        failed(checkFits(func, graphOptions, limit, best->peakBytes,
                         "inserting swaps")))
      return failure();
    best->stats.replans = attempt;
    return best->stats;
  };
  for (int attempt = 0;; ++attempt) {
    bool last = attempt + 1 == kAttempts;
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    if (budgetedBytes(*graph, graphOptions) <= target)
      return SwapStats();

    SwapCandidates candidates(*graph);
    // With an arena, the budget bounds the arena plus the allocations of
    // their own (arguments, results, buffers crossing calls), which the
    // lowering holds apart: offloading one of those frees nothing the arena
    // can use, and the arena must leave room for their peak all along. The
    // plan is made on a graph that says so (reserveOwnAllocations).
    const ::lms::Graph *planned = &graph->getGraph();
    std::optional<ArenaSwapGraph> reserved;
    uint64_t ownPeak = 0;
    if (reserveOwn) {
      reserved = arenaSwapGraph(*graph, graphOptions);
      ownPeak = reserved->allocations.peakBytes;
      planned = &reserved->graph;
    }
    ::lms::SwapOptions options = swapOptionsOf(knobs, candidates);
    if (knobs.planner == ::lms::SwapMethod::SaveOnCpu)
      options.backwardOps = backwardOpsOfLoss(func, *graph, *planned, true);
    if (reserved)
      options.valueAfterGap = reserved->valueAfterGap(candidates);

    ::lms::Infeasible infeasible;
    StringRef planner = ::lms::swapMethodName(knobs.planner);
    llvm::Expected<::lms::SwapResult> result = ::lms::planSwapsWith(
        knobs.planner, *planned, spec, target, options, &infeasible);
    if (!result && best) {
      // Raising the target found no plan where a lower one did: keep that.
      llvm::consumeError(result.takeError());
      return finishWithBest(attempt);
    }
    if (!result) {
      std::string message = llvm::toString(result.takeError());
      // The target was lowered past what offloading can reach: try that
      // floor itself, when no plan for it was tried yet.
      if (attempt > 0 && !last && infeasible.smallestBudget > target &&
          infeasible.smallestBudget < plannedTarget) {
        target = infeasible.smallestBudget;
        continue;
      }
      // A replan found nothing: say why the plans before fell short.
      if (attempt > 0)
        return emitError(func.getLoc())
               << "cannot fit the budget " << ::lms::formatBytes(limit) << " ("
               << limit
               << " bytes) with the buffers placed in an arena: the "
                  "rewritten function's arena stays over the budget (by "
                  "fragmentation), and no plan with a margin for that fits: "
               << message;
      if (knobs.planner == ::lms::SwapMethod::LMS &&
          infeasible.smallestBudget > 0) {
        (void)reportInfeasible(func, *graph, target, infeasible,
                               reserved ? std::optional<uint64_t>(ownPeak)
                                        : std::nullopt);
        return failure();
      }
      return emitError(func.getLoc())
             << "the " << planner << " planner cannot fit the budget "
             << ::lms::formatBytes(limit) << " (" << limit
             << " bytes): " << message;
    }
    if (result->peakBytes > target)
      return emitError(func.getLoc())
             << "the " << planner << " planner cannot fit the budget "
             << ::lms::formatBytes(limit) << " (" << limit
             << " bytes): its plan peaks at " << result->peakBytes << " bytes";
    // Host memory is a budget too: the function is not rewritten.
    if (knobs.hostLimit && result->hostPeakBytes > knobs.hostLimit) {
      if (best)
        return finishWithBest(attempt);
      return emitError(func.getLoc())
             << "fitting the device budget " << ::lms::formatBytes(limit)
             << " (" << limit << " bytes) by offloading holds "
             << ::lms::formatBytes(result->hostPeakBytes) << " ("
             << result->hostPeakBytes
             << " bytes) in host memory at once, over the host budget "
             << ::lms::formatBytes(knobs.hostLimit) << " (" << knobs.hostLimit
             << " bytes); raise host-budget (or --lms-host-budget), or let "
                "--lms-plan recompute instead of offloading";
    }

    plannedTarget = target;
    std::optional<BodySnapshot> backup;
    FailureOr<uint64_t> peakAfter = rewriteAndMeasure(
        func, graphOptions, !last || graphOptions.arena, backup,
        [&] { rewriteWithSwaps(*graph, candidates, result->plan); });
    if (failed(peakAfter))
      return failure();
    if (!graphOptions.arena &&
        failed(checkRealizesPlan(func, "offloading rewrite", *peakAfter,
                                 result->peakBytes)))
      return failure();
    if (*peakAfter > limit) {
      overTarget = std::min(overTarget.value_or(target), target);
      if (best) {
        restoreBody(backup);
        std::optional<uint64_t> next =
            last ? std::nullopt : raiseTarget(limit, *best, *overTarget);
        if (!next)
          return finishWithBest(attempt);
        target = *next;
        continue;
      }
    }
    if (*peakAfter > limit && last && graphOptions.arena) {
      // What the arena needs besides the live bytes did not shrink with
      // them: a clean error, the function as it was.
      restoreBody(backup);
      return arenaOverBudget(func, limit, *peakAfter, kAttempts);
    }
    if (*peakAfter > limit && !last) {
      restoreBody(backup);
      // With an arena, later attempts lower the target faster: the bytes
      // the arena adds do not all go with the live bytes.
      uint64_t excess = *peakAfter - limit;
      if (graphOptions.arena)
        excess *= attempt + 1;
      target -= std::min(target, excess);
      continue;
    }
    SwapStats stats = statsOf(*result);
    stats.replans = attempt;
    bool better = !best || stats.stallSeconds < best->stats.stallSeconds;
    if (overTarget && graphOptions.arena) {
      if (better)
        best = RaisedFit{result->plan, stats, target, *peakAfter,
                         result->peakBytes};
      else
        best->target = std::max(best->target, target);
      std::optional<uint64_t> next =
          last ? std::nullopt : raiseTarget(limit, *best, *overTarget);
      if (next) {
        restoreBody(backup);
        target = *next;
        continue;
      }
      if (!better) {
        restoreBody(backup);
        return finishWithBest(attempt);
      }
    }
    backup.reset();
    if (failed(checkFits(func, graphOptions, limit, result->peakBytes,
                         "inserting swaps")))
      return failure();
    return stats;
  }
}

static FailureOr<RematStats>
rematerializeOnce(FunctionOpInterface func, const GraphOptions &graphOptions,
                  const ::lms::DeviceSpec &spec, uint64_t limit,
                  const RematKnobs &knobs, bool reserveOwn);

FailureOr<RematStats> mlir::lms::rematerializeFunction(
    FunctionOpInterface func, const GraphOptions &graphOptions,
    const ::lms::DeviceSpec &spec, uint64_t limit, const RematKnobs &knobs) {
  RematStats inBodies;
  FailureOr<RegionPlanning> bodies = planFunctionBodies(
      func, graphOptions, limit,
      [&](Block &body, const FunctionGraph &graph, uint64_t room) {
        return recomputeInBody(body, graph, room, graphOptions, spec, knobs,
                               &inBodies);
      },
      /*fetchInside=*/false);
  if (failed(bodies))
    return failure();
  FailureOr<RematStats> stats = reservedThenLiveBytes<RematStats>(
      func, graphOptions.arena, [&](bool reserve) {
        return rematerializeOnce(func, graphOptions, spec, limit, knobs,
                                 reserve);
      });
  if (failed(stats))
    return failure();
  stats->bodies = bodies->bodies;
  stats->recomputes += inBodies.recomputes;
  stats->opsCloned += inBodies.opsCloned;
  stats->extraSeconds += inBodies.extraSeconds;
  return stats;
}

static FailureOr<RematStats>
rematerializeOnce(FunctionOpInterface func, const GraphOptions &graphOptions,
                  const ::lms::DeviceSpec &spec, uint64_t limit,
                  const RematKnobs &knobs, bool reserveOwn) {
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
  if (failed(graph))
    return failure();
  RematStats stats;
  if (budgetedBytes(*graph, graphOptions) <= limit)
    return stats;

  // The units the caller keeps from recomputation.
  auto keep = [&](RematGraph &rg) {
    if (knobs.keptOps.empty())
      return;
    std::vector<uint8_t> kept(graph->getGraph().numOps(), 0);
    for (::lms::OpIndex op : knobs.keptOps)
      if (op >= 0 && static_cast<size_t>(op) < kept.size())
        kept[op] = 1;
    for (size_t k = 0; k < rg.members.size(); ++k)
      if (llvm::any_of(rg.members[k],
                       [&](::lms::OpIndex op) { return kept[op] != 0; }))
        rg.graph.op(k).recomputable = false;
  };
  // With an arena, the plan is made on a graph whose budget bounds the
  // arena plus the allocations of their own at their peak (as for swaps:
  // insertSwapsInFunction). Those are the arguments, results and buffers
  // crossing calls; recomputing one frees nothing the arena can use.
  std::optional<uint64_t> ownPeak;
  auto reserve = [&](RematGraph &rg) {
    if (!reserveOwn)
      return;
    OwnAllocations allocations = ownAllocations(*graph, graphOptions);
    ownPeak = allocations.peakBytes;
    // The groups of the remat graph that are one call.
    std::vector<int64_t> frames(rg.graph.numOps(), -1);
    for (auto [op, members] : llvm::enumerate(rg.members))
      if (members.size() == 1 && op < frames.size() &&
          static_cast<size_t>(members.front()) < allocations.callFrames.size())
        frames[op] = allocations.callFrames[members.front()];
    rg.graph = ::lms::reserveOwnAllocations(rg.graph, allocations.own,
                                            allocations.peakBytes, frames);
  };
  FailureOr<RematGraph> rg = RematGraph::build(*graph, spec);
  if (failed(rg))
    return failure();
  keep(*rg);
  reserve(*rg);
  uint64_t lower = ::lms::rematLowerBound(rg->graph);
  if (limit < lower) {
    // Name the constraint that binds: the arguments at entry, or one op.
    uint64_t entry = ::lms::entryBytes(rg->graph);
    auto [bytes, op] = ::lms::minimumFeasibleBytes(rg->graph);
    Operation *at = entry >= lower || op < 0
                        ? func.getOperation()
                        : graph->getOp(rg->members[op].back());
    InFlightDiagnostic diag = emitError(at->getLoc());
    diag << "no plan fits the budget " << ::lms::formatBytes(limit) << " ("
         << limit << " bytes): ";
    if (entry >= lower && ownPeak)
      diag << "its arguments, results and buffers that cross calls need "
           << ::lms::formatBytes(entry) << " (" << entry
           << " bytes) at their peak beside the arena (no plan that keeps "
              "them as they are fits less)";
    else if (entry >= lower)
      diag << "the function's arguments are on the device when it starts "
              "and need "
           << ::lms::formatBytes(entry) << " (" << entry
           << " bytes), the smallest feasible budget";
    else if (at->hasTrait<OpTrait::IsTerminator>())
      diag << "the values returned here stay on the device and need "
           << ::lms::formatBytes(bytes) << " (" << bytes
           << " bytes); the smallest feasible budget is "
           << ::lms::formatBytes(lower) << " (" << lower << " bytes)";
    else
      diag << "this op needs " << ::lms::formatBytes(bytes) << " (" << bytes
           << " bytes) with its operands and results; the smallest "
              "feasible budget is "
           << ::lms::formatBytes(lower) << " (" << lower << " bytes)";
    if (ownPeak && entry < lower)
      noteOwnAllocations(diag, func, *ownPeak);
    return diag;
  }

  ::lms::RematOptions options;
  if (knobs.timeLimitSeconds > 0)
    options.timeLimitSeconds = knobs.timeLimitSeconds;
  else if (knobs.planner == ::lms::RematMethod::Exact)
    options.timeLimitSeconds = 60;
  options.searchIterations = knobs.iterations;
  options.seed = knobs.seed;
  options.device = &spec;
  StringRef planner = ::lms::rematMethodName(knobs.planner);

  // Without an arena: one plan, whose rewrite realizes it
  // (checkRealizesPlan; the rewrite re-derives the views of recomputed
  // values with them). With an arena the placement adds bytes the plan does
  // not see: when the rewritten function's arena exceeds the budget, the
  // body is restored and planned again for a budget lowered by the excess.
  // The check after the last attempt is the guarantee.
  int kAttempts = graphOptions.arena ? 10 : 1;
  uint64_t target = limit, step = 0;
  RecomputeStats rewritten;
  llvm::Expected<::lms::RematResult> result =
      llvm::createStringError("not planned");
  // verifyRematKnobs accepted the name.
  ::lms::RematMethod method = *::lms::parseRematMethod(planner);
  // A profile: the planner's budget is its smallest entry, the room above
  // it per stage is the profile's (without an arena: no replans).
  uint64_t floor = limit;
  if (knobs.stageBudgets) {
    options.stageBudgets = knobs.stageBudgets(rg->graph);
    if (!options.stageBudgets.empty())
      floor = std::min(limit, *llvm::min_element(options.stageBudgets));
  }
  auto plan = [&](uint64_t budget) {
    if (knobs.stageBudgets)
      budget = std::min(budget, floor);
    if (method != ::lms::RematMethod::ChenSqrt &&
        method != ::lms::RematMethod::ChenGreedy &&
        method != ::lms::RematMethod::Segments)
      return ::lms::planRemat(rg->graph, budget, method, options);
    // Chen's and PyTorch's baselines checkpoint forward tensors only: of a
    // training step, the forward pass is what its loss (the first result)
    // depends on.
    ::lms::RematOptions chen = options;
    chen.backwardOps = backwardOpsOfLoss(func, *graph, rg->graph, false);
    return ::lms::planRemat(rg->graph, budget, method, chen);
  };
  for (int attempt = 0;; ++attempt) {
    bool last = attempt + 1 == kAttempts;
    uint64_t budget = target - std::min(step, target - lower);
    llvm::consumeError(result.takeError());
    result = plan(budget);
    if (!result) {
      // No plan for the lowered budget: lower it by less.
      if (attempt > 0 && !last && step > target / 1000) {
        step /= 2;
        ++stats.replans;
        continue;
      }
      // At the op the planner got stuck at, when it names one (the
      // function's location prints its whole signature).
      llvm::Error error = result.takeError();
      ::lms::OpIndex unit = ::lms::failedOp(error);
      Location loc = func.getLoc();
      if (unit >= 0 && static_cast<size_t>(unit) < rg->members.size() &&
          !rg->members[unit].empty())
        loc = graph->getOp(rg->members[unit].back())->getLoc();
      InFlightDiagnostic diag = emitError(loc);
      diag << "the " << planner << " planner found no recomputation plan "
           << "for @" << SymbolTable::getSymbolName(func).getValue()
           << " that fits " << ::lms::formatBytes(limit) << " (" << limit
           << " bytes): " << llvm::toString(std::move(error));
      if (ownPeak)
        noteOwnAllocations(diag, func, *ownPeak);
      return diag;
    }

    std::optional<BodySnapshot> backup;
    rewritten = RecomputeStats();
    FailureOr<uint64_t> peakAfter = rewriteAndMeasure(
        func, graphOptions, !last || graphOptions.arena, backup,
        [&] { rewriteWithRecomputes(*graph, *rg, result->plan, &rewritten); });
    if (failed(peakAfter))
      return failure();
    if (!graphOptions.arena &&
        failed(checkRealizesPlan(func, "recomputation rewrite", *peakAfter,
                                 result->peakBytes)))
      return failure();
    if (*peakAfter > limit && last && graphOptions.arena) {
      restoreBody(backup);
      return arenaOverBudget(func, limit, *peakAfter, kAttempts);
    }
    if (*peakAfter <= limit || last) {
      backup.reset();
      break;
    }
    // Restore the body and plan again for a budget lowered by the excess.
    restoreBody(backup);
    target = budget;
    step = std::max<uint64_t>(*peakAfter - limit, target / 200);
    graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    rg = RematGraph::build(*graph, spec);
    if (failed(rg))
      return failure();
    keep(*rg);
    reserve(*rg);
    ++stats.replans;
  }
  if (failed(checkFits(func, graphOptions, limit, result->peakBytes,
                       "rematerialization")))
    return failure();
  if (result->stoppedByTimeLimit && knobs.planner != ::lms::RematMethod::Exact)
    emitWarning(func.getLoc())
        << "the time limit of " << options.timeLimitSeconds << " s stopped the "
        << planner
        << " planner before its work limit: the plan depends "
           "on the machine's speed and load (drop time-limit, "
           "or lower iterations, for a reproducible plan)";
  stats.recomputes = rewritten.recomputes;
  stats.opsCloned = rewritten.opsCloned;
  stats.extraSeconds =
      result->computeCost - ::lms::scheduleCost(rg->graph, &spec);
  return stats;
}
