//===- LMSBase.td - LMS dialect, types and resources -------*- tablegen -*-===//
//
// The `lms` dialect: the operations that large model support inserts into a
// program on tensors so that its peak device memory fits a budget.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_DIALECT_LMS_IR_LMSBASE_TD
#define LMS_DIALECT_LMS_IR_LMSBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def LMS_Dialect : Dialect {
  let name = "lms";
  let cppNamespace = "::mlir::lms";
  let summary = "Large model support: offload to host memory and recomputation";
  let description = [{
    The `lms` dialect expresses the decisions of a memory planner on a program
    whose tensors do not all fit in device memory at once:

    * `lms.swap_out` starts copying a device tensor to host memory and yields
      a handle of type `!lms.host<...>`;
    * `lms.swap_wait` marks where the program waits for that copy, which is
      where the device bytes of the offloaded tensor are released (without it,
      the swap-out is synchronous: the bytes are released at the swap-out,
      after a stall for the whole copy);
    * `lms.swap_in` allocates device memory at its own position (the prefetch
      point) and starts copying the value back; its first user waits for it;
    * `lms.recompute` recomputes values from operands that are live at its
      position, with a copy of the producing operations in its region.

    None of these operations is `Pure`. `swap_in(swap_out(x))` equals `x`, but
    no folder, canonicalization or CSE removes or merges them: only the
    explicit `--lms-strip` pass undoes them. Their memory effects are declared
    on two resources of the dialect, `lms::DeviceMemory` and `lms::HostMemory`,
    so that they do not block the optimization of unrelated operations, and an
    `lms` operation whose result is unused is still dead code.

    Attributes of the dialect on other operations, verified with the IR:

    | attribute | on | value |
    |---|---|---|
    | `lms.budget` | a function | a size string (`"12GiB"`, `"60%"`) or a non-negative integer number of bytes (at most 64 bits) |
    | `lms.max_bytes` | an op, or a function argument (`arg_attrs`) | a non-negative integer number of bytes, or an array of them (one per result): the upper bound of a value of dynamic shape |
    | `lms.cost` | an op | a non-negative finite number (FLOPs) or a dictionary of `flops`, `bytes` and `seconds` |
    | `lms.recomputable` | an op | unit or bool: an op of an unregistered dialect may be recomputed |
    | `lms.rederived` | an op | i64 id: the op is a copy LMS made (a view re-derived after a swap-in, a constant fetched again, a recomputed op) of the op that carries the same id as `lms.original` (written by `--lms-insert-swaps` and `--lms-rematerialize`, read and removed by `--lms-strip`) |
    | `lms.original` | an op | i64 id: the op has copies marked `lms.rederived` with this id |
    | `lms.copy` | `bufferization.alloc_tensor` | unit: a copy bufferization would make, made explicit by the planning passes |
    | `lms.borrowed` | a function argument | unit: the function borrows it (never frees or writes it) |
    | `lms.result_slots` | a function | `array<i1>`, one per result: the results its frame variant takes from a slot of the caller's arena (written by `--lms-mark-arena-slots`, read by `--lms-carve-arena`) |
    | `lms.slotted` | a call | unit: the call's results go into slots of the calling function's arena (written by `--lms-mark-arena-slots`, read by `--lms-carve-arena`) |
    | `lms.arena_arguments` | a function | unit: its host allocates its arena and places in it the arguments the function owns (written by `--lms-mark-arena-arguments`, read by the arena model and `--lms-carve-arena`) |
    | `lms.argument_offsets`, `lms.result_offsets` | a function | `array<i64>`, one per argument (of the function as written) or result: its offset in the arena the host passes, or -1 where it is not there (written by `--lms-carve-arena` with `lms.arena_arguments`) |
    | `lms.resident_constants` | the module | unit: constants stay resident from entry to the end |
    | `lms.uploaded_at_entry` | an op | unit: part of the upload of a resident constant |
  }];
  let useDefaultTypePrinterParser = 1;
  // The discardable attributes LMS reads and writes (lms.budget,
  // lms.max_bytes, lms.cost, lms.recomputable, lms.rederived, lms.original,
  // lms.copy, lms.borrowed, lms.resident_constants, ...) are checked where they
  // stand, when the IR is verified (docs/Dialects/LMS.md lists them).
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the function attribute that sets the device-memory budget of
    /// a function (it wins over pass options and the global option).
    static constexpr ::llvm::StringLiteral getBudgetAttrName() {
      return ::llvm::StringLiteral("lms.budget");
    }
    /// Name of the attribute that gives an upper bound, in bytes, for a value
    /// of dynamic shape (on its defining op, or in `arg_attrs`).
    static constexpr ::llvm::StringLiteral getMaxBytesAttrName() {
      return ::llvm::StringLiteral("lms.max_bytes");
    }
    /// Name of the attribute that overrides the cost model for one op.
    static constexpr ::llvm::StringLiteral getCostAttrName() {
      return ::llvm::StringLiteral("lms.cost");
    }
    /// Name of the argument attribute of a function that borrows that
    /// argument from its callers: it neither frees nor writes it, the caller
    /// frees it after the call.
    static constexpr ::llvm::StringLiteral getBorrowedAttrName() {
      return ::llvm::StringLiteral("lms.borrowed");
    }
    /// Names of the marks --lms-mark-arena-slots writes and --lms-carve-arena
    /// reads: on a function, its results a frame variant takes from slots of
    /// the caller's arena; on a call, that its results go into such slots.
    static constexpr ::llvm::StringLiteral getResultSlotsAttrName() {
      return ::llvm::StringLiteral("lms.result_slots");
    }
    static constexpr ::llvm::StringLiteral getSlottedAttrName() {
      return ::llvm::StringLiteral("lms.slotted");
    }
    /// Name of the mark of a function whose host places the arguments it
    /// owns in the arena it passes (--lms-mark-arena-arguments writes it,
    /// --lms-carve-arena lowers it), and of the offsets --lms-carve-arena
    /// records there, one per argument (-1: not in the arena).
    static constexpr ::llvm::StringLiteral getArenaArgumentsAttrName() {
      return ::llvm::StringLiteral("lms.arena_arguments");
    }
    static constexpr ::llvm::StringLiteral getArgumentOffsetsAttrName() {
      return ::llvm::StringLiteral("lms.argument_offsets");
    }
    /// The same for the function's results (-1: an allocation of its own).
    static constexpr ::llvm::StringLiteral getResultOffsetsAttrName() {
      return ::llvm::StringLiteral("lms.result_offsets");
    }
  }];
}

/// Device memory as the LMS operations see it: swap-ins and recomputations
/// allocate in it, swap waits release the offloaded tensor's bytes.
def LMS_DeviceMemory : Resource<"::mlir::lms::DeviceMemoryResource">;
/// Host (staging) memory that holds offloaded tensors.
def LMS_HostMemory : Resource<"::mlir::lms::HostMemoryResource">;

class LMS_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<LMS_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def LMS_HostType : LMS_Type<"Host", "host"> {
  let summary = "a tensor value held in host memory";
  let description = [{
    `!lms.host<T>` is the type of a value that was offloaded to host memory
    by `lms.swap_out`. `T` is the ranked tensor type of the device value
    (static or dynamic shape), or, after bufferization, a ranked memref type.
    Bytes of `!lms.host` values count as host memory, never as device memory.

    Example:

    ```mlir
    !lms.host<tensor<1024x1024xf32>>
    ```
  }];
  let parameters = (ins "::mlir::ShapedType":$valueType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::ShapedType":$valueType), [{
      return $_get(valueType.getContext(), valueType);
    }]>
  ];
}

class LMS_Op<string mnemonic, list<Trait> traits = []>
    : Op<LMS_Dialect, mnemonic, traits>;

#endif // LMS_DIALECT_LMS_IR_LMSBASE_TD
