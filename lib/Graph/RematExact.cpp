//===- RematExact.cpp - The Checkmate MILP on CBC -------------------------===//
//
// Checkmate's formulation (Jain et al., MLSys'20) for the schedule order:
// stage t computes op t, after recomputing what it needs; within a stage ops
// run in schedule order.
//
//   R[t][i]  op i is computed in stage t (i <= t; R[t][t] = 1)
//   S[t][i]  op i's outputs are resident at the start of stage t (i < t)
//   F[t][i][k]  i is freed right after step k of stage t (k is i or one of
//            its users), continuous: with R and S integral, the best F is
//   U[t][k]  device bytes during step k of stage t (continuous)
//
//   S[t+1][i] <= S[t][i] + R[t][i]           (kept only if there)
//   R[t][k] <= R[t][i] + S[t][i], i -> k     (inputs resident)
//   F[t][i][k] <= R[t][k], <= 1 - S[t+1][i], <= 1 - R[t][j] (users j > k)
//   U[t][0] = sum_i mem_i S[t][i] + mem_0 R[t][0]
//   U[t][k] = U[t][k-1] - sum_i mem_i F[t][i][k-1] + mem_k R[t][k]
//   U[t][k] + transient_k R[t][k] <= budget - arguments(t)
//   minimize sum cost_i R[t][i]
//
// F needs no lower bound: freeing only lowers memory, so an optimal solution
// frees where it may. The heuristic's plan is the MIP start; CBC runs with
// the remaining time limit, and an event handler reports the incumbent and
// the bound. Arguments stay resident through their last use in the schedule
// (ops that read one are not recomputed after it); live-out outputs are
// never freed; ops that cannot be recomputed have R[t][i] = 0 for t != i.
//
//===----------------------------------------------------------------------===//

#include "RematInternal.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

#ifdef LMS_HAVE_CBC
#include "CbcEventHandler.hpp"
#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"
#endif

#define DEBUG_TYPE "lms-remat-exact"

using namespace lms;

bool lms::haveExactSolver() {
#ifdef LMS_HAVE_CBC
  return true;
#else
  return false;
#endif
}

#ifdef LMS_HAVE_CBC
namespace {

/// Shared by the event handler's clones (CBC copies its models).
struct ProgressState {
  const RematOptions *options;
  detail::Stopwatch stopwatch; ///< a copy of the planner's: the same start
  double lastReport = -1;
  double incumbent = std::numeric_limits<double>::infinity();
  double bound = 0;
  /// The objective is the cost times this (see planRematExact).
  double scale = 1;
  double elapsed() const { return stopwatch.seconds(); }
};

class ProgressHandler : public CbcEventHandler {
public:
  explicit ProgressHandler(ProgressState *state) : state(state) {}
  ProgressHandler(const ProgressHandler &other) = default;
  CbcEventHandler *clone() const override { return new ProgressHandler(*this); }
  CbcAction event(CbcEvent which) override {
    // The time limit is a wall-clock one. CBC's own check (-sec) runs
    // between nodes and after the root's cut generation, and a node's LP
    // can take a tenth of a second on a 200-op model: the search stops at
    // the first event past nine tenths of the limit, so that it ends
    // within it.
    if (state->elapsed() > 0.9 * state->options->timeLimitSeconds)
      return stop;
    if (!model_ || !state->options->progress)
      return noAction;
    if (which != solution && which != heuristicSolution && which != node &&
        which != treeStatus)
      return noAction;
    double now = state->elapsed();
    double incumbent = model_->getObjValue();
    double bound = model_->getBestPossibleObjValue();
    // During the search CBC's bound can read as the incumbent; only a bound
    // below the incumbent is one.
    if (!(bound < incumbent - 1e-9))
      bound = state->bound;
    bool better = incumbent < state->incumbent - 1e-9 ||
                  (bound > state->bound + 1e-9 && now - state->lastReport > 1);
    if (!better)
      return noAction;
    if (incumbent < state->incumbent)
      state->incumbent = incumbent;
    if (bound > state->bound && bound < 1e300)
      state->bound = bound;
    state->lastReport = now;
    state->options->progress(
        {now, state->incumbent / state->scale, state->bound / state->scale});
    return noAction;
  }

private:
  ProgressState *state;
};

/// The MILP's unit: an op and its device outputs.
struct Unit {
  uint64_t mem = 0;
  int64_t transient = 0;
  double cost = 0;
  bool recomputable = true;
  bool pinned = false;
  /// Last stage at which it may be recomputed (arguments it reads die).
  int lastRecompute = 0;
  std::vector<int> inputs, users;
};

} // namespace

static std::vector<Unit> buildUnits(const Graph &graph,
                                    const DeviceSpec *device,
                                    std::vector<int64_t> &argumentBytes) {
  int n = static_cast<int>(graph.numOps());
  std::vector<Unit> units(n);
  argumentBytes.assign(n, 0);
  std::vector<uint8_t> recomputable = detail::recomputableOps(graph);
  for (int i = 0; i < n; ++i) {
    const Op &op = graph.op(i);
    Unit &u = units[i];
    u.cost = opCost(graph, i, device);
    u.transient = std::max<int64_t>(op.transientBytes, 0);
    u.recomputable = recomputable[i];
    u.lastRecompute = n - 1;
    for (TensorIndex t : op.outputs) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.space != MemorySpace::Device)
        continue;
      u.mem += tensor.bytes;
      u.pinned |= tensor.liveOut;
    }
    for (TensorIndex t : op.inputs) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.space != MemorySpace::Device)
        continue;
      if (tensor.producer == kEntry) {
        if (!tensor.liveOut)
          u.lastRecompute = std::min<int>(u.lastRecompute, graph.lastUse(t));
        continue;
      }
      int p = tensor.producer;
      if (std::find(u.inputs.begin(), u.inputs.end(), p) == u.inputs.end()) {
        u.inputs.push_back(p);
        units[p].users.push_back(i);
      }
    }
  }
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.producer != kEntry || tensor.space != MemorySpace::Device)
      continue;
    int last = tensor.liveOut ? n - 1 : graph.lastUse(t);
    for (int st = 0; st <= last && st < n; ++st)
      argumentBytes[st] += static_cast<int64_t>(tensor.bytes);
  }
  return units;
}

/// The steps of a stage plan: per stage the ops computed (in order) and the
/// ops kept into the next stage; every tensor is freed as early as it may.
static Plan emitStages(const Graph &graph, const std::vector<Unit> &units,
                       const std::vector<std::vector<int>> &computed,
                       const std::vector<std::vector<uint8_t>> &keep) {
  int n = static_cast<int>(graph.numOps());
  Plan plan;
  std::vector<uint8_t> resident(n, 0);
  std::vector<int> lastUser(n, -1);
  std::vector<uint8_t> argumentFreed(graph.numTensors(), 0);
  auto freeUnit = [&](int i) {
    resident[i] = 0;
    for (TensorIndex t : graph.op(i).outputs)
      if (graph.tensor(t).space == MemorySpace::Device)
        plan.push_back(Step::free(t));
  };
  // Arguments nobody uses are freed at entry; the others after their last
  // use (they are not units).
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors());
       ++t) {
    const Tensor &tensor = graph.tensor(t);
    if (tensor.producer == kEntry && tensor.space == MemorySpace::Device &&
        !tensor.liveOut && graph.lastUse(t) == kEntry)
      plan.push_back(Step::free(t));
  }
  for (int t = 0; t < n; ++t) {
    const std::vector<int> &ops = computed[t];
    for (size_t k = 0; k < ops.size(); ++k)
      for (int i : units[ops[k]].inputs)
        lastUser[i] = static_cast<int>(k);
    auto kept = [&](int i) {
      return units[i].pinned || (t + 1 < n && keep[t + 1][i]);
    };
    // Carried tensors this stage neither uses nor keeps go first.
    for (int i = 0; i < t; ++i)
      if (resident[i] && lastUser[i] < 0 && !kept(i))
        freeUnit(i);
    for (size_t k = 0; k < ops.size(); ++k) {
      int op = ops[k];
      if (!resident[op]) {
        plan.push_back(Step::compute(op));
        resident[op] = 1;
      }
      for (int i : units[op].inputs)
        if (lastUser[i] == static_cast<int>(k) && resident[i] && !kept(i))
          freeUnit(i);
      if (lastUser[op] <= static_cast<int>(k) && !kept(op))
        freeUnit(op);
      // Arguments whose last use this is.
      if (op == t)
        for (TensorIndex a : graph.op(op).inputs) {
          const Tensor &tensor = graph.tensor(a);
          if (tensor.producer == kEntry &&
              tensor.space == MemorySpace::Device && !tensor.liveOut &&
              graph.lastUse(a) == t && !argumentFreed[a]) {
            argumentFreed[a] = 1;
            plan.push_back(Step::free(a));
          }
        }
    }
    for (size_t k = 0; k < ops.size(); ++k)
      for (int i : units[ops[k]].inputs)
        lastUser[i] = -1;
  }
  return plan;
}

/// The stage structure of a plan (for the MIP start): the ops computed in
/// each stage and the ops resident at each stage's start.
static void stagesOfPlan(const Graph &graph, const Plan &plan,
                         std::vector<std::vector<int>> &computed,
                         std::vector<std::vector<uint8_t>> &keep) {
  int n = static_cast<int>(graph.numOps());
  computed.assign(n, {});
  keep.assign(n, std::vector<uint8_t>(n, 0));
  std::vector<uint8_t> resident(n, 0);
  int stage = 0;
  bool stageStarted = false;
  for (const Step &step : plan) {
    if (stage >= n)
      break;
    if (step.kind == Step::Compute) {
      if (!stageStarted) {
        for (int i = 0; i < stage; ++i)
          keep[stage][i] = resident[i];
        stageStarted = true;
      }
      computed[stage].push_back(step.index);
      resident[step.index] = 1;
      if (step.index == stage) {
        ++stage;
        stageStarted = false;
      }
    } else if (step.kind == Step::Free) {
      OpIndex producer = graph.tensor(step.index).producer;
      if (producer >= 0)
        resident[producer] = 0;
    }
  }
}

namespace {

/// Checkmate's MILP for one graph and budget (the formulation in the file
/// comment): its columns and rows as CBC loads them, and the column of each
/// R[t][i] and S[t][i].
struct CheckmateMilp {
  std::vector<double> colLower, colUpper, objective;
  std::vector<uint8_t> integer;
  std::vector<std::string> names;
  std::vector<int> rowIndex, colIndex;
  std::vector<double> values, rowLower, rowUpper;
  /// R[t][i], S[t][i], U[t][k] as dense triangular index tables.
  std::vector<std::vector<int>> R, S, U;

  CheckmateMilp(const std::vector<Unit> &units,
                const std::vector<int64_t> &argumentBytes, uint64_t budget,
                double scale);

  int addCol(double lo, double hi, double obj, bool isInt, std::string name) {
    colLower.push_back(lo);
    colUpper.push_back(hi);
    objective.push_back(obj);
    integer.push_back(isInt);
    names.push_back(std::move(name));
    return static_cast<int>(colLower.size()) - 1;
  }
  int addRow(std::initializer_list<std::pair<int, double>> terms, double lo,
             double hi) {
    int row = static_cast<int>(rowLower.size());
    for (auto [col, coef] : terms)
      addTerm(row, col, coef);
    rowLower.push_back(lo);
    rowUpper.push_back(hi);
    return row;
  }
  void addTerm(int row, int col, double coef) {
    rowIndex.push_back(row);
    colIndex.push_back(col);
    values.push_back(coef);
  }

  /// Whether `x` satisfies every bound and row and is integral where it
  /// must be (within 1e-6).
  bool isSolution(const double *x) const;

  /// The MIP start of a plan: its R and S columns at 1.
  std::vector<std::pair<std::string, double>> startOf(const Graph &graph,
                                                      const Plan &plan) const;

  /// The stages of a solution: the ops each stage computes and keeps.
  void stagesOf(const double *x, std::vector<std::vector<int>> &computed,
                std::vector<std::vector<uint8_t>> &keep) const;
};

/// What CBC found within the time limit.
struct CbcOutcome {
  /// Its best point, when it is a solution (CheckmateMilp::isSolution).
  std::vector<double> solution;
  bool provenOptimal = false;
  bool provenInfeasible = false;
  /// Its bound on the cost (not scaled).
  double bound = 0;
};

} // namespace

CheckmateMilp::CheckmateMilp(const std::vector<Unit> &units,
                             const std::vector<int64_t> &argumentBytes,
                             uint64_t budget, double scale) {
  int n = static_cast<int>(units.size());
  R.resize(n);
  S.resize(n);
  U.resize(n);
  for (int t = 0; t < n; ++t) {
    R[t].assign(t + 1, -1);
    S[t].assign(t, -1);
    U[t].assign(t + 1, -1);
    for (int i = 0; i <= t; ++i) {
      bool allowed =
          i == t || (units[i].recomputable && t <= units[i].lastRecompute);
      R[t][i] =
          addCol(i == t ? 1 : 0, allowed ? 1 : 0, units[i].cost * scale, true,
                 "R_" + std::to_string(t) + "_" + std::to_string(i));
    }
    for (int i = 0; i < t; ++i)
      S[t][i] = addCol(units[i].pinned ? 1 : 0, 1, 0, true,
                       "S_" + std::to_string(t) + "_" + std::to_string(i));
    for (int k = 0; k <= t; ++k)
      U[t][k] = addCol(0, 1, 0, false,
                       "U_" + std::to_string(t) + "_" + std::to_string(k));
  }
  const double inf = COIN_DBL_MAX;
  auto scaled = [&](auto bytes) {
    return static_cast<double>(bytes) / static_cast<double>(budget);
  };
  for (int t = 0; t < n; ++t) {
    // Kept only if there.
    if (t + 1 < n)
      for (int i = 0; i <= t; ++i) {
        if (i < t)
          addRow({{S[t + 1][i], 1}, {S[t][i], -1}, {R[t][i], -1}}, -inf, 0);
        else
          addRow({{S[t + 1][i], 1}, {R[t][i], -1}}, -inf, 0);
      }
    // Inputs resident.
    for (int k = 0; k <= t; ++k)
      for (int i : units[k].inputs)
        addRow({{R[t][k], 1}, {R[t][i], -1}, {S[t][i], -1}}, -inf, 0);
    // Frees and memory. F[t][i][k] for k = i or a user of i, k <= t.
    std::vector<std::vector<std::pair<int, int>>> freedAfter(t + 1);
    for (int i = 0; i <= t; ++i) {
      if (units[i].pinned)
        continue;
      std::vector<int> points{i};
      for (int u : units[i].users)
        if (u <= t)
          points.push_back(u);
      for (int k : points) {
        int f = addCol(0, 1, 0, false,
                       "F_" + std::to_string(t) + "_" + std::to_string(i) +
                           "_" + std::to_string(k));
        freedAfter[k].push_back({i, f});
        addRow({{f, 1}, {R[t][k], -1}}, -inf, 0);
        if (t + 1 < n)
          addRow({{f, 1}, {S[t + 1][i], 1}}, -inf, 1);
        for (int j : units[i].users)
          if (j > k && j <= t)
            addRow({{f, 1}, {R[t][j], 1}}, -inf, 1);
      }
    }
    // Bytes in units of the budget (CLP is unhappy with 1e10 coefficients),
    // the cap a little below 1 so the LP tolerance cannot cross the budget.
    double cap =
        (static_cast<double>(budget) - static_cast<double>(argumentBytes[t])) /
            static_cast<double>(budget) -
        1e-7;
    for (int k = 0; k <= t; ++k) {
      // U[t][k] - (carried or previous) - mem_k R[t][k] = 0
      int row = addRow({{U[t][k], 1}, {R[t][k], -scaled(units[k].mem)}}, 0, 0);
      if (k == 0) {
        for (int i = 0; i < t; ++i)
          addTerm(row, S[t][i], -scaled(units[i].mem));
      } else {
        addTerm(row, U[t][k - 1], -1);
        for (auto [i, f] : freedAfter[k - 1])
          addTerm(row, f, scaled(units[i].mem));
      }
      addRow({{U[t][k], 1}, {R[t][k], scaled(units[k].transient)}}, -inf, cap);
    }
  }
}

bool CheckmateMilp::isSolution(const double *x) const {
  constexpr double tolerance = 1e-6;
  for (size_t c = 0; c < colLower.size(); ++c) {
    if (x[c] < colLower[c] - tolerance || x[c] > colUpper[c] + tolerance)
      return false;
    if (integer[c] && std::abs(x[c] - std::round(x[c])) > tolerance)
      return false;
  }
  std::vector<double> activity(rowLower.size(), 0.0);
  for (size_t e = 0; e < values.size(); ++e)
    activity[rowIndex[e]] += values[e] * x[colIndex[e]];
  for (size_t r = 0; r < activity.size(); ++r)
    if (activity[r] < rowLower[r] - tolerance ||
        activity[r] > rowUpper[r] + tolerance)
      return false;
  return true;
}

std::vector<std::pair<std::string, double>>
CheckmateMilp::startOf(const Graph &graph, const Plan &plan) const {
  int n = static_cast<int>(R.size());
  std::vector<std::vector<int>> computed;
  std::vector<std::vector<uint8_t>> keep;
  stagesOfPlan(graph, plan, computed, keep);
  std::vector<std::pair<std::string, double>> start;
  for (int t = 0; t < n; ++t) {
    for (int i : computed[t])
      start.push_back({names[R[t][i]], 1.0});
    for (int i = 0; i < t; ++i)
      if (keep[t][i])
        start.push_back({names[S[t][i]], 1.0});
  }
  return start;
}

void CheckmateMilp::stagesOf(const double *x,
                             std::vector<std::vector<int>> &computed,
                             std::vector<std::vector<uint8_t>> &keep) const {
  int n = static_cast<int>(R.size());
  computed.assign(n, {});
  keep.assign(n, std::vector<uint8_t>(n, 0));
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i <= t; ++i)
      if (x[R[t][i]] > 0.5)
        computed[t].push_back(i);
    for (int i = 0; i < t; ++i)
      keep[t][i] = x[S[t][i]] > 0.5;
  }
}

/// Solves `milp` with CBC, from the MIP start `warm` when there is one,
/// within what is left of the time limit (`stopwatch` started with the
/// planner).
static CbcOutcome solveWithCbc(const CheckmateMilp &milp, const Graph &graph,
                               const std::optional<RematResult> &warm,
                               const RematOptions &options,
                               const detail::Stopwatch &stopwatch,
                               double scale) {
  auto elapsed = [&] { return stopwatch.seconds(); };
  OsiClpSolverInterface solver;
  CoinPackedMatrix matrix(/*colordered=*/false, milp.rowIndex.data(),
                          milp.colIndex.data(), milp.values.data(),
                          static_cast<CoinBigIndex>(milp.values.size()));
  matrix.setDimensions(static_cast<int>(milp.rowLower.size()),
                       static_cast<int>(milp.colLower.size()));
  solver.loadProblem(matrix, milp.colLower.data(), milp.colUpper.data(),
                     milp.objective.data(), milp.rowLower.data(),
                     milp.rowUpper.data());
  for (size_t c = 0; c < milp.integer.size(); ++c) {
    if (milp.integer[c])
      solver.setInteger(static_cast<int>(c));
    solver.setColName(static_cast<int>(c), milp.names[c]);
  }
  solver.messageHandler()->setLogLevel(0);
  // The root LP is solved before CBC's limit applies: Clp gets the time
  // left too (wall clock, as every limit here).
  double remainingAtStart = 0.9 * options.timeLimitSeconds - elapsed();
  solver.getModelPtr()->setMaximumWallSeconds(std::max(0.05, remainingAtStart));

  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  ProgressState progress{&options, stopwatch};
  progress.scale = scale;
  ProgressHandler handler(&progress);
  model.passInEventHandler(&handler);
  if (warm) {
    model.setMIPStart(milp.startOf(graph, warm->plan));
    progress.incumbent = warm->computeCost * scale;
  }
  // CBC overruns its own limit by up to a fifth (its checks are between
  // nodes, and cut generation runs first): it gets a share of the time left.
  double remaining =
      std::max(0.05, 0.8 * (0.9 * options.timeLimitSeconds - elapsed()));
  std::string seconds = llvm::formatv("{0:F2}", remaining).str();
  std::string logLevel = "0";
  // Both presolves off: CBC's preprocessing, and Clp's LP presolve, which
  // crashed (ClpPresolve::gutsOfPresolvedModel) on tight training chains.
  std::vector<const char *> argv = {
      "lms-plan",     "-log", logLevel.c_str(), "-preprocess", "off",
      "-presolve",    "off",  "-timeMode",      "elapsed",     "-sec",
      seconds.c_str()};
  // Where every cost is a whole number, two plans differ by a multiple of
  // their greatest common divisor: a node whose bound is within less than
  // that of the incumbent holds no better plan, and CBC may prune it.
  std::string increment;
  std::vector<double> costs;
  for (double coefficient : milp.objective)
    if (coefficient != 0)
      costs.push_back(coefficient / scale);
  if (double step = rematCostStep(costs); step > 0) {
    increment = llvm::formatv("{0:e}", 0.999 * step * scale).str();
    argv.push_back("-increment");
    argv.push_back(increment.c_str());
  }
  argv.push_back("-solve");
  argv.push_back("-quit");
  CbcMain0(model);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model);

  double bound = model.getBestPossibleObjValue() / scale;
  LLVM_DEBUG(llvm::dbgs() << "cbc: status " << model.status() << " secondary "
                          << model.secondaryStatus() << " obj "
                          << model.getObjValue() << " bound " << bound
                          << " warm " << (warm ? warm->computeCost : -1.0)
                          << "\n");
  CbcOutcome outcome;
  outcome.bound = bound;
  outcome.provenInfeasible = model.isProvenInfeasible();
  // Stopped by the event handler between finding a point and checking it,
  // CBC can hand back one that is not a solution (rows violated by 0.9,
  // binaries at 0.22: seen on a 21-op graph stopped at 0.2 s). Only a point
  // that satisfies every row and is integral is kept; otherwise the MIP
  // start stands.
  if (const double *point = model.bestSolution()) {
    if (milp.isSolution(point)) {
      outcome.solution.assign(point, point + milp.colLower.size());
      outcome.provenOptimal = model.isProvenOptimal();
    } else {
      LLVM_DEBUG(llvm::dbgs() << "cbc: its best point is not a solution; "
                                 "keeping the MIP start\n");
    }
  }
  return outcome;
}

llvm::Expected<RematResult> lms::planRematExact(const Graph &graph,
                                                uint64_t budget,
                                                const RematOptions &options) {
  detail::Stopwatch stopwatch;
  // The heuristic first: the MIP start, and the answer for graphs too large
  // for the MILP.
  RematOptions heuristicOptions = options;
  int n = static_cast<int>(graph.numOps());
  bool milp = n <= static_cast<int>(kExactMaxOps);
  heuristicOptions.timeLimitSeconds =
      milp ? std::min(5.0, std::max(0.05, 0.1 * options.timeLimitSeconds))
           : options.timeLimitSeconds;
  llvm::Expected<RematResult> heuristic =
      planRematHeuristic(graph, budget, heuristicOptions);
  if (!milp) {
    if (heuristic)
      heuristic->method = "exact (the heuristic: too large for the MILP)";
    return heuristic;
  }
  std::optional<RematResult> warm;
  if (heuristic)
    warm = std::move(*heuristic);
  else
    llvm::consumeError(heuristic.takeError());

  std::vector<int64_t> argumentBytes;
  std::vector<Unit> units = buildUnits(graph, options.device, argumentBytes);
  // The objective in units that keep CBC's coefficients well scaled (it
  // asserts on coefficients of 1e25 and more, and its tolerances are
  // absolute): the costliest op costs 1000.
  double maxCost = 0;
  for (const Unit &unit : units)
    maxCost = std::max(maxCost, unit.cost);
  double scale = maxCost > 0 && std::isfinite(maxCost) ? 1000.0 / maxCost : 1;

  CheckmateMilp model(units, argumentBytes, budget, scale);
  CbcOutcome outcome =
      solveWithCbc(model, graph, warm, options, stopwatch, scale);

  std::optional<RematResult> exact;
  if (!outcome.solution.empty()) {
    std::vector<std::vector<int>> computed;
    std::vector<std::vector<uint8_t>> keep;
    model.stagesOf(outcome.solution.data(), computed, keep);
    // A solution that decodes to a plan over the budget is a fault of the
    // formulation: reported, not hidden behind the MIP start.
    llvm::Expected<RematResult> result =
        detail::finishPlan(graph, emitStages(graph, units, computed, keep),
                           budget, options.device, "exact");
    if (!result)
      return result.takeError();
    exact = std::move(*result);
  }
  std::optional<RematResult> best;
  if (exact && (!warm || exact->computeCost <= warm->computeCost + 1e-9))
    best = std::move(exact);
  else if (warm)
    best = std::move(warm);
  if (!best) {
    if (outcome.provenInfeasible)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("no plan fits {0} bytes: the MILP is infeasible "
                        "(proven)",
                        budget)
              .str());
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no plan found within the time limit (neither the heuristic nor the "
        "MILP)");
  }
  best->method = "exact";
  double lowerBound =
      outcome.provenOptimal
          ? best->computeCost
          : std::max(outcome.bound, scheduleCost(graph, options.device));
  best->lowerBound = std::min(lowerBound, best->computeCost);
  best->optimal = outcome.provenOptimal ||
                  best->computeCost <= *best->lowerBound * (1 + 1e-9) + 1e-9;
  return std::move(*best);
}

#else

llvm::Expected<RematResult> lms::planRematExact(const Graph &graph,
                                                uint64_t budget,
                                                const RematOptions &options) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "this build has no MILP solver (install coinor-libcbc-dev and "
      "reconfigure)");
}

#endif
