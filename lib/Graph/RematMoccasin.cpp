//===- RematMoccasin.cpp - Moccasin's constraint program on Gecode --------===//
//
// Moccasin's formulation (Bartan et al., ICML'23) of rematerialization in
// the schedule order, on Gecode's finite-domain solver:
//
//   every item (an op's device outputs, or an argument) has up to C
//   retention intervals [s, e] of stages; the first is mandatory and starts
//   at the op's own stage (arguments: at entry); the others are optional
//   (presence literal b), start after the previous one ends, and each costs
//   one recomputation of the op;
//   memory: a cumulative constraint over the present intervals (height: the
//   item's bytes; an op's transient bytes as a one-stage task at each
//   computation) with capacity = budget;
//   coverage: every computation of a consumer (the start of one of its
//   intervals) lies inside a present interval of each of its inputs;
//   objective: the total cost of the optional intervals that are present.
//
// The model counts, at stage t, every interval with s <= t <= e, including
// all computations at t at once; the plan's own evaluation frees inside a
// stage, so a solution of the model always fits (the model is
// conservative, as Moccasin's is). Bytes and costs are scaled to Gecode's
// 32-bit integers: bytes rounded up and the capacity down (still
// conservative), costs to about 10^9 in total (the plan's true cost is
// evaluated at the end).
//
// Search: the interval search's plan is the warm start; a branch and bound
// over the whole model whose value choices follow it (solution-guided
// search) finds a model solution near it. When there is none (the warm
// start frees inside a stage), the search starts from the warm start with
// each stage capped at what it holds in the model if that is over the
// budget (the plan fits there), and every improvement is checked by the
// plan's own evaluation. Then large-neighbourhood search: a window of
// stages, or a random share of the items, frees up to kFreeItems items; a
// model of those items alone (every other interval fixed, its memory
// folded into the capacity over time) is solved with branch and bound
// under a failure limit; windows widen when a run of them brings nothing.
// On graphs of up to kMoccasinProofOps ops a final branch and bound over
// the whole model tries to prove the incumbent optimal within the model
// (RematResult::optimalInModel: the model is conservative, so this is no
// bound on every plan). Every limit counts work (iterations, failures),
// never seconds: plans are reproducible; the time limit is only a cap.
//
//===----------------------------------------------------------------------===//

#include "RematInternal.h"

#include "SplitMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <memory>

#ifdef LMS_HAVE_GECODE
#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>
#endif

#define DEBUG_TYPE "lms-remat-moccasin"

using namespace lms;

bool lms::haveConstraintSolver() {
#ifdef LMS_HAVE_GECODE
  return true;
#else
  return false;
#endif
}

static llvm::Error moccasinError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

#ifdef LMS_HAVE_GECODE
namespace {

using detail::RetentionIntervals;
using detail::RetentionItem;

/// What every space of one solve shares (read-only while searching).
struct Shape {
  std::vector<RetentionItem> items;
  int stages = 0;
  /// Per item, its first slot and its number of slots (0: not modelled).
  std::vector<int> first, slots;
  /// Per slot: its item and index among the item's slots.
  std::vector<int> slotItem, slotIndex;
  /// Scaled bytes per item, scaled cost per item, capacity.
  std::vector<int> usage, transient, cost;
  int capacity = 0;
  /// The solution the value choices follow (per slot: presence, start,
  /// exclusive end); empty: the smallest values.
  std::vector<int> hintPresent, hintStart, hintEnd;
};

/// A solution in slot form.
struct Solution {
  std::vector<int> present, start, end;
  int objective = 0;
};

/// The constraint program. Variables per slot: presence, start, exclusive
/// end, duration.
class Model : public Gecode::IntMinimizeSpace {
public:
  /// `profile`: the capacity of each stage (scaled); empty: the budget's.
  /// With `fixed` and `freeItem`, only the free items' slots are variables:
  /// every other slot is the constant `fixed` gives, its memory folded
  /// into the capacity of each stage, and the objective counts the free
  /// items only (a window of the neighbourhood search).
  Model(std::shared_ptr<const Shape> shapeIn,
        const std::vector<int> &profile = {}, const Solution *fixed = nullptr,
        const std::vector<uint8_t> *freeItem = nullptr)
      : shape(std::move(shapeIn)) {
    using namespace Gecode;
    const Shape &sh = *shape;
    int n = static_cast<int>(sh.slotItem.size());
    int stages = sh.stages;
    auto isFree = [&](int item) { return !freeItem || (*freeItem)[item]; };
    present = BoolVarArray(*this, n);
    start = IntVarArray(*this, n);
    end = IntVarArray(*this, n);
    duration = IntVarArray(*this, n);
    // Stage capacities: the profile (or the budget), less the fixed slots.
    std::vector<int64_t> room(stages, sh.capacity);
    for (int t = 0; t < stages && !profile.empty(); ++t)
      room[t] = profile[t];
    for (int v = 0; v < n; ++v) {
      int item = sh.slotItem[v];
      if (isFree(item)) {
        present[v] = BoolVar(*this, 0, 1);
        start[v] = IntVar(*this, 0, std::max(stages - 1, 0));
        end[v] = IntVar(*this, 1, stages);
        duration[v] = IntVar(*this, 1, stages);
        continue;
      }
      present[v] = BoolVar(*this, fixed->present[v], fixed->present[v]);
      start[v] = IntVar(*this, fixed->start[v], fixed->start[v]);
      end[v] = IntVar(*this, fixed->end[v], fixed->end[v]);
      duration[v] = IntVar(*this, fixed->end[v] - fixed->start[v],
                           fixed->end[v] - fixed->start[v]);
      if (!fixed->present[v])
        continue;
      for (int t = fixed->start[v]; t < fixed->end[v] && t < stages; ++t)
        room[t] -= sh.usage[item];
      if (sh.items[item].pos >= 0 && fixed->start[v] < stages)
        room[fixed->start[v]] -= sh.transient[item];
    }
    for (int v = 0; v < n; ++v) {
      const RetentionItem &item = sh.items[sh.slotItem[v]];
      if (!isFree(sh.slotItem[v]))
        continue;
      int k = sh.slotIndex[v];
      int pos = std::max(item.pos, 0);
      rel(*this, start[v] + duration[v] == end[v]);
      if (k == 0) {
        rel(*this, present[v], IRT_EQ, 1);
        rel(*this, start[v], IRT_EQ, pos);
        if (item.pinned)
          rel(*this, end[v], IRT_EQ, stages);
        continue;
      }
      int before = v - 1;
      rel(*this, start[v], IRT_GR, pos);
      // Present after the previous one; absent ones fixed (no symmetry).
      rel(*this, present[v] >> present[before]);
      rel(*this, present[v] >> (start[v] >= end[before]));
      rel(*this, !present[v] >> (start[v] == stages - 1));
      rel(*this, !present[v] >> (end[v] == stages));
    }
    // Coverage: every computation of a consumer inside an interval of each
    // input (pairs of fixed items hold already).
    for (size_t c = 0; c < sh.items.size(); ++c) {
      const RetentionItem &consumer = sh.items[c];
      for (int j = 0; j < sh.slots[c]; ++j) {
        int w = sh.first[c] + j;
        for (int u : consumer.inputs) {
          if (sh.slots[u] == 0 ||
              (!isFree(static_cast<int>(c)) && !isFree(u)) ||
              (!isFree(static_cast<int>(c)) && !fixed->present[w]))
            continue;
          BoolVarArgs covered;
          for (int i = 0; i < sh.slots[u]; ++i) {
            int v = sh.first[u] + i;
            BoolVar here(*this, 0, 1);
            if (j == 0) {
              // The consumer's own stage is fixed.
              int at = std::max(consumer.pos, 0);
              rel(*this,
                  here == (present[v] && (start[v] <= at) && (end[v] > at)));
            } else {
              rel(*this, here == (present[v] && (start[v] <= start[w]) &&
                                  (end[v] > start[w])));
            }
            covered << here;
          }
          BoolVar any(*this, 0, 1);
          rel(*this, BOT_OR, covered, any);
          rel(*this, present[w], BOT_IMP, any, 1);
        }
      }
    }
    // Memory: the free slots under a capacity that varies by stage (the
    // largest room, less a fixed filler task over each run of stages with
    // less).
    IntVarArgs s, p, e;
    IntArgs u;
    BoolVarArgs m;
    for (int v = 0; v < n; ++v) {
      int item = sh.slotItem[v];
      if (!isFree(item))
        continue;
      if (sh.usage[item] > 0) {
        s << start[v];
        p << duration[v];
        e << end[v];
        u << sh.usage[item];
        m << present[v];
      }
      if (sh.transient[item] > 0 && sh.items[item].pos >= 0) {
        IntVar one(*this, 1, 1);
        IntVar after = expr(*this, start[v] + 1);
        s << start[v];
        p << one;
        e << after;
        u << sh.transient[item];
        m << present[v];
      }
    }
    // Stages with room for every free slot at once need no filler.
    int64_t most = stages ? *std::max_element(room.begin(), room.end()) : 0;
    int64_t freeTotal = 0;
    for (int i = 0; i < u.size(); ++i)
      freeTotal += u[i];
    most = std::min(most, freeTotal);
    for (int64_t &r : room)
      r = std::min(r, most);
    if (stages && *std::min_element(room.begin(), room.end()) < 0) {
      fail(); // the fixed part alone is over
    } else if (s.size() > 0) {
      int capacity = static_cast<int>(most);
      BoolVar always(*this, 1, 1);
      for (int t = 0; t < stages;) {
        int t2 = t;
        while (t2 + 1 < stages && room[t2 + 1] == room[t])
          ++t2;
        if (room[t] < most) {
          s << IntVar(*this, t, t);
          p << IntVar(*this, t2 - t + 1, t2 - t + 1);
          e << IntVar(*this, t2 + 1, t2 + 1);
          u << static_cast<int>(most - room[t]);
          m << always;
        }
        t = t2 + 1;
      }
      cumulative(*this, capacity, s, p, e, u, m);
    }
    // Objective: the optional slots (of the free items).
    IntArgs weights;
    BoolVarArgs optional;
    int64_t total = 0;
    for (int v = 0; v < n; ++v)
      if (sh.slotIndex[v] > 0 && isFree(sh.slotItem[v])) {
        weights << sh.cost[sh.slotItem[v]];
        optional << present[v];
        total += sh.cost[sh.slotItem[v]];
      }
    objective = IntVar(
        *this, 0, static_cast<int>(std::min<int64_t>(total, Int::Limits::max)));
    if (optional.size() > 0)
      linear(*this, weights, optional, IRT_EQ, objective);
    else
      rel(*this, objective, IRT_EQ, 0);
  }

  Model(Model &other) : Gecode::IntMinimizeSpace(other), shape(other.shape) {
    present.update(*this, other.present);
    start.update(*this, other.start);
    end.update(*this, other.end);
    duration.update(*this, other.duration);
    objective.update(*this, other.objective);
  }

  Gecode::Space *copy() override { return new Model(*this); }
  Gecode::IntVar cost() const override { return objective; }

  /// Branching, slots in stage order of their items: every presence
  /// first, then the starts, then the ends; values as the hint says where
  /// the domain allows (`guided`), else the smallest (no recomputation, the
  /// earliest start and end).
  void branch(bool guided = true) {
    using namespace Gecode;
    auto valueOf = [guided](const std::vector<int> Shape::*hint) {
      return [guided, hint](const Space &home, IntVar x, int i) {
        const Shape &sh = *static_cast<const Model &>(home).shape;
        const std::vector<int> &values = sh.*hint;
        if (!guided || values.empty())
          return x.min();
        int h = values[i];
        if (x.in(h))
          return h;
        return h > x.max() ? x.max() : x.min();
      };
    };
    IntVarArgs isPresent;
    for (int v = 0; v < present.size(); ++v) {
      isPresent << IntVar(*this, 0, 1);
      channel(*this, present[v], isPresent[v]);
    }
    Gecode::branch(*this, isPresent, INT_VAR_NONE(),
                   INT_VAL(valueOf(&Shape::hintPresent)));
    Gecode::branch(*this, start, INT_VAR_NONE(),
                   INT_VAL(valueOf(&Shape::hintStart)));
    Gecode::branch(*this, end, INT_VAR_NONE(),
                   INT_VAL(valueOf(&Shape::hintEnd)));
  }

  /// Only solutions cheaper than `bound`.
  void below(int bound) {
    Gecode::rel(*this, objective, Gecode::IRT_LE, bound);
  }

  std::shared_ptr<const Shape> shape;
  Gecode::BoolVarArray present;
  Gecode::IntVarArray start, end, duration;
  Gecode::IntVar objective;
};

Solution read(const Model &m) {
  Solution s;
  int n = m.present.size();
  for (int v = 0; v < n; ++v) {
    s.present.push_back(m.present[v].val());
    s.start.push_back(m.start[v].val());
    s.end.push_back(m.end[v].val());
  }
  s.objective = m.objective.val();
  return s;
}

/// Stops a search on a failure budget or the wall-clock cap.
class WorkStop : public Gecode::Search::Stop {
public:
  WorkStop(unsigned long fails, detail::SearchLimits &limits)
      : fails(fails), limits(limits) {}
  bool stop(const Gecode::Search::Statistics &s,
            const Gecode::Search::Options &) override {
    if (s.fail >= fails)
      return true;
    // The clock is read at every node: one node of a large model clones
    // and propagates a space of thousands of variables (tens of
    // milliseconds at 1,000 ops), so reading it every 256 nodes let the
    // search run seconds past the cap. No node starts that would end past
    // the cap at the last one's pace.
    double now = limits.elapsed();
    double step = last >= 0 ? now - last : 0;
    last = now;
    return limits.expired(step);
  }

private:
  double last = -1;
  unsigned long fails;
  detail::SearchLimits &limits;
};

/// The outcome of one branch and bound.
struct Solve {
  std::optional<Solution> best;
  /// Whether the search space was exhausted (the best is optimal in it).
  bool complete = false;
};

Solve branchAndBound(Model *root, unsigned long fails,
                     detail::SearchLimits &limits) {
  Solve out;
  if (root->status() == Gecode::SS_FAILED) {
    delete root;
    out.complete = true;
    return out;
  }
  WorkStop stop(fails, limits);
  Gecode::Search::Options o;
  o.threads = 1;
  o.stop = &stop;
  Gecode::BAB<Model> engine(root, o);
  delete root;
  while (Model *m = engine.next()) {
    out.best = read(*m);
    delete m;
  }
  out.complete = !engine.stopped();
  return out;
}

/// The most items a neighbourhood frees.
constexpr size_t kFreeItems = 48;

/// Failures per op the final proof attempt may spend.
constexpr unsigned long kProofFails = 100;

/// The default number of windows the neighbourhood search solves.
uint64_t moccasinIterations(const Graph &graph) {
  double n = static_cast<double>(std::max<size_t>(graph.numOps(), 1));
  // A window costs about n^1.5 (its model is cloned and propagated): about
  // a minute on one core of the reference machine for n from 100 to 1000.
  return static_cast<uint64_t>(
      std::clamp(2e6 / (n * std::sqrt(n)), 30.0, 1000.0));
}

/// The constraint program's data for `items`: C = 2 slots per item
/// (Moccasin's default), more where the warm start `hint` uses more; bytes
/// scaled so that the budget is about 2^28 (rounded up; the capacity
/// down), costs to about 10^9 in all.
std::shared_ptr<Shape> makeShape(std::vector<RetentionItem> items,
                                 const RetentionIntervals &hint, int stages,
                                 uint64_t budget) {
  constexpr int kSlots = 2;
  auto shape = std::make_shared<Shape>();
  Shape &sh = *shape;
  sh.items = std::move(items);
  sh.stages = stages;
  size_t numItems = sh.items.size();
  sh.first.assign(numItems, 0);
  sh.slots.assign(numItems, 0);
  for (size_t p = 0; p < numItems; ++p) {
    const RetentionItem &item = sh.items[p];
    int count = 0;
    if (!hint[p].empty()) {
      bool more = item.recomputable && !item.pinned && item.mem > 0 &&
                  item.pos >= 0 && item.pos < stages - 1;
      count = more ? std::max<int>(kSlots, hint[p].size())
                   : static_cast<int>(hint[p].size());
    }
    sh.first[p] = static_cast<int>(sh.slotItem.size());
    sh.slots[p] = count;
    for (int k = 0; k < count; ++k) {
      sh.slotItem.push_back(static_cast<int>(p));
      sh.slotIndex.push_back(k);
    }
  }
  uint64_t unit = std::max<uint64_t>(1, budget >> 28);
  sh.capacity = static_cast<int>(budget / unit);
  double totalCost = 0;
  for (size_t p = 0; p < numItems; ++p)
    totalCost += sh.items[p].cost * std::max(sh.slots[p] - 1, 0);
  double costScale = totalCost > 0 ? 1e9 / totalCost : 1;
  auto scaled = [&](uint64_t bytes) {
    bytes = std::min<uint64_t>(bytes, uint64_t(1) << 40);
    return static_cast<int>(
        std::min<uint64_t>((bytes + unit - 1) / unit, 1u << 30));
  };
  for (const RetentionItem &item : sh.items) {
    sh.usage.push_back(scaled(item.mem));
    sh.transient.push_back(scaled(static_cast<uint64_t>(item.transient)));
    sh.cost.push_back(
        std::max(1, static_cast<int>(std::lround(item.cost * costScale))));
  }
  return shape;
}

/// `intervals` (one per slot at most) in slot form.
Solution slotsOf(const Shape &sh, const RetentionIntervals &intervals) {
  size_t numSlots = sh.slotItem.size();
  Solution out;
  out.present.assign(numSlots, 0);
  out.start.assign(numSlots, std::max(sh.stages - 1, 0));
  out.end.assign(numSlots, sh.stages);
  for (size_t p = 0; p < intervals.size(); ++p)
    for (size_t k = 0; k < intervals[p].size(); ++k) {
      int v = sh.first[p] + static_cast<int>(k);
      out.present[v] = 1;
      out.start[v] = std::max(intervals[p][k].first, 0);
      out.end[v] = intervals[p][k].second + 1;
      if (k > 0)
        out.objective += sh.cost[p];
    }
  return out;
}

/// The items a window of the neighbourhood search frees: those resident in
/// a window of `width` stages (even iterations) or a random share of all
/// (odd ones), recomputable ones only, at most kFreeItems of them (a random
/// choice: larger problems do not finish within the failure limit).
std::vector<uint8_t> chooseNeighbourhood(const Shape &sh,
                                         const Solution &incumbent,
                                         uint64_t iteration, int width,
                                         detail::SplitMix &rng) {
  int center = static_cast<int>(rng.below(std::max(sh.stages, 1)));
  int lo = center - width / 2, hi = center + width / 2;
  std::vector<uint8_t> freeItem(sh.items.size(), 0);
  bool byWindow = iteration % 2 == 0;
  double share = 0.1 + 0.3 * rng.unit();
  for (size_t v = 0; v < sh.slotItem.size(); ++v) {
    int p = sh.slotItem[v];
    if (!incumbent.present[v] || !sh.items[p].recomputable)
      continue;
    int s = incumbent.start[v];
    int e = incumbent.end[v] - 1;
    if (byWindow ? s <= hi && e >= lo : rng.unit() < share)
      freeItem[p] = 1;
  }
  std::vector<int> chosen;
  for (size_t p = 0; p < freeItem.size(); ++p)
    if (freeItem[p])
      chosen.push_back(static_cast<int>(p));
  for (size_t i = 0; i < chosen.size() && i < kFreeItems; ++i)
    std::swap(chosen[i], chosen[i + rng.below(chosen.size() - i)]);
  for (size_t i = kFreeItems; i < chosen.size(); ++i)
    freeItem[chosen[i]] = 0;
  return freeItem;
}

} // namespace

namespace {

/// What searchModel does after the warm start.
enum class ModelSearch {
  /// The moccasin planner: phase 1 (a model solution near the warm start,
  /// else the warm start with a capped profile), windows, and the proof on
  /// small graphs.
  Full,
  /// The heuristic's polish (RematOptions::polishWindows): only where phase
  /// 1 finds a solution of the budget's model near the warm start, then
  /// windows; no capped profile, no proof.
  Polish,
};

/// The constraint program's search from `warmResult`, a plan of the
/// interval search, and its intervals `hint`.
llvm::Expected<RematResult>
searchModel(const Graph &graph, uint64_t budget, const RematOptions &options,
            detail::SearchLimits &limits, RematResult warmResult,
            const RetentionIntervals &hint, ModelSearch mode) {
  auto elapsed = [&] { return limits.elapsed(); };
  double minimum = scheduleCost(graph, options.device);
  std::vector<RetentionItem> items =
      detail::retentionItems(graph, options.device);
  size_t numItems = items.size();
  int stages = static_cast<int>(graph.numOps());
  std::string method = warmResult.method;
  // A warm start stopped by its time cap depends on the machine, and so
  // does every plan found from it.
  bool warmCapped = warmResult.stoppedByTimeLimit;
  std::optional<RematResult> warmPlan = std::move(warmResult);
  if (hint.size() != numItems)
    return moccasinError("internal error: the warm start has " +
                         llvm::Twine(hint.size()) + " items, the model " +
                         llvm::Twine(numItems));

  std::shared_ptr<Shape> shape =
      makeShape(std::move(items), hint, stages, budget);
  Shape &sh = *shape;
  size_t numSlots = sh.slotItem.size();
  Solution warmSlots = slotsOf(sh, hint);
  if (warmPlan) {
    sh.hintPresent = warmSlots.present;
    sh.hintStart = warmSlots.start;
    sh.hintEnd = warmSlots.end;
  }

  auto toIntervals = [&](const Solution &s) {
    RetentionIntervals out(numItems);
    for (size_t v = 0; v < numSlots; ++v)
      if (s.present[v]) {
        int p = sh.slotItem[v];
        int first = sh.slotIndex[v] == 0 ? sh.items[p].pos : s.start[v];
        out[p].push_back({first, s.end[v] - 1});
      }
    return out;
  };
  // The model's memory of each stage under a solution (scaled).
  auto usage = [&](const Solution &s) {
    std::vector<int64_t> used(stages, 0);
    for (size_t v = 0; v < numSlots; ++v) {
      if (!s.present[v])
        continue;
      int p = sh.slotItem[v];
      for (int t = s.start[v]; t < s.end[v] && t < stages; ++t)
        used[t] += sh.usage[p];
      if (sh.items[p].pos >= 0 && s.start[v] < stages)
        used[s.start[v]] += sh.transient[p];
    }
    return used;
  };

  std::optional<Solution> incumbent;
  std::optional<RematResult> best;
  auto consider = [&](const Solution &s) -> bool {
    llvm::Expected<RematResult> r = detail::planOfIntervals(
        graph, budget, options.device, toIntervals(s), method);
    if (!r) {
      // A solution of the budget's model always fits (the model is
      // conservative); one of a capped profile (below) may not: the last
      // plan stands.
      llvm::consumeError(r.takeError());
      return false;
    }
    if (best && r->computeCost >= best->computeCost - 1e-12 * minimum)
      return false;
    incumbent = s;
    best = std::move(*r);
    if (options.progress)
      options.progress({elapsed(), best->computeCost, minimum});
    return true;
  };
  detail::SplitMix rng(options.seed);
  // Whether the incumbent is proven optimal within the budget's model.
  bool provenInModel = false;

  try {
    if (warmPlan && !limits.expired()) {
      // Phase 1: a model solution near the warm start (solution-guided
      // search over the whole model).
      auto *root = new Model(shape);
      root->branch();
      Solve first = branchAndBound(root, 5 * numSlots + 1000, limits);
      if (first.best)
        consider(*first.best);
      provenInModel = first.complete && best;
    }
    std::vector<int> profile;
    // The polish goes on only from a solution of the budget's model: a
    // capped profile rarely lets a window move (docs/Remat.md).
    if (!best && mode == ModelSearch::Polish)
      return std::move(*warmPlan);
    if (!best) {
      // The warm start does not fit the model (its memory counts every
      // computation of a stage at once, the plan frees inside a stage) and
      // no model solution came near it: the search starts from it, with
      // the stages it holds over the budget in the model capped at what
      // they hold (the plan fits there), every other stage at the budget.
      // Each improvement is checked against the plan's own evaluation.
      incumbent = warmSlots;
      best = std::move(*warmPlan);
      warmPlan.reset();
      std::vector<int64_t> used = usage(warmSlots);
      profile.resize(stages);
      for (int t = 0; t < stages; ++t)
        profile[t] = static_cast<int>(std::min<int64_t>(
            std::max<int64_t>(sh.capacity, used[t]), Gecode::Int::Limits::max));
    }

    // Phase 2: large-neighbourhood search over windows of stages. Each
    // window is a model of its free items only.
    int width = std::max(8, stages / 32);
    int failsWithout = 0;
    // A window builds and propagates a model before its search can be
    // stopped: none starts that would end past the cap at the last one's
    // pace.
    double windowSeconds = 0;
    for (uint64_t it = 0; !provenInModel && limits.allows(it, windowSeconds);
         ++it) {
      double windowStart = elapsed();
      std::vector<uint8_t> freeItem =
          chooseNeighbourhood(sh, *incumbent, it, width, rng);
      int freeCost = 0;
      for (size_t v = 0; v < numSlots; ++v)
        if (sh.slotIndex[v] > 0 && incumbent->present[v] &&
            freeItem[sh.slotItem[v]])
          freeCost += sh.cost[sh.slotItem[v]];
      auto *root = new Model(shape, profile, &*incumbent, &freeItem);
      root->below(freeCost);
      root->branch(false);
      Solve solve = branchAndBound(root, 200 + 4 * width, limits);
      if (solve.best)
        solve.best->objective += incumbent->objective - freeCost;
      bool improved = solve.best && consider(*solve.best);
      // A window that freed every modelled item (pinned ones have no
      // choice) and was searched to the end was the whole model: nothing
      // is left to try. With a capped profile it was not the budget's.
      provenInModel =
          solve.complete && profile.empty() &&
          llvm::all_of(llvm::seq<size_t>(0, numItems), [&](size_t p) {
            return freeItem[p] || sh.slots[p] == 0 || sh.items[p].pinned;
          });
      LLVM_DEBUG(llvm::dbgs() << llvm::formatv(
                     "window {0}: width {1}, {2} items free, "
                     "complete {3}, improved {4}, objective {5}\n",
                     it, width, std::count(freeItem.begin(), freeItem.end(), 1),
                     solve.complete, improved, incumbent->objective));
      windowSeconds = elapsed() - windowStart;
      if (improved) {
        failsWithout = 0;
      } else if (++failsWithout > 2 * (stages / std::max(width, 1)) + 8) {
        // No window of this width improves: widen.
        width = std::min(stages, width * 2);
        failsWithout = 0;
      }
    }

    // Phase 3: prove (small graphs).
    if (mode == ModelSearch::Full && graph.numOps() <= kMoccasinProofOps &&
        !provenInModel && !limits.expired()) {
      auto *root = new Model(shape, profile);
      root->below(incumbent->objective);
      root->branch();
      Solve proof =
          branchAndBound(root, kProofFails * graph.numOps() + 10000, limits);
      if (proof.best)
        consider(*proof.best);
      // Optimal in the budget's model (not with a capped profile, whose
      // solutions the plan's evaluation may reject); the plan's own memory
      // frees inside stages, so this is no bound on every plan.
      provenInModel = proof.complete && profile.empty();
    }
  } catch (const Gecode::Exception &e) {
    // Gecode's limits (32-bit domains and capacities): the best plan so
    // far stands, else the warm start.
    LLVM_DEBUG(llvm::dbgs() << "gecode: " << e.what() << "\n");
    if (!best && !warmPlan)
      return moccasinError(llvm::Twine("the constraint solver failed: ") +
                           e.what());
    if (!best)
      return std::move(*warmPlan);
  }
  best->lowerBound = minimum;
  best->stoppedByTimeLimit = limits.stoppedByCap() || warmCapped;
  if (warmPlan && best->computeCost > warmPlan->computeCost) {
    // The model's conservative memory may cost more than the warm start
    // (which then is no solution of the model: no claim about it).
    warmPlan->stoppedByTimeLimit = best->stoppedByTimeLimit;
    return std::move(*warmPlan);
  }
  best->optimalInModel = provenInModel;
  return std::move(*best);
}

} // namespace

llvm::Expected<RematResult>
lms::planRematMoccasin(const Graph &graph, uint64_t budget,
                       const RematOptions &options) {
  uint64_t lower = rematLowerBound(graph);
  if (budget < lower)
    return moccasinError(llvm::formatv("budget {0} is below the smallest "
                                       "feasible budget {1}",
                                       budget, lower)
                             .str());
  detail::SearchLimits limits(options, moccasinIterations(graph));
  auto elapsed = [&] { return limits.elapsed(); };
  double minimum = scheduleCost(graph, options.device);

  // The warm start: the interval search, with two fifths of the time cap
  // (its failure is the planner's). Phase 1 below builds and propagates a
  // model of the whole graph before its search can be stopped (a few
  // tenths of a second at 1,000 ops): it needs time left.
  RematOptions warm = options;
  warm.progress = nullptr;
  warm.timeLimitSeconds = 0.4 * options.timeLimitSeconds;
  RetentionIntervals hint;
  std::optional<RematResult> warmPlan;
  {
    llvm::Expected<RematResult> r =
        detail::planRematIntervals(graph, budget, warm, &hint);
    if (r) {
      warmPlan = std::move(*r);
      warmPlan->method = "moccasin";
      warmPlan->lowerBound = minimum;
      if (warmPlan->computeCost <= minimum + 1e-9) {
        warmPlan->optimal = true;
        return std::move(*warmPlan);
      }
      if (options.progress)
        options.progress({elapsed(), warmPlan->computeCost, minimum});
    } else if (limits.elapsed() >= warm.timeLimitSeconds) {
      // Its share of the limit ran out before a first plan: the error names
      // the whole limit the caller gave.
      llvm::consumeError(r.takeError());
      return detail::noPlanInTime(options.timeLimitSeconds);
    } else {
      return r.takeError();
    }
  }
  return searchModel(graph, budget, options, limits, std::move(*warmPlan), hint,
                     ModelSearch::Full);
}

llvm::Expected<RematResult>
lms::detail::polishRematMoccasin(const Graph &graph, uint64_t budget,
                                 const RematOptions &options, RematResult warm,
                                 const RetentionIntervals &intervals) {
  // Nothing to gain over a plan that recomputes nothing.
  if (warm.computeCost <= scheduleCost(graph, options.device) + 1e-9)
    return std::move(warm);
  // The windows' own work limit, not the interval search's.
  RematOptions polish = options;
  polish.searchIterations = options.polishIterations;
  detail::SearchLimits limits(polish, moccasinIterations(graph));
  return searchModel(graph, budget, polish, limits, std::move(warm), intervals,
                     ModelSearch::Polish);
}

#else

llvm::Expected<RematResult>
lms::detail::polishRematMoccasin(const Graph &, uint64_t, const RematOptions &,
                                 RematResult warm, const RetentionIntervals &) {
  return std::move(warm);
}

llvm::Expected<RematResult> lms::planRematMoccasin(const Graph &, uint64_t,
                                                   const RematOptions &) {
  return moccasinError("the moccasin planner needs Gecode: this build has no "
                       "constraint solver (install libgecode-dev and "
                       "rebuild)");
}

#endif
