//===- Split.cpp - Splitting ops below the single-op bound ----------------===//
//
// See LMS/Transforms/Split.h. The region is grown from the anchor over the
// tensors that carry the split dimension; each value of the region knows
// where the dimension sits in its shape (`Axis`: a dimension and a scale, the
// number of elements of that dimension per unit of the anchor's dimension,
// e.g. 1024 tokens per sample), each linalg op which of its loops it is.
//
//===----------------------------------------------------------------------===//

#include "LMS/Transforms/Split.h"
#include "LMS/Analysis/DeviceModel.h"
#include "LMS/Analysis/FunctionGraph.h"
#include "LMS/Analysis/Options.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Units.h"
#include "LMS/Transforms/GlobalOptions.h"
#include "LMS/Transforms/Passes.h"
#include "LMS/Transforms/PlanningSupport.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::lms;

namespace {

/// A positive rational: elements of a value's dimension per unit of the
/// anchor's split dimension.
struct Scale {
  int64_t num = 1;
  int64_t den = 1;
  static Scale make(int64_t num, int64_t den) {
    int64_t g = std::gcd(num, den);
    return {num / g, den / g};
  }
  Scale times(int64_t k) const { return make(num * k, den); }
  Scale over(int64_t k) const { return make(num, den * k); }
  bool operator==(const Scale &o) const { return num == o.num && den == o.den; }
};

/// Where the split dimension sits in a value: its dimension and scale.
struct Axis {
  unsigned dim = 0;
  Scale scale;
  bool operator==(const Axis &o) const {
    return dim == o.dim && scale == o.scale;
  }
  bool operator!=(const Axis &o) const { return !(*this == o); }
};

/// What the region knows of one of its ops.
struct OpInfo {
  /// The linalg op's loop that is split (none for empty and reshapes).
  std::optional<unsigned> loop;
  Scale scale;
  /// The loop is a reduction: the op accumulates across iterations.
  bool reducing = false;
  /// The axis each input (operand or value captured by the body) is
  /// expected to carry in this op; nullopt: the op reads it whole.
  SmallVector<std::pair<Value, std::optional<Axis>>> inputs;
  /// The axes of the results (none for a reducing op).
  SmallVector<std::optional<Axis>> results;
  unsigned firstLoop = 0;
  /// A sum of exponentials shifted by a running maximum (online softmax):
  /// the member computing that maximum over the same slices, with which it
  /// runs in one loop, rescaling its sum as the maximum grows; else null.
  Operation *onlineMax = nullptr;
  /// The input operand that reads the maximum.
  unsigned onlineOperand = 0;
  /// A gather: a linalg op without the split loop whose body reads one
  /// sliced tensor at an index it computes (a label's column). Each
  /// iteration runs it whole on the slice, each point only where its index
  /// falls in the slice (elsewhere it yields its outputs unchanged); its
  /// results accumulate across iterations like a reduction's.
  bool gather = false;
};

uint64_t tensorBytes(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  Type element = type.getElementType();
  uint64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return static_cast<uint64_t>(type.getNumElements()) * ((bits + 7) / 8);
}

/// Ops that make a destination (an empty or filled tensor): they join the
/// region with the op they feed at any size, since sliced they cost nothing
/// whole.
bool isCheapInit(Operation *op) {
  return isa<tensor::EmptyOp, linalg::FillOp>(op);
}

/// A reshape: a view of its operand, free to make again anywhere.
bool isReshape(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op);
}

/// The dimension `index` of `v`'s static shape, or -1.
int64_t dimSize(Value v, unsigned index) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || index >= type.getRank() || type.isDynamicDim(index))
    return -1;
  return type.getDimSize(index);
}

/// Whether `v` is not shaped or has a static shape.
bool isStatic(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return !type || type.hasStaticShape();
}

/// Whether every operand and result of `op` has a static shape.
bool hasStaticShapes(Operation *op) {
  return llvm::all_of(op->getOperands(), isStatic) &&
         llvm::all_of(op->getResults(), isStatic);
}

/// Grows a region over the values that carry the split dimension.
class RegionGrower {
public:
  RegionGrower(Operation *anchor, unsigned dim, int64_t extent,
               uint64_t minBytes)
      : block(anchor->getBlock()), anchor(anchor), anchorDim(dim),
        extent(extent), minBytes(minBytes) {}

  /// Grows from the anchor; fails (reason in whyNot) when the anchor itself
  /// cannot be split along the dimension.
  LogicalResult grow(std::string &whyNot);

  Block *block;
  Operation *anchor;
  unsigned anchorDim;
  int64_t extent;
  uint64_t minBytes;
  llvm::MapVector<Operation *, OpInfo> members;
  DenseMap<Value, Axis> resultAxis;
  DenseSet<Value> pinned;

  /// Sums of exponentials run in the loop of the maximum they are shifted
  /// by (online softmax) instead of a loop after it.
  bool online = true;

  int64_t granularity() const;
  uint64_t internalBytes() const;
  void assignLoops();
  LogicalResult prune(std::string &whyNot);
  void growGreedy(OpInfo seed);
  SplitGrowth growth = SplitGrowth::Reach;
  /// Bytes the loops of `region` hold at once, estimated: the tensors they
  /// hold whole, and those of which they hold a slice.
  std::pair<uint64_t, uint64_t>
  estimate(const DenseSet<Operation *> &region) const;
  void shrink();
  /// Takes `ops` out of the region.
  void remove(ArrayRef<Operation *> ops);
  /// Where the member `op` is a reshape (collapse_shape, expand_shape) that
  /// views, through member reshapes only, a result of a member that is not
  /// a reshape and runs each slice in its loop (`inRegion` says which ops
  /// count): that result; else null. A view read outside the region is not
  /// assembled by the loops but made again after them on the assembled
  /// result it views: assembling it too would hold the same elements twice
  /// (exporters read a saved activation through a view, and keep it).
  Value viewedValue(Operation *op,
                    llvm::function_ref<bool(Operation *)> inRegion) const;

private:
  /// The axis `v` must have: its dimension `dim` holds extent x scale
  /// elements.
  bool fits(Value v, unsigned dim, Scale scale) const {
    int64_t size = dimSize(v, dim);
    return size >= 0 && size * scale.den == extent * scale.num;
  }
  std::optional<OpInfo> describe(Operation *op, Value via, Axis axis,
                                 std::string &whyNot) const;
  std::optional<OpInfo> describeLinalg(linalg::LinalgOp op, unsigned loop,
                                       Scale scale, std::string &whyNot) const;
  /// `op` reads `via` at an index it computes along the axis (OpInfo::gather).
  std::optional<OpInfo> describeGather(linalg::LinalgOp op, Value via,
                                       Axis axis, std::string &whyNot) const;
  /// A collapse_shape or expand_shape from `src` to `result`, `expanded`
  /// being the side with a group of dimensions per dimension of the other.
  std::optional<OpInfo> describeReshape(Value src, Value result,
                                        ArrayRef<ReassociationIndices> groups,
                                        Value expanded, Value via, Axis axis,
                                        std::string &whyNot) const;
  bool consistent(Operation *op, const OpInfo &info) const;
  void commit(Operation *op, OpInfo info);
  /// Describes `op` reached through `via` carrying `axis` and, when it fits
  /// the region, makes it a member.
  bool join(Operation *op, Value via, Axis axis);
};

} // namespace

std::optional<OpInfo> RegionGrower::describeLinalg(linalg::LinalgOp op,
                                                   unsigned loop, Scale scale,
                                                   std::string &whyNot) const {
  if (!op.hasPureTensorSemantics() || !isa<TilingInterface>(*op)) {
    whyNot = "not a linalg op on tensors";
    return std::nullopt;
  }
  if (!hasStaticShapes(op)) {
    whyNot = "a shape is dynamic (only static shapes are split)";
    return std::nullopt;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Regression (fuzzing): upstream's linalg tiling takes a size of 0 for
  // "not tiled" and then reads the loop bounds it was not given.
  if (llvm::is_contained(ranges, 0)) {
    whyNot = "a loop has extent 0";
    return std::nullopt;
  }
  if (loop >= ranges.size() || ShapedType::isDynamic(ranges[loop]) ||
      ranges[loop] * scale.den != extent * scale.num) {
    whyNot = "the loop's extent does not match";
    return std::nullopt;
  }
  OpInfo info;
  info.loop = loop;
  info.scale = scale;
  info.reducing =
      op.getIteratorTypesArray()[loop] == utils::IteratorType::reduction;
  // Where the loop sits in an operand: at most once, as a plain dimension.
  auto axisIn = [&](AffineMap map, std::optional<Axis> &out) -> bool {
    out.reset();
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (auto d = dyn_cast<AffineDimExpr>(expr)) {
        if (d.getPosition() != loop)
          continue;
        if (out)
          return false;
        out = Axis{static_cast<unsigned>(i), scale};
      } else if (expr.isFunctionOfDim(loop)) {
        return false;
      }
    }
    return true;
  };
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<Axis> axis;
    if (!axisIn(op.getMatchingIndexingMap(&operand), axis)) {
      whyNot = "an operand indexes the dimension by an expression";
      return std::nullopt;
    }
    info.inputs.push_back({operand.get(), axis});
  }
  for (OpResult result : op->getResults()) {
    std::optional<Axis> axis;
    axisIn(op.getIndexingMapMatchingResult(result), axis);
    if (!info.reducing && !axis) {
      whyNot = "a result does not carry the dimension";
      return std::nullopt;
    }
    info.results.push_back(info.reducing ? std::nullopt : axis);
  }
  // Tensors the body reads (tensor.extract): whole, unless indexed along
  // the split loop by linalg.index, then sliced like an operand.
  bool ok = true;
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value v : inner->getOperands()) {
      if (!isa<RankedTensorType>(v.getType()) ||
          op->isAncestor(v.getParentRegion()->getParentOp()))
        continue;
      std::optional<Axis> axis;
      if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
        for (auto [i, index] : llvm::enumerate(extract.getIndices())) {
          auto indexOp = index.getDefiningOp<linalg::IndexOp>();
          if (indexOp && indexOp.getDim() == loop && isStatic(v) &&
              fits(v, i, scale))
            axis = Axis{static_cast<unsigned>(i), scale};
        }
      } else {
        ok = false;
      }
      info.inputs.push_back({v, axis});
    }
  });
  if (!ok) {
    whyNot = "its body uses a tensor other than by tensor.extract";
    return std::nullopt;
  }
  return info;
}

std::optional<OpInfo> RegionGrower::describeReshape(
    Value src, Value result, ArrayRef<ReassociationIndices> groups,
    Value expanded, Value via, Axis axis, std::string &whyNot) const {
  // One side has a group of dimensions per dimension of the other; the
  // dimension is the outermost of its group, whose inner dimensions
  // multiply its scale on the collapsed side.
  Value collapsed = expanded == src ? result : src;
  auto expandedType = dyn_cast<RankedTensorType>(expanded.getType());
  if (!expandedType || !expandedType.hasStaticShape())
    return std::nullopt;
  std::optional<Axis> wide, narrow;
  for (auto [g, group] : llvm::enumerate(groups)) {
    int64_t inner = 1;
    for (int64_t d : ArrayRef<int64_t>(group).drop_front())
      inner *= expandedType.getDimSize(d);
    if (via == expanded && axis.dim == group.front()) {
      wide = axis;
      narrow = Axis{static_cast<unsigned>(g), axis.scale.times(inner)};
    } else if (via == collapsed && axis.dim == g) {
      narrow = axis;
      wide = Axis{static_cast<unsigned>(group.front()), axis.scale.over(inner)};
    }
  }
  if (!wide || !fits(expanded, wide->dim, wide->scale)) {
    whyNot = "the dimension is not the outermost of its reshape group";
    return std::nullopt;
  }
  OpInfo info;
  info.inputs.push_back({src, expanded == src ? *wide : *narrow});
  info.results.push_back(expanded == src ? *narrow : *wide);
  return info;
}

std::optional<OpInfo> RegionGrower::describe(Operation *op, Value via,
                                             Axis axis,
                                             std::string &whyNot) const {
  if (op->getBlock() != block) {
    whyNot = "in another block";
    return std::nullopt;
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    if (!empty.getType().hasStaticShape())
      return std::nullopt;
    OpInfo info;
    info.results.push_back(axis);
    return info;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return describeReshape(collapse.getSrc(), collapse.getResult(),
                           collapse.getReassociationIndices(),
                           /*expanded=*/collapse.getSrc(), via, axis, whyNot);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return describeReshape(expand.getSrc(), expand.getResult(),
                           expand.getReassociationIndices(),
                           /*expanded=*/expand.getResult(), via, axis, whyNot);
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    // Padding elsewhere: a slice of the padded tensor is the padded slice.
    if (!pad.getSourceType().hasStaticShape() ||
        !pad.getResultType().hasStaticShape())
      return std::nullopt;
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    if (axis.dim >= low.size() || low[axis.dim] != 0 || high[axis.dim] != 0 ||
        !fits(pad.getSource(), axis.dim, axis.scale)) {
      whyNot = "the dimension is padded";
      return std::nullopt;
    }
    OpInfo info;
    info.inputs.push_back({pad.getSource(), axis});
    info.results.push_back(axis);
    return info;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    // Inserted whole along the dimension (a dilation, a padding into a
    // filled destination): a slice of the result is the slice inserted
    // into the slice of the destination.
    if (!insert.getSourceType().hasStaticShape() ||
        !insert.getResultType().hasStaticShape() ||
        insert.getSourceType().getRank() != insert.getResultType().getRank() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticStrides()))
      return std::nullopt;
    unsigned d = axis.dim;
    if (d >= insert.getResultType().getRank() ||
        insert.getStaticOffsets()[d] != 0 ||
        insert.getStaticStrides()[d] != 1 ||
        insert.getSourceType().getDimSize(d) !=
            insert.getResultType().getDimSize(d) ||
        !fits(insert.getResult(), d, axis.scale)) {
      whyNot = "the dimension is not inserted whole";
      return std::nullopt;
    }
    OpInfo info;
    info.inputs.push_back({insert.getSource(), axis});
    info.inputs.push_back({insert.getDest(), axis});
    info.results.push_back(axis);
    return info;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp) {
    whyNot = "not a linalg op";
    return std::nullopt;
  }
  // The loop that indexes `via` at the axis.
  std::optional<unsigned> loop;
  auto loopOf = [&](AffineMap map) -> std::optional<unsigned> {
    if (axis.dim >= map.getNumResults())
      return std::nullopt;
    if (auto d = dyn_cast<AffineDimExpr>(map.getResult(axis.dim)))
      return d.getPosition();
    return std::nullopt;
  };
  if (auto result = dyn_cast<OpResult>(via); result && result.getOwner() == op)
    loop = loopOf(linalgOp.getIndexingMapMatchingResult(result));
  for (OpOperand &operand : op->getOpOperands())
    if (!loop && operand.get() == via)
      loop = loopOf(linalgOp.getMatchingIndexingMap(&operand));
  if (!loop) {
    // A tensor the body reads: the loop of the linalg.index at the axis.
    op->walk([&](tensor::ExtractOp extract) {
      if (loop || extract.getTensor() != via ||
          axis.dim >= extract.getIndices().size())
        return;
      if (auto index =
              extract.getIndices()[axis.dim].getDefiningOp<linalg::IndexOp>())
        loop = index.getDim();
    });
  }
  if (!loop) {
    bool read =
        llvm::any_of(op->getOperands(), [&](Value v) { return v == via; });
    if (!read)
      return describeGather(linalgOp, via, axis, whyNot);
    whyNot = "the dimension is not a loop of the op";
    return std::nullopt;
  }
  return describeLinalg(linalgOp, *loop, axis.scale, whyNot);
}

std::optional<OpInfo> RegionGrower::describeGather(linalg::LinalgOp op,
                                                   Value via, Axis axis,
                                                   std::string &whyNot) const {
  whyNot = "the dimension is not a loop of the op";
  auto generic = dyn_cast<linalg::GenericOp>(*op);
  if (!generic || !generic.hasPureTensorSemantics() ||
      !fits(via, axis.dim, axis.scale))
    return std::nullopt;
  if (!hasStaticShapes(op))
    return std::nullopt;
  // One read of `via`, in the body's own block; every other tensor the
  // body reads is read whole (by tensor.extract); no op of the body has
  // side effects (each point must be free to run in any one iteration).
  Block &body = generic.getRegion().front();
  tensor::ExtractOp gathered;
  unsigned reads = 0;
  bool ok = true;
  OpInfo info;
  info.scale = axis.scale;
  info.reducing = true;
  info.gather = true;
  for (Value v : op->getOperands())
    info.inputs.push_back({v, std::nullopt});
  op->walk([&](Operation *inner) {
    if (inner == op.getOperation())
      return;
    for (Value v : inner->getOperands()) {
      if (!isa<RankedTensorType>(v.getType()) ||
          op->isAncestor(v.getParentRegion()->getParentOp()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (!extract) {
        ok = false;
        continue;
      }
      if (v == via) {
        ++reads;
        gathered = extract;
        info.inputs.push_back({v, axis});
      } else {
        info.inputs.push_back({v, std::nullopt});
      }
    }
  });
  if (!ok || reads != 1 || gathered->getBlock() != &body ||
      axis.dim >= gathered.getIndices().size() ||
      !llvm::all_of(body.without_terminator(), [](Operation &inner) {
        return isMemoryEffectFree(&inner) || isa<tensor::ExtractOp>(inner);
      }))
    return std::nullopt;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    info.results.push_back(std::nullopt);
  whyNot.clear();
  return info;
}

bool RegionGrower::consistent(Operation *op, const OpInfo &info) const {
  // Inputs computed by the region must come as this op expects them.
  for (auto &[v, axis] : info.inputs) {
    Operation *producer = v.getDefiningOp();
    if (!producer || !members.count(producer))
      continue;
    auto it = resultAxis.find(v);
    std::optional<Axis> has;
    if (it != resultAxis.end())
      has = it->second;
    if (has != axis)
      return false;
  }
  // Members reading this op's results must expect what it gives.
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    if (pinned.contains(result) && info.results[i])
      return false;
    for (auto &[member, memberInfo] : members)
      for (auto &[v, axis] : memberInfo.inputs)
        if (v == result && axis != info.results[i])
          return false;
  }
  return true;
}

void RegionGrower::commit(Operation *op, OpInfo info) {
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (info.results[i])
      resultAxis[result] = *info.results[i];
  // A tensor read whole by a member may not be sliced: its producer stays
  // outside.
  for (auto &[v, axis] : info.inputs)
    if (!axis && isa<RankedTensorType>(v.getType()))
      pinned.insert(v);
  members.insert({op, std::move(info)});
}

bool RegionGrower::join(Operation *op, Value via, Axis axis) {
  std::string ignored;
  std::optional<OpInfo> described = describe(op, via, axis, ignored);
  if (!described || !consistent(op, *described))
    return false;
  commit(op, std::move(*described));
  return true;
}

void RegionGrower::remove(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    for (Value result : op->getResults())
      resultAxis.erase(result);
    members.erase(op);
  }
  pinned.clear();
  for (auto &[op, info] : members)
    for (auto &[v, axis] : info.inputs)
      if (!axis && isa<RankedTensorType>(v.getType()))
        pinned.insert(v);
}

LogicalResult RegionGrower::grow(std::string &whyNot) {
  std::optional<OpInfo> seed;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor)) {
    if (!linalgOp.hasPureTensorSemantics()) {
      whyNot = "it works on buffers (side effects)";
      return failure();
    }
    seed = describeLinalg(linalgOp, anchorDim, Scale{}, whyNot);
    if (seed && seed->reducing) {
      whyNot = "the dimension is a reduction";
      return failure();
    }
  } else if (anchor->getNumResults() == 1) {
    // A tensor op sliced along a dimension of its result (a padding, an
    // insertion, a reshape).
    seed = describe(anchor, anchor->getResult(0), Axis{anchorDim, Scale{}},
                    whyNot);
  } else {
    whyNot = "not an op that can be sliced";
  }
  if (!seed)
    return failure();
  if (growth == SplitGrowth::Reach) {
    commit(anchor, std::move(*seed));
    SmallVector<Operation *> worklist{anchor};
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      OpInfo info = members.lookup(op);
      // Producers of the inputs that carry the dimension.
      for (auto &[v, axis] : info.inputs) {
        Operation *producer = v.getDefiningOp();
        if (!axis || !producer || members.count(producer) ||
            producer->getBlock() != block || pinned.contains(v))
          continue;
        if (!isCheapInit(producer) && tensorBytes(v) < minBytes)
          continue;
        if (join(producer, v, *axis))
          worklist.push_back(producer);
      }
      // Consumers of the large results.
      for (auto [i, result] : llvm::enumerate(op->getResults())) {
        if (!info.results[i] || tensorBytes(result) < minBytes)
          continue;
        for (OpOperand &use : result.getUses()) {
          Operation *user = block->findAncestorOpInBlock(*use.getOwner());
          if (!user || members.count(user))
            continue;
          if (join(user, result, *info.results[i]))
            worklist.push_back(user);
        }
      }
    }
  } else {
    growGreedy(std::move(*seed));
  }
  // Keep block order.
  SmallVector<std::pair<Operation *, OpInfo>> sorted(members.takeVector());
  llvm::sort(sorted, [](auto &a, auto &b) {
    return a.first->isBeforeInBlock(b.first);
  });
  for (auto &entry : sorted)
    members.insert(std::move(entry));
  if (growth == SplitGrowth::Greedy)
    shrink();
  return prune(whyNot);
}

void RegionGrower::growGreedy(OpInfo seed) {
  // Adds `op` and the empties and fills of its inputs that carry the
  // dimension (they come with it: sliced, they cost nothing whole).
  auto addWithInits = [&](Operation *op, OpInfo info) {
    SmallVector<Operation *> added{op};
    commit(op, std::move(info));
    for (size_t i = 0; i < added.size(); ++i) {
      OpInfo current = members.lookup(added[i]);
      for (auto &[v, axis] : current.inputs) {
        Operation *producer = v.getDefiningOp();
        if (!axis || !producer || !isCheapInit(producer) ||
            members.count(producer) || producer->getBlock() != block ||
            pinned.contains(v))
          continue;
        if (join(producer, v, *axis))
          added.push_back(producer);
      }
    }
    return added;
  };
  auto regionEstimate = [&]() {
    DenseSet<Operation *> region;
    for (auto &[op, info] : members)
      region.insert(op);
    return estimate(region);
  };
  addWithInits(anchor, std::move(seed));
  // Best first: the neighbour (producer or consumer over a large tensor
  // that carries the dimension) that leaves the loops the fewest whole
  // bytes. A step may change nothing or little (a reshape, an op between
  // two large tensors, small side inputs) when later steps pay for it: the
  // region kept is the one with the fewest whole bytes seen, the steps
  // after it are given back.
  constexpr unsigned kStepsWithoutGain = 16, kMaxMembers = 256;
  SmallVector<Operation *> order;
  for (auto &[op, info] : members)
    order.push_back(op);
  auto best = regionEstimate();
  size_t bestSize = order.size();
  unsigned sinceBest = 0;
  while (members.size() < kMaxMembers && sinceBest < kStepsWithoutGain) {
    struct Candidate {
      Operation *op;
      Value via;
      Axis axis;
    };
    SmallVector<Candidate> candidates;
    DenseSet<Operation *> seen;
    for (auto &[op, info] : members) {
      for (auto &[v, axis] : info.inputs) {
        Operation *producer = v.getDefiningOp();
        if (!axis || !producer || members.count(producer) ||
            producer->getBlock() != block || pinned.contains(v) ||
            tensorBytes(v) < minBytes || !seen.insert(producer).second)
          continue;
        candidates.push_back({producer, v, *axis});
      }
      if (info.reducing)
        continue;
      for (auto [i, result] : llvm::enumerate(op->getResults())) {
        if (!info.results[i] || tensorBytes(result) < minBytes)
          continue;
        for (Operation *user : result.getUsers()) {
          Operation *ancestor = block->findAncestorOpInBlock(*user);
          if (!ancestor || members.count(ancestor) ||
              !seen.insert(ancestor).second)
            continue;
          candidates.push_back({ancestor, result, *info.results[i]});
        }
      }
    }
    std::optional<std::pair<size_t, std::pair<uint64_t, uint64_t>>> next;
    for (auto [c, candidate] : llvm::enumerate(candidates)) {
      std::string ignored;
      std::optional<OpInfo> described =
          describe(candidate.op, candidate.via, candidate.axis, ignored);
      if (!described || !consistent(candidate.op, *described))
        continue;
      SmallVector<Operation *> added =
          addWithInits(candidate.op, std::move(*described));
      auto bytes = regionEstimate();
      remove(added);
      if (!next || bytes < next->second)
        next = {c, bytes};
    }
    // Clearly worse (a tensor of the size that matters more, whole): stop.
    if (!next || next->second.first >= best.first + minBytes)
      break;
    Candidate &chosen = candidates[next->first];
    std::string ignored;
    std::optional<OpInfo> described =
        describe(chosen.op, chosen.via, chosen.axis, ignored);
    for (Operation *op : addWithInits(chosen.op, std::move(*described)))
      order.push_back(op);
    if (next->second < best) {
      best = next->second;
      bestSize = order.size();
      sinceBest = 0;
    } else {
      ++sinceBest;
    }
  }
  remove(ArrayRef<Operation *>(order).drop_front(bestSize));
}

Value RegionGrower::viewedValue(
    Operation *op, llvm::function_ref<bool(Operation *)> inRegion) const {
  while (isReshape(op)) {
    Value source = op->getOperand(0);
    Operation *producer = source.getDefiningOp();
    if (!producer || !inRegion(producer) || !members.count(producer))
      return {};
    if (!isReshape(producer)) {
      const OpInfo &info = members.find(producer)->second;
      if (info.reducing || info.gather || isa<tensor::EmptyOp>(producer) ||
          !resultAxis.count(source))
        return {};
      return source;
    }
    op = producer;
  }
  return {};
}

std::pair<uint64_t, uint64_t>
RegionGrower::estimate(const DenseSet<Operation *> &region) const {
  // What the loops hold at once, roughly: the tensors they read from
  // outside and the ones they give out, whole; and the tensors only they
  // use, of which a slice at a time. A view given out is made after the
  // loops on the whole value it views (viewedValue): that value counts.
  uint64_t whole = 0, internal = 0;
  auto readOutside = [&](Value result) {
    return llvm::any_of(result.getUsers(), [&](Operation *user) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      return !ancestor || !region.contains(ancestor);
    });
  };
  auto inRegion = [&](Operation *op) { return region.contains(op); };
  DenseSet<Value> viewed;
  DenseSet<Operation *> views;
  for (Operation *op : region)
    if (isReshape(op) && readOutside(op->getResult(0)))
      if (Value root = viewedValue(op, inRegion)) {
        viewed.insert(root);
        views.insert(op);
      }
  DenseSet<Value> inputs;
  for (Operation *op : region) {
    const OpInfo &info = members.find(op)->second;
    for (auto &[v, axis] : info.inputs) {
      Operation *producer = v.getDefiningOp();
      if ((!producer || !region.contains(producer)) && inputs.insert(v).second)
        whole += tensorBytes(v);
    }
    if (views.contains(op))
      continue;
    for (OpResult result : op->getResults()) {
      if (readOutside(result) || viewed.contains(result) || info.reducing)
        whole += tensorBytes(result);
      else
        internal += tensorBytes(result);
    }
  }
  return {whole, internal};
}

void RegionGrower::shrink() {
  // Drop members while that lowers the estimate: a neighbour that reads
  // more whole tensors than it makes internal does not pay.
  DenseSet<Operation *> region;
  for (auto &[op, info] : members)
    region.insert(op);
  auto current = estimate(region);
  while (true) {
    Operation *drop = nullptr;
    auto best = current;
    for (auto &[op, info] : members) {
      if (op == anchor || !region.contains(op))
        continue;
      region.erase(op);
      auto without = estimate(region);
      region.insert(op);
      if (without.first < best.first ||
          (without.first == best.first && without.second < best.second)) {
        best = without;
        drop = op;
      }
    }
    if (!drop)
      break;
    region.erase(drop);
    current = best;
  }
  SmallVector<Operation *> dropped;
  for (auto &[op, info] : members)
    if (!region.contains(op))
      dropped.push_back(op);
  remove(dropped);
}

LogicalResult RegionGrower::prune(std::string &whyNot) {
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(*block))
    position[&op] = i;
  // A loop runs after its last op (and after the loop before it); a member
  // whose result something outside the region reads before then leaves the
  // region (its value is then computed whole, where it was), until every
  // loop can be placed.
  while (true) {
    assignLoops();
    SmallVector<unsigned> loopEnd;
    for (auto &[op, info] : members) {
      if (loopEnd.size() <= info.firstLoop)
        loopEnd.resize(info.firstLoop + 1, 0);
      loopEnd[info.firstLoop] = std::max(loopEnd[info.firstLoop], position[op]);
    }
    for (size_t k = 1; k < loopEnd.size(); ++k)
      loopEnd[k] = std::max(loopEnd[k], loopEnd[k - 1]);
    Operation *leaving = nullptr;
    Operation *reader = nullptr;
    for (auto &[op, info] : members) {
      for (Operation *user : op->getUsers()) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        if (!ancestor || members.count(ancestor) ||
            position[ancestor] > loopEnd[info.firstLoop])
          continue;
        leaving = op;
        reader = ancestor;
        break;
      }
      if (leaving)
        break;
    }
    if (!leaving)
      return success();
    // Prefer ending the loop before the reader: drop the members of that
    // loop after it (when the anchor is not one of them).
    unsigned loopOf = members.lookup(leaving).firstLoop;
    SmallVector<Operation *> later;
    for (auto &[op, info] : members)
      if (info.firstLoop >= loopOf && position[op] > position[reader])
        later.push_back(op);
    if (!later.empty() && !llvm::is_contained(later, anchor)) {
      remove(later);
      continue;
    }
    if (leaving == anchor) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "its result is read by '" << reader->getName() << "' at "
         << reader->getLoc() << " before a loop over slices could end";
      whyNot = text;
      return failure();
    }
    remove(leaving);
  }
}

/// The body of `op` (one input and one init) is `yield max(in, acc)`.
static bool isMaxReduction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *max = yield.getValues()[0].getDefiningOp();
  if (!max || !isa<arith::MaximumFOp, arith::MaxNumFOp>(max) ||
      max->getBlock() != &body)
    return false;
  Value in = body.getArgument(0), acc = body.getArgument(1);
  return (max->getOperand(0) == in && max->getOperand(1) == acc) ||
         (max->getOperand(0) == acc && max->getOperand(1) == in);
}

/// Where `op` is `sum += exp(x - m)` over the split loop, with `m` the
/// maximum of the same `x` that the member `max` computes over the same
/// loop (the log-softmax and softmax exporters write), and a sum that
/// starts at zero: the operand number of `m`.
static std::optional<unsigned>
matchShiftedExpSum(linalg::GenericOp op,
                   const llvm::MapVector<Operation *, OpInfo> &members,
                   Operation *&max) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != &body)
    return std::nullopt;
  Value acc = body.getArguments().back();
  Value term = add.getLhs() == acc   ? add.getRhs()
               : add.getRhs() == acc ? add.getLhs()
                                     : Value();
  auto exp = term ? term.getDefiningOp<math::ExpOp>() : nullptr;
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  if (!sub || sub->getBlock() != &body)
    return std::nullopt;
  auto xArg = dyn_cast<BlockArgument>(sub.getLhs());
  auto mArg = dyn_cast<BlockArgument>(sub.getRhs());
  if (!xArg || !mArg || xArg.getOwner() != &body || mArg.getOwner() != &body ||
      xArg == mArg || xArg.getArgNumber() >= op.getNumDpsInputs() ||
      mArg.getArgNumber() >= op.getNumDpsInputs())
    return std::nullopt;
  // m counts only in x - m.
  if (!mArg.hasOneUse())
    return std::nullopt;
  OpOperand *xOperand = op.getDpsInputOperand(xArg.getArgNumber());
  OpOperand *mOperand = op.getDpsInputOperand(mArg.getArgNumber());
  OpOperand *init = op.getDpsInitOperand(0);
  auto maxOp = mOperand->get().getDefiningOp<linalg::GenericOp>();
  if (!maxOp || !members.count(maxOp) || !isMaxReduction(maxOp) ||
      maxOp.getDpsInputOperand(0)->get() != xOperand->get())
    return std::nullopt;
  const OpInfo &sumInfo = members.lookup(op);
  const OpInfo &maxInfo = members.lookup(maxOp);
  if (!sumInfo.reducing || !maxInfo.reducing || sumInfo.gather ||
      maxInfo.gather || sumInfo.loop != maxInfo.loop)
    return std::nullopt;
  // Element (i) of the sum reads element (i) of the maximum, which is the
  // maximum over the same elements of x.
  if (op.getIteratorTypesArray() != maxOp.getIteratorTypesArray() ||
      op.getMatchingIndexingMap(mOperand) != op.getMatchingIndexingMap(init) ||
      op.getMatchingIndexingMap(xOperand) !=
          maxOp.getMatchingIndexingMap(maxOp.getDpsInputOperand(0)) ||
      op.getMatchingIndexingMap(init) !=
          maxOp.getMatchingIndexingMap(maxOp.getDpsInitOperand(0)) ||
      op->getResult(0).getType() != maxOp->getResult(0).getType() ||
      !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
    return std::nullopt;
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
      !maxOp.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>())
    return std::nullopt;
  // The body's other ops do not read the sum's inputs through other paths:
  // only x, m and the accumulator, each once.
  if (!xArg.hasOneUse() || !acc.hasOneUse() || !sub->hasOneUse() ||
      !exp->hasOneUse() || llvm::range_size(body.without_terminator()) != 3)
    return std::nullopt;
  max = maxOp;
  return mArg.getArgNumber();
}

void RegionGrower::assignLoops() {
  for (auto &[op, info] : members) {
    info.onlineMax = nullptr;
    Operation *max = nullptr;
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!online || !generic)
      continue;
    if (std::optional<unsigned> operand =
            matchShiftedExpSum(generic, members, max)) {
      info.onlineMax = max;
      info.onlineOperand = *operand;
    }
  }
  for (auto &[op, info] : members) {
    unsigned first = 0;
    for (auto &[v, axis] : info.inputs) {
      Operation *producer = v.getDefiningOp();
      auto it = producer ? members.find(producer) : members.end();
      if (it == members.end())
        continue;
      bool sameLoop = !it->second.reducing || producer == info.onlineMax;
      first = std::max(first, it->second.firstLoop + (sameLoop ? 0u : 1u));
    }
    info.firstLoop = first;
  }
  // An op whose results only the region reads runs first in the earliest
  // loop that reads them (no earlier: a fill of a destination would
  // otherwise pin a later loop's init in an earlier one).
  for (auto &entry : llvm::reverse(members)) {
    Operation *op = entry.first;
    OpInfo &info = entry.second;
    if (info.reducing)
      continue;
    std::optional<unsigned> earliest;
    bool onlyRegion = true;
    for (Operation *user : op->getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      auto it = ancestor ? members.find(ancestor) : members.end();
      if (it == members.end()) {
        onlyRegion = false;
        break;
      }
      earliest = std::min(earliest.value_or(it->second.firstLoop),
                          it->second.firstLoop);
    }
    if (onlyRegion && earliest)
      info.firstLoop = std::max(info.firstLoop, *earliest);
  }
}

int64_t RegionGrower::granularity() const {
  int64_t g = 1;
  auto add = [&](Scale s) { g = std::lcm(g, s.den); };
  for (auto &[op, info] : members) {
    add(info.scale);
    for (auto &axis : info.results)
      if (axis)
        add(axis->scale);
    for (auto &[v, axis] : info.inputs)
      if (axis)
        add(axis->scale);
  }
  return g;
}

uint64_t RegionGrower::internalBytes() const {
  uint64_t bytes = 0;
  for (auto &[op, info] : members)
    for (auto [i, result] : llvm::enumerate(op->getResults())) {
      if (!info.results[i])
        continue;
      bool internal = llvm::all_of(result.getUsers(), [&](Operation *user) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        return ancestor && members.count(ancestor);
      });
      if (internal)
        bytes += tensorBytes(result);
    }
  return bytes;
}

SmallVector<int64_t> SplitRegion::sliceCounts() const {
  SmallVector<int64_t> counts;
  for (int64_t k = 2; k <= extent; ++k)
    if (extent % k == 0 && (extent / k) % granularity == 0)
      counts.push_back(k);
  return counts;
}

static uint64_t defaultMinBytes(Operation *anchor) {
  uint64_t largest = 0;
  for (Value v : anchor->getOperands())
    largest = std::max(largest, tensorBytes(v));
  for (Value v : anchor->getResults())
    largest = std::max(largest, tensorBytes(v));
  return std::max<uint64_t>(largest / 4, 1);
}

FailureOr<SplitRegion>
mlir::lms::findSplitRegion(Operation *anchor, uint64_t minBytes,
                           std::string &whyNot, std::optional<unsigned> loop,
                           SplitGrowth growth, bool online) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor);
  bool sliceable =
      linalgOp ? linalgOp.hasPureTensorSemantics()
               : isa<tensor::PadOp, tensor::InsertSliceOp,
                     tensor::CollapseShapeOp, tensor::ExpandShapeOp>(anchor);
  if (!sliceable) {
    whyNot = "'" + anchor->getName().getStringRef().str() +
             "' is not a linalg op on tensors, a padding, an insertion or a "
             "reshape (only those are split)";
    return failure();
  }
  if (!hasStaticShapes(anchor)) {
    whyNot = "its shapes are dynamic (only static shapes are split)";
    return failure();
  }
  if (!minBytes)
    minBytes = defaultMinBytes(anchor);
  // The loops of a linalg op; the result's dimensions of another op.
  SmallVector<int64_t> ranges;
  SmallVector<utils::IteratorType> iterators;
  if (linalgOp) {
    ranges = linalgOp.getStaticLoopRanges();
    iterators = linalgOp.getIteratorTypesArray();
  } else {
    ranges = llvm::to_vector(
        cast<RankedTensorType>(anchor->getResult(0).getType()).getShape());
    iterators.assign(ranges.size(), utils::IteratorType::parallel);
  }
  std::optional<SplitRegion> best;
  std::string reasons;
  if (loop && *loop >= ranges.size()) {
    whyNot = "the op has " + std::to_string(ranges.size()) +
             " loops, no loop " + std::to_string(*loop);
    return failure();
  }
  if (loop && iterators[*loop] != utils::IteratorType::parallel) {
    whyNot = "loop " + std::to_string(*loop) + " is a reduction";
    return failure();
  }
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (loop && d != *loop)
      continue;
    if (iterators[d] != utils::IteratorType::parallel ||
        ShapedType::isDynamic(ranges[d]) || ranges[d] < 2)
      continue;
    RegionGrower grower(anchor, d, ranges[d], minBytes);
    grower.growth = growth;
    grower.online = online;
    std::string why;
    if (failed(grower.grow(why))) {
      reasons += (reasons.empty() ? "" : "; ") + ("loop " + std::to_string(d)) +
                 ": " + why;
      continue;
    }
    SplitRegion region;
    region.anchor = anchor;
    region.dim = d;
    region.extent = ranges[d];
    region.granularity = grower.granularity();
    region.minBytes = minBytes;
    region.growth = growth;
    region.online = online;
    for (auto &[op, info] : grower.members) {
      region.ops.push_back(op);
      region.numLoops = std::max(region.numLoops, info.firstLoop + 1);
    }
    region.internalBytes = grower.internalBytes();
    if (region.sliceCounts().empty())
      continue;
    if (!best || region.internalBytes > best->internalBytes)
      best = std::move(region);
  }
  if (!best) {
    whyNot = reasons.empty() ? "no parallel loop of static extent of at "
                               "least 2 that can be sliced"
                             : reasons;
    return failure();
  }
  return *best;
}

namespace {

/// Builds the loops of a region.
class SplitBuilder {
public:
  SplitBuilder(RegionGrower &grower, int64_t slices)
      : grower(grower), slices(slices), sliceSize(grower.extent / slices) {}

  LogicalResult build(std::string &whyNot, SmallVectorImpl<Operation *> *loops);

private:
  RegionGrower &grower;
  int64_t slices;
  int64_t sliceSize;
  SmallVector<Operation *> created;

  bool isMember(Operation *op) const { return op && grower.members.count(op); }
  int64_t elements(Scale s) const { return sliceSize * s.num / s.den; }
  LogicalResult buildLoop(unsigned k, Operation *&after,
                          DenseMap<Value, Value> &finals, std::string &whyNot);
};

/// The op that combines two maxima in `max`'s body (maximumf or maxnumf).
static Value combineMax(OpBuilder &b, Location loc, Operation *max, Value lhs,
                        Value rhs) {
  Operation *body = cast<linalg::GenericOp>(max)
                        .getRegion()
                        .front()
                        .getTerminator()
                        ->getOperand(0)
                        .getDefiningOp();
  if (isa<arith::MaxNumFOp>(body))
    return arith::MaxNumFOp::create(b, loc, lhs, rhs);
  return arith::MaximumFOp::create(b, loc, lhs, rhs);
}

/// Turns `tiled`, the slice of `sum += exp(x - m)` computed in the loop of
/// `max` (m's op), into the online form (a running maximum and a rescaled
/// sum, as online softmax and flash attention compute them). In each
/// iteration, with m_before the maximum so far and s the sum so far:
///
///   slice = the maximum of this slice (max's slice, from its own init)
///   s'    = s * exp(m_before - m_now), m_now = max(m_before, slice)
///           (1 where they are equal, so that -inf - -inf is not NaN)
///   m     = max(m_before, slice), in place of m_before
///   s     = s' + sum(exp(x - m_now)), x - m_now read as x - 0 while m_now
///           is -inf (every element so far -inf: its terms are 0, as they
///           are against the complete maximum)
///
/// After the last slice s is the sum shifted by the complete maximum. Each
/// op reads m_before before it is overwritten, so bufferization keeps both
/// loop-carried values in place. `combined` remembers the in-place
/// maximum made for each max op, which a second sum over it shares.
LogicalResult makeOnline(linalg::GenericOp tiled, unsigned mIndex,
                         Operation *max, ArrayRef<Value> reducedResults,
                         const DenseMap<Value, Value> &reducedInit,
                         MutableArrayRef<Value> yields,
                         DenseMap<Operation *, Operation *> &combined) {
  Value maxResult = max->getResult(0);
  auto it = llvm::find(reducedResults, maxResult);
  Value before = reducedInit.lookup(maxResult);
  if (it == reducedResults.end() || !before)
    return failure();
  Value &yielded = yields[it - reducedResults.begin()];
  if (!yielded)
    return failure();
  Location loc = tiled.getLoc();
  OpOperand *init = tiled.getDpsInitOperand(0);
  Value sum = init->get();
  auto type = cast<RankedTensorType>(sum.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  if (before.getType() != type || yielded.getType() != type)
    return failure();
  SmallVector<AffineMap> maps(
      3, AffineMap::getMultiDimIdentityMap(type.getRank(), tiled.getContext()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  Operation *combine = combined.lookup(max);
  if (!combine) {
    // The slice's maximum, from a fresh init filled as max's own.
    auto tiledMax = yielded.getDefiningOp<linalg::GenericOp>();
    auto fill = cast<linalg::GenericOp>(max)
                    .getDpsInitOperand(0)
                    ->get()
                    .getDefiningOp<linalg::FillOp>();
    if (!tiledMax || !fill)
      return failure();
    OpBuilder fb(tiledMax);
    Value empty =
        tensor::EmptyOp::create(fb, loc, type.getShape(), elementType);
    Value fresh =
        linalg::FillOp::create(fb, loc, fill.getInputs()[0], empty).result();
    tiledMax.getDpsInitOperand(0)->set(fresh);
    OpBuilder cb(tiled);
    auto merged = linalg::GenericOp::create(
        cb, loc, TypeRange{type}, ValueRange{yielded}, ValueRange{before},
        ArrayRef<AffineMap>(maps).take_front(2), iterators,
        [&](OpBuilder &nb, Location loc, ValueRange args) {
          linalg::YieldOp::create(nb, loc,
                                  combineMax(nb, loc, max, args[1], args[0]));
        });
    combine = merged;
    combined[max] = merged;
    yielded = merged->getResult(0);
  }
  Value sliceMax = combine->getOperand(0);
  // s * exp(m_before - m_now), before m_before is overwritten.
  OpBuilder b(combine);
  auto rescale = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{before, sliceMax}, ValueRange{sum},
      maps, iterators, [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value now = combineMax(nb, loc, max, args[0], args[1]);
        Value same = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ,
                                           args[0], now);
        Value diff = arith::SubFOp::create(nb, loc, args[0], now);
        Value factor = math::ExpOp::create(nb, loc, diff);
        Value one = arith::ConstantOp::create(
            nb, loc, elementType, nb.getFloatAttr(elementType, 1.0));
        Value scale = arith::SelectOp::create(nb, loc, same, one, factor);
        Value scaled = arith::MulFOp::create(nb, loc, args[2], scale);
        linalg::YieldOp::create(nb, loc, scaled);
      });
  init->set(rescale->getResult(0));
  tiled.getDpsInputOperand(mIndex)->set(combine->getResult(0));
  // x - m, with m = -inf read as 0.
  Block &body = tiled.getRegion().front();
  BlockArgument m = body.getArgument(mIndex);
  auto sub = cast<arith::SubFOp>(*m.getUsers().begin());
  OpBuilder ib(sub);
  Value ninf = arith::ConstantOp::create(
      ib, loc, elementType,
      ib.getFloatAttr(elementType,
                      APFloat::getInf(elementType.getFloatSemantics(), true)));
  Value zero = arith::ConstantOp::create(ib, loc, elementType,
                                         ib.getFloatAttr(elementType, 0.0));
  Value isNinf =
      arith::CmpFOp::create(ib, loc, arith::CmpFPredicate::OEQ, m, ninf);
  Value shift = arith::SelectOp::create(ib, loc, isNinf, zero, m);
  sub.getRhsMutable().assign(shift);
  return success();
}

} // namespace

LogicalResult SplitBuilder::buildLoop(unsigned k, Operation *&after,
                                      DenseMap<Value, Value> &finals,
                                      std::string &whyNot) {
  auto &members = grower.members;
  Block *block = grower.block;
  // The ops of this loop: those that run first in it, and the producers
  // from earlier loops whose slices they need again (not reductions).
  SetVector<Operation *> ops;
  SmallVector<Operation *> primary;
  for (auto &[op, info] : members)
    if (info.firstLoop == k) {
      ops.insert(op);
      primary.push_back(op);
    }
  if (primary.empty())
    return success();
  for (size_t i = 0; i < ops.size(); ++i)
    for (auto &[v, axis] : members.lookup(ops[i]).inputs) {
      Operation *producer = v.getDefiningOp();
      if (!isMember(producer) || members.lookup(producer).reducing ||
          members.lookup(producer).firstLoop >= k)
        continue;
      ops.insert(producer);
    }
  SmallVector<Operation *> order(ops.begin(), ops.end());
  llvm::sort(order,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  // Loop-carried values: the inits of reductions, then the values used
  // outside the region, assembled whole.
  SmallVector<Value> reducedResults, carriedInits;
  SmallVector<std::pair<Value, Axis>> assembled;
  // Views read outside the region, and the assembled values they view.
  SmallVector<std::pair<Value, Value>> views;
  for (Operation *op : primary) {
    const OpInfo &info = members.lookup(op);
    if (info.reducing) {
      auto dps = cast<DestinationStyleOpInterface>(op);
      for (auto [i, init] : llvm::enumerate(dps.getDpsInits())) {
        reducedResults.push_back(op->getResult(i));
        carriedInits.push_back(init);
      }
      continue;
    }
    for (auto [i, result] : llvm::enumerate(op->getResults())) {
      bool outside = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !isMember(block->findAncestorOpInBlock(*user));
      });
      if (!outside)
        continue;
      // A view of a value this loop computes: made again after the loop.
      if (Value root = grower.viewedValue(op, [&](Operation *producer) {
            return isMember(producer) &&
                   members.lookup(producer).firstLoop == k;
          })) {
        views.push_back({result, root});
        continue;
      }
      assembled.push_back({result, *info.results[i]});
    }
  }
  for (auto &[view, root] : views)
    if (llvm::none_of(assembled,
                      [&](auto &entry) { return entry.first == root; }))
      assembled.push_back({root, grower.resultAxis.lookup(root)});
  // The loop goes after its last op (and after the previous loop); every
  // outside use of what it computes must come later.
  Operation *last = primary.back();
  Operation *position = after && last->isBeforeInBlock(after) ? after : last;
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(position);
  auto checkUses = [&](Value v) -> bool {
    for (Operation *user : v.getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || isMember(ancestor))
        continue;
      if (!position->isBeforeInBlock(ancestor)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "a value of the region is used by '" << ancestor->getName()
           << "' at " << ancestor->getLoc()
           << ", before the loop that computes it ends";
        whyNot = text;
        return false;
      }
    }
    return true;
  };
  for (Value v : reducedResults)
    if (!checkUses(v))
      return failure();
  for (auto &[v, axis] : assembled)
    if (!checkUses(v))
      return failure();
  for (auto &[view, root] : views)
    if (!checkUses(view))
      return failure();

  Location loc = grower.anchor->getLoc();
  auto index = [&](OpBuilder &builder, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  Value lb = index(b, 0), ub = index(b, grower.extent),
        step = index(b, sliceSize);
  created.push_back(lb.getDefiningOp());
  created.push_back(ub.getDefiningOp());
  created.push_back(step.getDefiningOp());
  SmallVector<Value> inits(carriedInits);
  for (auto &[v, axis] : assembled) {
    auto type = cast<RankedTensorType>(v.getType());
    auto empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    created.push_back(empty);
    inits.push_back(empty);
  }

  LogicalResult status = success();
  auto forOp = scf::ForOp::create(
      b, loc, lb, ub, step, inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
        DenseMap<Value, Value> tiles;
        DenseMap<std::pair<int64_t, int64_t>, Value> offsets;
        auto offsetOf = [&](Scale s) -> Value {
          auto key = std::make_pair(s.num, s.den);
          if (Value cached = offsets.lookup(key))
            return cached;
          Value v = iv;
          if (s.num != 1)
            v = arith::MulIOp::create(nb, loc, v, index(nb, s.num));
          if (s.den != 1)
            v = arith::DivUIOp::create(nb, loc, v, index(nb, s.den));
          offsets[key] = v;
          return v;
        };
        auto tileType = [&](Value v, Axis axis) {
          auto type = cast<RankedTensorType>(v.getType());
          SmallVector<int64_t> shape(type.getShape());
          shape[axis.dim] = elements(axis.scale);
          return RankedTensorType::get(shape, type.getElementType());
        };
        auto sliceParams = [&](Value v, Axis axis,
                               SmallVector<OpFoldResult> &offs,
                               SmallVector<OpFoldResult> &sizes,
                               SmallVector<OpFoldResult> &strides) {
          auto type = cast<RankedTensorType>(v.getType());
          for (int64_t d = 0; d < type.getRank(); ++d) {
            bool split = d == axis.dim;
            offs.push_back(split ? OpFoldResult(offsetOf(axis.scale))
                                 : OpFoldResult(nb.getIndexAttr(0)));
            sizes.push_back(nb.getIndexAttr(split ? elements(axis.scale)
                                                  : type.getDimSize(d)));
            strides.push_back(nb.getIndexAttr(1));
          }
        };
        // The slice of `v` for this iteration: computed here, or cut from
        // the whole value computed outside.
        auto tileOf = [&](Value v, Axis axis) -> Value {
          if (Value t = tiles.lookup(v))
            return t;
          SmallVector<OpFoldResult> offs, sizes, strides;
          sliceParams(v, axis, offs, sizes, strides);
          return tensor::ExtractSliceOp::create(nb, loc, tileType(v, axis), v,
                                                offs, sizes, strides);
        };
        DenseMap<Value, Value> reducedInit;
        for (auto [i, v] : llvm::enumerate(reducedResults))
          reducedInit[v] = args[i];
        SmallVector<Value> yields(reducedResults.size());
        DenseMap<Operation *, Operation *> combined;

        for (Operation *op : order) {
          if (failed(status))
            break;
          const OpInfo &info = members.lookup(op);
          if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
            RankedTensorType type = tileType(empty, *info.results[0]);
            tiles[empty] = tensor::EmptyOp::create(nb, loc, type.getShape(),
                                                   type.getElementType());
            continue;
          }
          if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
            Value src = tileOf(collapse.getSrc(), *info.inputs[0].second);
            tiles[collapse] = tensor::CollapseShapeOp::create(
                nb, loc, src, collapse.getReassociationIndices());
            continue;
          }
          if (isa<tensor::PadOp, tensor::InsertSliceOp>(op)) {
            // The same op on the slices of its tensors, its type narrowed.
            IRMapping mapping;
            for (auto &[v, axis] : info.inputs)
              if (axis)
                mapping.map(v, tileOf(v, *axis));
            Operation *clone = nb.clone(*op, mapping);
            RankedTensorType type =
                tileType(op->getResult(0), *info.results[0]);
            clone->getResult(0).setType(type);
            if (auto insert = dyn_cast<tensor::InsertSliceOp>(clone)) {
              SmallVector<int64_t> sizes(insert.getStaticSizes());
              sizes[info.results[0]->dim] =
                  type.getDimSize(info.results[0]->dim);
              insert.setStaticSizes(sizes);
            }
            tiles[op->getResult(0)] = clone->getResult(0);
            continue;
          }
          if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
            Value src = tileOf(expand.getSrc(), *info.inputs[0].second);
            tiles[expand] = tensor::ExpandShapeOp::create(
                nb, loc, tileType(expand, *info.results[0]), src,
                expand.getReassociationIndices());
            continue;
          }
          if (info.gather) {
            // The whole op on this iteration's slice; a point whose index
            // falls outside the slice yields its outputs unchanged.
            Value via;
            Axis axis;
            for (auto &[v, a] : info.inputs)
              if (a) {
                via = v;
                axis = *a;
              }
            Value tile = tileOf(via, axis);
            Value offset = offsetOf(axis.scale);
            Value size = index(nb, elements(axis.scale));
            Operation *clone = nb.clone(*op);
            auto dps = cast<DestinationStyleOpInterface>(clone);
            for (auto [i, init] : llvm::enumerate(dps.getDpsInitsMutable()))
              init.set(reducedInit.lookup(op->getResult(i)));
            tensor::ExtractOp extract;
            clone->walk([&](tensor::ExtractOp e) {
              if (e.getTensor() == via)
                extract = e;
            });
            OpBuilder ib(extract);
            Value at = extract.getIndices()[axis.dim];
            Value local = arith::SubIOp::create(ib, loc, at, offset);
            Value inside = arith::CmpIOp::create(
                ib, loc, arith::CmpIPredicate::ult, local, size);
            Value zero = arith::ConstantIndexOp::create(ib, loc, 0);
            Value safe = arith::SelectOp::create(ib, loc, inside, local, zero);
            extract.getTensorMutable().assign(tile);
            extract.getIndicesMutable()[axis.dim].assign(safe);
            auto generic = cast<linalg::GenericOp>(clone);
            Block &body = generic.getRegion().front();
            Operation *yield = body.getTerminator();
            OpBuilder yb(yield);
            for (OpOperand &operand : yield->getOpOperands()) {
              Value kept = body.getArgument(generic.getNumDpsInputs() +
                                            operand.getOperandNumber());
              operand.set(arith::SelectOp::create(yb, loc, inside,
                                                  operand.get(), kept));
            }
            for (auto [i, value] : llvm::enumerate(clone->getResults())) {
              auto it = llvm::find(reducedResults, op->getResult(i));
              yields[it - reducedResults.begin()] = value;
            }
            continue;
          }
          auto linalgOp = cast<linalg::LinalgOp>(op);
          SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
          SmallVector<OpFoldResult> offs, sizes;
          for (auto [d, range] : llvm::enumerate(ranges)) {
            bool split = d == *info.loop;
            offs.push_back(split ? OpFoldResult(offsetOf(info.scale))
                                 : OpFoldResult(nb.getIndexAttr(0)));
            sizes.push_back(
                nb.getIndexAttr(split ? elements(info.scale) : range));
          }
          FailureOr<TilingResult> tiled =
              cast<TilingInterface>(op).getTiledImplementation(nb, offs, sizes);
          if (failed(tiled) || tiled->tiledOps.size() != 1) {
            whyNot = "the op's tiling failed";
            status = failure();
            break;
          }
          Operation *tiledOp = tiled->tiledOps.front();
          // Operands computed in this iteration: their slices.
          for (OpOperand &operand : tiledOp->getOpOperands()) {
            auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
            if (!slice)
              continue;
            Value tile = tiles.lookup(slice.getSource());
            if (!tile)
              continue;
            if (tile.getType() == slice.getType()) {
              operand.set(tile);
              continue;
            }
            // A window of the slice (a convolution's or pooling's operand
            // reads less than the whole of the other dimensions): the same
            // window of the tile, which starts at the slice's offset along
            // the split dimension.
            unsigned axisDim = grower.resultAxis.lookup(slice.getSource()).dim;
            auto tileType = cast<RankedTensorType>(tile.getType());
            if (slice.getSourceType().getRank() != tileType.getRank() ||
                slice.getStaticSizes()[axisDim] !=
                    tileType.getDimSize(axisDim) ||
                !llvm::all_of(slice.getStaticStrides(),
                              [](int64_t s) { return s == 1; })) {
              whyNot = "a slice does not match the tile computed";
              status = failure();
              break;
            }
            SmallVector<OpFoldResult> offs = slice.getMixedOffsets();
            offs[axisDim] = nb.getIndexAttr(0);
            OpBuilder sb(slice);
            operand.set(tensor::ExtractSliceOp::create(
                sb, slice.getLoc(), slice.getType(), tile, offs,
                slice.getMixedSizes(), slice.getMixedStrides()));
          }
          if (info.reducing) {
            auto dps = cast<DestinationStyleOpInterface>(tiledOp);
            for (auto [i, init] : llvm::enumerate(dps.getDpsInitsMutable()))
              init.set(reducedInit.lookup(op->getResult(i)));
          }
          if (info.onlineMax && members.lookup(info.onlineMax).firstLoop == k &&
              failed(makeOnline(cast<linalg::GenericOp>(tiledOp),
                                info.onlineOperand, info.onlineMax,
                                reducedResults, reducedInit, yields,
                                combined))) {
            whyNot = "the running maximum of an online softmax is missing";
            status = failure();
            break;
          }
          // Tensors the body reads by linalg.index: slices, locally indexed.
          SmallVector<tensor::ExtractOp> extracts;
          tiledOp->walk([&](tensor::ExtractOp e) { extracts.push_back(e); });
          for (tensor::ExtractOp extract : extracts) {
            Value whole = extract.getTensor();
            Value tile = tiles.lookup(whole);
            if (!tile)
              continue;
            unsigned axisDim = grower.resultAxis.lookup(whole).dim;
            OpBuilder ib(extract);
            Value local = linalg::IndexOp::create(ib, loc, *info.loop);
            extract.getTensorMutable().assign(tile);
            extract.getIndicesMutable()[axisDim].assign(local);
          }
          for (auto [i, value] : llvm::enumerate(tiled->tiledValues)) {
            Value result = op->getResult(i);
            if (info.reducing) {
              auto it = llvm::find(reducedResults, result);
              yields[it - reducedResults.begin()] = value;
            } else {
              tiles[result] = value;
            }
          }
        }
        for (auto [i, entry] : llvm::enumerate(assembled)) {
          auto &[v, axis] = entry;
          Value tile = tiles.lookup(v);
          SmallVector<OpFoldResult> offs, sizes, strides;
          sliceParams(v, axis, offs, sizes, strides);
          Value into = args[reducedResults.size() + i];
          if (!tile) {
            whyNot = "a value used outside the region has no slice";
            status = failure();
            tile = tileOf(v, axis);
          }
          yields.push_back(tensor::InsertSliceOp::create(nb, loc, tile, into,
                                                         offs, sizes, strides));
        }
        // A failed loop is erased; it still needs a valid terminator.
        if (failed(status) || llvm::any_of(yields, [](Value v) { return !v; }))
          yields.assign(args.begin(), args.end());
        scf::YieldOp::create(nb, loc, yields);
      });
  created.push_back(forOp);
  if (failed(status))
    return failure();
  // Whole-tensor slices are the tensor; drop what tiling made and nobody
  // uses (slices replaced by tiles, the global index of a gather).
  forOp.getBody()->walk([&](tensor::ExtractSliceOp slice) {
    if (slice.getSourceType() == slice.getType() &&
        llvm::all_of(slice.getMixedOffsets(), isZeroInteger))
      slice.replaceAllUsesWith(slice.getSource());
  });
  for (bool erased = true; erased;) {
    SmallVector<Operation *> dead;
    forOp.getBody()->walk([&](Operation *op) {
      if (op->getParentOp() != forOp && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    erased = !dead.empty();
  }
  SmallVector<Operation *> body;
  for (Operation &op : *forOp.getBody())
    body.push_back(&op);
  for (Operation *op : llvm::reverse(body))
    if (op->use_empty() && isMemoryEffectFree(op) &&
        !op->hasTrait<OpTrait::IsTerminator>())
      op->erase();
  for (auto [i, v] : llvm::enumerate(reducedResults))
    finals[v] = forOp.getResult(i);
  for (auto [i, entry] : llvm::enumerate(assembled))
    finals[entry.first] = forOp.getResult(reducedResults.size() + i);
  // The views, after the loop: each chain of reshapes again, on the whole
  // value the loop assembled (a view shared by two chains is made once).
  after = forOp;
  IRMapping mapping;
  for (auto &[view, root] : views) {
    SmallVector<Operation *> chain;
    for (Operation *op = view.getDefiningOp();;
         op = op->getOperand(0).getDefiningOp()) {
      chain.push_back(op);
      if (op->getOperand(0) == root)
        break;
    }
    mapping.map(root, finals.lookup(root));
    for (Operation *op : llvm::reverse(chain)) {
      if (mapping.contains(op->getResult(0)))
        continue;
      b.setInsertionPointAfter(after);
      after = b.clone(*op, mapping);
      created.push_back(after);
    }
    finals[view] = mapping.lookup(view);
  }
  return success();
}

LogicalResult SplitBuilder::build(std::string &whyNot,
                                  SmallVectorImpl<Operation *> *loops) {
  DenseMap<Value, Value> finals;
  Operation *after = nullptr;
  unsigned numLoops = 0;
  for (auto &[op, info] : grower.members)
    numLoops = std::max(numLoops, info.firstLoop + 1);
  auto undo = [&]() {
    for (Operation *op : llvm::reverse(created)) {
      op->dropAllUses();
      op->erase();
    }
    created.clear();
  };
  for (unsigned k = 0; k < numLoops; ++k)
    if (failed(buildLoop(k, after, finals, whyNot))) {
      undo();
      return failure();
    }
  // The loops may read only the whole values computed before them: the
  // reductions of earlier loops and values from outside the region.
  DenseSet<Value> allowed;
  for (auto &[v, f] : finals)
    allowed.insert(v);
  for (Operation *loop : created) {
    bool bad = false;
    loop->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *producer = v.getDefiningOp();
        if (isMember(producer) && !allowed.contains(v))
          bad = true;
      }
    });
    if (bad) {
      whyNot = "an op of the region needs a whole value the region computes";
      undo();
      return failure();
    }
  }
  // Every other use of a value of the region is by the region itself.
  for (auto &[op, info] : grower.members)
    for (Value result : op->getResults()) {
      if (finals.count(result))
        continue;
      for (Operation *user : result.getUsers()) {
        Operation *ancestor = grower.block->findAncestorOpInBlock(*user);
        if (!isMember(ancestor)) {
          whyNot = "a value of the region is used where no loop provides it";
          undo();
          return failure();
        }
      }
    }
  for (auto &[v, f] : finals)
    v.replaceAllUsesWith(f);
  SmallVector<Operation *> members;
  for (auto &[op, info] : grower.members)
    members.push_back(op);
  for (Operation *op : llvm::reverse(members))
    op->erase();
  if (loops)
    for (Operation *op : created)
      if (isa<scf::ForOp>(op))
        loops->push_back(op);
  return success();
}

LogicalResult mlir::lms::applySplit(const SplitRegion &region, int64_t slices,
                                    std::string &whyNot,
                                    SmallVectorImpl<Operation *> *loops) {
  if (slices < 2 || region.extent % slices ||
      (region.extent / slices) % region.granularity) {
    whyNot = "the dimension of extent " + std::to_string(region.extent) +
             " cannot be cut into " + std::to_string(slices) +
             " slices (each a multiple of " +
             std::to_string(region.granularity) + ")";
    return failure();
  }
  RegionGrower grower(region.anchor, region.dim, region.extent,
                      region.minBytes);
  grower.growth = region.growth;
  grower.online = region.online;
  if (failed(grower.grow(whyNot)))
    return failure();
  return SplitBuilder(grower, slices).build(whyNot, loops);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace mlir {
namespace lms {
#define GEN_PASS_DEF_LMSSPLIT
#include "LMS/Transforms/Passes.h.inc"
} // namespace lms
} // namespace mlir

namespace {

/// The smallest feasible budget of `func` and the op that sets it.
struct Floor {
  uint64_t bytes = 0;
  Operation *op = nullptr;
};

/// The op that sets the function's smallest feasible budget. With
/// `targetOf` (an op's own target), the op that needs most among those
/// over their own target instead (none: bytes 0); no target is below
/// `least`.
FailureOr<Floor>
floorOf(Operation *func, const GraphOptions &options,
        llvm::function_ref<uint64_t(Operation *)> targetOf = nullptr,
        uint64_t least = 0) {
  FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
  if (failed(graph))
    return failure();
  const ::lms::Graph &g = graph->getGraph();
  Floor floor;
  if (targetOf) {
    for (::lms::OpIndex i = 0; i < static_cast<::lms::OpIndex>(g.numOps());
         ++i) {
      uint64_t bytes = ::lms::feasibleBytesOf(g, i);
      Operation *op = graph->getOp(i);
      if (bytes > least && bytes > floor.bytes && bytes > targetOf(op)) {
        floor.bytes = bytes;
        floor.op = op;
      }
    }
    return floor;
  }
  auto [bytes, index] = ::lms::minimumFeasibleBytes(g);
  floor.bytes = bytes;
  floor.op = index >= 0 ? graph->getOp(index) : nullptr;
  return floor;
}

/// The position of `op` in its block.
unsigned positionOf(Operation *op) {
  unsigned i = 0;
  for (Operation &o : *op->getBlock()) {
    if (&o == op)
      return i;
    ++i;
  }
  return i;
}

} // namespace

/// What the ops around `anchor` need once split into `slices` (the largest
/// smallest-feasible-budget of the loops made), measured on a copy of the
/// function; nullopt where the split fails (reason in why). With `around`,
/// also the most that the loops or an op reading what they compute need
/// there: a region that leaves out a neighbour hands it whole tensors.
static std::optional<uint64_t>
trialSplit(FunctionOpInterface func, Operation *anchor, int64_t slices,
           const GraphOptions &options, const SplitKnobs &knobs,
           std::string &why, uint64_t *around = nullptr) {
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  Operation *copy = func->clone();
  SymbolTable(module).insert(copy);
  llvm::scope_exit restore([&] { copy->erase(); });
  Block &block = cast<FunctionOpInterface>(copy).getFunctionBody().front();
  Operation *copied = &*std::next(block.begin(), positionOf(anchor));
  FailureOr<SplitRegion> region =
      findSplitRegion(copied, knobs.minBytes, why, knobs.loop,
                      knobs.growth.value_or(SplitGrowth::Reach), knobs.online);
  SmallVector<Operation *> loops;
  if (failed(region) || failed(applySplit(*region, slices, why, &loops)))
    return std::nullopt;
  FailureOr<FunctionGraph> graph = FunctionGraph::build(copy, options);
  if (failed(graph))
    return std::nullopt;
  uint64_t bytes = 0;
  auto need = [&](Operation *op) -> uint64_t {
    std::optional<::lms::OpIndex> index = graph->lookupOp(op);
    return index ? ::lms::feasibleBytesOf(graph->getGraph(), *index) : 0;
  };
  for (Operation *loop : loops)
    bytes = std::max(bytes, need(loop));
  if (around) {
    *around = bytes;
    for (Operation *loop : loops)
      for (Operation *user : loop->getUsers())
        if (Operation *reader = block.findAncestorOpInBlock(*user))
          *around = std::max(*around, need(reader));
  }
  return bytes;
}

void mlir::lms::registerSplitDependencies(DialectRegistry &registry) {
  registry
      .insert<affine::AffineDialect, arith::ArithDialect, linalg::LinalgDialect,
              math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
  linalg::registerTilingInterfaceExternalModels(registry);
}

std::string mlir::lms::splitAnchorKey(Operation *anchor) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << anchor->getName() << anchor->getAttrDictionary();
  for (Type type : anchor->getOperandTypes())
    os << "," << type;
  for (Type type : anchor->getResultTypes())
    os << "->" << type;
  return text;
}

/// "the smallest feasible budget 1.00 KiB (1024 bytes) is set by", the
/// start of the warnings of budget mode.
static std::string floorSetBy(uint64_t bytes) {
  return "lms-split: the smallest feasible budget " +
         ::lms::formatBytes(bytes) + " (" + std::to_string(bytes) +
         " bytes) is set by";
}

/// Composes the chains of tensor reshapes in `func` (a collapse_shape into
/// an expand_shape, as exporters write a `view` through a flat shape, and
/// two reshapes of one kind) into one reshape where one exists, so that a
/// dimension the chain keeps can be sliced through it: a flattened
/// tokens x vocabulary tensor is not sliceable by vocabulary, its composed
/// reshape is. Only reshapes change (upstream's composition patterns, no
/// folding); a reshape left unused by the composition goes (the composed
/// reshape reads its source where the chain ended).
static bool composeReshapes(FunctionOpInterface func) {
  SmallVector<Operation *> reshapes;
  func.getFunctionBody().walk([&](Operation *op) {
    // Only reshapes something reads: a dead chain stays as it is (it keeps
    // its source alive to where it ends, as the analysis counts it).
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) &&
        !op->use_empty())
      reshapes.push_back(op);
  });
  if (reshapes.size() < 2)
    return false;
  MLIRContext *context = func->getContext();
  RewritePatternSet patterns(context);
  patterns.add<
      ComposeReassociativeReshapeOps<tensor::CollapseShapeOp,
                                     ReshapeOpKind::kCollapse>,
      ComposeReassociativeReshapeOps<tensor::ExpandShapeOp,
                                     ReshapeOpKind::kExpand>,
      ComposeExpandOfCollapseOp<tensor::ExpandShapeOp, tensor::CollapseShapeOp>,
      ComposeCollapseOfExpandOp<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                                tensor::CastOp, tensor::DimOp,
                                RankedTensorType>>(context);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
      .enableFolding(false);
  bool changed = false;
  (void)applyOpPatternsGreedily(reshapes, std::move(patterns), config,
                                &changed);
  return changed;
}

FailureOr<unsigned> mlir::lms::splitFunction(FunctionOpInterface func,
                                             const GraphOptions &options,
                                             std::optional<uint64_t> limit,
                                             const SplitKnobs &knobs) {
  unsigned done = 0;
  if (!func.getFunctionBody().hasOneBlock())
    return done;
  int64_t slices = knobs.slices;
  unsigned maxRounds = slices ? 1 : knobs.rounds;
  // Without a limit, split as far as it goes.
  uint64_t target = limit.value_or(0);
  // What was chosen for an anchor, by the anchor's kind: the layers of a
  // network repeat the same ops, and one measurement serves them all.
  std::map<std::string, std::tuple<unsigned, SplitGrowth, int64_t>> remembered;
  // With aims per kind of anchor, each op is held to its own: an anchor of
  // such a kind and the loops made for it to the kind's aim, the rest to
  // the limit.
  bool ownAims = !slices && !knobs.aims.empty();
  DenseMap<Operation *, uint64_t> loopAims;
  uint64_t least = target;
  for (const auto &[kind, aim] : knobs.aims)
    least = std::min(least, aim);
  auto targetOf = [&](Operation *op) -> uint64_t {
    if (auto it = loopAims.find(op); it != loopAims.end())
      return it->second;
    auto aim = knobs.aims.find(splitAnchorKey(op));
    return aim != knobs.aims.end() ? aim->second : target;
  };
  // Chains of reshapes are composed (composeReshapes) before a split of a
  // given count, and otherwise when an anchor cannot be split or its loops
  // do not reach the aim without: composing changes how the regions grow,
  // and where the aim is reached as the IR is written, it stays as it is.
  bool composed = false;
  auto composeOnce = [&]() {
    if (composed)
      return false;
    composed = true;
    return composeReshapes(func);
  };
  if (slices) {
    FailureOr<Floor> floor = floorOf(func, options);
    if (failed(floor))
      return failure();
    if (floor->op)
      composeOnce();
  }
  for (unsigned round = 0; round < maxRounds; ++round) {
    FailureOr<Floor> floor = ownAims ? floorOf(func, options, targetOf, least)
                                     : floorOf(func, options);
    if (failed(floor))
      return failure();
    if (!slices && (ownAims ? !floor->op : floor->bytes <= target))
      return done;
    if (!floor->op ||
        floor->op->getBlock() != &func.getFunctionBody().front()) {
      if (slices)
        return func.emitError()
               << "lms-split: the smallest feasible budget is set by the "
                  "function's arguments, not by an op";
      return done;
    }
    Operation *anchor = floor->op;
    // A call's floor is its callee's, split (or not) on its own.
    if (isa<CallOpInterface>(anchor))
      return done;
    // The values a function returns are resident at its end, whole.
    if (anchor->hasTrait<OpTrait::IsTerminator>()) {
      if (slices)
        return anchor->emitError()
               << "lms-split: the smallest feasible budget is set by the "
                  "values returned here, which no split changes";
      if (knobs.warn)
        anchor->emitWarning() << floorSetBy(floor->bytes)
                              << " the values returned here, which no split "
                                 "changes";
      return done;
    }
    std::string why;
    FailureOr<SplitRegion> region = findSplitRegion(
        anchor, knobs.minBytes, why, knobs.loop,
        knobs.growth.value_or(SplitGrowth::Reach), knobs.online);
    if (failed(region)) {
      if (!slices && composeOnce()) {
        ++maxRounds;
        continue;
      }
      if (slices)
        return anchor->emitError()
               << "lms-split: cannot split this op: " << why;
      if (knobs.warn)
        anchor->emitWarning() << floorSetBy(floor->bytes)
                              << " this op, which cannot be split: " << why;
      return done;
    }
    int64_t count = slices;
    std::optional<uint64_t> after;
    SplitKnobs chosen = knobs;
    std::string signature = splitAnchorKey(anchor);
    uint64_t aim = ownAims ? targetOf(anchor) : target;
    if (!count) {
      auto it = remembered.find(signature);
      if (it != remembered.end()) {
        auto [d, growth, k] = it->second;
        chosen.loop = d;
        chosen.growth = growth;
        FailureOr<SplitRegion> again = findSplitRegion(
            anchor, knobs.minBytes, why, d, growth, knobs.online);
        // Measured once more (the same op elsewhere may sit among other
        // neighbours): taken when it reaches the budget or lowers the op's
        // need, else the full search below.
        std::string ignored;
        std::optional<uint64_t> bytes =
            succeeded(again) && llvm::is_contained(again->sliceCounts(), k)
                ? trialSplit(func, anchor, k, options, chosen, ignored)
                : std::nullopt;
        if (bytes && (*bytes <= aim || *bytes < floor->bytes)) {
          region = std::move(again);
          count = k;
          after = bytes;
        } else {
          chosen = knobs;
        }
      }
    }
    if (!count && (!knobs.loop || !knobs.growth)) {
      // The dimension and the growth whose loops, and the ops that read
      // what they compute, need least at the most slices, measured (the
      // tensors a region reads whole count as much as those it keeps
      // internal); of two that leave the same neighbour setting the
      // bound, the one whose loops need least. A region that stops short
      // of a neighbour (a softmax's normalization after its sums) hands it
      // whole tensors, and no later split may take it.
      std::optional<std::tuple<unsigned, SplitGrowth, uint64_t, uint64_t>> best;
      unsigned numDims =
          isa<linalg::LinalgOp>(anchor)
              ? cast<linalg::LinalgOp>(anchor).getNumLoops()
              : cast<RankedTensorType>(anchor->getResult(0).getType())
                    .getRank();
      for (SplitGrowth growth : {SplitGrowth::Reach, SplitGrowth::Greedy}) {
        if (knobs.growth && growth != *knobs.growth)
          continue;
        for (unsigned d = 0; d < numDims; ++d) {
          if (knobs.loop && d != *knobs.loop)
            continue;
          std::string ignored;
          FailureOr<SplitRegion> candidate = findSplitRegion(
              anchor, knobs.minBytes, ignored, d, growth, knobs.online);
          if (failed(candidate))
            continue;
          SplitKnobs at = knobs;
          at.loop = d;
          at.growth = growth;
          uint64_t around = 0;
          std::optional<uint64_t> bytes =
              trialSplit(func, anchor, candidate->sliceCounts().back(), options,
                         at, ignored, &around);
          if (bytes && (!best || std::make_pair(around, *bytes) <
                                     std::make_pair(std::get<2>(*best),
                                                    std::get<3>(*best))))
            best = {d, growth, around, *bytes};
        }
      }
      if (best) {
        chosen.loop = std::get<0>(*best);
        chosen.growth = std::get<1>(*best);
        region = findSplitRegion(anchor, knobs.minBytes, why, chosen.loop,
                                 *chosen.growth, knobs.online);
        if (failed(region))
          return done;
      }
    }
    if (!count) {
      // The fewest slices that reach the budget (the loops' floor falls as
      // the slices shrink), else the most slices if they lower it.
      SmallVector<int64_t> counts = region->sliceCounts();
      size_t lo = 0, hi = counts.size();
      std::optional<std::pair<int64_t, uint64_t>> fits;
      std::string trialWhy;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        std::optional<uint64_t> bytes =
            trialSplit(func, anchor, counts[mid], options, chosen, trialWhy);
        if (bytes && *bytes <= aim) {
          fits = {counts[mid], *bytes};
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      if (!fits && composeOnce()) {
        ++maxRounds;
        continue;
      }
      if (fits) {
        count = fits->first;
        after = fits->second;
      } else {
        std::optional<uint64_t> bytes =
            trialSplit(func, anchor, counts.back(), options, chosen, trialWhy);
        if (!bytes || *bytes >= floor->bytes) {
          if (knobs.warn) {
            InFlightDiagnostic diag = anchor->emitWarning();
            diag << floorSetBy(floor->bytes) << " this op; ";
            if (bytes)
              diag << "split into " << counts.back()
                   << " slices it would still need "
                   << ::lms::formatBytes(*bytes);
            else
              diag << "it cannot be split: " << trialWhy;
          }
          return done;
        }
        count = counts.back();
        after = bytes;
      }
    } else if (!llvm::is_contained(region->sliceCounts(), count)) {
      return anchor->emitError()
             << "lms-split: loop " << region->dim << " (extent "
             << region->extent << ") cannot be cut into " << count
             << " slices: the count must divide the extent and each slice "
                "be a multiple of "
             << region->granularity;
    }
    if (!slices)
      remembered[signature] = {region->dim, region->growth, count};
    std::string name = anchor->getName().getStringRef().str();
    Location loc = anchor->getLoc();
    unsigned ops = region->ops.size(), loops = region->numLoops;
    unsigned dim = region->dim;
    SmallVector<Operation *> made;
    if (failed(applySplit(*region, count, why, &made)))
      return emitError(loc) << "lms-split: cannot split this op: " << why;
    ++done;
    if (ownAims)
      for (Operation *loop : made)
        loopAims[loop] = aim;
    if (knobs.made)
      knobs.made->push_back({signature, loc, dim, count});
    if (knobs.printStatistics) {
      if (!after) {
        FailureOr<FunctionGraph> graph = FunctionGraph::build(func, options);
        if (failed(graph))
          return failure();
        after = 0;
        for (Operation *loop : made)
          if (std::optional<::lms::OpIndex> index = graph->lookupOp(loop))
            after = std::max(*after,
                             ::lms::feasibleBytesOf(graph->getGraph(), *index));
      }
      llvm::errs() << "lms-split: @" << func.getName() << ": '" << name
                   << "' at " << loc << ": loop " << dim << " in " << count
                   << " slices (" << ops << " ops, " << loops
                   << " loops): the op needed " << floor->bytes
                   << " bytes, its loops need " << *after << "\n";
    }
  }
  return done;
}

namespace {

struct LMSSplitPass : public mlir::lms::impl::LMSSplitBase<LMSSplitPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerSplitDependencies(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<GraphOptions> options = makeGraphOptions(
        module, alignment, dynamicBytes, /*keepArguments=*/false);
    if (failed(options))
      return signalPassFailure();
    FailureOr<::lms::DeviceSpec> spec = resolveDevice(module, device);
    if (failed(spec))
      return signalPassFailure();
    options->timingDevice = *spec;
    uint64_t minimum = 0;
    if (!minBytes.empty()) {
      llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(minBytes);
      if (!size || size->isPercent) {
        if (!size)
          llvm::consumeError(size.takeError());
        emitError(module.getLoc()) << "lms-split: min-bytes '" << minBytes
                                   << "' is not a size such as 64MiB";
        return signalPassFailure();
      }
      minimum = size->bytes;
    }
    if (loop < -1) {
      emitError(module.getLoc())
          << "lms-split: loop must be -1 (measured) or a loop of the op, got "
          << static_cast<int64_t>(loop);
      return signalPassFailure();
    }
    if (slices < 0 || slices == 1) {
      emitError(module.getLoc())
          << "lms-split: slices must be at least 2 (or 0 to choose from the "
             "budget), got "
          << static_cast<int64_t>(slices);
      return signalPassFailure();
    }
    std::string budgetOption = budget.empty() ? getGlobalBudget() : budget;
    // A percentage option is of the whole program's unplanned peak,
    // resolved once, as the planning passes resolve it.
    if (slices == 0 && !budgetOption.empty()) {
      llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(budgetOption);
      if (!size) {
        llvm::consumeError(size.takeError());
      } else if (size->isPercent) {
        FailureOr<uint64_t> peak = programPeak(module, *options);
        if (failed(peak))
          return signalPassFailure();
        budgetOption = std::to_string(size->resolve(*peak)) + "B";
      }
    }
    bool failedAny = false;
    SplitKnobs knobs;
    knobs.slices = slices;
    if (loop >= 0)
      knobs.loop = static_cast<unsigned>(loop);
    knobs.minBytes = minimum;
    knobs.rounds = rounds;
    knobs.printStatistics = printStatistics;
    knobs.online = onlineSoftmax;
    for (FunctionOpInterface func : functionsCalleesFirst(module)) {
      std::optional<uint64_t> limit;
      if (slices == 0 && func.getFunctionBody().hasOneBlock()) {
        FailureOr<FunctionGraph> graph = FunctionGraph::build(func, *options);
        FailureOr<uint64_t> bytes =
            succeeded(graph) ? resolveBudgetBytes(func, budgetOption, *spec,
                                                  *options, *graph)
                             : FailureOr<uint64_t>(failure());
        if (failed(bytes)) {
          failedAny = true;
          continue;
        }
        limit = *bytes;
      }
      FailureOr<unsigned> done = splitFunction(func, *options, limit, knobs);
      if (failed(done)) {
        failedAny = true;
        continue;
      }
      numSplits += *done;
    }
    if (failedAny)
      return signalPassFailure();
  }
};

} // namespace
