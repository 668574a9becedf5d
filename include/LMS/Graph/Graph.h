//===- Graph.h - The MLIR-free program model of LMS -------------*- C++ -*-===//
//
// A program as the planners see it: ops in schedule order, the buffers
// ("tensors") they read and allocate, with byte sizes, memory spaces and
// per-op cost. Nothing here knows about MLIR; the Analysis layer translates IR
// into a Graph, and graph files (JSON) translate into one too.
//
//===----------------------------------------------------------------------===//

#ifndef LMS_GRAPH_GRAPH_H
#define LMS_GRAPH_GRAPH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lms {

using OpIndex = int32_t;
using TensorIndex = int32_t;

/// Producer index of tensors that are live on entry (function arguments).
constexpr OpIndex kEntry = -1;

/// Where a tensor's bytes live.
enum class MemorySpace : uint8_t { Device, Host };

/// What an op does, as far as the simulator cares: compute runs on the
/// compute stream, swaps on a copy stream of their direction.
enum class OpKind : uint8_t {
  Compute,
  SwapOut,  ///< starts a device-to-host copy of its input
  SwapWait, ///< waits for a swap-out's copy (release point)
  SwapIn,   ///< allocates and starts a host-to-device copy
};

/// One kernel of an op that launches several (see OpCost::kernels).
struct Kernel {
  double flops = 0;
  double bytes = 0;
  /// A fixed time that overrides the roofline estimate.
  std::optional<double> seconds;
  /// How many times it is launched (a loop's body kernels: once per
  /// iteration); `flops`, `bytes` and `seconds` are of one launch.
  double launches = 1;
  /// Bytes a copy between host and device moves each launch (an offload
  /// or a fetch inside a loop's body, a constant uploaded there): timed on
  /// the host link, in the order of the body (no overlap with its compute).
  double h2dBytes = 0, d2hBytes = 0;

  bool operator==(const Kernel &other) const {
    return flops == other.flops && bytes == other.bytes &&
           seconds == other.seconds && launches == other.launches &&
           h2dBytes == other.h2dBytes && d2hBytes == other.d2hBytes;
  }
};

/// Merges the kernels that take the same time on every device: those equal
/// but for their launches (one kernel, the launches summed), and those of a
/// fixed time that copy nothing (one kernel of their total time). What
/// DeviceSpec::computeSeconds gives for them is unchanged (up to the order
/// of the sum), and the list is as long as the distinct kernels, so that a
/// call's kernels (its callee's, with its callees') stay few down a chain of
/// calls. Deterministic: the first of each kind keeps its place.
void compactKernels(std::vector<Kernel> &kernels);

/// Work of one op, converted to time by a DeviceSpec.
struct OpCost {
  /// Floating-point operations.
  double flops = 0;
  /// Bytes read and written in device memory.
  double bytes = 0;
  /// A fixed time in seconds that overrides the roofline estimate.
  std::optional<double> seconds;
  /// Bytes copied from host memory to the device (uploading a constant),
  /// timed on the host link on top of the roofline estimate.
  double h2dBytes = 0;
  /// The kernels of an op that launches several once lowered (an
  /// lms.recompute, whose ops are inlined where it stands, or a loop, whose
  /// body's kernels are launched once per iteration): each is timed on its
  /// own, launch overhead included. `flops` and `bytes` are their
  /// totals. Empty: the op is one kernel.
  std::vector<Kernel> kernels;
};

/// A buffer: the unit of allocation.
struct Tensor {
  std::string name;
  uint64_t bytes = 0;
  /// The op that allocates it, or kEntry for arguments.
  OpIndex producer = kEntry;
  MemorySpace space = MemorySpace::Device;
  /// Rank of the tensor when known (-1 otherwise); TFLMS skips rank <= 1.
  int rank = -1;
  /// Live until the end of the schedule (returned values, or arguments that
  /// an option keeps resident).
  bool liveOut = false;
  /// Its contents also live in host memory for the whole program (a
  /// constant or a global): dropping the device copy needs no device-to-host
  /// copy, and bringing it back is one host-to-device copy (or a fill).
  bool hostBacked = false;
  /// The ops that use it, in increasing order, without duplicates.
  llvm::SmallVector<OpIndex, 4> users;
};

/// One op of the schedule.
struct Op {
  std::string name;
  OpKind kind = OpKind::Compute;
  /// Buffers the op reads or writes (all resident while it runs).
  llvm::SmallVector<TensorIndex, 4> inputs;
  /// Buffers the op allocates.
  llvm::SmallVector<TensorIndex, 2> outputs;
  /// Inputs the op writes in place (a subset of `inputs`): their contents
  /// after the op are its results.
  llvm::SmallVector<TensorIndex, 1> updates;
  OpCost cost;
  /// Device bytes needed only while the op runs, on top of its inputs and
  /// outputs: the peak inside an op with regions. Negative for a call whose
  /// callee frees its arguments before its peak (never below the memory
  /// held before the op).
  int64_t transientBytes = 0;
  /// Whether a plan may run the op again to recompute its outputs (false for
  /// ops with side effects, or that the IR cannot clone).
  bool recomputable = true;
};

/// Ops in schedule order and the tensors they use. Build it with addTensor /
/// addOp in schedule order; users are maintained by addOp.
class Graph {
public:
  /// Adds a tensor; its producer is set when an op lists it as an output.
  TensorIndex addTensor(std::string name, uint64_t bytes,
                        MemorySpace space = MemorySpace::Device);

  /// Appends an op at the end of the schedule. Every input must already be
  /// produced (or live on entry); every output must not be produced yet.
  OpIndex addOp(std::string name, llvm::ArrayRef<TensorIndex> inputs,
                llvm::ArrayRef<TensorIndex> outputs, OpCost cost = {},
                OpKind kind = OpKind::Compute);

  void setLiveOut(TensorIndex t, bool liveOut = true) {
    tensors[t].liveOut = liveOut;
  }
  /// Records that `op` writes input `t` in place.
  void addUpdate(OpIndex op, TensorIndex t) { ops[op].updates.push_back(t); }
  void setTransientBytes(OpIndex op, int64_t bytes) {
    ops[op].transientBytes = bytes;
  }
  void setBytes(TensorIndex t, uint64_t bytes) { tensors[t].bytes = bytes; }

  size_t numOps() const { return ops.size(); }
  size_t numTensors() const { return tensors.size(); }
  const Op &op(OpIndex i) const { return ops[i]; }
  const Tensor &tensor(TensorIndex t) const { return tensors[t]; }
  Op &op(OpIndex i) { return ops[i]; }
  Tensor &tensor(TensorIndex t) { return tensors[t]; }
  llvm::ArrayRef<Op> getOps() const { return ops; }
  llvm::ArrayRef<Tensor> getTensors() const { return tensors; }

  /// The index of the last op at which `t` must be resident in the schedule
  /// order: its last user, its producer when unused, the end when live-out.
  /// kEntry for an unused argument.
  OpIndex lastUse(TensorIndex t) const;

  /// Checks the invariants (users sorted, producers before users, indices in
  /// range). Returns an empty string when the graph is well formed.
  std::string verify() const;

private:
  std::vector<Op> ops;
  std::vector<Tensor> tensors;
};

} // namespace lms

#endif // LMS_GRAPH_GRAPH_H
