//===- LMSOps.td - LMS dialect operations ------------------*- tablegen -*-===//
//
// Operations of the `lms` dialect: swap-out, swap-wait, swap-in, recompute.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_DIALECT_LMS_IR_LMSOPS_TD
#define LMS_DIALECT_LMS_IR_LMSOPS_TD

include "LMS/Dialect/LMS/IR/LMSBase.td"

//===----------------------------------------------------------------------===//
// SwapOutOp
//===----------------------------------------------------------------------===//

def LMS_SwapOutOp : LMS_Op<"swap_out"> {
  let summary = "start offloading a device tensor to host memory";
  let description = [{
    `lms.swap_out` starts an asynchronous device-to-host copy of `$source` and
    returns a handle to the host copy. The device bytes of `$source` are not
    released by this op: they are released where the program waits for the
    copy, which is the `lms.swap_wait` of the handle, or this op itself when
    the handle has no `lms.swap_wait` (a synchronous swap-out, which stalls for
    the whole copy). Uses of `$source` after the release point are not allowed
    by the memory planners; they are uses of an `lms.swap_in` of the handle
    instead.

    The host type must hold exactly the source type (shape, element type,
    encoding). Sources of dynamic shape are accepted; the memory analyses then
    need a user-given upper bound. After bufferization the source is a memref
    and the host type holds a memref of the same shape and element type (the
    host copy is contiguous).

    Example:

    ```mlir
    %h = lms.swap_out %t : tensor<1024x1024xf32> -> !lms.host<tensor<1024x1024xf32>>
    lms.swap_wait %h : !lms.host<tensor<1024x1024xf32>>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyRankedTensor, AnyMemRef]>:$source);
  let results = (outs Res<LMS_HostType, "host copy of the source",
                          [MemAlloc<LMS_HostMemory>]>:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `lms.swap_wait` of this swap-out, or null when it is synchronous.
    SwapWaitOp getWaitOp();
  }];
}

//===----------------------------------------------------------------------===//
// SwapWaitOp
//===----------------------------------------------------------------------===//

def LMS_SwapWaitOp : LMS_Op<"swap_wait", [
    MemoryEffects<[MemFree<LMS_DeviceMemory>]>]> {
  let summary = "wait for an offload to complete and release the device bytes";
  let description = [{
    `lms.swap_wait` is the release point of an `lms.swap_out`: the program
    waits here for the device-to-host copy of `$handle` to complete, and the
    device bytes of the offloaded tensor are released. Between the swap-out and
    its wait, the copy overlaps with the computation in between, and the device
    bytes are still held. Nothing after the wait may use the offloaded value
    (the verifier rejects it; an op after it reads a fetched copy,
    `lms.swap_in`).

    The handle must be the result of an `lms.swap_out` in the same block, and a
    swap-out has at most one wait.

    Example:

    ```mlir
    %h = lms.swap_out %t : tensor<64xf32> -> !lms.host<tensor<64xf32>>
    %x = linalg.exp ins(%a : tensor<64xf32>) outs(%b : tensor<64xf32>) -> tensor<64xf32>
    lms.swap_wait %h : !lms.host<tensor<64xf32>>
    ```
  }];
  let arguments = (ins Arg<LMS_HostType, "handle of the offloaded tensor",
                           [MemRead<LMS_HostMemory>]>:$handle);
  let assemblyFormat = "$handle attr-dict `:` qualified(type($handle))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The swap-out whose copy this op waits for.
    SwapOutOp getSwapOut() {
      return getHandle().getDefiningOp<SwapOutOp>();
    }
  }];
}

//===----------------------------------------------------------------------===//
// SwapInOp
//===----------------------------------------------------------------------===//

def LMS_SwapInOp : LMS_Op<"swap_in"> {
  let summary = "bring an offloaded tensor back to device memory";
  let description = [{
    `lms.swap_in` allocates device memory for the tensor held by `$handle` at
    its own position, which is the prefetch point, and starts the
    host-to-device copy. The first user of the result waits for the copy. A
    handle may be swapped in several times; each swap-in allocates anew.

    Example:

    ```mlir
    %u = lms.swap_in %h : !lms.host<tensor<1024x1024xf32>> -> tensor<1024x1024xf32>
    ```
  }];
  let arguments = (ins Arg<LMS_HostType, "handle of the offloaded tensor",
                           [MemRead<LMS_HostMemory>]>:$handle);
  let results = (outs Res<AnyTypeOf<[AnyRankedTensor, AnyMemRef]>,
                          "the tensor (after bufferization: the buffer) on "
                          "the device",
                          [MemAlloc<LMS_DeviceMemory>]>:$result);
  let assemblyFormat = "$handle attr-dict `:` qualified(type($handle)) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RecomputeOp
//===----------------------------------------------------------------------===//

def LMS_RecomputeOp : LMS_Op<"recompute", [
    IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "recompute values instead of keeping them";
  let description = [{
    `lms.recompute` recomputes values at its position from `$inputs`, which
    must be live there. Its single-block region holds a copy of the producing
    operations; the entry block arguments stand for the inputs (the region is
    isolated from above), and `lms.yield` returns the recomputed values.

    The op allocates its results in device memory. It has no folder, and CSE
    never merges two recomputations or a recomputation with the original
    computation: that would undo the memory saving.

    Example:

    ```mlir
    %r = lms.recompute (%a, %b) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%x: tensor<64xf32>, %y: tensor<64xf32>):
      %e = tensor.empty() : tensor<64xf32>
      %s = linalg.add ins(%x, %y : tensor<64xf32>, tensor<64xf32>)
                      outs(%e : tensor<64xf32>) -> tensor<64xf32>
      lms.yield %s : tensor<64xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    /// Creates the op with an entry block whose arguments mirror `inputs`;
    /// the caller fills the body and its terminator.
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$inputs)>
  ];
  let extraClassDeclaration = [{
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def LMS_YieldOp : LMS_Op<"yield", [
    Pure, Terminator, HasParent<"RecomputeOp">]> {
  let summary = "return the recomputed values from an `lms.recompute`";
  let description = [{
    Terminates the body of `lms.recompute`; its operands become the results
    of the enclosing op and must have the same types.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // LMS_DIALECT_LMS_IR_LMSOPS_TD
