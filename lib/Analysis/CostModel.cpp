//===- CostModel.cpp - Per-op cost of MLIR ops ----------------------------===//
//
// The rules are documented in CostModel.h.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/CostModel.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::lms;
using ::lms::OpCost;

/// Whether collapsing a buffer of type `source` (non-null) copies it.
static bool collapseCopies(tensor::CollapseShapeOp collapse,
                           MemRefType source) {
  return collapse.getResultType().getRank() > 0 &&
         !memref::CollapseShapeOp::isGuaranteedCollapsible(
             source, collapse.getReassociationIndices());
}

/// The buffer type One-Shot Bufferize gives `value` (identity layouts for
/// allocations and at function boundaries, as the lowering asks): a view
/// keeps its source's strides, so a slice of a slice is strided. Null for
/// what is not a ranked tensor or memref.
static MemRefType bufferizedType(Value value, unsigned depth = 0) {
  if (auto memref = dyn_cast<MemRefType>(value.getType()))
    return memref;
  auto tensorType = dyn_cast<RankedTensorType>(value.getType());
  if (!tensorType)
    return {};
  MemRefType identity =
      MemRefType::get(tensorType.getShape(), tensorType.getElementType());
  // View chains are short; a pathological one is taken as a fresh buffer.
  if (depth > 64)
    return identity;
  auto source = [&](Value v) { return bufferizedType(v, depth + 1); };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    // A recomputation's body reads its operands' buffers (the lowering
    // inlines it).
    auto recompute =
        dyn_cast_or_null<RecomputeOp>(arg.getOwner()->getParentOp());
    if (recompute && arg.getArgNumber() < recompute->getNumOperands())
      if (MemRefType type = source(recompute->getOperand(arg.getArgNumber())))
        if (type.getShape() == tensorType.getShape())
          return type;
    return identity;
  }
  Operation *def = value.getDefiningOp();
  if (auto recompute = dyn_cast<RecomputeOp>(def)) {
    auto result = cast<OpResult>(value);
    MemRefType type =
        source(recompute.getYield()->getOperand(result.getResultNumber()));
    return type ? type : identity;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    MemRefType type = source(slice.getSource());
    if (!type)
      return identity;
    return memref::SubViewOp::inferRankReducedResultType(
        tensorType.getShape(), type, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    // The source's type is computed once per level (a chain of collapses
    // stays linear); a copy has the identity layout.
    MemRefType type = source(collapse.getSrc());
    if (!type || tensorType.getRank() == 0 || collapseCopies(collapse, type))
      return identity;
    return memref::CollapseShapeOp::computeCollapsedType(
        type, collapse.getReassociationIndices());
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    MemRefType type = source(expand.getSrc());
    if (!type)
      return identity;
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        type, tensorType.getShape(), expand.getReassociationIndices());
    return succeeded(expanded) ? *expanded : identity;
  }
  if (isa<tensor::CastOp, tensor::BitcastOp>(def)) {
    MemRefType type = source(def->getOperand(0));
    if (!type || type.getRank() != tensorType.getRank())
      return identity;
    return MemRefType::get(tensorType.getShape(), tensorType.getElementType(),
                           type.getLayout(), type.getMemorySpace());
  }
  if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def))
    if (auto type = dyn_cast<MemRefType>(toTensor.getBuffer().getType()))
      return type;
  return identity;
}

bool mlir::lms::bufferizationCopies(Operation *op) {
  // tensor.collapse_shape of a buffer whose strides do not collapse (a
  // slice across the inner dimension: the Q, K and V thirds of a fused
  // projection) bufferizes to a copy of the source and a collapse of the
  // copy; tensor.reshape copies a source without the identity layout.
  // Both as upstream's BufferizableOpInterface implementations do.
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(op)) {
    MemRefType type = bufferizedType(collapse.getSrc());
    return type && collapseCopies(collapse, type);
  }
  if (auto reshape = dyn_cast_or_null<tensor::ReshapeOp>(op)) {
    MemRefType type = bufferizedType(reshape.getSource());
    return type && !type.getLayout().isIdentity();
  }
  return false;
}

bool mlir::lms::isViewLikeOp(Operation *op) {
  // A reshape that bufferization copies makes a buffer of its own.
  if (bufferizationCopies(op))
    return false;
  // Upstream's view interface, and the ops that alias their operand
  // without implementing it (reshapes, casts, the bufferization bridges).
  return isa<ViewLikeOpInterface, tensor::CastOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::ExtractSliceOp, tensor::ReshapeOp,
             tensor::BitcastOp, bufferization::ToTensorOp,
             bufferization::ToBufferOp, memref::CastOp,
             memref::MemorySpaceCastOp>(op);
}

static double numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return 0;
  double n = 1;
  for (int64_t dim : shaped.getShape())
    n *= ShapedType::isDynamic(dim) ? 1 : static_cast<double>(dim);
  return n;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  if (auto shaped = dyn_cast<ShapedType>(value.getType()))
    if (shaped.hasRank())
      return shaped.getShape();
  return {};
}

static double product(ArrayRef<int64_t> dims) {
  double n = 1;
  for (int64_t dim : dims)
    n *= ShapedType::isDynamic(dim) ? 1 : static_cast<double>(dim);
  return n;
}

/// Bytes of every shaped operand and result.
static double bytesTouched(Operation *op,
                           llvm::function_ref<uint64_t(Value)> bytesOf) {
  double bytes = 0;
  for (Value operand : op->getOperands())
    if (isa<ShapedType>(operand.getType()))
      bytes += static_cast<double>(bytesOf(operand));
  for (Value result : op->getResults())
    if (isa<ShapedType>(result.getType()))
      bytes += static_cast<double>(bytesOf(result));
  return bytes;
}

/// The `lms.cost` override, if any.
static std::optional<OpCost> costFromAttribute(Operation *op) {
  Attribute attr = op->getAttr(LMSDialect::getCostAttrName());
  if (!attr)
    return std::nullopt;
  auto number = [](Attribute a) -> std::optional<double> {
    if (auto f = dyn_cast_or_null<FloatAttr>(a))
      return f.getValueAsDouble();
    if (auto i = dyn_cast_or_null<IntegerAttr>(a))
      return static_cast<double>(i.getValue().getSExtValue());
    return std::nullopt;
  };
  OpCost cost;
  if (std::optional<double> flops = number(attr)) {
    cost.flops = *flops;
    return cost;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    if (std::optional<double> flops = number(dict.get("flops")))
      cost.flops = *flops;
    if (std::optional<double> bytes = number(dict.get("bytes")))
      cost.bytes = *bytes;
    if (std::optional<double> seconds = number(dict.get("seconds")))
      cost.seconds = *seconds;
    return cost;
  }
  return std::nullopt;
}

/// FLOPs of a linalg op: the iteration domain times the payload ops per point.
static double linalgFlops(linalg::LinalgOp op) {
  double points = 1;
  for (int64_t range : op.getStaticLoopRanges())
    points *= ShapedType::isDynamic(range) ? 1 : static_cast<double>(range);
  double payload = 0;
  Block *body = op.getBlock();
  if (body)
    for (Operation &nested : body->without_terminator()) {
      (void)nested;
      payload += 1;
    }
  return points * payload;
}

/// FLOPs of a tosa op from its shapes.
static double tosaFlops(Operation *op) {
  StringRef name = op->getName().stripDialect();
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  double outElements = result ? numElements(result.getType()) : 0;
  auto operandShape = [&](unsigned i) {
    return i < op->getNumOperands() ? shapeOf(op->getOperand(i))
                                    : ArrayRef<int64_t>();
  };
  if (name == "conv2d" || name == "conv3d" || name == "transpose_conv2d") {
    // Weights: [OC, KH, KW, IC] (conv3d: [OC, KD, KH, KW, IC]).
    ArrayRef<int64_t> weight = operandShape(1);
    if (weight.size() < 2)
      return outElements;
    double perOutput = product(weight.drop_front());
    if (name == "transpose_conv2d") {
      // Every input element scatters into OC x KH x KW outputs.
      double inElements = numElements(op->getOperand(0).getType());
      return 2 * inElements * product(weight.drop_back());
    }
    return 2 * outElements * perOutput;
  }
  if (name == "depthwise_conv2d") {
    // Weights: [KH, KW, C, M]; each output sums KH x KW products.
    ArrayRef<int64_t> weight = operandShape(1);
    if (weight.size() != 4)
      return outElements;
    return 2 * outElements * product(weight.take_front(2));
  }
  if (name == "matmul") {
    // [N, H, C] x [N, C, W].
    ArrayRef<int64_t> lhs = operandShape(0);
    if (lhs.size() != 3)
      return outElements;
    return 2 * outElements * product(lhs.drop_front(2));
  }
  if (name == "avg_pool2d" || name == "max_pool2d") {
    auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel");
    return outElements * (kernel ? product(kernel.asArrayRef()) : 1);
  }
  if (name.starts_with("reduce_") || name == "argmax")
    return op->getNumOperands() ? numElements(op->getOperand(0).getType()) : 0;
  if (name == "const" || name == "reshape" || name == "slice" ||
      name == "tile" || name == "transpose" || name == "concat" ||
      name == "pad" || name == "gather" || name == "scatter" ||
      name == "identity" || name == "cast" || name == "reverse")
    return 0;
  return outElements;
}

/// Ops that only move data.
static bool isDataMovement(Operation *op) {
  if (isa<SwapOutOp, SwapInOp>(op))
    return true;
  return llvm::StringSwitch<bool>(op->getName().getStringRef())
      .Cases({"tensor.insert_slice", "tensor.pad", "tensor.concat",
              "tensor.gather", "tensor.scatter", "tensor.from_elements",
              "tensor.splat", "tensor.extract", "tensor.insert",
              "tensor.generate", "memref.copy", "gpu.memcpy", "gpu.memset",
              "bufferization.clone", "bufferization.materialize_in_destination",
              "bufferization.alloc_tensor"},
             true)
      .Default(false);
}

bool mlir::lms::isHostConstant(Operation *op) {
  if (op->getNumOperands() != 0 || op->getNumResults() != 1 ||
      op->getNumRegions() != 0 || !isa<TensorType>(op->getResult(0).getType()))
    return false;
  if (op->hasTrait<OpTrait::ConstantLike>())
    return true;
  StringRef name = op->getName().getStringRef();
  return name == "ml_program.global_load_const" ||
         name == "ml_program.global_load";
}

/// The upload of a host constant: a splat is filled on the device (device
/// memory bandwidth), other data crosses the host link.
static OpCost hostConstantCost(Operation *op,
                               llvm::function_ref<uint64_t(Value)> bytesOf) {
  OpCost cost;
  double bytes = static_cast<double>(bytesOf(op->getResult(0)));
  auto elements = dyn_cast_or_null<DenseElementsAttr>(op->getAttr("value"));
  if (elements && elements.isSplat())
    cost.bytes = bytes;
  else
    cost.h2dBytes = bytes;
  return cost;
}

OpCost mlir::lms::estimateOpCost(Operation *op,
                                 llvm::function_ref<uint64_t(Value)> bytesOf) {
  if (std::optional<OpCost> cost = costFromAttribute(op))
    return *cost;
  if (isHostConstant(op))
    return hostConstantCost(op, bytesOf);
  OpCost cost;
  // Free: views, terminators, constants, allocations, lms waits, ops on
  // scalars. They launch nothing, so they take no time on the device, not
  // even a launch's overhead (a fixed time of zero): a rewrite that adds
  // views (re-derived after a swap-in) costs what its plan says.
  OpCost free;
  free.seconds = 0;
  if (isViewLikeOp(op) || op->hasTrait<OpTrait::IsTerminator>() ||
      op->hasTrait<OpTrait::ConstantLike>() || isa<SwapWaitOp>(op))
    return free;
  StringRef name = op->getName().getStringRef();
  if (name == "tensor.empty" || name == "memref.alloc" ||
      name == "memref.alloca" || name == "memref.dealloc" ||
      name == "gpu.alloc" || name == "gpu.dealloc" || name == "gpu.wait")
    return free;
  // Ops with regions (an lms.recompute among them) and calls cost what
  // they run (added by FunctionGraph).
  if ((op->getNumRegions() > 0 && !isa<linalg::LinalgOp>(op)) ||
      isa<CallOpInterface>(op))
    return cost;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    cost.flops = linalgFlops(linalgOp);
    cost.bytes = bytesTouched(op, bytesOf);
    return cost;
  }
  if (op->getDialect() && op->getDialect()->getNamespace() == "tosa") {
    cost.flops = tosaFlops(op);
    cost.bytes = bytesTouched(op, bytesOf);
    return cost;
  }
  if (isDataMovement(op)) {
    cost.bytes = bytesTouched(op, bytesOf);
    return cost;
  }
  // Fallback: one FLOP per result element, every shaped value moved once.
  bool shaped = false;
  for (Value result : op->getResults())
    if (isa<ShapedType>(result.getType())) {
      shaped = true;
      cost.flops += numElements(result.getType());
    }
  for (Value operand : op->getOperands())
    shaped |= isa<ShapedType>(operand.getType());
  if (!shaped)
    return free;
  cost.bytes = bytesTouched(op, bytesOf);
  return cost;
}
