"""Lowering of an ATen FX graph (one captured training step) to MLIR on
tensors in upstream dialects: linalg.generic (with affine indexing maps),
linalg.fill, tensor.empty / pad / extract_slice / insert_slice /
collapse_shape / expand_shape, arith and math.

Views are lazy where PyTorch's are free: a transpose or a broadcast is folded
into the indexing maps of its consumers and only materialized where a
consumer needs a plain tensor (a reshape). Composite ATen ops (batch norm,
layer norm, softmax and their backwards) become a few fused generics, so no
full-size temporaries appear that PyTorch would not allocate.

Every op the models need is lowered exactly (the tests execute tiny models
and compare with PyTorch). An op outside the set is an error naming it.
"""

import torch

from emit import (F32, FLOATS, I64, TORCH_TYPES, _FT, Emitter, Unsupported, V,
                  ttype)
from ops_conv import ConvolutionOps
from ops_elementwise import ElementwiseOps
from ops_nn import NetworkOps
from ops_reduce import ReductionOps
from ops_views import ViewOps

# What export.py uses.
__all__ = ["F32", "I64", "Emitter", "Lowering", "Unsupported", "V", "ttype"]


class Lowering(ViewOps, ElementwiseOps, ReductionOps, NetworkOps,
               ConvolutionOps):
    """Lowers the nodes of a make_fx graph one by one. The ops are methods
    named after them (`op_<aten name>`, `op_lms_<name>` for the exporter's
    own operators), one class per family in ops_*.py."""

    def __init__(self, em):
        self.em = em
        self.env = {}

    def value_of(self, arg):
        if isinstance(arg, torch.fx.Node):
            return self.env[arg]
        return arg

    def run(self, graph, placeholders, outputs_cb):
        for node in graph.nodes:
            if node.op == "placeholder":
                self.env[node] = placeholders[node]
            elif node.op == "call_function":
                args = [self._map(a) for a in node.args]
                kwargs = {k: self._map(a) for k, a in node.kwargs.items()}
                try:
                    self.env[node] = self.lower(node, args, kwargs)
                except Unsupported:
                    raise
                except Exception as e:  # a bug: say where
                    raise RuntimeError(f"lowering {node.format_node()}: {e}")
            elif node.op == "output":
                return outputs_cb([self._map(a) for a in node.args[0]])

    def _map(self, a):
        if isinstance(a, (list, tuple)):
            return type(a)(self._map(x) for x in a)
        return self.value_of(a)

    # ------------------------------------------------------------------------
    def lower(self, node, args, kwargs):
        name = str(node.target)
        if name == "<built-in function getitem>":
            return args[0][args[1]]
        if name.startswith("lms."):
            key = "lms_" + name.split(".")[1]
        else:
            key = name.replace("aten.", "").split(".")[0]
        fn = getattr(self, "op_" + key, None)
        if fn is None:
            raise Unsupported(f"export.py: no lowering for {name}")
        meta = self.meta_of(node)
        _FT[0] = self.float_type(meta, args)
        return fn(node, meta, *args, **kwargs)

    @staticmethod
    def float_type(meta, args):
        """The float type the node computes in: its first float result's,
        else its first float tensor operand's (a comparison, indices), else
        f32."""
        carriers = meta.values() if isinstance(meta, dict) else [meta]
        for m in carriers:
            t = TORCH_TYPES.get(getattr(m, "dtype", None))
            if t in FLOATS:
                return t

        def operands(xs):
            for x in xs:
                if isinstance(x, (list, tuple)):
                    yield from operands(x)
                elif isinstance(x, V):
                    yield x
        for v in operands(args):
            if v.dtype in FLOATS:
                return v.dtype
        return F32

    @staticmethod
    def _one_meta(node):
        m = node.meta.get("val")
        if m is None:
            m = node.meta.get("tensor_meta")
        return m

    def meta_of(self, node):
        """The output's shape carrier (a tensor, or TensorMetadata); for a
        tuple-valued node, a dict index -> carrier from its getitem users."""
        m = self._one_meta(node)
        if m is not None:
            return m
        by_index = {}
        for user in node.users:
            if str(user.target) == "<built-in function getitem>":
                by_index[user.args[1]] = self._one_meta(user)
        return by_index

    @staticmethod
    def shape_of(meta, i=None):
        m = meta if i is None else meta[i]
        return tuple(int(s) for s in m.shape)
