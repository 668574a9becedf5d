//===- LMSDialect.cpp - LMS dialect and types -----------------------------===//
//
// Registration of the `lms` dialect and the verifier of `!lms.host`.
//
//===----------------------------------------------------------------------===//

#include "LMS/Dialect/LMS/IR/LMSDialect.h"
#include "LMS/Dialect/LMS/IR/LMSOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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
