//===- LMSDialect.cpp - LMS dialect and types -----------------------------===//
//
// Registration of the `lms` dialect and the verifier of `!lms.host`.
//
//===----------------------------------------------------------------------===//

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"
#include "LMS/Graph/Units.h"

#include <cmath>

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::lms;

#include "LMS/Dialect/LMS/IR/LMSOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "LMS/Dialect/LMS/IR/LMSOpsTypes.cpp.inc"

void LMSDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "LMS/Dialect/LMS/IR/LMSOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "LMS/Dialect/LMS/IR/LMSOpsTypes.cpp.inc"
      >();
}

Type HostType::parse(AsmParser &parser) {
  Type valueType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseType(valueType) ||
      parser.parseGreater())
    return {};
  auto shaped = dyn_cast<ShapedType>(valueType);
  if (!shaped) {
    parser.emitError(loc)
        << "'!lms.host' holds a ranked tensor or memref type, got "
        << valueType;
    return {};
  }
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    shaped);
}

void HostType::print(AsmPrinter &printer) const {
  printer << "<" << getValueType() << ">";
}

LogicalResult HostType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ShapedType valueType) {
  if (isa<RankedTensorType>(valueType))
    return success();
  if (isa<MemRefType>(valueType))
    return success();
  return emitError() << "'!lms.host' holds a ranked tensor or memref type, got "
                     << valueType;
}

//===----------------------------------------------------------------------===//
// Attributes of the dialect on other operations
//===----------------------------------------------------------------------===//

/// A non-negative integer that fits in 64 bits (not a boolean).
static bool isByteCount(Attribute attr) {
  auto integer = dyn_cast<IntegerAttr>(attr);
  if (!integer || integer.getType().isInteger(1))
    return false;
  const APInt &value = integer.getValue();
  bool isSigned = !integer.getType().isUnsignedInteger();
  if (isSigned && value.isNegative())
    return false;
  return value.getActiveBits() <= 64 - (isSigned ? 1 : 0);
}

/// A non-negative finite number.
static bool isCostNumber(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    double v = f.getValueAsDouble();
    return std::isfinite(v) && v >= 0;
  }
  return isByteCount(attr);
}

static LogicalResult verifyMaxBytes(Attribute attr,
                                    function_ref<InFlightDiagnostic()> error) {
  if (isByteCount(attr))
    return success();
  if (auto array = dyn_cast<ArrayAttr>(attr))
    if (llvm::all_of(array, isByteCount))
      return success();
  return error() << "'" << LMSDialect::getMaxBytesAttrName()
                 << "' must be a non-negative integer number of bytes (or an "
                    "array of them, one per result), got "
                 << attr;
}

LogicalResult LMSDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  auto error = [&] { return op->emitError(); };
  if (name == getBudgetAttrName()) {
    if (auto text = dyn_cast<StringAttr>(value)) {
      llvm::Expected<::lms::ByteSize> size =
          ::lms::parseByteSize(text.getValue());
      if (!size)
        return error() << "invalid '" << name
                       << "' attribute: " << llvm::toString(size.takeError());
      return success();
    }
    if (auto integer = dyn_cast<IntegerAttr>(value);
        integer && !integer.getType().isInteger(1)) {
      if (!isByteCount(value))
        return error() << "'" << name
                       << "' must be a non-negative number of bytes that "
                          "fits in 64 bits, got "
                       << value;
      return success();
    }
    return error() << "'" << name
                   << "' must be a size string (\"12GiB\", \"60%\") or an "
                      "integer number of bytes, got "
                   << value;
  }
  if (name == getMaxBytesAttrName())
    return verifyMaxBytes(value, error);
  if (name == getCostAttrName()) {
    if (isCostNumber(value))
      return success();
    if (auto dict = dyn_cast<DictionaryAttr>(value)) {
      for (NamedAttribute entry : dict) {
        StringRef key = entry.getName().getValue();
        if (key != "flops" && key != "bytes" && key != "seconds")
          return error() << "'" << name << "' has an unknown entry '" << key
                         << "': expected flops, bytes and seconds";
        if (!isCostNumber(entry.getValue()))
          return error() << "'" << name << "' entry '" << key
                         << "' must be a non-negative finite number, got "
                         << entry.getValue();
      }
      return success();
    }
    return error() << "'" << name
                   << "' must be a non-negative finite number (FLOPs) or a "
                      "dictionary of flops, bytes and seconds, got "
                   << value;
  }
  if (name == "lms.recomputable") {
    if (isa<UnitAttr, BoolAttr>(value))
      return success();
    return error() << "'" << name << "' must be a unit or bool attribute";
  }
  if (name == "lms.rederived" || name == "lms.original") {
    // Written by the rewrites, read by --lms-strip: a copy and the op it
    // copies carry the same id.
    auto id = dyn_cast<IntegerAttr>(value);
    if (id && id.getType().isSignlessInteger(64) && !id.getValue().isNegative())
      return success();
    return error() << "'" << name << "' must be a non-negative i64 id, got "
                   << value;
  }
  if (name == "lms.arena_bytes" || name == "lms.arena_live_bytes") {
    // Written by --lms-carve-arena on the functions it carves.
    if (isa<IntegerAttr>(value) && isByteCount(value))
      return success();
    return error() << "'" << name
                   << "' must be a non-negative integer number of bytes, got "
                   << value;
  }
  if (name == "lms.copy" || name == "lms.resident_constants" ||
      name == "lms.uploaded_at_entry" || name == getBorrowedAttrName() ||
      name == getSlottedAttrName()) {
    if (isa<UnitAttr>(value))
      return success();
    return error() << "'" << name << "' must be a unit attribute";
  }
  if (name == getArenaArgumentsAttrName()) {
    if (isa<UnitAttr>(value) && isa<FunctionOpInterface>(op))
      return success();
    return error() << "'" << name << "' must be a unit attribute on a function";
  }
  if (name == getArgumentOffsetsAttrName() ||
      name == getResultOffsetsAttrName()) {
    // Written by --lms-carve-arena: per argument of the function as it was
    // before (per result), its offset in the arena, or -1.
    auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
    if (isa<FunctionOpInterface>(op) && offsets &&
        llvm::all_of(offsets.asArrayRef(),
                     [](int64_t offset) { return offset >= -1; }))
      return success();
    return error() << "'" << name
                   << "' must be an array<i64> of offsets (or -1) on a "
                      "function, got "
                   << value;
  }
  if (name == getResultSlotsAttrName()) {
    // Written by --lms-mark-arena-slots: one entry per function result.
    auto function = dyn_cast<FunctionOpInterface>(op);
    auto slots = dyn_cast<DenseBoolArrayAttr>(value);
    if (function && slots &&
        static_cast<unsigned>(slots.size()) == function.getNumResults())
      return success();
    return error() << "'" << name
                   << "' must be an array<i1> with one entry per result of "
                      "the function it is on, got "
                   << value;
  }
  return error() << "unknown attribute '" << name << "' of the lms dialect";
}

LogicalResult LMSDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  auto error = [&] {
    return op->emitError() << "argument #" << argIndex << ": ";
  };
  if (name == getMaxBytesAttrName())
    return verifyMaxBytes(attribute.getValue(), error);
  if (name == getBorrowedAttrName()) {
    if (isa<UnitAttr>(attribute.getValue()))
      return success();
    return error() << "'lms.borrowed' must be a unit attribute";
  }
  return error() << "unknown argument attribute '" << name
                 << "' of the lms dialect";
}
