//===- FunctionGraph.cpp - IR to graph translation ------------------------===//
//
// The memory model is documented in FunctionGraph.h; this file implements it
// in one linear pass over each block (plus one pass to find last uses):
// BlockTranslator walks the schedule and says what each op is (an lms copy,
// a call, an op with regions, a return, any other) and what it costs and
// holds; AliasModel says where each result's buffer is (an alias of an
// operand, written in place into its init, in the enclosing function, or a
// buffer of its own) and keeps last uses per buffer. What builds share (the
// callee summaries, in-place decisions and their check) is AnalysisCache.cpp.
//
//===----------------------------------------------------------------------===//

#include "LMS/Analysis/FunctionGraph.h"
#include "GraphBuilder.h"
#include "LMS/Analysis/CostModel.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Memory.h"
#include "LMS/Graph/Swap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/thread.h"

#include "llvm/Support/MathExtras.h"
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::lms;
using ::lms::kEntry;
using ::lms::MemorySpace;
using ::lms::OpCost;
using ::lms::OpIndex;
using ::lms::OpKind;
using ::lms::TensorIndex;

FunctionGraph::FunctionGraph(FunctionGraph &&) = default;
FunctionGraph &FunctionGraph::operator=(FunctionGraph &&) = default;
FunctionGraph::~FunctionGraph() = default;

std::optional<OpIndex> FunctionGraph::lookupOp(Operation *op) const {
  auto it = opIndex.find(op);
  if (it == opIndex.end())
    return std::nullopt;
  return it->second;
}

std::optional<TensorIndex> FunctionGraph::lookupBuffer(Value value) const {
  auto it = bufferOf.find(value);
  if (it == bufferOf.end())
    return std::nullopt;
  return it->second;
}

std::string FunctionGraph::getValueName(Value value) const {
  if (!value)
    return "<none>";
  if (!asmState) {
    Operation *scope = function;
    while (scope->getParentOp() &&
           !scope->hasTrait<OpTrait::IsIsolatedFromAbove>())
      scope = scope->getParentOp();
    asmState = std::make_unique<AsmState>(scope);
  }
  std::string name;
  llvm::raw_string_ostream os(name);
  value.printAsOperand(os, *asmState);
  return name;
}

static bool isBufferType(Type type) {
  return isa<TensorType, BaseMemRefType, HostType>(type);
}

/// The largest buffer the analysis sizes: 1 PiB, beyond any device, and
/// small enough that sums of many such sizes do not overflow 64 bits.
static constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 50;
/// What staticBytes gives a type larger than kMaxBufferBytes.
static constexpr uint64_t kTooLarge = ~uint64_t(0);

/// Whether `use` is the destination of a linalg op whose payload does not
/// read it (the op overwrites it).
static bool isUnreadDestination(OpOperand &use) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return linalgOp && linalgOp.isDpsInit(&use) &&
         !linalgOp.payloadUsesValueFromOperand(&use);
}

/// Whether `value` is a view of a buffer (made by a view-like op), not the
/// whole buffer (an allocation, or a result written in place into one).
static bool isViewValue(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isViewLikeOp(def);
}

/// The value `value` is a view of (through view-like ops), or itself.
static Value viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isViewLikeOp(def) || def->getNumOperands() == 0)
      break;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    value = view && view.getViewSource() ? view.getViewSource()
                                         : def->getOperand(0);
  }
  return value;
}

/// Whether the buffer a call gets for `operand` once bufferized is a view:
/// the operand is one, or a result written in place (into the same buffer)
/// through destination-passing ops into one. The call's memref operand is
/// then the view, which the memref-level rule lends (a linalg op written
/// into a collapse of an expand of an allocation is passed as the
/// collapse), so the tensor-level rule must lend it too.
static bool passesThroughView(const FunctionGraph &fg, Value operand) {
  std::optional<TensorIndex> buffer = fg.lookupBuffer(operand);
  Value value = operand;
  // Each step goes one op back in the block: the chain is finite.
  while (true) {
    if (isViewValue(value))
      return true;
    auto result = dyn_cast<OpResult>(value);
    auto dps = result ? dyn_cast<DestinationStyleOpInterface>(result.getOwner())
                      : DestinationStyleOpInterface();
    OpOperand *init = dps ? dps.getTiedOpOperand(result) : nullptr;
    if (!init || !buffer || fg.lookupBuffer(init->get()) != buffer)
      return false;
    value = init->get();
  }
}

/// Whether `value` is the device copy of a resident constant, which its
/// function frees at its end (never given to a callee).
static bool isResidentCopy(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasAttr(kResidentConstantsAttr);
}

/// Whether a call may give the buffer `t` of `fg` that it gets as
/// `operand` to its callee, which then owns it and frees it after its last
/// use there: the call is the buffer's last use (`lastUse`), the operand is
/// the buffer itself (not a view, nor written in place into one), passed
/// once, on the device, not live out, not a resident constant's copy, and
/// not a block argument of a nested region (`nested`), which the function
/// does not own. The one rule of translateCall and borrowedCallOperands.
static bool mayGiveToCallee(const FunctionGraph &fg, CallOpInterface call,
                            Value operand, TensorIndex t, bool lastUse,
                            bool nested) {
  const ::lms::Tensor &tensor = fg.getGraph().tensor(t);
  return lastUse && !passesThroughView(fg, operand) &&
         !isResidentCopy(operand) && !(nested && isa<BlockArgument>(operand)) &&
         !tensor.liveOut && tensor.space == MemorySpace::Device &&
         llvm::count(call->getOperands(), operand) == 1;
}

/// Whether the function that `arg` belongs to borrows it: as `borrowed` says
/// for a callee analysed at a call site, or as its arg_attrs say
/// (`lms.borrowed`, set on the copies --lms-deallocate makes of callees).
static bool isBorrowedArgument(BlockArgument arg, ArrayRef<bool> borrowed) {
  if (!borrowed.empty())
    return arg.getArgNumber() < borrowed.size() && borrowed[arg.getArgNumber()];
  auto func =
      dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), kBorrowedArgAttr);
}

/// Whether `op` fetches a constant again and nothing else: an lms.recompute
/// without operands whose body is one host constant, yielded. The lowering
/// inlines it and uploads the constant right before its first user, which
/// is then the first user of the recomputation's result. (A body that also
/// makes views of the constant is uploaded where the recomputation stands:
/// the first view reads the constant there, as for a constant of the block
/// with views; such a fetch is scheduled in place, like any op.)
static bool isConstantFetch(Operation *op) {
  auto recompute = dyn_cast<RecomputeOp>(op);
  if (!recompute || recompute->getNumOperands() != 0)
    return false;
  Block &body = recompute.getBody().front();
  return llvm::hasSingleElement(body.without_terminator()) &&
         isHostConstant(&body.front());
}

/// Whether `op` yields a constant as the lowering makes it: a host constant
/// or a constant fetched again (which the lowering inlines into the
/// constant). An op that overwrites such a value given as its destination
/// gets a copy from bufferization and does not read it.
static bool isConstantValue(Operation *op) {
  return isHostConstant(op) || isConstantFetch(op);
}

/// The ops of `block` in the order the analyses schedule them: block order,
/// except that each host constant (a constant tensor or a global load; on
/// buffers, `memref.get_global`) is moved right before its first user, the
/// first op of the block that uses it or holds a use of it in its regions.
/// Unused constants stay where they are.
static SmallVector<Operation *>
scheduleOrder(Block &block, SmallPtrSetImpl<Operation *> &deferred,
              bool residentConstants) {
  SmallVector<Operation *> order;
  DenseMap<Operation *, SmallVector<Operation *, 1>> deferredBefore;
  // Resident constants: all uploaded at entry, before the first op.
  if (residentConstants) {
    for (Operation &op : block)
      if (isHostConstant(&op) && !op.use_empty())
        order.push_back(&op);
    deferred.insert(order.begin(), order.end());
    for (Operation &op : block)
      if (!deferred.contains(&op))
        order.push_back(&op);
    // Those already at the start did not move.
    for (Operation &op : block) {
      if (!deferred.contains(&op))
        break;
      deferred.erase(&op);
    }
    return order;
  }
  for (Operation &op : block) {
    if (!isHostConstant(&op) && !isa<memref::GetGlobalOp>(op) &&
        !isConstantFetch(&op))
      continue;
    // The first use that reads it (an op that overwrites a constant it is
    // given as destination gets a new buffer and never reads it; so does
    // one given a constant fetched again, which the lowering inlines).
    Operation *first = nullptr;
    for (OpOperand &use : op.getUses()) {
      if (isConstantValue(&op) && isUnreadDestination(use))
        continue;
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    if (first && first != &op) {
      deferredBefore[first].push_back(&op);
      deferred.insert(&op);
    }
  }
  if (deferredBefore.empty()) {
    for (Operation &op : block)
      order.push_back(&op);
    return order;
  }
  for (Operation &op : block) {
    if (deferred.contains(&op))
      continue;
    auto it = deferredBefore.find(&op);
    if (it != deferredBefore.end())
      order.append(it->second.begin(), it->second.end());
    order.push_back(&op);
  }
  return order;
}

std::optional<uint64_t> GraphBuilder::staticBytes(Type type) {
  if (auto host = dyn_cast<HostType>(type))
    type = host.getValueType();
  auto it = typeBytes.find(type);
  if (it != typeBytes.end())
    return it->second;
  std::optional<uint64_t> bytes;
  auto shaped = dyn_cast<ShapedType>(type);
  if (shaped && shaped.hasStaticShape()) {
    Type element = shaped.getElementType();
    if (isa<IntegerType, FloatType, IndexType, ComplexType, VectorType>(
            element) ||
        isa<DataLayoutTypeInterface>(element)) {
      // Checked: a size past kMaxBufferBytes (or one whose product
      // overflows) is kTooLarge, an error where a buffer needs it.
      uint64_t total = layout.getTypeSize(element).getFixedValue();
      for (int64_t dim : shaped.getShape())
        if (__builtin_mul_overflow(total, static_cast<uint64_t>(dim), &total) ||
            total > kMaxBufferBytes) {
          total = kTooLarge;
          break;
        }
      bytes = total;
    }
  }
  typeBytes[type] = bytes;
  return bytes;
}

FailureOr<uint64_t> GraphBuilder::allocationBytes(Value value,
                                                  FunctionGraph &fg) {
  if (std::optional<uint64_t> bytes = staticBytes(value.getType())) {
    if (*bytes == kTooLarge) {
      emitError(value.getLoc())
          << "cannot size " << fg.getValueName(value) << " of type "
          << value.getType() << ": it takes more than " << kMaxBufferBytes
          << " bytes (1 PiB), beyond any device";
      return failure();
    }
    return align(*bytes);
  }
  // A user-given bound: on the defining op, or in the function's arg_attrs.
  Attribute bound;
  StringRef name = LMSDialect::getMaxBytesAttrName();
  if (auto result = dyn_cast<OpResult>(value)) {
    bound = result.getOwner()->getAttr(name);
    if (auto array = dyn_cast_or_null<ArrayAttr>(bound))
      bound = result.getResultNumber() < array.size()
                  ? array[result.getResultNumber()]
                  : Attribute();
  } else {
    auto arg = cast<BlockArgument>(value);
    if (auto func =
            dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      if (arg.getOwner()->isEntryBlock())
        bound = func.getArgAttr(arg.getArgNumber(), name);
  }
  if (auto integer = dyn_cast_or_null<IntegerAttr>(bound)) {
    if (integer.getValue().isNegative()) {
      emitError(value.getLoc())
          << "'" << name << "' of " << fg.getValueName(value)
          << " must not be negative";
      return failure();
    }
    if (integer.getValue().getActiveBits() > 64 ||
        integer.getValue().getZExtValue() > kMaxBufferBytes) {
      emitError(value.getLoc())
          << "'" << name << "' of " << fg.getValueName(value)
          << " must be at most " << kMaxBufferBytes << " bytes (1 PiB)";
      return failure();
    }
    return align(integer.getValue().getZExtValue());
  }
  if (bound) {
    emitError(value.getLoc())
        << "'" << name << "' of " << fg.getValueName(value)
        << " must be an integer number of bytes (or an "
           "array of them, one per result), got "
        << bound;
    return failure();
  }
  if (options.dynamicBytes)
    return align(*options.dynamicBytes);
  auto shaped =
      cast<ShapedType>(isa<HostType>(value.getType())
                           ? cast<HostType>(value.getType()).getValueType()
                           : value.getType());
  InFlightDiagnostic diag = emitError(value.getLoc())
                            << "cannot size " << fg.getValueName(value)
                            << " of type " << value.getType() << ": ";
  if (!shaped.hasStaticShape())
    diag << (shaped.hasRank() ? "its shape is dynamic" : "it is unranked");
  else
    diag << "its element type has no size in the data layout";
  diag << "; give an upper bound in bytes with an '" << name
       << "' attribute on its defining op (or in the function's arg_attrs), "
          "or with the 'dynamic-bytes' option";
  return failure();
}

/// The static trip count of a loop, if known.
static std::optional<uint64_t> staticTripCount(Operation *op) {
  auto loop = dyn_cast<LoopLikeOpInterface>(op);
  if (!loop)
    return std::nullopt;
  std::optional<APInt> count = loop.getStaticTripCount();
  if (!count)
    return std::nullopt;
  return count->getZExtValue();
}

void GraphBuilder::addKernels(FunctionGraph &inner, bool copiesInOrder,
                              Summary &summary) {
  const ::lms::Graph &g = inner.getGraph();
  for (auto [index, op] : llvm::enumerate(g.getOps())) {
    summary.cost.flops += op.cost.flops;
    summary.cost.bytes += op.cost.bytes;
    // A callee's offloads and fetches run on the copy streams beside its
    // compute: the call takes its kernels' time, and the stall of the
    // callee's own timeline (summarizeCallee).
    if (!copiesInOrder &&
        (op.kind == ::lms::OpKind::SwapOut || op.kind == ::lms::OpKind::SwapIn))
      continue;
    // A copy between host and device (an offload or a fetch planned inside
    // the body) is timed on the host link, for the bytes of the device
    // tensor it copies (a fetched value the body yields counts no bytes
    // here: the enclosing op holds it).
    if (op.kind == ::lms::OpKind::SwapOut || op.kind == ::lms::OpKind::SwapIn) {
      Operation *copyOp = inner.getOp(static_cast<OpIndex>(index));
      Value device = op.kind == ::lms::OpKind::SwapOut ? copyOp->getOperand(0)
                                                       : copyOp->getResult(0);
      ::lms::Kernel copy;
      double bytes =
          static_cast<double>(staticBytes(device.getType()).value_or(0));
      (op.kind == ::lms::OpKind::SwapOut ? copy.d2hBytes : copy.h2dBytes) =
          bytes;
      summary.cost.kernels.push_back(copy);
      continue;
    }
    // The kernels the block's ops launch (free ops launch none), with the
    // constants they upload.
    if (!op.cost.kernels.empty())
      llvm::append_range(summary.cost.kernels, op.cost.kernels);
    else if (!op.cost.seconds || *op.cost.seconds != 0)
      summary.cost.kernels.push_back(
          {op.cost.flops, op.cost.bytes, op.cost.seconds});
    if (op.cost.h2dBytes > 0) {
      ::lms::Kernel upload;
      upload.h2dBytes = op.cost.h2dBytes;
      summary.cost.kernels.push_back(upload);
    }
  }
  ::lms::compactKernels(summary.cost.kernels);
}

FailureOr<GraphBuilder::Summary> GraphBuilder::summarizeBlock(Operation *owner,
                                                              Block &block) {
  FunctionGraph inner;
  inner.function = owner;
  inner.block = &block;
  if (failed(buildBlock(block, /*regionMode=*/true, inner)))
    return failure();
  Summary summary;
  ::lms::MemoryProfile profile = ::lms::evaluateSchedule(
      inner.getGraph(), ::lms::EvalOptions{/*recordSteps=*/false});
  summary.peakBytes = static_cast<int64_t>(profile.peakBytes);
  addKernels(inner, /*copiesInOrder=*/true, summary);
  return summary;
}

FailureOr<GraphBuilder::Summary> GraphBuilder::summarizeRegions(Operation *op) {
  Summary total;
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    if (!region.hasOneBlock()) {
      op->emitError("cannot analyse a region with several blocks "
                    "(unstructured control flow); use structured control "
                    "flow such as scf");
      return failure();
    }
    FailureOr<Summary> summary = summarizeBlock(op, region.front());
    if (failed(summary))
      return failure();
    total.peakBytes = std::max(total.peakBytes, summary->peakBytes);
    total.cost.flops += summary->cost.flops;
    total.cost.bytes += summary->cost.bytes;
    llvm::append_range(total.cost.kernels, summary->cost.kernels);
  }
  ::lms::compactKernels(total.cost.kernels);
  if (std::optional<uint64_t> trips = staticTripCount(op)) {
    total.cost.flops *= static_cast<double>(*trips);
    total.cost.bytes *= static_cast<double>(*trips);
    for (::lms::Kernel &kernel : total.cost.kernels)
      kernel.launches *= static_cast<double>(*trips);
  }
  return total;
}

FailureOr<GraphBuilder::Summary>
GraphBuilder::summarizeCall(CallOpInterface call, ArrayRef<bool> borrowed) {
  Operation *callee = call.resolveCallableInTable(&symbolTables);
  auto func = dyn_cast_or_null<FunctionOpInterface>(callee);
  if (!func || func.isExternal())
    return Summary{};
  std::pair<Operation *, std::vector<bool>> key(
      callee, std::vector<bool>(borrowed.begin(), borrowed.end()));
  auto cached = calleeSummaries.find(key);
  if (cached != calleeSummaries.end())
    return cached->second;
  if (!calleesInProgress.insert(callee).second) {
    call->emitWarning("recursive call: the peak memory inside it is not "
                      "counted");
    return Summary{};
  }
  if (levelsLeft == 0) {
    outOfStack = true;
    calleesInProgress.erase(callee);
    return failure();
  }
  --levelsLeft;
  FailureOr<Summary> summary = summarizeCallee(func, borrowed);
  ++levelsLeft;
  calleesInProgress.erase(callee);
  if (failed(summary)) {
    if (!outOfStack)
      call->emitRemark("in a call from here");
    return failure();
  }
  calleeSummaries[key] = *summary;
  cache.summarized.insert(callee);
  return summary;
}

/// A callee is analysed as a function: its arguments are live from entry
/// through their last use (the callee may free them) and its results to the
/// end. Both are the call's operands and results, which the caller counts, so
/// the call's transient bytes are the callee's peak minus them, which may be
/// negative: while the call runs, the caller holds the callee's peak plus
/// whatever else is live.
FailureOr<GraphBuilder::Summary>
GraphBuilder::summarizeCallee(FunctionOpInterface callee,
                              ArrayRef<bool> borrowed) {
  Region &body = callee.getFunctionBody();
  if (!body.hasOneBlock()) {
    callee->emitError("cannot analyse a function with several blocks "
                      "(unstructured control flow); use structured control "
                      "flow such as scf");
    return failure();
  }
  FunctionGraph inner;
  inner.function = callee;
  inner.block = &body.front();
  if (failed(buildBlock(body.front(), /*regionMode=*/false, inner, borrowed)))
    return failure();
  const ::lms::Graph &g = inner.getGraph();
  Summary summary;
  uint64_t peak =
      ::lms::evaluateSchedule(g, ::lms::EvalOptions{/*recordSteps=*/false})
          .peakBytes;
  uint64_t boundary = inner.getBoundaryBytes();
  summary.peakBytes =
      static_cast<int64_t>(peak) - static_cast<int64_t>(boundary);
  // Results that are an argument's buffer: the terminator returns the
  // buffer itself where it makes no copy (the first time it returns it, and
  // not a borrowed argument: see the return rule in buildBlock).
  Operation *terminator = body.front().getTerminator();
  llvm::SmallDenseSet<TensorIndex> returned;
  for (Value operand : terminator->getOperands()) {
    int argument = -1;
    std::optional<TensorIndex> t = inner.lookupBuffer(operand);
    if (t && returned.insert(*t).second && g.tensor(*t).producer == kEntry &&
        g.tensor(*t).space == MemorySpace::Device &&
        (!g.tensor(*t).liveOut || options.keepArgumentsResident))
      if (auto arg = dyn_cast<BlockArgument>(inner.getAllocatingValue(*t)))
        if (arg.getOwner() == &body.front())
          argument = static_cast<int>(arg.getArgNumber());
    summary.resultArguments.push_back(argument);
  }
  addKernels(inner, /*copiesInOrder=*/false, summary);
  // The call also waits for what the callee's copies do not hide: its own
  // timeline's stall on the timing device.
  if (options.timingDevice) {
    double stall = ::lms::simulate(g, *options.timingDevice).stallSeconds;
    if (stall > 0) {
      ::lms::Kernel wait;
      wait.seconds = stall;
      summary.cost.kernels.push_back(wait);
      ::lms::compactKernels(summary.cost.kernels);
    }
  }
  return summary;
}

uint64_t FunctionGraph::getBoundaryBytes() const {
  uint64_t boundary = 0;
  llvm::SmallDenseSet<TensorIndex> counted;
  for (TensorIndex t = 0; t < static_cast<TensorIndex>(graph.numTensors()); ++t)
    if (graph.tensor(t).producer == kEntry &&
        graph.tensor(t).space == MemorySpace::Device &&
        counted.insert(t).second)
      boundary += graph.tensor(t).bytes;
  // What it returns: its operands, and the copies it returns instead of a
  // buffer returned twice or a borrowed argument.
  if (graph.numOps() > 0)
    for (auto side :
         {llvm::ArrayRef<TensorIndex>(graph.op(graph.numOps() - 1).inputs),
          llvm::ArrayRef<TensorIndex>(graph.op(graph.numOps() - 1).outputs)})
      for (TensorIndex t : side)
        if (graph.tensor(t).space == MemorySpace::Device &&
            counted.insert(t).second)
          boundary += graph.tensor(t).bytes;
  return boundary;
}

namespace mlir {
namespace lms {

/// Where bufferization puts a buffer-typed result of an op.
struct ResultPlacement {
  enum Kind {
    /// The buffer of an operand or an earlier result: a view of its source,
    /// an argument a callee returns, a view a recomputation yields again.
    Alias,
    /// Written in place into the buffer of its tied init: an update of it.
    InPlace,
    /// In a nested block, (a view of) a buffer of the enclosing function:
    /// nothing is allocated here, the buffer is counted there.
    Enclosing,
    /// A buffer of its own, in `space`.
    NewBuffer,
  };
  Kind kind;
  TensorIndex buffer = -1;
  MemorySpace space = MemorySpace::Device;
};

/// The alias model of one block: which buffer each buffer-typed value of it
/// is, the last use of each buffer over all its aliases, which buffers an op
/// may write in place (not constants, not borrowed arguments), and where
/// each result is placed (ResultPlacement), as bufferization lays them out.
/// It owns the value-to-buffer side of the FunctionGraph it fills.
class AliasModel {
public:
  using InPlaceQuery = std::function<std::optional<bool>(OpOperand &)>;

  AliasModel(FunctionGraph &fg, Block &block, bool regionMode,
             InPlaceQuery bufferizesInPlace)
      : fg(fg), graph(fg.graph), block(block), regionMode(regionMode),
        bufferizesInPlace(bufferizesInPlace) {}

  /// Records the last use of every value: `uses[i]` are the values op `i`
  /// of the schedule uses.
  void recordUses(ArrayRef<SmallVector<Value, 4>> uses) {
    for (auto [index, opUses] : llvm::enumerate(uses))
      for (Value v : opUses)
        lastUse[v] = static_cast<OpIndex>(index);
  }

  /// A new buffer for `value`, made at `producer` (kEntry for an argument).
  TensorIndex newBuffer(Value value, uint64_t bytes, MemorySpace space,
                        OpIndex producer, bool isWritable) {
    TensorIndex t = graph.addTensor("", bytes, space);
    fg.tensorValues.push_back(value);
    fg.bufferOf[value] = t;
    bufferLastUse.push_back(lastUseOf(value, producer));
    writable.push_back(isWritable);
    return t;
  }

  /// The copy a return makes of `operand` (made at the return, `at`).
  TensorIndex newCopy(Value operand, uint64_t bytes, OpIndex at) {
    TensorIndex t = graph.addTensor("", bytes, MemorySpace::Device);
    fg.tensorValues.push_back(operand);
    bufferLastUse.push_back(at);
    writable.push_back(true);
    return t;
  }

  /// Buffer `t` is used at `at` (a wait keeps the source of its copy).
  void keepUntil(TensorIndex t, OpIndex at) {
    bufferLastUse[t] = std::max(bufferLastUse[t], at);
  }

  /// The last use of buffer `t` over its aliases so far.
  OpIndex lastUseOfBuffer(TensorIndex t) const { return bufferLastUse[t]; }

  /// Where `result` of the op at `index` is placed, recorded for the
  /// aliasing kinds (a NewBuffer is the caller's to size and make with
  /// newBuffer). `returned`: the argument buffer a call returns as this
  /// result, if any.
  ResultPlacement place(OpResult result, OpIndex index,
                        std::optional<TensorIndex> returned);

private:
  OpIndex lastUseOf(Value v, OpIndex fallback) const {
    auto it = lastUse.find(v);
    return it == lastUse.end() ? fallback : it->second;
  }
  void addAlias(Value value, TensorIndex t, OpIndex at) {
    fg.bufferOf[value] = t;
    bufferLastUse[t] = std::max(bufferLastUse[t], lastUseOf(value, at));
  }
  /// Whether `value` is (a view of) a buffer of the enclosing function.
  bool inEnclosing(Value value) const {
    Value root = viewRoot(value);
    return enclosingAliases.contains(root) ||
           root.getParentRegion()->isProperAncestor(block.getParent());
  }
  /// The placement of a result tied to an init operand (a destination, a
  /// loop's iter_arg), or nullopt when it needs a buffer of its own.
  std::optional<ResultPlacement> placeTied(OpResult result, OpOperand &tiedInit,
                                           OpIndex index);
  /// The placement of a view's result, or nullopt when bufferization copies
  /// the view.
  std::optional<ResultPlacement> placeView(OpResult result, OpIndex index);

  FunctionGraph &fg;
  ::lms::Graph &graph;
  Block &block;
  bool regionMode;
  InPlaceQuery bufferizesInPlace;
  DenseMap<Value, OpIndex> lastUse;
  /// Per buffer: the last use over all its aliases so far, and whether an
  /// op may write into it in place (constants are read-only).
  std::vector<OpIndex> bufferLastUse;
  std::vector<uint8_t> writable;
  /// In a nested block: values of this block that are (views of) a buffer
  /// of the enclosing function, written in place here; views of them
  /// allocate nothing either.
  DenseSet<Value> enclosingAliases;
};

ResultPlacement AliasModel::place(OpResult result, OpIndex index,
                                  std::optional<TensorIndex> returned) {
  Operation &op = *result.getOwner();
  if (returned) {
    addAlias(result, *returned, index);
    return {ResultPlacement::Alias, *returned};
  }
  // A recomputation that yields a buffer and views of it (a constant and
  // its reshapes) makes one buffer: the lowering inlines it, and the views
  // alias it.
  if (auto recompute = dyn_cast<RecomputeOp>(op)) {
    Value root =
        viewRoot(recompute.getYield()->getOperand(result.getResultNumber()));
    for (OpResult earlier :
         op.getResults().take_front(result.getResultNumber()))
      if (viewRoot(recompute.getYield()->getOperand(
              earlier.getResultNumber())) == root)
        if (std::optional<TensorIndex> shared = fg.lookupBuffer(earlier)) {
          addAlias(result, *shared, index);
          return {ResultPlacement::Alias, *shared};
        }
  }
  // Results tied to an init operand; else views.
  OpOperand *tiedInit = nullptr;
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (dps && dps.hasPureTensorSemantics())
    tiedInit = dps.getTiedOpOperand(result);
  else if (auto loop = dyn_cast<LoopLikeOpInterface>(op))
    tiedInit = loop.getTiedLoopInit(result);
  std::optional<ResultPlacement> placed =
      tiedInit && tiedInit->get() ? placeTied(result, *tiedInit, index)
                                  : placeView(result, index);
  if (placed)
    return *placed;
  // A global's buffer is host memory; the lowering uploads a device copy of
  // it before its first use (--lms-upload-constants), which is the
  // allocation counted on the device.
  MemorySpace space =
      isa<HostType>(result.getType()) || isa<memref::GetGlobalOp>(op)
          ? MemorySpace::Host
          : MemorySpace::Device;
  return {ResultPlacement::NewBuffer, -1, space};
}

std::optional<ResultPlacement>
AliasModel::placeTied(OpResult result, OpOperand &tiedInit, OpIndex index) {
  std::optional<TensorIndex> buffer = fg.lookupBuffer(tiedInit.get());
  // Bufferization's decision where its analysis has one (it also writes in
  // place into an init nobody reads later, and into the slice of a matching
  // extract/insert pair); else the rule: in place at the init buffer's last
  // use. Never into read-only data (a constant) or a borrowed argument.
  std::optional<bool> analysed = bufferizesInPlace(tiedInit);
  // A bufferized loop carries its init's buffer itself (memrefs are not
  // copied), whatever reads the buffer later: before, such a loop's result
  // was a buffer of its own whose last use could be a call, which then
  // owned it and freed the init's buffer that later ops still used
  // (--lms-deallocate freed it twice).
  bool bufferized = isa<BaseMemRefType>(tiedInit.get().getType());
  bool inPlace =
      buffer && (bufferized ||
                 (writable[*buffer] &&
                  (analysed ? *analysed : bufferLastUse[*buffer] <= index)));
  if (inPlace) {
    addAlias(result, *buffer, index);
    return ResultPlacement{ResultPlacement::InPlace, *buffer};
  }
  // In a nested block, written in place into (a view of) a buffer of the
  // enclosing function: no new buffer here either.
  if (!buffer && regionMode && analysed && *analysed) {
    enclosingAliases.insert(result);
    return ResultPlacement{ResultPlacement::Enclosing};
  }
  return std::nullopt;
}

std::optional<ResultPlacement> AliasModel::placeView(OpResult result,
                                                     OpIndex index) {
  // Views alias their source and keep it alive, except where bufferization
  // copies the view (a write to the source while the view is still read):
  // then the view is a new buffer.
  Operation &op = *result.getOwner();
  // A reshape that bufferization copies (a collapse of a strided slice).
  if (bufferizationCopies(&op))
    return std::nullopt;
  OpOperand *source = nullptr;
  auto view = dyn_cast<ViewLikeOpInterface>(op);
  if (view && view.getViewSource()) {
    for (OpOperand &operand : op.getOpOperands())
      if (operand.get() == view.getViewSource())
        source = &operand;
  } else if (isViewLikeOp(&op) && op.getNumOperands() > 0) {
    source = &op.getOpOperand(0);
  }
  if (!source)
    return std::nullopt;
  std::optional<bool> analysed = bufferizesInPlace(*source);
  if (analysed && !*analysed)
    return std::nullopt;
  if (std::optional<TensorIndex> buffer = fg.lookupBuffer(source->get())) {
    addAlias(result, *buffer, index);
    return ResultPlacement{ResultPlacement::Alias, *buffer};
  }
  // In a nested block, a view of a buffer of the enclosing function (a
  // slice of a captured tensor, a view of such a slice, or of a result
  // written in place into one) allocates nothing: the buffer is counted
  // there, resident across the op.
  if (regionMode && inEnclosing(source->get()))
    return ResultPlacement{ResultPlacement::Enclosing};
  return std::nullopt;
}

/// Translates one block into its FunctionGraph: the schedule (scheduleOrder),
/// the uses of each op, the block's arguments, then each op in order — what
/// kind of op it is (an lms copy, a call, an op with regions, a return, any
/// other), where its results are placed (AliasModel), what it costs and
/// holds while it runs — and the insertion anchors.
class BlockTranslator {
public:
  BlockTranslator(GraphBuilder &builder, Block &block, bool regionMode,
                  FunctionGraph &fg, ArrayRef<bool> borrowed)
      : builder(builder), block(block), regionMode(regionMode), fg(fg),
        graph(fg.graph), borrowed(borrowed),
        aliases(fg, block, regionMode, [&builder](OpOperand &operand) {
          return builder.bufferizesInPlace(operand);
        }) {}

  LogicalResult run();

private:
  /// What the translation of one op adds to the graph.
  struct Translated {
    SmallVector<TensorIndex, 4> inputs;
    SmallVector<TensorIndex, 2> outputs;
    SmallVector<TensorIndex, 1> updates;
    OpKind kind = OpKind::Compute;
  };

  /// The values each op of the schedule uses: its operands and the values
  /// of this block that its regions capture.
  void collectUses();
  LogicalResult addArguments();
  LogicalResult translateOp(Operation &op, OpIndex index);
  /// The results of lms.swap_out / swap_wait / swap_in.
  LogicalResult translateCopy(Operation &op, OpIndex index, Translated &out);
  /// The results of any other op, placed by the alias model.
  LogicalResult translateResults(Operation &op, OpIndex index, Translated &out);
  /// A call: which operands the callee borrows (it owns one passed at its
  /// buffer's last use, and may free it early), and its summary.
  LogicalResult translateCall(CallOpInterface call, OpIndex index);
  /// The argument buffer `result` of a call is, when the callee returns an
  /// argument it owns (or a view of it) without a copy.
  std::optional<TensorIndex> returnedArgument(OpResult result) const;
  /// A buffer for `result` of `op`, sized unless `knownBytes` says.
  LogicalResult allocate(Operation &op, Value result, MemorySpace space,
                         std::optional<uint64_t> knownBytes, OpIndex index,
                         Translated &out);
  /// The copies a function's return makes (see translateOp).
  void addReturnCopies(Operation &op, OpIndex index, Translated &out);
  /// What the op holds while it runs besides its operands and results (its
  /// regions' or callee's peak), with their cost added to `cost`.
  FailureOr<int64_t> transientBytes(Operation &op, OpCost &cost);
  uint64_t bytesOfValue(Value v);
  void setAnchors();

  GraphBuilder &builder;
  Block &block;
  bool regionMode;
  FunctionGraph &fg;
  ::lms::Graph &graph;
  ArrayRef<bool> borrowed;
  AliasModel aliases;
  /// The buffers an lms.swap_wait released, and the wait.
  llvm::DenseMap<TensorIndex, Operation *> releasedBy;
  SmallPtrSet<Operation *, 8> deferred;
  bool resident = false;
  SmallVector<Operation *> order;
  std::vector<SmallVector<Value, 4>> uses;
  /// The call being translated: its summary and borrowed operands.
  std::optional<CalleeSummary> callSummary;
  SmallVector<bool> borrowedOperands;
};

LogicalResult GraphBuilder::buildBlock(Block &block, bool regionMode,
                                       FunctionGraph &fg,
                                       ArrayRef<bool> borrowed) {
  return BlockTranslator(*this, block, regionMode, fg, borrowed).run();
}

LogicalResult BlockTranslator::run() {
  // The schedule: the ops of the block in order, except that a host constant
  // is uploaded right before its first user (where the lowering uploads it),
  // not where the producer wrote it.
  resident = builder.residentConstants && !regionMode;
  order = scheduleOrder(block, deferred, resident);
  collectUses();
  aliases.recordUses(uses);
  if (failed(addArguments()))
    return failure();
  for (auto [index, op] : llvm::enumerate(order))
    if (failed(translateOp(*op, static_cast<OpIndex>(index))))
      return failure();
  setAnchors();
  return success();
}

void BlockTranslator::collectUses() {
  uses.reserve(order.size());
  for (Operation *opPtr : order) {
    Operation &op = *opPtr;
    SmallVector<Value, 4> &opUses = uses.emplace_back();
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isBufferType(operand.get().getType()))
        continue;
      // A constant given as a destination the op overwrites is not read:
      // bufferization copies it into a new buffer. So is a constant
      // fetched again (an lms.recompute of a constant, which the lowering
      // inlines into the constant itself).
      Operation *def = operand.get().getDefiningOp();
      if (def && isConstantValue(def) && isUnreadDestination(operand))
        continue;
      opUses.push_back(operand.get());
    }
    // Linalg payloads capture tensors too (a gather reads a table with
    // tensor.extract): they are uses of the op like its operands.
    if (op.getNumRegions() > 0)
      op.walk([&](Operation *nested) {
        if (nested == &op)
          return;
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &block &&
              isBufferType(operand.getType()))
            opUses.push_back(operand);
      });
  }
}

LogicalResult BlockTranslator::addArguments() {
  // Block arguments are live on entry; inside a region they are the
  // enclosing op's operands, counted outside.
  for (BlockArgument arg : block.getArguments()) {
    if (!isBufferType(arg.getType()))
      continue;
    uint64_t bytes = 0;
    if (!regionMode) {
      FailureOr<uint64_t> size = builder.allocationBytes(arg, fg);
      if (failed(size))
        return failure();
      bytes = *size;
    }
    MemorySpace space =
        isa<HostType>(arg.getType()) ? MemorySpace::Host : MemorySpace::Device;
    bool isBorrowed = !regionMode && isBorrowedArgument(arg, borrowed);
    TensorIndex t = aliases.newBuffer(arg, bytes, space, kEntry, !isBorrowed);
    if ((builder.options.keepArgumentsResident || isBorrowed) && !regionMode)
      graph.setLiveOut(t);
  }
  return success();
}

LogicalResult BlockTranslator::translateOp(Operation &op, OpIndex index) {
  fg.ops.push_back(&op);
  fg.opIndex[&op] = index;
  Translated out;
  for (Value v : uses[index])
    if (std::optional<TensorIndex> t = fg.lookupBuffer(v)) {
      // An lms.swap_wait released this buffer's device bytes (the
      // verifier rejects direct uses of the offloaded value; this is a
      // view of it).
      if (auto it = releasedBy.find(*t); it != releasedBy.end()) {
        InFlightDiagnostic diag =
            op.emitError("reads a buffer whose device bytes an "
                         "'lms.swap_wait' released (use a fetched copy, "
                         "'lms.swap_in')");
        diag.attachNote(it->second->getLoc()) << "released here";
        return diag;
      }
      out.inputs.push_back(*t);
    }

  callSummary.reset();
  borrowedOperands.clear();
  if (auto call = dyn_cast<CallOpInterface>(op);
      call && op.getNumRegions() == 0)
    if (failed(translateCall(call, index)))
      return failure();

  if (isa<SwapOutOp, SwapWaitOp, SwapInOp>(op)) {
    if (failed(translateCopy(op, index, out)))
      return failure();
  } else if (failed(translateResults(op, index, out))) {
    return failure();
  }

  OpCost cost = estimateOpCost(&op, [&](Value v) { return bytesOfValue(v); });
  FailureOr<int64_t> transient = transientBytes(op, cost);
  if (failed(transient))
    return failure();

  // A function returns each result as a buffer its caller owns: a buffer
  // returned a second time (a value and a view of it) or an argument it
  // borrows is returned as a copy (--lms-deallocate makes it), which exists
  // from the return on.
  if (!regionMode && op.hasTrait<OpTrait::ReturnLike>())
    addReturnCopies(op, index, out);

  OpIndex added = graph.addOp(op.getName().getStringRef().str(), out.inputs,
                              out.outputs, cost, out.kind);
  graph.setTransientBytes(added, *transient);
  for (TensorIndex t : out.updates)
    if (llvm::is_contained(graph.op(added).inputs, t))
      graph.addUpdate(added, t);

  // Inside a region, what the terminator yields becomes the enclosing op's
  // results, which the enclosing graph counts for the whole op.
  if (regionMode && op.hasTrait<OpTrait::IsTerminator>())
    for (TensorIndex t : out.inputs)
      graph.setBytes(t, 0);
  return success();
}

LogicalResult BlockTranslator::translateCall(CallOpInterface call,
                                             OpIndex index) {
  for (Value operand : call->getOperands()) {
    std::optional<TensorIndex> t = fg.lookupBuffer(operand);
    // The rule of FunctionGraph::borrowedCallOperands, on the graph built
    // so far (later aliases only extend the buffer's last use through uses
    // after the call, already counted).
    bool owned =
        t && mayGiveToCallee(fg, call, operand, *t,
                             aliases.lastUseOfBuffer(*t) <= index, regionMode);
    borrowedOperands.push_back(!owned);
  }
  FailureOr<CalleeSummary> summary =
      builder.summarizeCall(call, borrowedOperands);
  if (failed(summary))
    return failure();
  callSummary = std::move(*summary);
  // Kept for borrowedCallOperands where the callee has a body (an external
  // one borrows every operand); resolved in the module's symbol table here,
  // so that it needs no lookup of its own (a walk of the module per call).
  auto callee = dyn_cast_or_null<FunctionOpInterface>(
      call.resolveCallableInTable(&builder.symbolTables));
  if (callee && !callee.isExternal())
    fg.callBorrowed[call.getOperation()] = borrowedOperands;
  return success();
}

std::optional<TensorIndex>
BlockTranslator::returnedArgument(OpResult result) const {
  Operation &op = *result.getOwner();
  auto call = dyn_cast<CallOpInterface>(op);
  if (!callSummary || !call ||
      call.getArgOperands().size() != op.getNumOperands() ||
      result.getResultNumber() >= callSummary->resultArguments.size())
    return std::nullopt;
  int argument = callSummary->resultArguments[result.getResultNumber()];
  if (argument < 0 || static_cast<unsigned>(argument) >= op.getNumOperands() ||
      borrowedOperands[argument])
    return std::nullopt;
  return fg.lookupBuffer(op.getOperand(argument));
}

LogicalResult BlockTranslator::allocate(Operation &op, Value result,
                                        MemorySpace space,
                                        std::optional<uint64_t> knownBytes,
                                        OpIndex index, Translated &out) {
  uint64_t bytes;
  if (knownBytes) {
    bytes = *knownBytes;
  } else {
    FailureOr<uint64_t> size = builder.allocationBytes(result, fg);
    if (failed(size))
      return failure();
    bytes = *size;
  }
  // Constants are read-only: bufferization copies them before a write.
  bool hostData = isHostConstant(&op);
  // An unused constant or empty tensor allocates nothing: bufferization
  // drops it (a constant is uploaded at its first use, and has none).
  if (result.use_empty() &&
      (hostData || isa<tensor::EmptyOp, bufferization::AllocTensorOp>(op)))
    bytes = 0;
  // Nor does a constant whose value nobody reads (the destination of ops
  // that overwrite it): bufferization never uploads it.
  if (hostData && !result.use_empty() &&
      llvm::all_of(result.getUses(), isUnreadDestination))
    bytes = 0;
  out.outputs.push_back(
      aliases.newBuffer(result, bytes, space, index, !hostData));
  // It can be dropped and read again only when reading it has no effect to
  // order against (a constant, not a mutable global that a store may change
  // in between). Resident constants stay to the end.
  if (hostData && resident)
    graph.setLiveOut(out.outputs.back());
  else if (hostData && isMemoryEffectFree(&op))
    graph.tensor(out.outputs.back()).hostBacked = true;
  return success();
}

LogicalResult BlockTranslator::translateCopy(Operation &op, OpIndex index,
                                             Translated &out) {
  // A copy's buffer has the bytes of the buffer it copies.
  auto bytesOfBuffer = [&](Value copied) -> std::optional<uint64_t> {
    if (std::optional<TensorIndex> t = fg.lookupBuffer(copied))
      return graph.tensor(*t).bytes;
    return std::nullopt;
  };
  if (auto swapOut = dyn_cast<SwapOutOp>(op)) {
    out.kind = OpKind::SwapOut;
    return allocate(op, swapOut.getResult(), MemorySpace::Host,
                    bytesOfBuffer(swapOut.getSource()), index, out);
  }
  if (auto wait = dyn_cast<SwapWaitOp>(op)) {
    out.kind = OpKind::SwapWait;
    // The source stays resident until the copy is known to be complete.
    if (SwapOutOp swapOut = wait.getSwapOut())
      if (std::optional<TensorIndex> source =
              fg.lookupBuffer(swapOut.getSource())) {
        out.inputs.push_back(*source);
        aliases.keepUntil(*source, index);
        releasedBy[*source] = &op;
      }
    return success();
  }
  auto swapIn = cast<SwapInOp>(op);
  out.kind = OpKind::SwapIn;
  return allocate(op, swapIn.getResult(), MemorySpace::Device,
                  bytesOfBuffer(swapIn.getHandle()), index, out);
}

LogicalResult BlockTranslator::translateResults(Operation &op, OpIndex index,
                                                Translated &out) {
  for (OpResult result : op.getResults()) {
    if (!isBufferType(result.getType()))
      continue;
    ResultPlacement placed =
        aliases.place(result, index, returnedArgument(result));
    if (placed.kind == ResultPlacement::InPlace)
      out.updates.push_back(placed.buffer);
    if (placed.kind == ResultPlacement::NewBuffer &&
        failed(allocate(op, result, placed.space, std::nullopt, index, out)))
      return failure();
  }
  return success();
}

void BlockTranslator::addReturnCopies(Operation &op, OpIndex index,
                                      Translated &out) {
  llvm::SmallDenseSet<TensorIndex> returned;
  fg.returnedBuffers.clear();
  for (Value operand : op.getOperands()) {
    std::optional<TensorIndex> t = fg.lookupBuffer(operand);
    if (!t || graph.tensor(*t).space != MemorySpace::Device) {
      fg.returnedBuffers.push_back({std::nullopt, false});
      continue;
    }
    bool borrowedArg = graph.tensor(*t).producer == kEntry &&
                       graph.tensor(*t).liveOut &&
                       !builder.options.keepArgumentsResident;
    if (returned.insert(*t).second && !borrowedArg) {
      fg.returnedBuffers.push_back({*t, false});
      continue;
    }
    out.outputs.push_back(
        aliases.newCopy(operand, graph.tensor(*t).bytes, index));
    fg.returnedBuffers.push_back({out.outputs.back(), true});
  }
}

FailureOr<int64_t> BlockTranslator::transientBytes(Operation &op,
                                                   OpCost &cost) {
  if (op.getNumRegions() > 0 && !isa<linalg::LinalgOp>(op)) {
    FailureOr<CalleeSummary> summary = builder.summarizeRegions(&op);
    if (failed(summary))
      return failure();
    cost.flops += summary->cost.flops;
    cost.bytes += summary->cost.bytes;
    // An lms.recompute is inlined where it stands before it is lowered:
    // its ops are kernels of their own, each timed with its launch (as
    // the recomputation planner timed them). A loop's body launches its
    // kernels once per iteration (a split into many slices pays their
    // launches). Other ops with regions stay one kernel of their regions'
    // total.
    if (isa<RecomputeOp>(op) || staticTripCount(&op))
      cost.kernels = std::move(summary->cost.kernels);
    return summary->peakBytes;
  }
  if (callSummary) {
    cost.flops += callSummary->cost.flops;
    cost.bytes += callSummary->cost.bytes;
    // A call runs the callee's kernels, each timed with its launch (as the
    // callee's own analysis times them), not one kernel of their total: a
    // caller's time then includes what its callees take.
    if (!callSummary->cost.kernels.empty())
      cost.kernels = callSummary->cost.kernels;
    return callSummary->peakBytes;
  }
  return 0;
}

uint64_t BlockTranslator::bytesOfValue(Value v) {
  if (std::optional<uint64_t> bytes = builder.staticBytes(v.getType()))
    return std::min(*bytes, kMaxBufferBytes);
  auto it = fg.bufferOf.find(v);
  return it == fg.bufferOf.end() ? 0 : graph.tensor(it->second).bytes;
}

void BlockTranslator::setAnchors() {
  // Insertion anchors: an op scheduled out of its block position (a host
  // constant moved to its first user) anchors at the next op that is not.
  fg.anchors.assign(order.size(), static_cast<OpIndex>(order.size()));
  OpIndex next = static_cast<OpIndex>(order.size());
  for (OpIndex i = static_cast<OpIndex>(order.size()) - 1; i >= 0; --i) {
    if (!deferred.contains(order[i]))
      next = i;
    fg.anchors[i] = next;
  }
}

} // namespace lms
} // namespace mlir

FailureOr<FunctionGraph> GraphBuilder::buildFunction(Operation *func) {
  FunctionGraph fg;
  fg.function = func;
  if (func->getNumRegions() != 1 || func->getRegion(0).empty()) {
    func->emitError("cannot analyse a function without a body");
    return failure();
  }
  Region &body = func->getRegion(0);
  if (!body.hasOneBlock()) {
    func->emitError("cannot analyse a function with several blocks "
                    "(unstructured control flow); use structured control "
                    "flow such as scf");
    return failure();
  }
  fg.block = &body.front();
  if (failed(buildBlock(body.front(), /*regionMode=*/false, fg)))
    return failure();
  return fg;
}

SmallVector<bool>
FunctionGraph::borrowedCallOperands(CallOpInterface call) const {
  SmallVector<bool> borrowed;
  Operation *top = block->findAncestorOpInBlock(*call);
  std::optional<OpIndex> index = top ? lookupOp(top) : std::nullopt;
  bool functionBody =
      block->isEntryBlock() && isa_and_nonnull<FunctionOpInterface>(function);
  // The decision the translation made (and counted), for a callee with a
  // body.
  if (auto it = callBorrowed.find(call.getOperation());
      top == call.getOperation() && it != callBorrowed.end())
    return it->second;
  // An external callee (a host function) frees nothing: the caller does.
  auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
  bool external = !callee || callee.isExternal();
  for (Value operand : call->getOperands()) {
    std::optional<TensorIndex> t = lookupBuffer(operand);
    bool owned = !external && index && top == call.getOperation() && t &&
                 mayGiveToCallee(*this, call, operand, *t,
                                 graph.lastUse(*t) == *index, !functionBody);
    borrowed.push_back(!owned);
  }
  return borrowed;
}

Operation *FunctionGraph::getInsertionAnchor(::lms::OpIndex index) const {
  if (index < 0 || static_cast<size_t>(index) >= anchors.size())
    return nullptr;
  ::lms::OpIndex anchor = anchors[index];
  return anchor < static_cast<::lms::OpIndex>(ops.size()) ? ops[anchor]
                                                          : nullptr;
}

FailureOr<FunctionGraph>
FunctionGraph::buildNested(Block &block, const GraphOptions &options) {
  Operation *owner = block.getParentOp();
  FunctionGraph fg;
  fg.function = owner;
  fg.block = &block;
  {
    GraphBuilder builder(options, owner);
    if (failed(builder.buildNestedBlock(block, fg)))
      return failure();
  }
  checkCachedBuild(owner, &block, options, fg);
  return fg;
}

/// The longest chain of calls from `root` (0 without calls), computed
/// without recursion; recursive calls end a chain.
static unsigned callDepth(Operation *root,
                          DenseMap<Operation *, unsigned> &depth,
                          SymbolTableCollection &symbols) {
  if (auto it = depth.find(root); it != depth.end())
    return it->second;
  DenseSet<Operation *> onStack;
  // (function, its callees, next callee to visit)
  struct Frame {
    Operation *func;
    SmallVector<Operation *> callees;
    size_t next = 0;
  };
  SmallVector<Frame> stack;
  auto push = [&](Operation *func) {
    Frame frame{func, {}, 0};
    func->walk([&](CallOpInterface call) {
      if (auto callee = dyn_cast_or_null<FunctionOpInterface>(
              call.resolveCallableInTable(&symbols)))
        if (!callee.isExternal())
          frame.callees.push_back(callee);
    });
    onStack.insert(func);
    stack.push_back(std::move(frame));
  };
  push(root);
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.next < frame.callees.size()) {
      Operation *callee = frame.callees[frame.next++];
      if (!depth.count(callee) && !onStack.contains(callee))
        push(callee);
      continue;
    }
    unsigned deepest = 0;
    for (Operation *callee : frame.callees)
      if (auto it = depth.find(callee); it != depth.end())
        deepest = std::max(deepest, it->second + 1);
    depth[frame.func] = deepest;
    onStack.erase(frame.func);
    stack.pop_back();
  }
  return depth[root];
}

/// Builds the graph of `func` on a stack deep enough for its calls.
static FailureOr<FunctionGraph> buildOnStack(Operation *func,
                                             const GraphOptions &options) {
  // The translation recurses into callees (and regions): a deep chain of
  // calls gets a thread with a stack to match (a few KiB per level).
  constexpr unsigned kShallow = 256;
  // First on this thread, while the callees it summarizes anew nest no
  // deeper than kShallow (with a shared cache, a function whose callees
  // are summarized: a thread per build cost more than the build). Its
  // diagnostics are held until it is known to stand.
  {
    SmallVector<Diagnostic> held;
    FailureOr<FunctionGraph> result = failure();
    bool outOfStack = false;
    {
      ScopedDiagnosticHandler hold(func->getContext(), [&](Diagnostic &diag) {
        held.push_back(std::move(diag));
        return success();
      });
      GraphBuilder builder(options, func);
      builder.limitNesting(kShallow);
      result = builder.buildFunction(func);
      outOfStack = builder.ranOutOfStack();
    }
    if (!outOfStack) {
      DiagnosticEngine &engine = func->getContext()->getDiagEngine();
      for (Diagnostic &diag : held)
        engine.emit(std::move(diag));
      return result;
    }
  }
  // The depths of the functions a walk visits are kept with the callee
  // summaries: the next build starts from them.
  DenseMap<Operation *, unsigned> ownDepths;
  SymbolTableCollection ownSymbols;
  unsigned depth = options.callSummaries
                       ? callDepth(func, options.callSummaries->callDepths,
                                   options.callSummaries->symbolTables)
                       : callDepth(func, ownDepths, ownSymbols);
  FailureOr<FunctionGraph> result = failure();
  uint64_t stackBytes = std::min<uint64_t>((uint64_t(depth) + 64) * (64u << 10),
                                           uint64_t(2) << 30);
  llvm::thread worker(std::optional<unsigned>(stackBytes), [&] {
    GraphBuilder builder(options, func);
    result = builder.buildFunction(func);
  });
  worker.join();
  return result;
}

FailureOr<FunctionGraph> FunctionGraph::build(Operation *func,
                                              const GraphOptions &options) {
  FailureOr<FunctionGraph> graph = buildOnStack(func, options);
  if (succeeded(graph))
    checkCachedBuild(func, /*block=*/nullptr, options, *graph);
  return graph;
}
