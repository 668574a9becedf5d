//===- Remat.h - Rematerialization planners ---------------------*- C++ -*-===//
//
// Plans that recompute instead of keeping, under the memory model of
// Memory.h: ops run in schedule order ("stages"); before a stage, any input
// that is no longer resident is recomputed (recursively); an output may be
// freed at any time and recomputed later. Cost is the total cost of the
// compute steps (OpCost::seconds, or the device time of the op).
//
// Planners:
//  - checkpoint-all: the schedule order itself (no recomputation);
//  - chen-sqrt: Chen et al.'s sqrt(n) checkpoints on the forward ops;
//  - chen-greedy: Chen et al.'s greedy checkpoints, the threshold searched;
//  - segments: torch.utils.checkpoint over segments of the forward (each
//    segment's dropped tensors recomputed once, in the backward);
//  - heuristic: an offline DTR-style simulation (evict the resident tensor
//    with the least recompute cost per byte and per op until its next use,
//    recompute on demand), improved by a randomized local search over the
//    eviction weights until a time limit;
//  - exact: the Checkmate MILP on CBC (when built with it), warm-started
//    with the heuristic's plan, with a time limit, reporting the incumbent,
//    the bound and the gap as it runs;
//  - moccasin: Moccasin's constraint program (retention intervals, memory
//    as a cumulative constraint) on Gecode (when built with it), warm-started
//    with the heuristic's intervals, improved by large-neighbourhood search,
//    with an optimality proof attempt on small graphs.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_REMAT_H
#define LMS_GRAPH_REMAT_H

#include "LMS/Graph/Device.h"
#include "LMS/Graph/Memory.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace lms {

/// Why a recomputation planner found no plan, and where: the op of the
/// graph at which the memory could not be brought under the budget (-1 when
/// no single op is to blame). Callers that know what the ops stand for
/// point there (the passes put the error on the op in the IR).
class RematFailure : public llvm::ErrorInfo<RematFailure> {
public:
  static char ID;
  RematFailure(std::string message, OpIndex op = -1)
      : message(std::move(message)), op(op) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string message;
  OpIndex op;
};

/// The op a recomputation planner's error names (RematFailure::op), or -1;
/// `error` keeps its contents (it is checked and wrapped again).
OpIndex failedOp(llvm::Error &error);

/// A progress report of a planner that improves over time.
struct RematProgress {
  double seconds = 0;
  /// Best plan's cost so far (infinite before the first).
  double incumbent = 0;
  /// Best lower bound on the optimal cost (0 when unknown).
  double bound = 0;
};

struct RematOptions {
  /// Work limit of the improving planners (search iterations); 0 chooses
  /// one from the graph's size (autoSearchIterations). Plans depend only on
  /// the graph, the budget, the options and this, never on the machine.
  uint64_t searchIterations = 0;
  /// Wall-clock cap in seconds, on top of the work limit (infinite: none).
  /// When it stops a search, RematResult::stoppedByTimeLimit says so: the
  /// plan then depends on the machine's speed and load. The exact planner
  /// (CBC) is always bounded by it.
  double timeLimitSeconds = std::numeric_limits<double>::infinity();
  /// Seed of the randomized local search.
  uint64_t seed = 1;
  /// Called when the incumbent or the bound improves.
  std::function<void(const RematProgress &)> progress;
  /// The device, for ops without a fixed cost (seconds). Null: FLOPs count.
  const DeviceSpec *device = nullptr;
  /// Per op, whether it belongs to the backward pass (Chen's baselines
  /// checkpoint forward outputs only). Empty: all forward.
  std::vector<uint8_t> backwardOps;
  /// Per op, the budget at its stage, at least the planner's `budget`
  /// (empty: `budget` at every stage). Only the heuristic's interval search
  /// uses the room above `budget` (the joint planner's profile: where the
  /// links can carry bytes away, recomputation leaves them to offloading);
  /// its fallbacks, and the other planners, meet `budget` everywhere.
  std::vector<uint64_t> stageBudgets;
  /// The interval search runs a second search whose splits may also
  /// recompute a freed tensor at the latest stage before its next use where
  /// every input is still resident, and keeps the cheaper plan (about twice
  /// the time). On by default; the joint planner turns it off while it
  /// screens mixes, lms-plan with --covered-search=false.
  bool coveredSearch = true;
  /// Where every greedy repair of the interval search stops over the
  /// budget, a search over plans that do not fit yet goes on from the
  /// closest one until a repair fits (a quarter of the search's work at
  /// most). On by default; the joint planner turns it off while it screens
  /// mixes (a mix that the repairs cannot fit is rejected at once).
  bool settleStuck = true;
  /// After the interval search, the heuristic re-solves windows of its plan
  /// exactly with the constraint solver: the moccasin planner's
  /// neighbourhood search (up to 48 items free per window, branch and
  /// bound), warm-started from the plan, where the plan is near a solution
  /// of Moccasin's model (its memory counts a stage's computations at once;
  /// a plan that frees inside a stage may not be). Elsewhere, or without
  /// Gecode, or with `stageBudgets`, the interval search's plan stands. Off
  /// by default (the MLIR passes plan every function and keep it off);
  /// lms-plan turns it on (--polish).
  bool polishWindows = false;
  /// Work limit of that polish in windows; 0 chooses one from the graph's
  /// size (as the moccasin planner does).
  uint64_t polishIterations = 0;
};

struct RematResult {
  Plan plan;
  uint64_t peakBytes = 0;
  double computeCost = 0;
  /// A proven lower bound on the cost of any valid plan, when known.
  std::optional<double> lowerBound;
  /// Whether the plan is proven optimal.
  bool optimal = false;
  /// Whether the plan is proven optimal within the moccasin planner's
  /// constraint program (whose memory is conservative: it counts all
  /// computations of a stage at once), not among all plans.
  bool optimalInModel = false;
  /// Whether the wall-clock cap stopped the search before its work limit.
  bool stoppedByTimeLimit = false;
  std::string method;
};

/// The default work limit of the improving planners for `graph`: more
/// iterations for small graphs, fewer for large ones (each costs more).
uint64_t autoSearchIterations(const Graph &graph);

/// The cost of one computation of `op`.
double opCost(const Graph &graph, OpIndex op, const DeviceSpec *device);

/// The total cost of computing every op once.
double scheduleCost(const Graph &graph, const DeviceSpec *device);

/// The least by which the compute costs of two plans can differ when they
/// are sums of `costs`: the greatest common divisor of the nonzero costs
/// when every one is a whole number (up to 10^15), else 0 (no such step:
/// costs in seconds on a device). The exact planner's cutoff increment.
double rematCostStep(llvm::ArrayRef<double> costs);

/// Smallest budget any plan can meet: the largest, over ops, of its inputs
/// and outputs (and transient bytes), with the tensors that must stay
/// resident (live-out, and arguments at entry) added where they are live.
uint64_t rematLowerBound(const Graph &graph);

/// The backward ops of a training step whose loss is `loss`, by
/// dependence: the ops the loss does not depend on (the gradients come
/// after it and do not feed it). For RematOptions::backwardOps, which
/// Chen's and PyTorch's checkpointing read: the forward is what they cut.
std::vector<uint8_t> backwardOpsOf(const Graph &graph, TensorIndex loss);

/// The backward ops of a training step whose loss is `loss`, by time: the
/// ops after the last one that writes the loss (an op before it that only
/// the backward reads, such as a view taken right after its producer, runs
/// in the forward pass). For SwapOptions::backwardOps (save-on-cpu).
std::vector<uint8_t> opsAfterLoss(const Graph &graph, TensorIndex loss);

/// The planners. Each fails with a message when it cannot meet the budget.
llvm::Expected<RematResult> planCheckpointAll(const Graph &graph,
                                              uint64_t budget,
                                              const RematOptions &options);
llvm::Expected<RematResult> planChenSqrt(const Graph &graph, uint64_t budget,
                                         const RematOptions &options);
llvm::Expected<RematResult> planChenGreedy(const Graph &graph, uint64_t budget,
                                           const RematOptions &options);
/// torch.utils.checkpoint over segments of the forward ops (those not in
/// options.backwardOps; none when it is empty): the forward is cut into k
/// segments of equal op counts; a segment before the last drops the tensors
/// no later segment reads, and the backward's first read of one recomputes,
/// once, what the segment's later reads need (PyTorch reruns the segment's
/// forward). k is the count of lowest peak among the powers of two and
/// Chen et al.'s sqrt(n). PyTorch's answer on the same graph, for
/// comparison; the recomputation is the same for every k.
llvm::Expected<RematResult> planSegments(const Graph &graph, uint64_t budget,
                                         const RematOptions &options);
llvm::Expected<RematResult> planRematHeuristic(const Graph &graph,
                                               uint64_t budget,
                                               const RematOptions &options);
llvm::Expected<RematResult> planRematDTR(const Graph &graph, uint64_t budget,
                                         const RematOptions &options);
llvm::Expected<RematResult> planRematExact(const Graph &graph, uint64_t budget,
                                           const RematOptions &options);
/// Moccasin's constraint program (retention intervals, a cumulative memory
/// constraint) on Gecode, warm-started with the heuristic's plan and
/// improved by large-neighbourhood search; on small graphs it tries to
/// prove optimality. Fails when built without Gecode.
llvm::Expected<RematResult> planRematMoccasin(const Graph &graph,
                                              uint64_t budget,
                                              const RematOptions &options);

/// The planners by name: one entry point for every caller (lms-plan, the
/// passes), so that a new planner is added in one place.
enum class RematMethod {
  Heuristic,
  Exact,
  Moccasin,
  DTR,
  ChenGreedy,
  ChenSqrt,
  CheckpointAll,
  Segments
};

/// The name options use: heuristic, exact, moccasin, dtr, chen-greedy,
/// chen-sqrt, checkpoint-all, segments.
llvm::StringRef rematMethodName(RematMethod method);

/// The method of a name; nullopt for an unknown one.
std::optional<RematMethod> parseRematMethod(llvm::StringRef name);

/// Runs `method`.
llvm::Expected<RematResult> planRemat(const Graph &graph, uint64_t budget,
                                      RematMethod method,
                                      const RematOptions &options);

/// A graph with runs of ops contracted into one op each: the unit a
/// recomputation clones, such as an in-place chain (an allocation, a fill
/// and the op that writes into it). Tensors keep their indices.
struct ContractedGraph {
  Graph graph;
  /// Op k of `graph` stands for the ops `members[k]` of the original.
  std::vector<std::vector<OpIndex>> members;
};

/// Contracts `graph`. Op i, when `joinsPrevious[i]` (every value it
/// overwrites in place has no other use) and it writes buffers in place,
/// joins the units that produced those buffers: the run of units from the
/// first of them to the last so far becomes one unit with op i, provided
/// every member may be cloned (`recomputable`) and every unit of the run
/// either produced one of the buffers or makes only what op i reads (a
/// pooling op's window). A unit may be recomputed when every member may
/// (`recomputable[i]` and Op::recomputable) and it writes in place no buffer
/// it did not produce. A unit's cost is its members' time under `device`
/// (FLOPs without one) as a fixed time. Empty arrays: no op joins; every
/// op's Op::recomputable decides.
ContractedGraph contractChains(const Graph &graph,
                               llvm::ArrayRef<uint8_t> joinsPrevious,
                               llvm::ArrayRef<uint8_t> recomputable,
                               const DeviceSpec *device);

/// Graphs larger than this use the DTR simulation for the heuristic.
constexpr size_t kIntervalSearchMaxOps = 1000000;

/// Graphs larger than this get the heuristic's plan from planRematExact
/// (the MILP has O(n^2) variables and O(n^3) nonzeros).
constexpr size_t kExactMaxOps = 200;

/// Whether planRematExact has a MILP solver (CBC) behind it.
bool haveExactSolver();

/// Whether planRematMoccasin has a constraint solver (Gecode) behind it.
bool haveConstraintSolver();

/// Graphs up to this size get a proof attempt (branch and bound over the
/// whole constraint program) after the neighbourhood search.
constexpr size_t kMoccasinProofOps = 400;

} // namespace lms

#endif // LMS_GRAPH_REMAT_H
