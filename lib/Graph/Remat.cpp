//===- Remat.cpp - Rematerialization planners -----------------------------===//
//
// One simulation engine runs the schedule order with recomputation on demand;
// the planners differ in how it chooses what to free:
//  - by memory pressure, with a score per tensor (the heuristic);
//  - eagerly at every gap of a non-checkpoint tensor (Chen's baselines).
// The local search perturbs the heuristic's scores.
//
//===----------------------------------------------------------------------===//

#include "LMS/Graph/Remat.h"
#include "LMS/Graph/Swap.h"
#include "RematInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

using namespace lms;

char RematFailure::ID = 0;

OpIndex lms::failedOp(llvm::Error &error) {
  OpIndex op = -1;
  error = llvm::handleErrors(
      std::move(error),
      [&](std::unique_ptr<RematFailure> failure) -> llvm::Error {
        op = failure->op;
        return llvm::Error(std::move(failure));
      });
  return op;
}

double lms::opCost(const Graph &graph, OpIndex op, const DeviceSpec *device) {
  const OpCost &cost = graph.op(op).cost;
  if (cost.seconds)
    return *cost.seconds;
  if (device)
    return device->computeSeconds(cost);
  return cost.flops;
}

double lms::scheduleCost(const Graph &graph, const DeviceSpec *device) {
  double total = 0;
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i)
    total += opCost(graph, i, device);
  return total;
}

uint64_t lms::autoSearchIterations(const Graph &graph) {
  uint64_t ops = std::max<uint64_t>(1, graph.numOps());
  return std::clamp<uint64_t>(2000000 / ops, 100, 20000);
}

double lms::rematCostStep(llvm::ArrayRef<double> costs) {
  uint64_t divisor = 0;
  for (double cost : costs) {
    if (cost == 0)
      continue;
    double whole = std::round(std::abs(cost));
    if (whole < 1 || whole > 1e15 ||
        std::abs(std::abs(cost) - whole) > 1e-9 * whole)
      return 0;
    divisor = std::gcd(divisor, static_cast<uint64_t>(whole));
  }
  return static_cast<double>(divisor);
}

uint64_t lms::rematLowerBound(const Graph &graph) {
  return std::max(minimumFeasibleBytes(graph).first, entryBytes(graph));
}

namespace {

/// The simulation engine.
class Engine {
public:
  /// How tensors are chosen for freeing.
  enum class Mode {
    /// Free only under memory pressure, lowest score first.
    Pressure,
    /// Free every non-checkpoint tensor at each gap in its uses; no budget.
    Eager,
  };

  Engine(const Graph &graph, const DeviceSpec *device)
      : graph(graph), device(device), numOps(graph.numOps()),
        numTensors(graph.numTensors()) {
    cost.resize(numOps);
    for (OpIndex i = 0; i < static_cast<OpIndex>(numOps); ++i)
      cost[i] = opCost(graph, i, device);
    evictable.assign(numTensors, 0);
    std::vector<uint8_t> recomputable = detail::recomputableOps(graph);
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(numTensors); ++t) {
      const Tensor &tensor = graph.tensor(t);
      evictable[t] = tensor.space == MemorySpace::Device &&
                     tensor.producer >= 0 && !tensor.liveOut &&
                     recomputable[tensor.producer];
    }
    // A recomputation needs the producer's inputs again: a tensor is only
    // evictable when each of them stays available (live-out, on the host)
    // or can be recomputed too. Producers come first in schedule order.
    for (OpIndex i = 0; i < static_cast<OpIndex>(numOps); ++i) {
      bool inputsAvailable = true;
      for (TensorIndex input : graph.op(i).inputs) {
        const Tensor &in = graph.tensor(input);
        // Arguments stay resident in this engine's plans (see run()).
        inputsAvailable &= in.space == MemorySpace::Host || in.liveOut ||
                           in.producer == kEntry || evictable[input] != 0;
      }
      if (!inputsAvailable)
        for (TensorIndex t : graph.op(i).outputs)
          evictable[t] = 0;
    }
  }

  /// Runs the schedule. `weights` scale the pressure scores (lower score:
  /// freed first); `checkpoint` marks the tensors Eager mode keeps.
  bool run(Mode mode, uint64_t budget, const std::vector<double> *weights,
           const std::vector<uint8_t> *checkpoint, bool closure = true) {
    this->mode = mode;
    this->closure = closure;
    this->budget = budget;
    this->weights = weights;
    this->checkpoint = checkpoint;
    plan.clear();
    totalCost = 0;
    failure.clear();
    failedNeeds.clear();
    stopped = false;
    resident.assign(numTensors, 0);
    residentAt.assign(numTensors, -1);
    residentVec.clear();
    locks.assign(numTensors, 0);
    nextUser.assign(numTensors, 0);
    inClosure.assign(numOps, 0);
    visited.assign(numOps, 0);
    stamp = 0;
    used = 0;
    peak = 0;
    for (TensorIndex t = 0; t < static_cast<TensorIndex>(numTensors); ++t) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.producer != kEntry || tensor.space != MemorySpace::Device)
        continue;
      if (graph.lastUse(t) == kEntry && !tensor.liveOut) {
        plan.push_back(Step::free(t));
        continue;
      }
      markResident(t);
      used += tensor.bytes;
    }
    peak = used;
    if (mode == Mode::Pressure && used > budget) {
      failure = "the arguments alone exceed the budget";
      return false;
    }
    for (stage = 0; stage < static_cast<OpIndex>(numOps); ++stage) {
      if (!(closure ? computeClosure(stage) : computeWithInputs(stage)))
        return false;
      releaseAfterStage();
    }
    return true;
  }

  const Graph &graph;
  const DeviceSpec *device;
  size_t numOps, numTensors;
  std::vector<double> cost;
  std::vector<uint8_t> evictable;

  // Results.
  /// On failure, the tensors the failing stage had to recompute: protecting
  /// them earlier (a higher weight) is the repair.
  std::vector<TensorIndex> failedNeeds;
  Plan plan;
  double totalCost = 0;
  uint64_t peak = 0;
  std::string failure;
  /// The op at which the run failed (-1: none).
  OpIndex failureOp = -1;
  /// When set, read every 64 evictions: a run that it stops fails (the time
  /// limit of the search; one run on a large graph can take seconds).
  std::function<bool()> stop;
  /// Whether `stop` ended the last run.
  bool stopped = false;

private:
  /// Whether `stop` says to end the run now (read every 64 calls).
  bool shouldStop() {
    if (!stop || (++stopCheck & 63) != 0)
      return false;
    stopped = stopped || stop();
    return stopped;
  }
  uint64_t stopCheck = 0;

  /// The first use of `t` at or after the current stage (numOps: none).
  OpIndex nextUse(TensorIndex t) {
    const auto &users = graph.tensor(t).users;
    size_t &i = nextUser[t];
    while (i < users.size() && users[i] < stage)
      ++i;
    return i < users.size() ? users[i] : static_cast<OpIndex>(numOps);
  }

  double score(TensorIndex t) {
    OpIndex next = nextUse(t);
    if (next >= static_cast<OpIndex>(numOps))
      return -1; // dead: free first
    double recompute = cascadeCost(t);
    double distance = static_cast<double>(next - stage + 1);
    double s =
        recompute / (static_cast<double>(graph.tensor(t).bytes) * distance);
    if (weights)
      s *= (*weights)[t];
    return s;
  }

  /// The cost of recomputing `t` now: its producer and, transitively, the
  /// producers of inputs that are not resident (each once; DTR's evicted
  /// neighbourhood), visiting at most a bounded number of ops.
  double cascadeCost(TensorIndex t) {
    ++stamp;
    double total = 0;
    cascade.clear();
    cascade.push_back(graph.tensor(t).producer);
    visited[graph.tensor(t).producer] = stamp;
    for (size_t i = 0; i < cascade.size() && i < 48; ++i) {
      OpIndex op = cascade[i];
      total += cost[op];
      for (TensorIndex input : graph.op(op).inputs) {
        OpIndex producer = graph.tensor(input).producer;
        if (resident[input] || producer < 0 || visited[producer] == stamp)
          continue;
        visited[producer] = stamp;
        cascade.push_back(producer);
      }
    }
    return total;
  }

  void markResident(TensorIndex t) {
    resident[t] = 1;
    residentAt[t] = static_cast<int>(residentVec.size());
    residentVec.push_back(t);
  }

  void free(TensorIndex t) {
    resident[t] = 0;
    int at = residentAt[t];
    residentAt[residentVec.back()] = at;
    std::swap(residentVec[at], residentVec.back());
    residentVec.pop_back();
    residentAt[t] = -1;
    used -= graph.tensor(t).bytes;
    plan.push_back(Step::free(t));
  }

  /// Frees resident tensors until `need` more bytes fit.
  bool makeRoom(uint64_t need) {
    if (mode == Mode::Eager)
      return true;
    while (used + need > budget) {
      if (shouldStop()) {
        failureOp = stage;
        failure = "stopped by the time limit";
        return false;
      }
      TensorIndex victim = -1;
      double best = std::numeric_limits<double>::infinity();
      for (TensorIndex t : residentList()) {
        if (locks[t] || !evictable[t] || graph.tensor(t).bytes == 0)
          continue;
        double s = score(t);
        if (s < best || (s == best && victim >= 0 &&
                         graph.tensor(t).bytes > graph.tensor(victim).bytes)) {
          best = s;
          victim = t;
        }
      }
      if (victim < 0) {
        failureOp = stage;
        failure = llvm::formatv("at op {0} ('{1}'): {2} bytes are held by "
                                "tensors that cannot be freed and {3} more "
                                "are needed, over the budget of {4}",
                                stage, graph.op(stage).name, used, need, budget)
                      .str();
        return false;
      }
      free(victim);
    }
    return true;
  }

  /// A copy of the resident device tensors (freeing changes the set).
  std::vector<TensorIndex> &residentList() {
    list = residentVec;
    return list;
  }

  /// Computes op `root` after recomputing the ops that produce its missing
  /// inputs, transitively (down to resident tensors), in schedule order, as a
  /// Checkmate stage does. Every input of an op of the stage stays resident
  /// until its last use in the stage; memory pressure frees other tensors.
  bool computeClosure(OpIndex root) {
    std::vector<OpIndex> &ops = closureOps;
    ops.clear();
    ops.push_back(root);
    inClosure[root] = 1;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (TensorIndex input : graph.op(ops[i]).inputs) {
        if (resident[input] || graph.tensor(input).space == MemorySpace::Host)
          continue;
        const Tensor &tensor = graph.tensor(input);
        if (tensor.producer < 0 || !evictable[input]) {
          failure = llvm::formatv("op {0} needs tensor {1}, which was freed "
                                  "and cannot be recomputed",
                                  ops[i], input)
                        .str();
          for (OpIndex op : ops)
            inClosure[op] = 0;
          return false;
        }
        if (!inClosure[tensor.producer]) {
          inClosure[tensor.producer] = 1;
          ops.push_back(tensor.producer);
        }
      }
    }
    std::sort(ops.begin(), ops.end());
    for (OpIndex op : ops) {
      inClosure[op] = 0;
      for (TensorIndex input : graph.op(op).inputs)
        ++locks[input];
    }
    for (OpIndex op : ops) {
      const Op &o = graph.op(op);
      uint64_t need = std::max<int64_t>(o.transientBytes, 0);
      for (TensorIndex t : o.outputs)
        if (!resident[t] && graph.tensor(t).space == MemorySpace::Device)
          need += graph.tensor(t).bytes;
      if (!makeRoom(need)) {
        for (OpIndex rest : ops)
          if (rest != root)
            for (TensorIndex t : graph.op(rest).outputs)
              failedNeeds.push_back(t);
        for (OpIndex rest : ops)
          if (rest >= op)
            for (TensorIndex input : graph.op(rest).inputs)
              --locks[input];
        return false;
      }
      plan.push_back(Step::compute(op));
      totalCost += cost[op];
      peak = std::max(peak, used + need);
      for (TensorIndex t : o.outputs)
        if (!resident[t] && graph.tensor(t).space == MemorySpace::Device) {
          markResident(t);
          used += graph.tensor(t).bytes;
        }
      for (TensorIndex input : o.inputs)
        --locks[input];
    }
    return true;
  }

  /// Computes op `root` after making its inputs resident, recomputing
  /// producers on demand (an explicit stack: chains can be long).
  bool computeWithInputs(OpIndex root) {
    struct Frame {
      OpIndex op;
      size_t nextInput;
      std::vector<uint8_t> locked;
    };
    std::vector<Frame> stack;
    // Every input of an op on the stack that is resident stays resident
    // while the op waits for its other inputs: recomputing one input must not
    // evict another (that could recompute forever).
    auto push = [&](OpIndex op) {
      Frame frame{op, 0, {}};
      const Op &o = graph.op(op);
      frame.locked.assign(o.inputs.size(), 0);
      for (size_t k = 0; k < o.inputs.size(); ++k)
        if (resident[o.inputs[k]] ||
            graph.tensor(o.inputs[k]).space == MemorySpace::Host) {
          ++locks[o.inputs[k]];
          frame.locked[k] = 1;
        }
      stack.push_back(std::move(frame));
    };
    push(root);
    size_t budgetOfSteps = plan.size() + 64 * numOps + 1024;
    while (!stack.empty()) {
      Frame &frame = stack.back();
      const Op &op = graph.op(frame.op);
      if (frame.nextInput < op.inputs.size()) {
        size_t k = frame.nextInput;
        TensorIndex input = op.inputs[k];
        if (frame.locked[k]) {
          ++frame.nextInput;
          continue;
        }
        if (resident[input]) {
          ++locks[input];
          frame.locked[k] = 1;
          ++frame.nextInput;
          continue;
        }
        const Tensor &tensor = graph.tensor(input);
        if (tensor.producer < 0 || !evictable[input]) {
          failure = llvm::formatv("op {0} needs tensor {1}, which was freed "
                                  "and cannot be recomputed",
                                  frame.op, input)
                        .str();
          return false;
        }
        if (stack.size() > numOps + 1 || plan.size() > budgetOfSteps) {
          for (const Frame &f : stack)
            if (f.op != root)
              for (TensorIndex t : graph.op(f.op).outputs)
                failedNeeds.push_back(t);
          failure = "recomputation does not converge at this budget";
          return false;
        }
        push(tensor.producer);
        continue;
      }
      uint64_t need = std::max<int64_t>(op.transientBytes, 0);
      for (TensorIndex t : op.outputs)
        if (!resident[t] && graph.tensor(t).space == MemorySpace::Device)
          need += graph.tensor(t).bytes;
      if (!makeRoom(need)) {
        for (const Frame &f : stack)
          if (f.op != root)
            for (TensorIndex t : graph.op(f.op).outputs)
              failedNeeds.push_back(t);
        return false;
      }
      plan.push_back(Step::compute(frame.op));
      totalCost += cost[frame.op];
      uint64_t during = used + need;
      for (TensorIndex t : op.outputs)
        if (!resident[t] && graph.tensor(t).space == MemorySpace::Device) {
          markResident(t);
          used += graph.tensor(t).bytes;
        }
      peak = std::max(peak, during);
      for (TensorIndex t : op.inputs)
        --locks[t];
      stack.pop_back();
    }
    return true;
  }

  /// After a stage: free what is dead, and in Eager mode what has a gap.
  void releaseAfterStage() {
    ++stage; // next uses are counted from the next stage
    const Op &op = graph.op(stage - 1);
    auto consider = [&](TensorIndex t) {
      // Arguments stay: a recomputation may read them again.
      if (!resident[t] || graph.tensor(t).space != MemorySpace::Device ||
          graph.tensor(t).liveOut || graph.tensor(t).producer == kEntry)
        return;
      OpIndex next = nextUse(t);
      bool dead = next >= static_cast<OpIndex>(numOps);
      bool gap = mode == Mode::Eager && evictable[t] && checkpoint &&
                 !(*checkpoint)[t] && next > stage;
      if (dead || gap)
        free(t);
    };
    for (TensorIndex t : op.inputs)
      consider(t);
    for (TensorIndex t : op.outputs)
      consider(t);
    if (mode == Mode::Eager && checkpoint)
      for (TensorIndex t : residentList())
        consider(t);
    --stage;
  }

  Mode mode = Mode::Pressure;
  uint64_t budget = 0;
  const std::vector<double> *weights = nullptr;
  const std::vector<uint8_t> *checkpoint = nullptr;
  OpIndex stage = 0;
  std::vector<uint8_t> resident;
  std::vector<int> residentAt;
  std::vector<TensorIndex> residentVec;
  std::vector<int> locks;
  std::vector<size_t> nextUser;
  std::vector<TensorIndex> list;
  std::vector<uint8_t> inClosure;
  std::vector<OpIndex> closureOps;
  std::vector<OpIndex> cascade;
  std::vector<uint32_t> visited;
  uint32_t stamp = 0;
  bool closure = true;
  uint64_t used = 0;
};

llvm::Error infeasible(const llvm::Twine &message, OpIndex op = -1) {
  return llvm::make_error<RematFailure>(message.str(), op);
}

using detail::noPlanInTime;

/// Fails when `budget` is below rematLowerBound(graph).
llvm::Error checkLowerBound(const Graph &graph, uint64_t budget) {
  uint64_t lower = rematLowerBound(graph);
  if (budget >= lower)
    return llvm::Error::success();
  return infeasible(llvm::formatv("budget {0} is below the smallest feasible "
                                  "budget {1}",
                                  budget, lower)
                        .str());
}

} // namespace

std::vector<uint8_t> lms::detail::recomputableOps(const Graph &graph) {
  std::vector<uint8_t> updated(graph.numTensors(), 0);
  for (const Op &op : graph.getOps())
    for (TensorIndex t : op.updates)
      updated[t] = 1;
  std::vector<uint8_t> result(graph.numOps(), 0);
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    const Op &op = graph.op(i);
    bool ok =
        op.kind == OpKind::Compute && op.updates.empty() && op.recomputable;
    for (TensorIndex t : op.inputs)
      ok &= !updated[t];
    for (TensorIndex t : op.outputs)
      ok &= !updated[t];
    result[i] = ok;
  }
  return result;
}

llvm::Error lms::detail::noPlanInTime(double seconds) {
  return llvm::make_error<RematFailure>(
      llvm::formatv("no plan within the time limit of {0} s (the search had "
                    "no complete plan yet; raise the limit, or leave it unset: "
                    "the search then stops on its work limit)",
                    llvm::format("%g", seconds))
          .str());
}

llvm::Expected<RematResult>
lms::detail::finishPlan(const Graph &graph, Plan plan, uint64_t budget,
                        const DeviceSpec *device, std::string method,
                        const std::vector<uint64_t> &stageBudgets) {
  bool staged = stageBudgets.size() == graph.numOps();
  llvm::Expected<MemoryProfile> profile =
      evaluatePlan(graph, plan, EvalOptions{/*recordSteps=*/staged});
  if (!profile)
    return infeasible("internal error: the " + method + " plan is invalid: " +
                      llvm::toString(profile.takeError()));
  RematResult result;
  result.peakBytes = profile->peakBytes;
  for (const Step &step : plan)
    if (step.kind == Step::Compute)
      result.computeCost += opCost(graph, step.index, device);
  result.plan = std::move(plan);
  result.method = std::move(method);
  if (staged) {
    // Backwards: the stage of a computation is the next first one.
    std::vector<uint8_t> seen(graph.numOps(), 0);
    std::vector<OpIndex> firstAt(profile->computeSteps.size(), -1);
    for (size_t i = 0; i < profile->computeSteps.size(); ++i) {
      OpIndex op = profile->computeSteps[i].first;
      if (!seen[op])
        firstAt[i] = op;
      seen[op] = 1;
    }
    OpIndex stage = static_cast<OpIndex>(graph.numOps()) - 1;
    for (size_t i = profile->computeSteps.size(); i-- > 0;) {
      if (firstAt[i] >= 0)
        stage = firstAt[i];
      uint64_t during = profile->computeSteps[i].second.during;
      if (during > std::max(budget, stageBudgets[stage]))
        return infeasible(
            llvm::formatv("the {0} plan needs {1} bytes at stage {2}, over "
                          "its budget of {3}",
                          result.method, during, stage, stageBudgets[stage])
                .str());
    }
    return result;
  }
  if (result.peakBytes > budget)
    return infeasible(llvm::formatv("the {0} plan peaks at {1} bytes, over "
                                    "the budget of {2}",
                                    result.method, result.peakBytes, budget)
                          .str());
  return result;
}

namespace {

llvm::Expected<RematResult> finish(const Graph &graph, Plan plan,
                                   uint64_t budget, const DeviceSpec *device,
                                   std::string method) {
  return detail::finishPlan(graph, std::move(plan), budget, device,
                            std::move(method));
}

/// Outputs of forward ops, for Chen's baselines (every op unless
/// options.backwardOps says otherwise).
std::vector<uint8_t> forwardTensors(const Graph &graph,
                                    const RematOptions &options) {
  std::vector<uint8_t> forward(graph.numTensors(), 0);
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    bool isForward = options.backwardOps.empty() || !options.backwardOps[i];
    for (TensorIndex t : graph.op(i).outputs)
      forward[t] = isForward;
  }
  return forward;
}

} // namespace

std::vector<uint8_t> lms::backwardOpsOf(const Graph &graph, TensorIndex loss) {
  // The ops that write each tensor: its producer and the ops that update
  // it in place.
  std::vector<llvm::SmallVector<OpIndex, 1>> writers(graph.numTensors());
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i) {
    for (TensorIndex t : graph.op(i).outputs)
      writers[t].push_back(i);
    for (TensorIndex t : graph.op(i).updates)
      writers[t].push_back(i);
  }
  std::vector<uint8_t> forward(graph.numOps(), 0);
  std::vector<OpIndex> stack;
  auto reach = [&](TensorIndex t) {
    for (OpIndex writer : writers[t])
      if (!forward[writer]) {
        forward[writer] = 1;
        stack.push_back(writer);
      }
  };
  reach(loss);
  while (!stack.empty()) {
    OpIndex op = stack.back();
    stack.pop_back();
    for (TensorIndex t : graph.op(op).inputs)
      reach(t);
  }
  std::vector<uint8_t> backward(graph.numOps(), 0);
  for (size_t i = 0; i < backward.size(); ++i)
    backward[i] = !forward[i];
  return backward;
}

std::vector<uint8_t> lms::opsAfterLoss(const Graph &graph, TensorIndex loss) {
  // The last op that writes the loss: its producer, or an op that updates
  // it in place.
  OpIndex last = graph.tensor(loss).producer;
  for (OpIndex i = std::max<OpIndex>(last, 0);
       i < static_cast<OpIndex>(graph.numOps()); ++i)
    if (llvm::is_contained(graph.op(i).updates, loss))
      last = i;
  std::vector<uint8_t> after(graph.numOps(), 0);
  for (OpIndex i = last + 1; i < static_cast<OpIndex>(graph.numOps()); ++i)
    after[i] = 1;
  return after;
}

llvm::Expected<RematResult>
lms::planCheckpointAll(const Graph &graph, uint64_t budget,
                       const RematOptions &options) {
  return finish(graph, referencePlan(graph), budget, options.device,
                "checkpoint-all");
}

/// Runs Chen's eager plan for a checkpoint set; returns cost and peak.
static std::optional<std::pair<Plan, uint64_t>>
chenPlan(Engine &engine, const std::vector<uint8_t> &checkpoint) {
  if (!engine.run(Engine::Mode::Eager, UINT64_MAX, nullptr, &checkpoint))
    return std::nullopt;
  return std::make_pair(engine.plan, engine.peak);
}

llvm::Expected<RematResult> lms::planChenSqrt(const Graph &graph,
                                              uint64_t budget,
                                              const RematOptions &options) {
  Engine engine(graph, options.device);
  std::vector<uint8_t> forward = forwardTensors(graph, options);
  // Every ceil(sqrt(n))-th forward tensor is a checkpoint; the others are
  // recomputed from them when needed again.
  std::vector<TensorIndex> candidates;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (forward[t] && engine.evictable[t])
      candidates.push_back(t);
  size_t stride = std::max<size_t>(
      1, static_cast<size_t>(std::ceil(std::sqrt(candidates.size()))));
  std::vector<uint8_t> checkpoint(graph.numTensors(), 1);
  for (size_t i = 0; i < candidates.size(); ++i)
    checkpoint[candidates[i]] = (i + 1) % stride == 0;
  std::optional<std::pair<Plan, uint64_t>> plan = chenPlan(engine, checkpoint);
  if (!plan)
    return infeasible("chen-sqrt: " + engine.failure, engine.failureOp);
  return finish(graph, std::move(plan->first), budget, options.device,
                "chen-sqrt");
}

namespace {

/// The plan that computes `order` (ops of `graph`, an op again where it is
/// recomputed): each read is of the latest computation of the tensor, and a
/// computation is freed after its last read (live-out tensors in their last
/// computation stay).
Plan planOfOrder(const Graph &graph, llvm::ArrayRef<OpIndex> order) {
  struct Version {
    TensorIndex tensor;
    int computedAt; // -1: an argument
    int lastRead = -1;
  };
  std::vector<Version> versions;
  std::vector<int> current(graph.numTensors(), -1);
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (graph.tensor(t).producer == kEntry) {
      current[t] = static_cast<int>(versions.size());
      versions.push_back({t, -1});
    }
  for (size_t q = 0; q < order.size(); ++q) {
    const Op &op = graph.op(order[q]);
    for (TensorIndex t : op.inputs)
      if (current[t] >= 0)
        versions[current[t]].lastRead = static_cast<int>(q);
    for (TensorIndex t : op.outputs) {
      current[t] = static_cast<int>(versions.size());
      versions.push_back({t, static_cast<int>(q)});
    }
  }
  auto freeStep = [&](TensorIndex t) {
    return graph.tensor(t).space == MemorySpace::Host ? Step::freeHost(t)
                                                      : Step::free(t);
  };
  Plan plan;
  std::vector<llvm::SmallVector<TensorIndex, 2>> freeAfter(order.size());
  for (size_t v = 0; v < versions.size(); ++v) {
    const Version &version = versions[v];
    if (graph.tensor(version.tensor).liveOut &&
        current[version.tensor] == static_cast<int>(v))
      continue;
    int last = std::max(version.lastRead, version.computedAt);
    if (last < 0)
      plan.push_back(freeStep(version.tensor));
    else
      freeAfter[last].push_back(version.tensor);
  }
  for (size_t q = 0; q < order.size(); ++q) {
    plan.push_back(Step::compute(order[q]));
    for (TensorIndex t : freeAfter[q])
      plan.push_back(freeStep(t));
  }
  return plan;
}

/// The compute order of torch.utils.checkpoint over `segments` segments of
/// the forward ops `forward` (in schedule order): the last segment keeps
/// its tensors; in the others, a tensor no later segment reads is dropped
/// after its segment, and the first read after it recomputes what the
/// segment's later reads need, once. `recomputes` counts the ops added.
std::vector<OpIndex> segmentsOrder(const Graph &graph,
                                   llvm::ArrayRef<OpIndex> forward,
                                   const std::vector<uint8_t> &recomputable,
                                   size_t segments, size_t &recomputes) {
  size_t numOps = graph.numOps();
  std::vector<int> segmentOf(numOps, -1);
  std::vector<OpIndex> segmentEnd(segments, -1);
  for (size_t k = 0; k < forward.size(); ++k) {
    int segment = static_cast<int>(k * segments / forward.size());
    segmentOf[forward[k]] = segment;
    segmentEnd[segment] = forward[k];
  }
  // Dropped: made by a recomputable op of a segment before the last, on the
  // device, not live-out, read by no forward op of a later segment.
  std::vector<uint8_t> dropped(graph.numTensors(), 0);
  for (OpIndex op : forward) {
    int segment = segmentOf[op];
    if (segment + 1 >= static_cast<int>(segments) || !recomputable[op])
      continue;
    for (TensorIndex t : graph.op(op).outputs) {
      const Tensor &tensor = graph.tensor(t);
      if (tensor.space != MemorySpace::Device || tensor.liveOut ||
          tensor.bytes == 0)
        continue;
      dropped[t] = llvm::none_of(tensor.users, [&](OpIndex user) {
        return segmentOf[user] > segment;
      });
    }
  }
  std::vector<uint8_t> recomputed(segments, 0), needed(numOps, 0);
  std::vector<OpIndex> order;
  order.reserve(numOps);
  recomputes = 0;
  for (OpIndex i = 0; i < static_cast<OpIndex>(numOps); ++i) {
    for (TensorIndex t : graph.op(i).inputs) {
      if (!dropped[t])
        continue;
      int segment = segmentOf[graph.tensor(t).producer];
      if (i <= segmentEnd[segment] || recomputed[segment])
        continue;
      recomputed[segment] = 1;
      // The ops of the segment whose dropped outputs are read from here
      // on, and the dropped inputs they need, transitively.
      std::vector<OpIndex> stack;
      for (OpIndex op : forward) {
        if (segmentOf[op] != segment)
          continue;
        for (TensorIndex out : graph.op(op).outputs)
          if (dropped[out] && graph.tensor(out).users.back() >= i &&
              !needed[op]) {
            needed[op] = 1;
            stack.push_back(op);
          }
      }
      while (!stack.empty()) {
        OpIndex op = stack.back();
        stack.pop_back();
        for (TensorIndex in : graph.op(op).inputs) {
          OpIndex producer = graph.tensor(in).producer;
          if (dropped[in] && !needed[producer]) {
            needed[producer] = 1;
            stack.push_back(producer);
          }
        }
      }
      for (OpIndex op : forward)
        if (needed[op]) {
          order.push_back(op);
          needed[op] = 0;
          ++recomputes;
        }
    }
    order.push_back(i);
  }
  return order;
}

} // namespace

llvm::Expected<RematResult> lms::planSegments(const Graph &graph,
                                              uint64_t budget,
                                              const RematOptions &options) {
  std::vector<uint8_t> recomputable = detail::recomputableOps(graph);
  std::vector<OpIndex> forward;
  for (OpIndex i = 0; i < static_cast<OpIndex>(graph.numOps()); ++i)
    if (!options.backwardOps.empty() && !options.backwardOps[i])
      forward.push_back(i);
  // The segment counts tried: every power of two, and the square roots of
  // Chen et al.; the lowest peak wins (ties: fewer recomputations, then
  // fewer segments). One segment is the schedule itself.
  std::vector<size_t> counts = {1};
  for (size_t k = 2; k <= forward.size(); k *= 2)
    counts.push_back(k);
  counts.push_back(static_cast<size_t>(
      std::ceil(std::sqrt(static_cast<double>(forward.size())))));
  llvm::sort(counts);
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::optional<Plan> best;
  uint64_t bestPeak = 0;
  size_t bestRecomputes = 0;
  for (size_t k : counts) {
    if (k == 0 || k > std::max<size_t>(1, forward.size()))
      continue;
    size_t recomputes = 0;
    Plan plan =
        k == 1 ? referencePlan(graph)
               : planOfOrder(graph, segmentsOrder(graph, forward, recomputable,
                                                  k, recomputes));
    llvm::Expected<MemoryProfile> profile =
        evaluatePlan(graph, plan, EvalOptions{/*recordSteps=*/false});
    if (!profile)
      return infeasible("internal error: the segments plan is invalid: " +
                        llvm::toString(profile.takeError()));
    if (!best || profile->peakBytes < bestPeak ||
        (profile->peakBytes == bestPeak && recomputes < bestRecomputes)) {
      best = std::move(plan);
      bestPeak = profile->peakBytes;
      bestRecomputes = recomputes;
    }
  }
  return finish(graph, std::move(*best), budget, options.device, "segments");
}

llvm::Expected<RematResult> lms::planChenGreedy(const Graph &graph,
                                                uint64_t budget,
                                                const RematOptions &options) {
  Engine engine(graph, options.device);
  std::vector<uint8_t> forward = forwardTensors(graph, options);
  std::vector<TensorIndex> candidates;
  uint64_t total = 0, smallest = UINT64_MAX;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (forward[t] && engine.evictable[t]) {
      candidates.push_back(t);
      total += graph.tensor(t).bytes;
      smallest = std::min(smallest, graph.tensor(t).bytes);
    }
  if (candidates.empty())
    return planCheckpointAll(graph, budget, options);
  // Chen's greedy: a checkpoint whenever the memory since the last one
  // exceeds b; b is searched over a geometric range, keeping the cheapest
  // plan that fits.
  std::optional<RematResult> best;
  double lo = std::max<double>(1, smallest), hi = std::max<double>(lo, total);
  for (int k = 0; k <= 48; ++k) {
    double b = lo * std::pow(hi / lo, k / 48.0);
    std::vector<uint8_t> checkpoint(graph.numTensors(), 1);
    double accumulated = 0;
    for (TensorIndex t : candidates) {
      accumulated += graph.tensor(t).bytes;
      if (accumulated > b) {
        accumulated = 0;
      } else {
        checkpoint[t] = 0;
      }
    }
    std::optional<std::pair<Plan, uint64_t>> plan =
        chenPlan(engine, checkpoint);
    if (!plan || plan->second > budget)
      continue;
    llvm::Expected<RematResult> result = finish(
        graph, std::move(plan->first), budget, options.device, "chen-greedy");
    if (!result) {
      llvm::consumeError(result.takeError());
      continue;
    }
    if (!best || result->computeCost < best->computeCost)
      best = std::move(*result);
  }
  if (!best)
    return infeasible("chen-greedy: no threshold fits the budget");
  return std::move(*best);
}

llvm::Expected<RematResult> lms::planRematDTR(const Graph &graph,
                                              uint64_t budget,
                                              const RematOptions &options) {
  if (llvm::Error error = checkLowerBound(graph, budget))
    return std::move(error);
  // The search below runs an engine pass per iteration: fewer of them than
  // the interval search's.
  detail::SearchLimits limits(
      options, std::max<uint64_t>(20, autoSearchIterations(graph) / 4));
  auto elapsed = [&] { return limits.elapsed(); };
  Engine engine(graph, options.device);
  engine.stop = [&] { return limits.expired(); };
  std::vector<double> weights(graph.numTensors(), 1.0);
  // Two ways to recompute a stage's missing inputs: all at once in schedule
  // order (Checkmate's stages), or depth-first on demand (DTR's). The better
  // one on the first run is the one the search refines.
  // When a run fails, the tensors its failing stage had to recompute were
  // freed too eagerly: raise their weights and run again (a few hundred
  // rounds at most, within the time limit).
  auto runRepaired = [&](bool closure, std::vector<double> &w) {
    for (int round = 0; round < 400; ++round) {
      if (engine.run(Engine::Mode::Pressure, budget, &w, nullptr, closure))
        return true;
      if (engine.failedNeeds.empty() ||
          round >= (graph.numOps() > 20000 ? 2 : 400) || limits.expired())
        return false;
      for (TensorIndex t : engine.failedNeeds)
        w[t] *= 4;
    }
    return false;
  };
  bool closure = true;
  std::optional<double> closureCost, depthFirstCost;
  Plan bestPlan;
  std::vector<double> closureWeights = weights, depthFirstWeights = weights;
  if (runRepaired(true, closureWeights)) {
    closureCost = engine.totalCost;
    bestPlan = engine.plan;
  }
  std::string closureFailure = engine.failure;
  OpIndex closureFailureOp = engine.failureOp;
  if (runRepaired(false, depthFirstWeights) &&
      (!closureCost || engine.totalCost < *closureCost)) {
    depthFirstCost = engine.totalCost;
    bestPlan = engine.plan;
    closure = false;
  }
  if (!closureCost && !depthFirstCost && limits.stoppedByCap())
    return noPlanInTime(options.timeLimitSeconds);
  if (!closureCost && !depthFirstCost)
    return infeasible("heuristic: " + closureFailure +
                          " (depth-first: " + engine.failure + ")",
                      closureFailureOp);
  weights = closure ? closureWeights : depthFirstWeights;
  double bestCost = closure ? *closureCost : *depthFirstCost;
  std::vector<double> bestWeights = weights;
  if (options.progress)
    options.progress({elapsed(), bestCost, 0});

  // Local search over the eviction weights: perturb a few tensors' weights,
  // keep the change when the plan gets no more expensive (with a small
  // annealed tolerance), remember the best plan.
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<TensorIndex> tensors;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (engine.evictable[t] && graph.tensor(t).bytes > 0)
      tensors.push_back(t);
  double currentCost = bestCost;
  std::vector<double> current = weights;
  double schedule = scheduleCost(graph, options.device);
  double minimum = schedule; // every op once
  int iteration = 0;
  while (!tensors.empty() && bestCost > minimum + 1e-9 &&
         limits.allows(static_cast<uint64_t>(iteration))) {
    ++iteration;
    std::vector<double> trial = current;
    std::uniform_int_distribution<size_t> pick(0, tensors.size() - 1);
    int moves = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < moves; ++m) {
      TensorIndex t = tensors[pick(rng)];
      trial[t] *= std::exp(1.5 * noise(rng));
    }
    if (!engine.run(Engine::Mode::Pressure, budget, &trial, nullptr, closure))
      continue;
    double temperature = 0.02 * limits.remaining(iteration);
    if (engine.totalCost <= currentCost * (1.0 + temperature)) {
      current = std::move(trial);
      currentCost = engine.totalCost;
    }
    if (engine.totalCost < bestCost - 1e-9) {
      bestCost = engine.totalCost;
      bestPlan = engine.plan;
      bestWeights = current;
      if (options.progress)
        options.progress({elapsed(), bestCost, 0});
    }
    // Restart from the best now and then.
    if (iteration % 200 == 0) {
      current = bestWeights;
      currentCost = bestCost;
    }
  }
  llvm::Expected<RematResult> result =
      finish(graph, std::move(bestPlan), budget, options.device, "dtr");
  if (result) {
    result->stoppedByTimeLimit = limits.stoppedByCap();
    result->lowerBound = minimum;
    result->optimal = result->computeCost <= minimum + 1e-9;
  }
  return result;
}

llvm::Expected<RematResult>
lms::planRematHeuristic(const Graph &graph, uint64_t budget,
                        const RematOptions &options) {
  if (llvm::Error error = checkLowerBound(graph, budget))
    return std::move(error);
  // The interval search is O(stages) per split: for very large graphs the
  // DTR simulation alone.
  if (graph.numOps() > kIntervalSearchMaxOps)
    return planRematDTR(graph, budget, options);
  detail::Stopwatch stopwatch;
  bool polish = options.polishWindows && options.stageBudgets.empty() &&
                haveConstraintSolver();
  detail::RetentionIntervals planned;
  llvm::Expected<RematResult> intervals = detail::planRematIntervals(
      graph, budget, options, polish ? &planned : nullptr);
  // The polish or the fallback gets the time left (none: the interval
  // search's result).
  RematOptions rest = options;
  rest.timeLimitSeconds = options.timeLimitSeconds - stopwatch.seconds();
  if (!(rest.timeLimitSeconds > 0))
    return intervals;
  if (intervals && polish)
    return detail::polishRematMoccasin(graph, budget, rest,
                                       std::move(*intervals), planned);
  if (intervals)
    return intervals;
  llvm::Error intervalError = intervals.takeError();
  OpIndex op = failedOp(intervalError);
  std::string why = llvm::toString(std::move(intervalError));
  llvm::Expected<RematResult> dtr = planRematDTR(graph, budget, rest);
  if (dtr)
    return dtr;
  llvm::Error dtrError = dtr.takeError();
  if (op < 0)
    op = failedOp(dtrError);
  return infeasible("no plan found: " + why +
                        "; DTR: " + llvm::toString(std::move(dtrError)),
                    op);
}

//===----------------------------------------------------------------------===//
// The planners by name
//===----------------------------------------------------------------------===//

static constexpr std::pair<RematMethod, llvm::StringLiteral> kMethodNames[] = {
    {RematMethod::Heuristic, "heuristic"},
    {RematMethod::Exact, "exact"},
    {RematMethod::Moccasin, "moccasin"},
    {RematMethod::DTR, "dtr"},
    {RematMethod::ChenGreedy, "chen-greedy"},
    {RematMethod::ChenSqrt, "chen-sqrt"},
    {RematMethod::CheckpointAll, "checkpoint-all"},
    {RematMethod::Segments, "segments"},
};

llvm::StringRef lms::rematMethodName(RematMethod method) {
  for (auto [m, name] : kMethodNames)
    if (m == method)
      return name;
  return "unknown";
}

std::optional<RematMethod> lms::parseRematMethod(llvm::StringRef name) {
  for (auto [m, text] : kMethodNames)
    if (text == name)
      return m;
  return std::nullopt;
}

llvm::Expected<RematResult> lms::planRemat(const Graph &graph, uint64_t budget,
                                           RematMethod method,
                                           const RematOptions &options) {
  if (method != RematMethod::Heuristic && !options.stageBudgets.empty()) {
    // Only the heuristic meets a profile; the others meet its floor.
    RematOptions flat = options;
    flat.stageBudgets.clear();
    return planRemat(graph, budget, method, flat);
  }
  switch (method) {
  case RematMethod::Heuristic:
    return planRematHeuristic(graph, budget, options);
  case RematMethod::Exact:
    return planRematExact(graph, budget, options);
  case RematMethod::Moccasin:
    return planRematMoccasin(graph, budget, options);
  case RematMethod::DTR:
    return planRematDTR(graph, budget, options);
  case RematMethod::ChenGreedy:
    return planChenGreedy(graph, budget, options);
  case RematMethod::ChenSqrt:
    return planChenSqrt(graph, budget, options);
  case RematMethod::CheckpointAll:
    return planCheckpointAll(graph, budget, options);
  case RematMethod::Segments:
    return planSegments(graph, budget, options);
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown planner");
}

ContractedGraph lms::contractChains(const Graph &graph,
                                    llvm::ArrayRef<uint8_t> joinsPrevious,
                                    llvm::ArrayRef<uint8_t> recomputable,
                                    const DeviceSpec *device) {
  ContractedGraph result;
  OpIndex n = static_cast<OpIndex>(graph.numOps());
  auto mayRecompute = [&](OpIndex i) {
    return graph.op(i).recomputable &&
           (recomputable.empty() || recomputable[i] != 0);
  };
  auto mayClone = [&](OpIndex i) {
    return recomputable.empty() || recomputable[i] != 0;
  };
  std::vector<int> groupOf(n, -1);
  for (OpIndex i = 0; i < n; ++i) {
    const Op &op = graph.op(i);
    // Op i joins the units that produced the buffers it writes in place
    // when they are among the last units so far and every unit from the
    // first of them on either produced one of those buffers or makes only
    // what op i reads (a pooling op's window): the run becomes one unit.
    int first = -1;
    if (i > 0 && !joinsPrevious.empty() && joinsPrevious[i] && mayClone(i) &&
        !op.updates.empty() && op.kind == OpKind::Compute) {
      int last = groupOf[i - 1];
      std::vector<int> groups;
      for (TensorIndex t : op.updates) {
        OpIndex producer = graph.tensor(t).producer;
        groups.push_back(producer >= 0 ? groupOf[producer] : -1);
      }
      llvm::sort(groups);
      groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
      // Units in between join too when only op i reads what they produce
      // (the window of a pooling op).
      auto readOnlyByOp = [&](int g) {
        for (OpIndex member : result.members[g])
          for (TensorIndex t : graph.op(member).outputs) {
            if (graph.tensor(t).liveOut)
              return false;
            for (OpIndex user : graph.tensor(t).users)
              if (user != i && groupOf[user] != g)
                return false;
          }
        return true;
      };
      bool contiguous = groups.front() >= 0;
      for (int g = groups.front(); contiguous && g <= last; ++g) {
        for (OpIndex member : result.members[g])
          contiguous &= mayClone(member);
        contiguous &= std::binary_search(groups.begin(), groups.end(), g) ||
                      readOnlyByOp(g);
      }
      if (contiguous)
        first = groups.front();
    }
    if (first >= 0) {
      // Merge units first..last and add op i.
      for (size_t g = first + 1; g < result.members.size(); ++g)
        for (OpIndex member : result.members[g]) {
          result.members[first].push_back(member);
          groupOf[member] = first;
        }
      result.members.resize(first + 1);
      groupOf[i] = first;
      result.members.back().push_back(i);
    } else {
      groupOf[i] = static_cast<int>(result.members.size());
      result.members.push_back({i});
    }
  }

  for (const Tensor &tensor : graph.getTensors()) {
    TensorIndex copy =
        result.graph.addTensor(tensor.name, tensor.bytes, tensor.space);
    result.graph.tensor(copy).rank = tensor.rank;
    result.graph.tensor(copy).hostBacked = tensor.hostBacked;
    result.graph.setLiveOut(copy, tensor.liveOut);
  }
  std::vector<uint8_t> produced(graph.numTensors(), 0);
  for (const std::vector<OpIndex> &group : result.members) {
    llvm::SmallVector<TensorIndex, 8> inputs, outputs, updates;
    auto insert = [](llvm::SmallVectorImpl<TensorIndex> &list, TensorIndex t) {
      if (!llvm::is_contained(list, t))
        list.push_back(t);
    };
    OpCost cost;
    double seconds = 0;
    int64_t transient = 0;
    bool unitRecomputable = true;
    for (OpIndex i : group) {
      const Op &op = graph.op(i);
      for (TensorIndex t : op.inputs)
        if (!produced[t])
          insert(inputs, t);
      for (TensorIndex t : op.updates)
        if (!produced[t])
          insert(updates, t);
      for (TensorIndex t : op.outputs) {
        insert(outputs, t);
        produced[t] = 1;
      }
      cost.flops += op.cost.flops;
      cost.bytes += op.cost.bytes;
      seconds += opCost(graph, i, device);
      transient = std::max(transient, op.transientBytes);
      unitRecomputable &= mayRecompute(i);
    }
    // `produced` marks the unit's own outputs only while it is built.
    for (TensorIndex t : outputs)
      produced[t] = 0;
    cost.seconds = seconds;
    const Op &last = graph.op(group.back());
    OpKind kind = group.size() == 1 ? last.kind : OpKind::Compute;
    OpIndex k = result.graph.addOp(last.name, inputs, outputs, cost, kind);
    for (TensorIndex t : updates)
      result.graph.addUpdate(k, t);
    result.graph.setTransientBytes(k, transient);
    result.graph.op(k).recomputable = unitRecomputable && updates.empty();
  }
  return result;
}
