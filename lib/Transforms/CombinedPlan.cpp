//===- CombinedPlan.cpp - The --lms-plan pass -----------------------------===//
//
// Keep, offload or recompute: the pass rewrites a copy of each function for
// several mixes of offloading and recomputation, times each rewrite with the
// simulator of the graph core, and keeps the fastest that fits.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Joint.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/FunctionPlanning.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"
#include "LMS/Transforms/Rematerialize.h"
#include "LMS/Transforms/Schedule.h"
#include "LMS/Transforms/Split.h"
#include "LMS/Transforms/SwapRewrite.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSPLAN
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

using namespace mlir;
using namespace mlir::lms;

namespace {

struct Outcome {
  double seconds = 0;
  SwapStats swaps;
  RematStats remat;
  /// The joint plan: what its recomputation removes (describeMix).
  std::optional<std::string> jointMix;
};

/// A split where no op's bound is over the budget is kept only when its
/// plan's step is this much faster than the plan without it.
constexpr double kSplitGain = 0.01;

/// The outcome of each candidate of one `planMixes` and the fastest.
struct MixTrial {
  std::vector<std::optional<Outcome>> outcomes;
  std::optional<size_t> best;
};

/// How a function is split: the smallest feasible budget its loops aim at,
/// as a fraction of the budget, and the aims (bytes) of the kinds of ops
/// (splitAnchorKey) given their own by the refinement.
struct SplitChoice {
  double fraction = 0.25;
  std::map<std::string, uint64_t> aims;
};

/// The split refinement tries the aims of at most this many kinds of
/// split ops (the first split), each at most kRefineSteps times.
constexpr size_t kRefinedKinds = 3;
constexpr unsigned kRefineSteps = 3;

struct LMSPlanPass : public mlir::lms::impl::LMSPlanBase<LMSPlanPass> {
  using Base::Base;

  // It may split ops (--lms-split).
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerSplitDependencies(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    fractions.assign(splitFractions.begin(), splitFractions.end());
    if (fractions.empty())
      fractions = {0.25, 1.0};
    for (double fraction : fractions)
      if (!(fraction > 0 && fraction <= 1)) {
        module.emitError() << "invalid split-fraction "
                           << llvm::formatv("{0}", fraction)
                           << ": expected a fraction of the budget in (0, 1]";
        return signalPassFailure();
      }
    swapKnobs.planner = swapPlanner;
    rematKnobs.planner = rematPlanner;
    rematKnobs.timeLimitSeconds = timeLimit;
    rematKnobs.iterations = iterations;
    if (failed(verifyRematKnobs(module, rematKnobs, "remat-planner")))
      return signalPassFailure();
    FailureOr<PlanningContext> context = resolvePlanningContext(
        module, alignment, dynamicBytes, device, budget, arena);
    if (failed(context))
      return signalPassFailure();
    FailureOr<uint64_t> hostLimit =
        resolveHostBudget(module, hostBudget, context->device);
    if (failed(hostLimit)) {
      finishPlanning(module);
      return signalPassFailure();
    }
    swapKnobs.hostLimit = *hostLimit;
    // Callees first: each callee is summarized once, after its rewrite.
    context->graphOptions.callSummaries = makeCalleesFirstCache(module);
    if (arena && context->graphOptions.callSummaries)
      context->graphOptions.arenaModels = makeArenaModelCache();
    bool failedAny = false;
    for (FunctionOpInterface func : functionsCalleesFirst(module))
      if (failed(runOnFunction(func, *context)))
        failedAny = true;
    // A reordered function was measured with the materialized copies: they
    // stay (without them bufferization may decide differently).
    finishPlanning(module, reorderedAny);
    if (failedAny)
      signalPassFailure();
  }

  SwapKnobs swapKnobs;
  RematKnobs rematKnobs;
  /// The copy the split trials plan (planSplitIfFaster), named as its
  /// function in what the pass prints.
  Operation *trialCopy = nullptr;
  std::string trialName;
  std::string nameOf(FunctionOpInterface func) const {
    return func == trialCopy ? trialName : func.getName().str();
  }
  bool reorderedAny = false;
  std::vector<double> fractions;

  /// Offloads until the peak is `swapBudget`, then recomputes down to
  /// `limit`; the estimated step time of the result.
  FailureOr<Outcome> apply(FunctionOpInterface func,
                           const GraphOptions &graphOptions,
                           const ::lms::DeviceSpec &spec, uint64_t swapBudget,
                           uint64_t limit) {
    Outcome outcome;
    // The offloading share is of live bytes; the recomputation after it
    // fits what the budget bounds (the arena, with arena=true).
    GraphOptions swapOptions = graphOptions;
    swapOptions.arena = false;
    FailureOr<SwapStats> swaps =
        insertSwapsInFunction(func, swapOptions, spec, swapBudget, swapKnobs);
    if (failed(swaps))
      return failure();
    outcome.swaps = *swaps;
    FailureOr<RematStats> remat =
        rematerializeFunction(func, graphOptions, spec, limit, rematKnobs);
    if (failed(remat))
      return failure();
    outcome.remat = *remat;
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    outcome.seconds = ::lms::simulate(graph->getGraph(), spec).totalSeconds;
    return outcome;
  }

  /// The joint planner of the graph core (::lms::planJoint) chooses how
  /// far recomputation goes and which units it may not recompute; the
  /// function is rewritten in the same order: recomputation for its
  /// budget, then offloading for what the budget bounds.
  FailureOr<Outcome> applyJoint(FunctionOpInterface func,
                                const GraphOptions &graphOptions,
                                const ::lms::DeviceSpec &spec, uint64_t limit) {
    GraphOptions liveOptions = graphOptions;
    liveOptions.arena = false;
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, liveOptions);
    if (failed(graph))
      return failure();
    SwapCandidates candidates(*graph);
    ::lms::JointOptions options;
    options.swapMethod = swapKnobs.planner;
    options.swap = swapOptionsOf(swapKnobs, candidates);
    if (swapKnobs.planner == ::lms::SwapMethod::SaveOnCpu)
      options.swap.backwardOps =
          backwardOpsOfLoss(func, *graph, graph->getGraph(), true);
    // A trial's offloading is planned on the IR its rewrite writes, so that
    // the choice's time is the time of its rewrite (without an arena).
    options.offloadAfter = [&](const ::lms::Graph &, const ::lms::Plan &plan,
                               uint64_t budget) {
      return offloadAfterRecompute(func, liveOptions, spec, plan, budget,
                                   swapKnobs);
    };
    options.rematMethod = rematKnobs.planner;
    if (rematKnobs.timeLimitSeconds > 0)
      options.remat.timeLimitSeconds = rematKnobs.timeLimitSeconds;
    else if (rematKnobs.planner == ::lms::RematMethod::Exact)
      options.remat.timeLimitSeconds = 60;
    options.remat.searchIterations = rematKnobs.iterations;
    options.remat.seed = rematKnobs.seed;
    options.hostLimit = swapKnobs.hostLimit;
    contractionOf(*graph, options.joinsPrevious, options.recomputable);
    uint64_t peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
    llvm::Expected<::lms::JointResult> planned = ::lms::planJoint(
        graph->getGraph(), spec, std::min(limit, peak), options);
    if (!planned) {
      std::string message = llvm::toString(planned.takeError());
      if (printStatistics)
        llvm::errs() << "lms-plan: @" << nameOf(func) << ": " << message
                     << "\n";
      emitError(func.getLoc()) << message;
      return failure();
    }
    if (printStatistics)
      for (const ::lms::JointTrial &trial : planned->trials)
        llvm::errs() << llvm::formatv(
            "lms-plan: @{0}: joint trial: recompute {1}, {2} units kept: "
            "{3}\n",
            nameOf(func), ::lms::describeMix(trial.rematShare, trial.link),
            trial.kept,
            trial.seconds
                ? llvm::formatv("{0:F1} us", *trial.seconds * 1e6).str()
                : trial.failure);
    // The choice, else the next fastest trials: the IR may bufferize a
    // rewrite differently than the graph says, and a rewrite that does not
    // fit fails. All but the last attempt fail quietly.
    std::vector<::lms::JointChoice> choices = {*planned};
    llvm::append_range(choices, planned->alternatives);
    std::optional<BodySnapshot> snapshot;
    if (choices.size() > 1)
      snapshot.emplace(func);
    for (size_t i = 0; i < choices.size(); ++i) {
      bool last = i + 1 == choices.size();
      if (i > 0)
        snapshot->restore();
      std::optional<ScopedDiagnosticHandler> quiet;
      if (!last)
        quiet.emplace(func->getContext(),
                      [](Diagnostic &) { return success(); });
      FailureOr<Outcome> written =
          writeJoint(func, graphOptions, spec, limit, choices[i]);
      if (succeeded(written)) {
        if (printStatistics)
          llvm::errs() << llvm::formatv(
              "lms-plan: @{0}: joint: planned {1:F1} us, written {2:F1} us\n",
              nameOf(func), choices[i].seconds * 1e6, written->seconds * 1e6);
        if (printStatistics && i > 0)
          llvm::errs() << "lms-plan: @" << nameOf(func)
                       << ": joint: the rewrite of the faster trials did not "
                          "fit; written: trial "
                       << i + 1 << " of " << choices.size() << "\n";
        return written;
      }
    }
    return failure();
  }

  /// Writes a joint choice: recomputation for its budget (with its kept
  /// units), then offloading for `limit`.
  FailureOr<Outcome> writeJoint(FunctionOpInterface func,
                                const GraphOptions &graphOptions,
                                const ::lms::DeviceSpec &spec, uint64_t limit,
                                const ::lms::JointChoice &choice) {
    Outcome outcome;
    GraphOptions liveOptions = graphOptions;
    liveOptions.arena = false;
    outcome.jointMix = ::lms::describeMix(choice.rematShare, choice.link);
    RematKnobs knobs = rematKnobs;
    knobs.keptOps = choice.keptOps;
    // The work limit the choice was planned with: the same plan.
    if (choice.rematIterations)
      knobs.iterations = choice.rematIterations;
    if (choice.link > 0) {
      // The joint planner's profile, on the same units (the function's
      // graph without an arena, contracted as the joint planner did).
      // rematBudget is its largest entry: capping at what it is above
      // the budget gives the same profile.
      knobs.stageBudgets = [&spec, limit, link = choice.link,
                            cap = choice.rematBudget -
                                  std::min(limit, choice.rematBudget)](
                               const ::lms::Graph &units) {
        return ::lms::linkProfile(units, spec, limit, cap, link);
      };
    }
    if (choice.rematShare >= 1) {
      FailureOr<RematStats> remat =
          rematerializeFunction(func, graphOptions, spec, limit, knobs);
      if (failed(remat))
        return failure();
      outcome.remat = *remat;
    } else {
      if (choice.rematShare > 0 || choice.link > 0) {
        FailureOr<RematStats> remat = rematerializeFunction(
            func, liveOptions, spec, choice.rematBudget, knobs);
        if (failed(remat))
          return failure();
        outcome.remat = *remat;
      }
      FailureOr<SwapStats> swaps =
          insertSwapsInFunction(func, graphOptions, spec, limit, swapKnobs);
      if (failed(swaps))
        return failure();
      outcome.swaps = *swaps;
    }
    FailureOr<FunctionGraph> after = FunctionGraph::build(func, graphOptions);
    if (failed(after))
      return failure();
    outcome.seconds = ::lms::simulate(after->getGraph(), spec).totalSeconds;
    return outcome;
  }

  LogicalResult runOnFunction(FunctionOpInterface func,
                              const PlanningContext &context) {
    const GraphOptions &graphOptions = context.graphOptions;
    FailureOr<uint64_t> limit = resolveFunctionBudget(func, context);
    if (failed(limit))
      return failure();
    FailureOr<FunctionGraph> graph = FunctionGraph::build(func, graphOptions);
    if (failed(graph))
      return failure();
    uint64_t peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
    uint64_t measured = budgetedBytes(*graph, graphOptions);
    if (measured <= *limit)
      return success();
    // The function was rewritten (reordered, split): its graph again.
    auto remeasure = [&]() -> LogicalResult {
      graph = FunctionGraph::build(func, graphOptions);
      if (failed(graph))
        return failure();
      peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
      measured = budgetedBytes(*graph, graphOptions);
      return success();
    };
    // First the order: a function that fits once reordered needs nothing
    // else, and one that does not has less to offload or recompute.
    if (schedule) {
      ScheduleKnobs knobs;
      knobs.targetBytes = *limit;
      FailureOr<FunctionSchedule> scheduled =
          scheduleFunction(func, graphOptions, knobs);
      if (failed(scheduled))
        return failure();
      if (printStatistics)
        llvm::errs() << "lms-plan: @" << func.getName() << ": scheduled, peak "
                     << scheduled->peakBefore << " -> " << scheduled->peakAfter
                     << " bytes"
                     << (scheduled->changed ? "" : " (order unchanged)")
                     << "\n";
      if (scheduled->changed) {
        reorderedAny = true;
        if (failed(remeasure()))
          return failure();
        if (measured <= *limit)
          return success();
      }
    }
    // Loops (and other ops with regions) whose body's peak alone keeps
    // them over the budget: their bodies are planned first, each with the
    // faster of offloading and recomputing inside it.
    if (::lms::minimumFeasibleBytes(graph->getGraph()).first > *limit) {
      FailureOr<RegionPlanning> bodies = planFunctionBodies(
          func, graphOptions, *limit,
          [&](Block &body, const FunctionGraph &bodyGraph, uint64_t room) {
            return planBody(func, body, bodyGraph, room, context);
          },
          /*fetchInside=*/strategy != PlanStrategy::Recompute);
      if (failed(bodies))
        return failure();
      if (printStatistics && bodies->fetched)
        llvm::errs() << "lms-plan: @" << func.getName() << ": "
                     << bodies->fetched
                     << " values offloaded before loops and fetched in each "
                        "iteration\n";
      if (bodies->bodies || bodies->fetched) {
        reorderedAny = true;
        if (failed(remeasure()))
          return failure();
        if (measured <= *limit)
          return success();
      }
    }
    // Then what no plan that keeps ops whole can meet: the op that sets
    // the smallest feasible budget, split into slices (--lms-split). The
    // split's plan, made while choosing it, is replayed below.
    std::optional<MixTrial> replay;
    bool splitBelowFloor = false;
    if (split &&
        ::lms::minimumFeasibleBytes(graph->getGraph()).first > *limit) {
      // Aim below the budget: the loops leave room for what stays live
      // across them, and the rest of the plan is faster for it. With
      // several aims, each is planned on a copy and the fastest simulated
      // step wins (the device model chooses the slice counts).
      SplitChoice choice{fractions.front(), {}};
      if (fractions.size() > 1 || refineSplits)
        choice = chooseSplit(func, context, *limit, replay);
      FailureOr<unsigned> splits =
          splitFor(func, graphOptions, *limit, choice, printStatistics);
      if (failed(splits))
        return failure();
      if (*splits) {
        splitBelowFloor = true;
        reorderedAny = true;
        if (failed(remeasure()))
          return failure();
        if (measured <= *limit)
          return success();
      }
    }
    // An op under the budget may still be worth splitting: it then holds
    // less, and less is offloaded or recomputed around it.
    if (split && !splitBelowFloor) {
      FailureOr<bool> planned = planSplitIfFaster(func, context, *limit);
      if (failed(planned))
        return failure();
      if (*planned)
        return success();
      if (failed(remeasure()))
        return failure();
    }
    FailureOr<double> seconds =
        planMixes(func, context, *limit, *graph, peak, measured,
                  /*commit=*/true, replay ? &*replay : nullptr);
    return failure(failed(seconds));
  }

  /// Plans `body` (of an op of `func` whose bound is over the budget) to fit
  /// `room`: offloading and recomputing inside it are both tried, and the
  /// one whose body the simulator times faster stays (recomputing on a
  /// tie); the error of offloading when neither fits.
  LogicalResult planBody(FunctionOpInterface func, Block &body,
                         const FunctionGraph &bodyGraph, uint64_t room,
                         const PlanningContext &context) {
    const GraphOptions &graphOptions = context.graphOptions;
    const ::lms::DeviceSpec &spec = context.device;
    Operation *owner = body.getParentOp();
    // The body's time after a rewrite, or nothing when the rewrite failed.
    auto timed = [&](LogicalResult rewritten) -> std::optional<double> {
      if (failed(rewritten))
        return std::nullopt;
      FailureOr<FunctionGraph> after =
          FunctionGraph::buildNested(body, graphOptions);
      if (failed(after))
        return std::nullopt;
      return ::lms::simulate(after->getGraph(), spec).totalSeconds;
    };
    // strategy=swap and strategy=recompute force their kind here too.
    if (strategy == PlanStrategy::Swap)
      return offloadInBody(body, bodyGraph, room, graphOptions, spec, swapKnobs,
                           nullptr);
    if (strategy == PlanStrategy::Recompute)
      return recomputeInBody(body, bodyGraph, room, graphOptions, spec,
                             rematKnobs, nullptr);
    BodySnapshot snapshot(func);
    std::optional<double> offloaded, recomputed;
    {
      ScopedDiagnosticHandler quiet(func->getContext(),
                                    [](Diagnostic &) { return success(); });
      offloaded = timed(offloadInBody(body, bodyGraph, room, graphOptions, spec,
                                      swapKnobs, nullptr));
      snapshot.restore();
      recomputed = timed(recomputeInBody(body, bodyGraph, room, graphOptions,
                                         spec, rematKnobs, nullptr));
    }
    auto show = [](std::optional<double> seconds) {
      return seconds ? llvm::formatv("{0:F1} us", *seconds * 1e6).str()
                     : std::string("no plan");
    };
    if (printStatistics) {
      std::string where;
      llvm::raw_string_ostream os(where);
      os << owner->getLoc();
      llvm::errs() << "lms-plan: @" << func.getName() << ": body of '"
                   << owner->getName() << "' at " << where << " in " << room
                   << " bytes: offloading " << show(offloaded)
                   << ", recomputing " << show(recomputed) << "\n";
    }
    if (recomputed && (!offloaded || *recomputed <= *offloaded))
      return success();
    snapshot.restore();
    // Offloading: faster, or the one whose error is reported.
    return offloadInBody(body, bodyGraph, room, graphOptions, spec, swapKnobs,
                         nullptr);
  }

  /// Where no op's bound is over the budget: plans the function as it is
  /// (on itself: that plan stays unless a split wins) and split for each
  /// fraction (on a copy beside it), and keeps the fastest simulated step, a
  /// split only when it is faster by kSplitGain (a split whose step without
  /// LMS is already slower than the fastest plan is not planned). False,
  /// with the function untouched, when no fraction splits anything or no
  /// trial gives a plan: then the caller plans it as it is.
  FailureOr<bool> planSplitIfFaster(FunctionOpInterface func,
                                    const PlanningContext &context,
                                    uint64_t limit) {
    // The split trials run on a copy in the module (calls resolve as from
    // the function), so that the function's ops stay the same ops unless a
    // split is chosen; the plan as it is is made on the function itself.
    // The copy is analysed without the pass's caches, which are keyed by
    // operation and would outlive it.
    PlanningContext trialContext = context;
    trialContext.graphOptions.callSummaries = nullptr;
    trialContext.graphOptions.arenaModels = nullptr;
    const GraphOptions &trialOptions = trialContext.graphOptions;
    auto copy = cast<FunctionOpInterface>(func->clone());
    Operation *parent = func->getParentOp();
    if (parent && parent->hasTrait<OpTrait::SymbolTable>())
      SymbolTable(parent).insert(copy, Block::iterator(func));
    else
      func->getBlock()->getOperations().insert(Block::iterator(func), copy);
    trialCopy = copy;
    trialName = func.getName().str();
    llvm::scope_exit eraseCopy([&] {
      trialCopy = nullptr;
      copy->erase();
    });
    BodySnapshot snapshot(copy);

    // The function split for `fraction` (as it is when unset), its graph
    // and what the budget bounds in it.
    struct Trial {
      std::optional<FunctionGraph> graph;
      uint64_t peak = 0, measured = 0;
    };
    auto report = [&](const std::optional<SplitChoice> &choice,
                      std::optional<double> seconds, llvm::StringRef why) {
      if (printStatistics)
        llvm::errs() << "lms-plan: @" << func.getName() << ": "
                     << (choice ? splitLabel(*choice) : "as it is") << ": "
                     << (seconds
                             ? llvm::formatv("{0:F1} us", *seconds * 1e6).str()
                             : why.str())
                     << "\n";
    };
    auto prepare =
        [&](FunctionOpInterface target, const GraphOptions &graphOptions,
            const std::optional<SplitChoice> &choice,
            std::vector<SplitMade> *made = nullptr) -> FailureOr<Trial> {
      if (choice) {
        ScopedDiagnosticHandler quiet(target->getContext(),
                                      [](Diagnostic &) { return success(); });
        FailureOr<unsigned> splits =
            splitFor(target, graphOptions, limit, *choice, false, made);
        if (failed(splits) || *splits == 0)
          return failure();
        if (splitRepeated) {
          report(*choice, std::nullopt, "the same loops as a trial above");
          return failure();
        }
      }
      FailureOr<FunctionGraph> graph =
          FunctionGraph::build(target, graphOptions);
      if (failed(graph))
        return failure();
      Trial trial;
      trial.peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
      trial.measured = budgetedBytes(*graph, graphOptions);
      trial.graph = std::move(*graph);
      return trial;
    };
    std::vector<double> splitting;
    for (double fraction : fractions) {
      snapshot.restore();
      if (succeeded(prepare(copy, trialOptions, SplitChoice{fraction, {}})))
        splitting.push_back(fraction);
    }
    if (splitting.empty())
      return false;

    // The function as it is first, planned on itself and kept (undone only
    // when a split wins), so that slower splits are not planned.
    std::optional<double> bestSeconds;
    std::optional<SplitChoice> bestChoice;
    MixTrial bestMix;
    BodySnapshot original(func);
    if (FailureOr<Trial> trial = prepare(func, context.graphOptions, {});
        succeeded(trial)) {
      FailureOr<double> planned =
          trial->measured <= limit
              ? FailureOr<double>(
                    ::lms::simulate(trial->graph->getGraph(), context.device)
                        .totalSeconds)
              : planMixes(func, context, limit, *trial->graph, trial->peak,
                          trial->measured, /*commit=*/true, nullptr, nullptr,
                          /*explain=*/false);
      if (succeeded(planned))
        bestSeconds = *planned;
    }
    report(std::nullopt, bestSeconds, "no plan");
    // Loops are worth their complexity only for a clear gain over the
    // function as it is.
    double required = 1 - kSplitGain;
    // A split's planned step (nothing when slower without LMS than
    // `against` or without a plan), its plan recorded in `mix`.
    auto timeSplit =
        [&](const SplitChoice &choice, std::optional<double> against,
            MixTrial &mix,
            std::vector<SplitMade> *made) -> std::optional<double> {
      snapshot.restore();
      FailureOr<Trial> trial = prepare(copy, trialOptions, choice, made);
      if (failed(trial))
        return std::nullopt;
      const ::lms::Graph &g = trial->graph->getGraph();
      std::optional<double> seconds;
      if (trial->measured <= limit) {
        seconds = ::lms::simulate(g, context.device).totalSeconds;
      } else if (against &&
                 ::lms::simulate(g, context.device).totalSeconds >= *against) {
        report(choice, std::nullopt,
               "not planned (slower without LMS than the plan above)");
        return std::nullopt;
      } else {
        FailureOr<double> planned =
            planMixes(copy, trialContext, limit, *trial->graph, trial->peak,
                      trial->measured, /*commit=*/false, nullptr, &mix);
        if (succeeded(planned))
          seconds = *planned;
      }
      report(choice, seconds, "no plan");
      return seconds;
    };
    std::optional<double> against;
    if (bestSeconds)
      against = *bestSeconds * required;
    std::optional<SplitFound> found =
        searchSplit(func, limit, splitting, against, timeSplit);
    if (found && (!bestSeconds || found->seconds < *bestSeconds * required)) {
      bestSeconds = found->seconds;
      bestChoice = found->choice;
      bestMix = std::move(found->mix);
    }
    // No trial gave a plan: the function as it is (unchanged), whose
    // planners explain.
    if (!bestSeconds)
      return false;
    if (printStatistics)
      llvm::errs() << "lms-plan: @" << func.getName() << ": chosen: "
                   << (bestChoice ? splitLabel(*bestChoice) : "as it is")
                   << "\n";
    if (!bestChoice)
      return true;
    original.restore();
    FailureOr<Trial> chosen = prepare(func, context.graphOptions, bestChoice);
    if (failed(chosen))
      return emitError(func.getLoc())
             << "internal error: the chosen split failed when repeated";
    reorderedAny = true;
    if (chosen->measured <= limit)
      return true;
    FailureOr<double> seconds =
        planMixes(func, context, limit, *chosen->graph, chosen->peak,
                  chosen->measured, /*commit=*/true, &bestMix);
    if (failed(seconds))
      return failure();
    return true;
  }

  /// "split for 25% of the budget", with the kinds given their own aims
  /// (named by the first op of the kind in labelSplits).
  std::string splitLabel(const SplitChoice &choice) const {
    std::string text =
        llvm::formatv("split for {0:P0} of the budget", choice.fraction).str();
    for (const auto &[key, aim] : choice.aims) {
      auto kind = llvm::find_if(
          labelSplits, [&](const SplitMade &made) { return made.kind == key; });
      std::string where;
      if (kind != labelSplits.end()) {
        llvm::raw_string_ostream os(where);
        os << " at " << kind->loc;
      }
      text += llvm::formatv(
          ", {0} like the one{1} aiming at {2} bytes",
          llvm::StringRef(key).take_until([](char c) { return c == '{'; }),
          where, aim);
    }
    return text;
  }
  /// The splits whose kinds splitLabel names.
  std::vector<SplitMade> labelSplits;

  /// Splits as `choice` says for `limit` (--lms-split); the splits made
  /// are appended to `made` when given. During a searchSplit,
  /// splitRepeated says whether they are those of an earlier trial.
  FailureOr<unsigned> splitFor(FunctionOpInterface func,
                               const GraphOptions &graphOptions, uint64_t limit,
                               const SplitChoice &choice, bool stats,
                               std::vector<SplitMade> *made = nullptr) {
    std::vector<SplitMade> own;
    SplitKnobs knobs;
    knobs.warn = false;
    knobs.printStatistics = stats;
    knobs.aims = choice.aims;
    knobs.made = made ? made : &own;
    auto target =
        static_cast<uint64_t>(static_cast<double>(limit) * choice.fraction);
    FailureOr<unsigned> splits =
        splitFunction(func, graphOptions, target, knobs);
    splitRepeated =
        splitRegistry && llvm::is_contained(*splitRegistry, *knobs.made);
    if (splitRegistry && !splitRepeated)
      splitRegistry->push_back(*knobs.made);
    return splits;
  }
  /// The splits of the trials of the searchSplit under way.
  std::vector<std::vector<SplitMade>> *splitRegistry = nullptr;
  bool splitRepeated = false;

  /// A split searchSplit found: the choice, its simulated step and the
  /// record of its plan.
  struct SplitFound {
    SplitChoice choice;
    double seconds = 0;
    MixTrial mix;
  };
  /// Times one split (`time` splits and plans `choice`: nothing when it
  /// has no plan or is pruned, not faster than `against` without LMS; the
  /// splits made go to `made`, the plan's record to `mix`) for each aim in
  /// `aims`, keeps the fastest and refines it (refineSplit). A trial that
  /// makes the same loops as one before is not planned again (time sees
  /// splitRepeated). `against` bounds the first trials; then the fastest.
  using SplitTimer = llvm::function_ref<std::optional<double>(
      const SplitChoice &, std::optional<double>, MixTrial &,
      std::vector<SplitMade> *)>;
  std::optional<SplitFound> searchSplit(FunctionOpInterface func,
                                        uint64_t limit, ArrayRef<double> aims,
                                        std::optional<double> against,
                                        SplitTimer time) {
    // The registry of a caller's searches, when it keeps one, else this
    // search's own.
    std::vector<std::vector<SplitMade>> tried;
    bool ownRegistry = !splitRegistry;
    if (ownRegistry)
      splitRegistry = &tried;
    llvm::scope_exit noRegistry([&] {
      if (ownRegistry)
        splitRegistry = nullptr;
    });
    std::optional<SplitFound> found;
    std::vector<SplitMade> foundSplits;
    for (double fraction : aims) {
      SplitChoice choice{fraction, {}};
      std::optional<double> bound = against;
      if (found)
        bound = std::min(bound.value_or(found->seconds), found->seconds);
      MixTrial mix;
      std::vector<SplitMade> made;
      std::optional<double> seconds = time(choice, bound, mix, &made);
      if (seconds && (!found || *seconds < found->seconds)) {
        found = SplitFound{choice, *seconds, std::move(mix)};
        foundSplits = std::move(made);
      }
    }
    if (found && refineSplits)
      refineSplit(func, limit, found->choice, found->seconds, foundSplits,
                  [&](const SplitChoice &choice) {
                    MixTrial mix;
                    std::optional<double> seconds =
                        time(choice, found->seconds, mix, nullptr);
                    if (seconds && *seconds < found->seconds)
                      found->mix = std::move(mix);
                    return seconds;
                  });
    return found;
  }

  /// From `best` (its step `bestSeconds`, the splits it makes `splits`),
  /// tries the aim of each kind of op split (of the first kRefinedKinds)
  /// at twice the bytes (fewer slices; at most the budget) while that is
  /// faster and, when the first try is not, at half (more slices) while
  /// that is, in at most kRefineSteps trials, and keeps each change that
  /// `trial` times faster: the device model chooses each kind's slice
  /// count.
  void refineSplit(
      FunctionOpInterface func, uint64_t limit, SplitChoice &best,
      double &bestSeconds, ArrayRef<SplitMade> splits,
      llvm::function_ref<std::optional<double>(const SplitChoice &)> trial) {
    labelSplits.assign(splits.begin(), splits.end());
    // The kinds, in the order first split.
    std::vector<std::string> kinds;
    for (const SplitMade &made : splits)
      if (!llvm::is_contained(kinds, made.kind))
        kinds.push_back(made.kind);
    auto base =
        static_cast<uint64_t>(static_cast<double>(limit) * best.fraction);
    // A trial of `key` aiming at `aim`, kept when faster.
    auto tryAim = [&](const std::string &key, uint64_t aim) {
      SplitChoice changed = best;
      changed.aims[key] = aim;
      std::optional<double> seconds;
      {
        ScopedDiagnosticHandler quiet(func->getContext(),
                                      [](Diagnostic &) { return success(); });
        seconds = trial(changed);
      }
      if (!seconds || *seconds >= bestSeconds)
        return false;
      best = std::move(changed);
      bestSeconds = *seconds;
      return true;
    };
    for (size_t k = 0; k < std::min(kinds.size(), kRefinedKinds); ++k) {
      const std::string &key = kinds[k];
      uint64_t aim = best.aims.count(key) ? best.aims[key] : base;
      // Fewer slices while that is faster, else more while that is.
      unsigned steps = 0;
      for (bool coarser : {true, false}) {
        bool moved = false;
        while (steps < kRefineSteps) {
          uint64_t next = coarser ? std::min(aim * 2, limit) : aim / 2;
          if (next == aim || next == 0)
            break;
          ++steps;
          if (!tryAim(key, next))
            break;
          aim = next;
          moved = true;
        }
        if (moved)
          break;
      }
    }
  }

  /// The split whose plan has the fastest simulated step: each fraction is
  /// split and planned on the function, the fastest refined (refineSplit),
  /// and the function restored. Its plan is recorded in `record` (where one
  /// was made).
  SplitChoice chooseSplit(FunctionOpInterface func,
                          const PlanningContext &context, uint64_t limit,
                          std::optional<MixTrial> &record) {
    const GraphOptions &graphOptions = context.graphOptions;
    BodySnapshot snapshot(func);
    // One split planned on the function; the fastest wins. A split whose
    // step without LMS is already no faster than `bound` (the fastest plan
    // so far) is not planned: no plan makes it faster.
    auto timeSplit =
        [&](const SplitChoice &choice, std::optional<double> bound,
            MixTrial &mix,
            std::vector<SplitMade> *made) -> std::optional<double> {
      snapshot.restore();
      std::optional<double> seconds;
      {
        // Trials fail quietly: only the chosen plan speaks.
        ScopedDiagnosticHandler quiet(func->getContext(),
                                      [](Diagnostic &) { return success(); });
        FailureOr<unsigned> splits =
            splitFor(func, graphOptions, limit, choice, false, made);
        if (succeeded(splits) && splitRepeated) {
          if (printStatistics)
            llvm::errs() << "lms-plan: @" << func.getName() << ": "
                         << splitLabel(choice)
                         << ": the same loops as a trial above\n";
          return std::nullopt;
        }
        FailureOr<FunctionGraph> graph =
            succeeded(splits) ? FunctionGraph::build(func, graphOptions)
                              : FailureOr<FunctionGraph>(failure());
        if (succeeded(graph)) {
          uint64_t peak = ::lms::evaluateSchedule(graph->getGraph()).peakBytes;
          uint64_t measured = budgetedBytes(*graph, graphOptions);
          double alone =
              ::lms::simulate(graph->getGraph(), context.device).totalSeconds;
          if (measured > limit && bound && alone >= *bound) {
            if (printStatistics)
              llvm::errs() << "lms-plan: @" << func.getName() << ": "
                           << splitLabel(choice)
                           << ": not planned (slower without LMS than the "
                              "plan above)\n";
            return std::nullopt;
          }
          FailureOr<double> planned =
              measured <= limit
                  ? FailureOr<double>(alone)
                  : planMixes(func, context, limit, *graph, peak, measured,
                              /*commit=*/false, nullptr, &mix);
          if (succeeded(planned))
            seconds = *planned;
        }
      }
      if (printStatistics)
        llvm::errs() << "lms-plan: @" << func.getName() << ": "
                     << splitLabel(choice) << ": "
                     << (seconds
                             ? llvm::formatv("{0:F1} us", *seconds * 1e6).str()
                             : std::string("no plan"))
                     << "\n";
      return seconds;
    };
    // One registry for all the searches below: a coarser aim that makes
    // the loops of a finer one is not planned again.
    std::vector<std::vector<SplitMade>> tried;
    splitRegistry = &tried;
    llvm::scope_exit noRegistry([&] { splitRegistry = nullptr; });
    // The coarsest aim first: fewest slices, usually the fastest step
    // without LMS, which then bounds the finer ones.
    std::vector<double> aims(fractions);
    llvm::sort(aims, std::greater<double>());
    std::optional<SplitFound> best =
        searchSplit(func, limit, aims, std::nullopt, timeSplit);
    // No aim gave a plan: coarser ones, twice the largest tried up to the
    // whole budget, the first with a plan refined. An aim out of reach
    // cuts ops into the most slices, on the dimension whose loops need
    // least there; what those loops leave outside (an op they could not
    // take in, thin slices that reread their operands) may fit no plan,
    // where fewer, wider slices do (LLaMA's attention at batch 10: by
    // query rows for 25% of the budget, no plan; by batch for 100%, one).
    for (double fraction = *llvm::max_element(fractions) * 2;
         !best && fraction < 2; fraction *= 2) {
      double aim = std::min(fraction, 1.0);
      if (llvm::is_contained(fractions, aim))
        continue;
      best = searchSplit(func, limit, {aim}, std::nullopt, timeSplit);
    }
    snapshot.restore();
    if (printStatistics && best)
      llvm::errs() << "lms-plan: @" << func.getName()
                   << ": chosen: " << splitLabel(best->choice) << "\n";
    // No aim gave a plan: the first one, whose planner then explains.
    if (!best)
      return SplitChoice{fractions.front(), {}};
    if (best->mix.best)
      record = std::move(best->mix);
    return best->choice;
  }

  /// Offloads and recomputes `func` (already reordered and split) for
  /// several mixes, each on a copy, and keeps the fastest simulated step
  /// (`commit`), or only says how fast it is (the function is restored).
  /// With `record`, the outcome of each candidate and the fastest are kept
  /// there; with `replay` (such a record, made on the same function) only
  /// its fastest candidate is run and the recorded outcomes are reported.
  /// Without `explain`, a failure leaves the function as it was and says
  /// nothing (the candidates' diagnostics are not shown).
  FailureOr<double> planMixes(FunctionOpInterface func,
                              const PlanningContext &context, uint64_t limit,
                              const FunctionGraph &graph, uint64_t peak,
                              uint64_t measured, bool commit,
                              const MixTrial *replay = nullptr,
                              MixTrial *record = nullptr, bool explain = true) {
    const GraphOptions &graphOptions = context.graphOptions;
    const ::lms::DeviceSpec &spec = context.device;
    // What must go: of the live bytes, or of the arena with arena=true.
    uint64_t excess = measured - limit;
    double unconstrained = ::lms::simulate(graph.getGraph(), spec).totalSeconds;

    // The candidates: the joint planner, and mixes where offloading first
    // removes a share of the excess and recomputation the rest.
    struct Candidate {
      std::string label;
      std::function<FailureOr<Outcome>()> run;
    };
    auto swapBudgetOf = [&](double share) {
      return peak - std::min<uint64_t>(
                        peak, static_cast<uint64_t>(share * double(excess)));
    };
    std::vector<Candidate> candidates;
    auto addShare = [&](double share) {
      candidates.push_back(
          {llvm::formatv("offload {0,3:P0} of the excess", share).str(),
           [&, share] {
             return apply(func, graphOptions, spec, swapBudgetOf(share), limit);
           }});
    };
    if (strategy == PlanStrategy::Swap) {
      addShare(1);
    } else if (strategy == PlanStrategy::Recompute) {
      addShare(0);
    } else {
      if (strategy == PlanStrategy::Auto)
        for (double share : {1.0, 0.0, 0.75, 0.5, 0.25})
          addShare(share);
      candidates.push_back(
          {"joint, per tensor        ",
           [&] { return applyJoint(func, graphOptions, spec, limit); }});
    }

    BodySnapshot snapshot(func);
    std::optional<size_t> best;
    std::vector<std::optional<Outcome>> outcomes(candidates.size());
    bool replayed = replay && replay->outcomes.size() == candidates.size();
    if (replayed) {
      best = replay->best;
      outcomes = replay->outcomes;
    }
    for (size_t i = 0; i < candidates.size() && !replayed; ++i) {
      snapshot.restore();
      // Candidates fail quietly: only the chosen one speaks.
      ScopedDiagnosticHandler quiet(func->getContext(),
                                    [](Diagnostic &) { return success(); });
      FailureOr<Outcome> outcome = candidates[i].run();
      if (failed(outcome))
        continue;
      outcomes[i] = *outcome;
      if (!best || outcome->seconds < outcomes[*best]->seconds)
        best = i;
    }
    snapshot.restore();
    if (record) {
      record->outcomes = outcomes;
      record->best = best;
    }
    if (!commit) {
      if (!best)
        return failure();
      return outcomes[*best]->seconds;
    }
    if (printStatistics) {
      llvm::errs() << "lms-plan: @" << nameOf(func) << ": budget " << limit
                   << " bytes, peak " << peak << " bytes, without LMS "
                   << llvm::formatv("{0:F1}", unconstrained * 1e6) << " us\n";
      for (size_t i = 0; i < candidates.size(); ++i) {
        llvm::errs() << "  " << candidates[i].label << ": ";
        if (!outcomes[i]) {
          llvm::errs() << "no plan\n";
          continue;
        }
        const Outcome &o = *outcomes[i];
        llvm::errs() << llvm::formatv(
            "{0:F1} us, {1} tensors offloaded, {2} recomputes{3}{4}\n",
            o.seconds * 1e6, o.swaps.tensors, o.remat.recomputes,
            o.jointMix ? " (recomputation removes " + *o.jointMix + ")"
                       : std::string(),
            best && *best == i ? "  <- chosen" : "");
      }
    }
    if (!best && !explain)
      return failure();
    if (!best) {
      // No candidate fits: the first one explains why (the offloading
      // planner, or recomputing when only that was asked for).
      FailureOr<Outcome> explained = candidates.front().run();
      snapshot.restore();
      if (succeeded(explained))
        return emitError(func.getLoc())
               << "internal error: a rewrite that failed as a candidate "
                  "succeeded when repeated";
      return failure();
    }
    FailureOr<Outcome> chosen = candidates[*best].run();
    if (failed(chosen))
      return failure();
    return chosen->seconds;
  }
};

} // namespace
