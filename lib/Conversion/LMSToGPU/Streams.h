//===- Streams.h - GPU stream helpers of the LMS lowerings ------*- C++ -*-===//
//
// Internal to lib/Conversion: the async-token idioms both lowerings to the
// GPU dialect (--convert-lms-to-gpu, --lms-memref-to-gpu) emit.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_LIB_CONVERSION_STREAMS_H
#define LMS_LIB_CONVERSION_STREAMS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace lms {

inline Type tokenType(OpBuilder &b) {
  return gpu::AsyncTokenType::get(b.getContext());
}

/// A fresh stream, optionally ordered after `dependency`.
inline Value newStream(OpBuilder &b, Location loc, Value dependency = {}) {
  SmallVector<Value> deps;
  if (dependency)
    deps.push_back(dependency);
  return gpu::WaitOp::create(b, loc, tokenType(b), deps).getAsyncToken();
}

/// Blocks the host until `token`'s stream is done.
inline void hostWait(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

/// The allocation a (possibly viewed) buffer comes from.
inline Value rootBuffer(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>()) {
    if (!view.getViewSource())
      break;
    buffer = view.getViewSource();
  }
  return buffer;
}

} // namespace lms
} // namespace mlir

#endif // LMS_LIB_CONVERSION_STREAMS_H
