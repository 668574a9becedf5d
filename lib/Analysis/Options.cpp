//===- Options.cpp - Budgets and analysis options from IR and text --------===//

#include "LMS/Analysis/Options.h"
#include "LMS/Dialect/LMS/IR/LMSDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::lms;

FailureOr<std::optional<::lms::ByteSize>>
mlir::lms::getBudget(Operation *func, StringRef option) {
  StringRef attrName = LMSDialect::getBudgetAttrName();
  if (Attribute attr = func->getAttr(attrName)) {
    if (auto integer = dyn_cast<IntegerAttr>(attr)) {
      if (integer.getValue().isNegative()) {
        emitError(func->getLoc())
            << "'" << attrName << "' must not be negative";
        return failure();
      }
      ::lms::ByteSize size;
      size.bytes = integer.getValue().getZExtValue();
      return std::optional<::lms::ByteSize>(size);
    }
    auto text = dyn_cast<StringAttr>(attr);
    if (!text) {
      emitError(func->getLoc())
          << "'" << attrName
          << "' must be a size string (\"12GiB\", \"60%\") or "
             "an integer number of bytes, got "
          << attr;
      return failure();
    }
    llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(text);
    if (!size) {
      emitError(func->getLoc())
          << "invalid '" << attrName
          << "' attribute: " << llvm::toString(size.takeError());
      return failure();
    }
    return std::optional<::lms::ByteSize>(*size);
  }
  if (option.empty())
    return std::optional<::lms::ByteSize>();
  llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(option);
  if (!size) {
    emitError(func->getLoc())
        << "invalid budget: " << llvm::toString(size.takeError());
    return failure();
  }
  return std::optional<::lms::ByteSize>(*size);
}

FailureOr<GraphOptions> mlir::lms::makeGraphOptions(Operation *scope,
                                                    uint64_t alignment,
                                                    StringRef dynamicBytes,
                                                    bool keepArguments) {
  GraphOptions options;
  if (alignment == 0) {
    scope->emitError() << "invalid alignment 0: expected a positive number "
                          "of bytes";
    return failure();
  }
  options.alignment = alignment;
  options.keepArgumentsResident = keepArguments;
  if (!dynamicBytes.empty()) {
    llvm::Expected<::lms::ByteSize> size = ::lms::parseByteSize(dynamicBytes);
    if (!size) {
      scope->emitError() << "invalid dynamic-bytes option: "
                         << llvm::toString(size.takeError());
      return failure();
    }
    if (size->isPercent) {
      scope->emitError() << "invalid dynamic-bytes option '" << dynamicBytes
                         << "': expected a size in bytes, not a percentage";
      return failure();
    }
    options.dynamicBytes = size->bytes;
  }
  return options;
}
