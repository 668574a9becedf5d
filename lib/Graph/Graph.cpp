//===- Graph.cpp - The MLIR-free program model of LMS ---------------------===//

#include "LMS/Graph/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

using namespace lms;

TensorIndex Graph::addTensor(std::string name, uint64_t bytes,
                             MemorySpace space) {
  Tensor t;
  t.name = std::move(name);
  t.bytes = bytes;
  t.space = space;
  tensors.push_back(std::move(t));
  return static_cast<TensorIndex>(tensors.size() - 1);
}

OpIndex Graph::addOp(std::string name, llvm::ArrayRef<TensorIndex> inputs,
                     llvm::ArrayRef<TensorIndex> outputs, OpCost cost,
                     OpKind kind) {
  OpIndex index = static_cast<OpIndex>(ops.size());
  Op op;
  op.name = std::move(name);
  op.kind = kind;
  op.cost = cost;
  for (TensorIndex t : inputs) {
    if (llvm::is_contained(op.inputs, t))
      continue;
    op.inputs.push_back(t);
    tensors[t].users.push_back(index);
  }
  for (TensorIndex t : outputs) {
    op.outputs.push_back(t);
    tensors[t].producer = index;
  }
  ops.push_back(std::move(op));
  return index;
}

OpIndex Graph::lastUse(TensorIndex t) const {
  const Tensor &tensor = tensors[t];
  if (tensor.liveOut)
    return ops.empty() ? kEntry : static_cast<OpIndex>(ops.size() - 1);
  if (!tensor.users.empty())
    return tensor.users.back();
  return tensor.producer;
}

std::string Graph::verify() const {
  std::string message;
  llvm::raw_string_ostream os(message);
  for (auto [index, tensor] : llvm::enumerate(tensors)) {
    if (tensor.producer < kEntry ||
        tensor.producer >= static_cast<OpIndex>(ops.size())) {
      os << "tensor " << index << " has an invalid producer";
      return message;
    }
    OpIndex previous = tensor.producer;
    for (OpIndex user : tensor.users) {
      if (user <= previous && !(user == tensor.producer && previous == user)) {
        os << "tensor " << index << " ('" << tensor.name << "') is used by op "
           << user << " before it is produced or "
           << "its users are out of order";
        return message;
      }
      previous = user;
    }
  }
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (TensorIndex t : llvm::concat<const TensorIndex>(op.inputs, op.outputs))
      if (t < 0 || t >= static_cast<TensorIndex>(tensors.size())) {
        os << "op " << index << " refers to tensor " << t << ", out of range";
        return message;
      }
    for (TensorIndex t : op.outputs)
      if (tensors[t].producer != static_cast<OpIndex>(index)) {
        os << "op " << index << " outputs tensor " << t
           << ", which another op produces";
        return message;
      }
  }
  return message;
}

void lms::compactKernels(std::vector<Kernel> &kernels) {
  if (kernels.size() < 2)
    return;
  // Key: everything but the launches (a fixed time that copies nothing is
  // one kind, whatever its time).
  using Key = std::tuple<double, double, bool, double, double, double>;
  std::map<Key, size_t> first;
  std::vector<Kernel> merged;
  merged.reserve(kernels.size());
  for (const Kernel &k : kernels) {
    bool fixed = k.seconds && k.h2dBytes == 0 && k.d2hBytes == 0;
    Key key = fixed ? Key{0, 0, true, -1, 0, 0} : Key{k.flops,
                                                      k.bytes,
                                                      k.seconds.has_value(),
                                                      k.seconds.value_or(0),
                                                      k.h2dBytes,
                                                      k.d2hBytes};
    auto [it, fresh] = first.try_emplace(key, merged.size());
    if (fresh) {
      merged.push_back(k);
      if (fixed) {
        // One launch of the total time (flops and bytes as totals too).
        Kernel &m = merged.back();
        m.seconds = k.launches * *k.seconds;
        m.flops = k.launches * k.flops;
        m.bytes = k.launches * k.bytes;
        m.launches = 1;
      }
      continue;
    }
    Kernel &m = merged[it->second];
    if (fixed) {
      *m.seconds += k.launches * *k.seconds;
      m.flops += k.launches * k.flops;
      m.bytes += k.launches * k.bytes;
    } else {
      m.launches += k.launches;
    }
  }
  kernels = std::move(merged);
}
