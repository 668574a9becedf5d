//===- lms-plan.cpp - The planners on graph files -------------------------===//
//
//   lms-plan --graph G.json --budget <bytes|size|NN%> [--method M]
//            [--time-limit S] [--out plan.json]
//   lms-plan --graph G.json --check plan.json [--budget B]
//   lms-plan --graph G.json --mlir [--out G.mlir]
//   lms-plan --graph G.json --reorder [--budget B] ...
//
// With --reorder, the planner may also change the order of the nodes: it
// first searches an order with a small peak (Schedule.h), stopping as soon
// as one fits the budget. When none fits, the method plans the order with
// the smallest peak, the one with the fewest bytes above the budget and the
// file's order, and the cheapest plan is kept. The plan file then carries
// the order ("order").
// Without a budget, --reorder prints the smallest peak it finds.
//
// With --arena, every device allocation of the plan is also placed at an
// offset in one arena (Placement.h) and the budget bounds the arena: when
// the placement does not fit, the planner is asked again for less.
//
// Methods: checkpoint-all, chen-sqrt, chen-greedy, segments, heuristic, dtr,
// exact (the Checkmate MILP on CBC), moccasin (Moccasin's constraint program on
// Gecode); without
// --method, exact for graphs of up to 120 nodes (when built with a MILP
// solver), else heuristic. Percentages are of the peak of the reference
// order (topo_order, each output freed after its last consumer).
//
// Prints one summary line (method, peak, budget, compute cost, TDI = compute
// cost / sum of all costs - 1, solve time, optimality or gap); the improving
// planners print progress lines to stderr as they go. The MLIR form has one
// `graph.node` op per node (an op of a dialect LMS does not know, sized from
// its tensor<mem x i8> result, with its cost in `lms.cost`), so every pass
// runs on the same graph (with --allow-unregistered-dialect).
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/GraphFile.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Placement.h"
#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Schedule.h"
#include "LMS/Graph/Units.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace lms;

static llvm::cl::opt<std::string> graphPath("graph", llvm::cl::Required,
                                            llvm::cl::desc("Graph file"),
                                            llvm::cl::value_desc("G.json"));
static llvm::cl::opt<std::string>
    budgetText("budget",
               llvm::cl::desc("Budget: bytes, a size with a unit, or a "
                              "percentage of the reference peak"));
static llvm::cl::opt<std::string>
    method("method",
           llvm::cl::desc("checkpoint-all, chen-sqrt, chen-greedy, segments, "
                          "heuristic, dtr, exact or moccasin (default: by "
                          "graph size)"),
           llvm::cl::init(""));
static llvm::cl::opt<double>
    timeLimit("time-limit",
              llvm::cl::desc("Wall-clock cap in seconds of each search, a "
                             "hard one: no plan by then is an error "
                             "(default: none for the heuristics, which stop "
                             "on work; 60 for exact)"),
              llvm::cl::init(-1));
static llvm::cl::opt<uint64_t> iterations(
    "iterations",
    llvm::cl::desc("Work limit of the improving heuristics in search "
                   "iterations (default: chosen from the graph size)"),
    llvm::cl::init(0));
static llvm::cl::opt<std::string> outPath("out",
                                          llvm::cl::desc("Write the plan (or "
                                                         "the MLIR) here"),
                                          llvm::cl::init(""));
static llvm::cl::opt<std::string>
    checkPath("check", llvm::cl::desc("Validate this plan file instead"),
              llvm::cl::init(""));
static llvm::cl::opt<bool> emitMLIR("mlir",
                                    llvm::cl::desc("Emit the graph as MLIR"));
static llvm::cl::opt<uint64_t> seed("seed", llvm::cl::desc("Random seed"),
                                    llvm::cl::init(1));
static llvm::cl::opt<bool> quiet("quiet", llvm::cl::desc("No progress lines"));
static llvm::cl::opt<bool> coveredSearch(
    "covered-search",
    llvm::cl::desc("heuristic (and the warm starts of exact and moccasin): "
                   "a second interval search whose splits may also "
                   "recompute where the inputs are still resident; the "
                   "cheaper plan wins"),
    llvm::cl::init(true));
static llvm::cl::opt<bool> polish(
    "polish",
    llvm::cl::desc("heuristic (and the warm start of exact): re-solve "
                   "windows of the interval search's plan exactly with the "
                   "constraint solver (Moccasin's model, Gecode) where the "
                   "plan is near a solution of that model"),
    llvm::cl::init(true));
static llvm::cl::opt<uint64_t> polishIterations(
    "polish-iterations",
    llvm::cl::desc("Work limit of --polish in windows (default: from the "
                   "graph's size)"),
    llvm::cl::init(0));
static llvm::cl::opt<bool>
    arena("arena", llvm::cl::desc("Place every allocation in one arena and "
                                  "make the budget bound the arena"));
static llvm::cl::opt<bool>
    reorder("reorder",
            llvm::cl::desc("Let the planner reorder the nodes: schedule for a "
                           "small peak first, then recompute what does not "
                           "fit"));
static llvm::cl::opt<uint64_t> scheduleIterations(
    "schedule-iterations",
    llvm::cl::desc("Work limit of the scheduling search in evaluated orders "
                   "(--reorder; default: four times what the passes use "
                   "for the graph's size)"),
    llvm::cl::init(0));
static llvm::cl::opt<uint64_t>
    alignment("alignment",
              llvm::cl::desc("Alignment of arena offsets and sizes (--arena)"),
              llvm::cl::init(1));

/// The arena line: "arena: <bytes> bytes, live peak <bytes>, ratio <r>, ...".
static void printArena(const Placement &placement, unsigned rounds,
                       double seconds) {
  llvm::outs() << llvm::formatv(
      "arena: {0} bytes, live peak {1} bytes, ratio {2:F4}, "
      "fragmentation {3:P2}, order {4}, {5} placements, {6} plan(s), "
      "{7:F2} s\n",
      placement.arenaBytes, placement.livePeakBytes, placement.ratio(),
      placement.fragmentation(), placement.strategy, placement.placementsTried,
      rounds, seconds);
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "lms-plan: error: " << message << "\n";
  return 1;
}

static int writeOutput(const std::string &text) {
  if (outPath.empty() || outPath == "-") {
    llvm::outs() << text;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(outPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write " + outPath + ": " + ec.message());
  os << text;
  return 0;
}

static std::string toMLIR(const GraphFile &file) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const Graph &g = file.graph;
  std::string name = file.name.empty() ? "graph" : file.name;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  os << "// Generated by lms-plan --mlir from " << graphPath << "\n";
  os << "// One graph.node op per node: its output is tensor<mem x i8>.\n";
  os << "func.func @" << name << "() {\n";
  for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i) {
    const Op &op = g.op(i);
    os << "  %n" << file.ids[i] << " = \"graph.node\"(";
    for (auto [k, t] : llvm::enumerate(op.inputs))
      os << (k ? ", " : "") << "%n" << file.ids[t];
    os << ") {lms.cost = {seconds = "
       << llvm::formatv("{0:e}", op.cost.seconds.value_or(0)) << " : f64}, "
       << "lms.recomputable, name = \"" << op.name << "\"} : (";
    for (auto [k, t] : llvm::enumerate(op.inputs))
      os << (k ? ", " : "") << "tensor<" << g.tensor(t).bytes << "xi8>";
    os << ") -> tensor<" << g.tensor(op.outputs[0]).bytes << "xi8>\n";
  }
  os << "  return\n}\n";
  return text;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists this tool's options, not every option LLVM's libraries
  // register (hundreds of code generator flags).
  static llvm::cl::OptionCategory category("lms-plan options");
  for (llvm::cl::Option *option : std::initializer_list<llvm::cl::Option *>{
           &graphPath, &budgetText, &method, &timeLimit, &iterations, &outPath,
           &checkPath, &emitMLIR, &seed, &quiet, &arena, &reorder,
           &scheduleIterations, &alignment})
    option->addCategory(category);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lms-plan: memory planners on graph files (Checkmate/Moccasin schema)\n");
  // The method's name is checked before any work (the graph, the budget).
  std::optional<RematMethod> namedMethod;
  if (!method.empty()) {
    namedMethod = parseRematMethod(method);
    if (!namedMethod) {
      llvm::errs()
          << "lms-plan: error: unknown method '" << method
          << "': expected checkpoint-all, chen-sqrt, chen-greedy, segments, "
             "heuristic, dtr, exact or moccasin\n";
      return 1;
    }
  }
  llvm::Expected<GraphFile> file = readGraphFile(graphPath);
  if (!file)
    return fail(llvm::toString(file.takeError()));
  const Graph &g = file->graph;
  if (emitMLIR)
    return writeOutput(toMLIR(*file));

  uint64_t referencePeak = evaluateSchedule(g).peakBytes;
  std::optional<uint64_t> budget;
  if (!budgetText.empty()) {
    llvm::Expected<ByteSize> size = parseByteSize(budgetText);
    if (!size)
      return fail(llvm::toString(size.takeError()));
    // Percentages round up, as the benchmarks' budgets do.
    budget = size->isPercent ? static_cast<uint64_t>(std::ceil(
                                   referencePeak * size->percent / 100.0))
                             : size->bytes;
  }

  if (!checkPath.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(checkPath);
    if (!buffer)
      return fail("cannot read " + checkPath);
    llvm::Expected<Plan> plan = parsePlanFile(*file, (*buffer)->getBuffer());
    if (!plan)
      return fail(llvm::toString(plan.takeError()));
    llvm::Expected<MemoryProfile> profile = evaluatePlan(g, *plan);
    if (!profile)
      return fail("invalid plan: " + llvm::toString(profile.takeError()));
    std::vector<uint8_t> computed(g.numOps(), 0);
    for (const Step &step : *plan)
      if (step.kind == Step::Compute)
        computed[step.index] = 1;
    for (OpIndex i = 0; i < static_cast<OpIndex>(g.numOps()); ++i)
      if (!computed[i])
        return fail(llvm::formatv("invalid plan: node {0} is never computed",
                                  file->ids[i]));
    double cost = planComputeCost(g, *plan);
    if (arena) {
      auto start = std::chrono::steady_clock::now();
      PlacementOptions placementOptions;
      placementOptions.alignment = alignment;
      llvm::Expected<Placement> placement =
          placePlan(g, *plan, placementOptions);
      if (!placement)
        return fail(llvm::toString(placement.takeError()));
      if (llvm::Error err =
              verifyPlacement(placement->buffers, *placement, alignment))
        return fail("internal error: invalid placement: " +
                    llvm::toString(std::move(err)));
      printArena(*placement, 1,
                 std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count());
      if (budget && placement->arenaBytes > *budget)
        return fail(llvm::formatv("the plan's arena is {0} bytes, over the "
                                  "budget of {1}",
                                  placement->arenaBytes, *budget));
    }
    llvm::outs() << llvm::formatv(
        "valid: peak {0} bytes, compute cost {1}, TDI {2:P2}\n",
        profile->peakBytes, cost, cost / file->totalCost - 1);
    if (budget && profile->peakBytes > *budget)
      return fail(llvm::formatv("the plan peaks at {0} bytes, over the "
                                "budget of {1}",
                                profile->peakBytes, *budget));
    return 0;
  }

  // --reorder: orders with a small peak first (stopping once one fits).
  // When none fits, the order with the smallest peak and the one with the
  // fewest bytes above the budget are both planned, the cheaper plan kept.
  std::vector<std::vector<OpIndex>> orders;
  if (reorder) {
    for (ScheduleGoal goal :
         {ScheduleGoal::SmallestPeak, ScheduleGoal::LeastExcess}) {
      if (goal == ScheduleGoal::LeastExcess && !budget)
        break;
      ScheduleOptions scheduleOptions;
      scheduleOptions.seed = seed;
      // Planning a graph file is an offline job: more search than a pass
      // makes by default.
      scheduleOptions.searchIterations = scheduleIterations
                                             ? scheduleIterations.getValue()
                                             : 4 * autoScheduleIterations(g);
      if (timeLimit >= 0)
        scheduleOptions.timeLimitSeconds = timeLimit.getValue();
      if (budget)
        scheduleOptions.targetBytes = *budget;
      scheduleOptions.goal = goal;
      auto start = std::chrono::steady_clock::now();
      llvm::Expected<ScheduleResult> scheduled =
          scheduleForMemory(g, scheduleOptions);
      if (!scheduled)
        return fail(llvm::toString(scheduled.takeError()));
      llvm::outs() << llvm::formatv(
          "schedule{0}: peak {1} bytes ({2:P1} of the reference peak), from "
          "{3}, {4} orders evaluated, {5:F2} s{6}\n",
          goal == ScheduleGoal::LeastExcess ? " (least excess)" : "",
          scheduled->peakBytes,
          static_cast<double>(scheduled->peakBytes) / referencePeak,
          scheduled->method, scheduled->evaluations,
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count(),
          scheduled->stoppedByTimeLimit
              ? ", stopped by the time limit (not reproducible)"
              : "");
      if (scheduled->changed() && !llvm::is_contained(orders, scheduled->order))
        orders.push_back(scheduled->order);
      if (budget && scheduled->peakBytes <= *budget)
        break;
    }
    if (!budget)
      return 0;
  }
  // The order of the file: the only one without --reorder, and a candidate
  // with it when no order fits (a new order may cost more to recompute).
  bool fitsReordered = false;
  if (reorder && budget && !orders.empty())
    fitsReordered =
        evaluateSchedule(reorderGraph(g, orders.front())).peakBytes <= *budget;
  if (!fitsReordered)
    orders.push_back({});

  if (!budget)
    return fail("--budget is required to plan");
  RematMethod chosenMethod = namedMethod.value_or(
      g.numOps() <= 120 && haveExactSolver() ? RematMethod::Exact
                                             : RematMethod::Heuristic);
  std::string chosen = rematMethodName(chosenMethod).str();
  RematOptions options;
  // The heuristics stop on work (reproducible); a time limit is a cap.
  if (timeLimit >= 0)
    options.timeLimitSeconds = timeLimit.getValue();
  else if (chosenMethod == RematMethod::Exact)
    options.timeLimitSeconds = 60;
  options.searchIterations = iterations;
  options.seed = seed;
  options.coveredSearch = coveredSearch;
  options.polishWindows = polish;
  options.polishIterations = polishIterations;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  if (!quiet)
    options.progress = [&](const RematProgress &p) {
      llvm::errs() << llvm::formatv("[{0,7:F2}s] incumbent TDI {1:P3}",
                                    p.seconds,
                                    p.incumbent / file->totalCost - 1);
      if (p.bound > 0)
        llvm::errs() << llvm::formatv(
            ", bound TDI {0:P3}, gap {1:P2}", p.bound / file->totalCost - 1,
            p.incumbent > 0 ? (p.incumbent - p.bound) / p.incumbent : 0.0);
      llvm::errs() << "\n";
    };

  uint64_t lower = rematLowerBound(g);
  if (*budget < lower)
    return fail(llvm::formatv("budget {0} bytes is below the smallest "
                              "feasible budget {1} bytes ({2:P1} of the "
                              "reference peak {3}): some node needs its "
                              "inputs and output at once",
                              *budget, lower,
                              static_cast<double>(lower) / referencePeak,
                              referencePeak));
  // One order's plan (and its arena fit); plans of a reordered graph name
  // its ops by position: they are mapped back.
  struct Outcome {
    std::vector<OpIndex> order;
    std::optional<RematResult> result;
    std::string error;
    std::optional<ArenaFit> fit;
  };
  auto planOrder = [&](const std::vector<OpIndex> &order) {
    Outcome outcome;
    outcome.order = order;
    Graph reordered = order.empty() ? Graph() : reorderGraph(g, order);
    const Graph &planned = order.empty() ? g : reordered;
    RematOptions orderOptions = options;
    orderOptions.backwardOps = file->backward;
    if (!order.empty() && !orderOptions.backwardOps.empty())
      for (auto [k, op] : llvm::enumerate(order))
        orderOptions.backwardOps[k] = file->backward[op];
    auto planAt = [&](uint64_t target) -> llvm::Expected<RematResult> {
      llvm::Expected<RematResult> r =
          planRemat(planned, target, chosenMethod, orderOptions);
      if (r && !order.empty())
        for (Step &step : r->plan)
          if (step.kind == Step::Compute)
            step.index = order[step.index];
      return r;
    };
    llvm::Expected<RematResult> result = [&]() -> llvm::Expected<RematResult> {
      if (!arena)
        return planAt(*budget);
      // Each target's result, to return the one whose plan fit.
      std::vector<std::pair<uint64_t, RematResult>> results;
      PlacementOptions placementOptions;
      placementOptions.alignment = alignment;
      llvm::Expected<ArenaFit> fitted = fitArena(
          g, *budget,
          [&](uint64_t target) -> llvm::Expected<Plan> {
            llvm::Expected<RematResult> r = planAt(target);
            if (!r)
              return r.takeError();
            results.push_back({target, *r});
            return r->plan;
          },
          placementOptions);
      if (!fitted)
        return fitted.takeError();
      outcome.fit = std::move(*fitted);
      for (auto &[target, r] : results)
        if (target == outcome.fit->plannedBudget)
          return std::move(r);
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: lost the fitted plan");
    }();
    if (result)
      outcome.result = std::move(*result);
    else
      outcome.error = llvm::toString(result.takeError());
    return outcome;
  };
  std::optional<Outcome> best;
  for (const std::vector<OpIndex> &order : orders) {
    Outcome outcome = planOrder(order);
    if (!best ||
        (outcome.result && (!best->result || outcome.result->computeCost <
                                                 best->result->computeCost)))
      best = std::move(outcome);
  }
  const std::vector<OpIndex> &order = best->order;
  std::optional<ArenaFit> &fit = best->fit;
  double seconds = elapsed();
  if (!best->result)
    return fail(
        llvm::formatv("{0}: {1} (after {2:F2} s)", chosen, best->error, seconds)
            .str());
  const std::optional<RematResult> &result = best->result;
  if (fit) {
    if (llvm::Error err =
            verifyPlacement(fit->placement.buffers, fit->placement, alignment))
      return fail("internal error: invalid placement: " +
                  llvm::toString(std::move(err)));
    printArena(fit->placement, fit->rounds, seconds);
  }
  std::string status = result->optimal ? "optimal" : "";
  if (!result->optimal && result->lowerBound && result->computeCost > 0)
    status = llvm::formatv("gap {0:P2}",
                           (result->computeCost - *result->lowerBound) /
                               result->computeCost)
                 .str();
  if (result->optimalInModel)
    status += std::string(status.empty() ? "" : ", ") +
              "optimal in the constraint program";
  if (result->stoppedByTimeLimit)
    status += std::string(status.empty() ? "" : ", ") +
              "stopped by the time limit (not reproducible)";
  llvm::outs() << llvm::formatv(
      "{0}: peak {1} bytes (budget {2}, {3:P1} of the reference peak), "
      "compute cost {4}, TDI {5:P3}, {6:F2} s{7}\n",
      order.empty() ? chosen : chosen + " on the new order", result->peakBytes,
      *budget, static_cast<double>(*budget) / referencePeak,
      result->computeCost, result->computeCost / file->totalCost - 1, seconds,
      status.empty() ? "" : ", " + status);
  if (!outPath.empty())
    return writeOutput(writePlanFile(*file, result->plan, result->peakBytes,
                                     result->computeCost,
                                     fit ? &fit->placement : nullptr, order));
  return 0;
}
