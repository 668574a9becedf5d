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

import math

import torch

F32 = "f32"
I64 = "i64"
FLOATS = ("f32", "bf16", "f16")
TORCH_TYPES = {torch.float32: "f32", torch.bfloat16: "bf16",
               torch.float16: "f16", torch.int64: I64, torch.bool: "i1"}

# The float type of what is being lowered: the node's result type (or its
# inputs' where the result is not a float), set by Lowering.lower for each
# node. Every default float type below is this one, so one lowering serves
# f32, bf16 and f16 (--precision).
_FT = [F32]


def ft():
    return _FT[0]


def ttype(shape, dtype=None):
    dtype = dtype or ft()
    if not shape:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(s) for s in shape) + f"x{dtype}>"


def fconst(v, dtype=F32):
    """A float literal MLIR parses (nine significant digits round-trip an
    f32; MLIR rounds them to a narrower type); infinities as bit patterns."""
    if v in (math.inf, -math.inf):
        bits = {"f32": (0x7F800000, 0xFF800000), "bf16": (0x7F80, 0xFF80),
                "f16": (0x7C00, 0xFC00)}[dtype]
        return "0x%X" % bits[0 if v > 0 else 1]
    return "%.9e" % float(v)


class V:
    """A tensor value: an SSA name of type `bshape`, seen with logical shape
    `shape`; `idx[j]` is the logical dim that base dim j follows, or None
    for a base dim of size 1 broadcast (read at index 0)."""

    def __init__(self, name, shape, dtype=None, bshape=None, idx=None):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype or ft()
        self.bshape = tuple(bshape if bshape is not None else shape)
        self.idx = list(idx if idx is not None else range(len(self.shape)))

    @property
    def plain(self):
        return self.bshape == self.shape and self.idx == list(
            range(len(self.shape)))

    @property
    def type(self):
        return ttype(self.bshape, self.dtype)


class Unsupported(Exception):
    pass


class Emitter:
    def __init__(self):
        self.lines = []
        self.const_lines = []  # hoisted to the top of the function
        self.counter = 0
        self.consts = {}

    # ---- basic emission -------------------------------------------------
    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, line):
        self.lines.append("  " + line)

    def const(self, value, dtype=None):
        dtype = dtype or ft()
        key = (value, dtype)
        if key not in self.consts:
            name = self.fresh("c")
            if dtype in FLOATS:
                text = (f"{name} = arith.constant {fconst(value, dtype)} : "
                        f"{dtype}")
            else:
                text = f"{name} = arith.constant {int(value)} : {dtype}"
            self.const_lines.append("  " + text)
            self.consts[key] = name
        return self.consts[key]

    def empty(self, shape, dtype=None):
        dtype = dtype or ft()
        name = self.fresh("e")
        self.emit(f"{name} = tensor.empty() : {ttype(shape, dtype)}")
        return name

    def filled(self, shape, value, dtype=None):
        dtype = dtype or ft()
        e = self.empty(shape, dtype)
        c = self.const(value, dtype)
        name = self.fresh("f")
        t = ttype(shape, dtype)
        self.emit(f"{name} = linalg.fill ins({c} : {dtype}) outs({e} : {t}) "
                  f"-> {t}")
        return V(name, shape, dtype)

    # ---- linalg.generic ----------------------------------------------------
    def generic(self, loops, kinds, ins, in_maps, outs, out_maps, body,
                cost=None):
        """ins: list of V (their view maps are composed) or (name, type) with
        explicit maps; outs: list of (init V). body(args, b) -> yielded names,
        where b is a BodyBuilder. Returns result names."""
        d = [f"d{i}" for i in range(loops)]
        maps, operands, types = [], [], []
        for v, m in zip(ins, in_maps):
            # m: per logical dim of v, an affine expression over loop dims.
            exprs = [("0" if j is None else m[j]) for j in v.idx]
            maps.append(f"affine_map<({', '.join(d)}) -> ({', '.join(exprs)})>")
            operands.append(v.name)
            types.append(v.type)
        out_types = []
        for v, m in zip(outs, out_maps):
            assert v.plain
            maps.append(f"affine_map<({', '.join(d)}) -> ({', '.join(m)})>")
            out_types.append(v.type)
        if len(outs) == 1:
            base = self.fresh("g")
            head = f"{base} = "
            results = [base]
        else:
            base = self.fresh("r")
            head = f"{base}:{len(outs)} = "
            results = [f"{base}#{i}" for i in range(len(outs))]
        kinds_s = ", ".join(f'"{k}"' for k in kinds)
        ins_s = ""
        if ins:
            ins_s = f"ins({', '.join(operands)} : {', '.join(types)}) "
        outs_s = f"outs({', '.join(v.name for v in outs)} : " \
                 f"{', '.join(out_types)})"
        attrs = f"indexing_maps = [{', '.join(maps)}], iterator_types = [{kinds_s}]"
        extra = ""
        if cost is not None:
            extra = f" attrs = {{lms.cost = {{flops = {float(cost)}}}}}"
        self.emit(f"{head}linalg.generic {{{attrs}}} {ins_s}{outs_s}{extra} {{")
        args = [self.fresh("a") for _ in list(ins) + list(outs)]
        arg_types = [v.dtype for v in list(ins) + list(outs)]
        self.emit("^bb0(" + ", ".join(f"{a}: {t}" for a, t in
                                       zip(args, arg_types)) + "):")
        bb = BodyBuilder(self)
        yielded = body(args, bb)
        if isinstance(yielded, str):
            yielded = [yielded]
        self.emit(f"  linalg.yield {', '.join(yielded)} : "
                  f"{', '.join(v.dtype for v in outs)}")
        if len(out_types) == 1:
            self.emit(f"}} -> {out_types[0]}")
        else:
            self.emit(f"}} -> ({', '.join(out_types)})")
        return [V(r, v.shape, v.dtype) for r, v in zip(results, outs)]

    # ---- helpers on views --------------------------------------------------
    def materialize(self, v):
        if v.plain:
            return v
        n = len(v.shape)
        d = [f"d{i}" for i in range(n)]
        out = V(self.empty(v.shape, v.dtype), v.shape, v.dtype)
        return self.generic(n, ["parallel"] * n, [v], [d], [out], [d],
                            lambda a, b: a[0])[0]

    def reshape(self, v, shape):
        shape = tuple(shape)
        v = self.materialize(v)
        if v.shape == shape:
            return v
        src, cur = v.name, v.shape
        numel = math.prod(cur)
        if len(cur) > 1 or (len(cur) == 1 and len(shape) == 0):
            # Collapse to 1-D (or 0-D).
            target = (numel,) if shape else ()
            name = self.fresh("cs")
            assoc = "[" + ", ".join(str(i) for i in range(len(cur))) + "]"
            assoc = f"[{assoc}]" if target else "[]"
            self.emit(f"{name} = tensor.collapse_shape {src} {assoc} : "
                      f"{ttype(cur, v.dtype)} into {ttype(target, v.dtype)}")
            src, cur = name, target
        if cur == shape:
            return V(src, shape, v.dtype)
        name = self.fresh("es")
        if not cur:
            assoc = "[]"
        else:
            assoc = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
        self.emit(f"{name} = tensor.expand_shape {src} {assoc} output_shape "
                  f"[{', '.join(str(s) for s in shape)}] : "
                  f"{ttype(cur, v.dtype)} into {ttype(shape, v.dtype)}")
        return V(name, shape, v.dtype)

    def permute(self, v, perm):
        shape = tuple(v.shape[p] for p in perm)
        inv = {p: i for i, p in enumerate(perm)}
        idx = [None if j is None else inv[j] for j in v.idx]
        return V(v.name, shape, v.dtype, v.bshape, idx)

    def expand(self, v, shape):
        shape = tuple(shape)
        lead = len(shape) - len(v.shape)
        idx = []
        for j in v.idx:
            if j is None:
                idx.append(None)
            elif v.shape[j] == 1 and shape[j + lead] != 1:
                idx.append(None)
            else:
                idx.append(j + lead)
        return V(v.name, shape, v.dtype, v.bshape, idx)

    # ---- elementwise and reductions ------------------------------------------
    def ew(self, shape, ins, body, dtype=None):
        dtype = dtype or ft()
        shape = tuple(shape)
        n = len(shape)
        d = [f"d{i}" for i in range(n)]
        ins = [self.expand(v, shape) for v in ins]
        out = V(self.empty(shape, dtype), shape, dtype)
        return self.generic(n, ["parallel"] * n, ins, [d] * len(ins), [out],
                            [d], body)[0]

    def reduce(self, ins, dims, keepdim, body, init=0.0, shape=None,
               outs_count=1, inits=None):
        """Sums (or what `body` does) over `dims` of the broadcast shape of
        `ins`. body(args, b) gets the input args then the accumulators."""
        shape = tuple(shape if shape is not None else ins[0].shape)
        n = len(shape)
        dims = sorted(d % n if n else 0 for d in dims)
        d = [f"d{i}" for i in range(n)]
        if keepdim:
            oshape = tuple(1 if i in dims else s for i, s in enumerate(shape))
            omap = ["0" if i in dims else d[i] for i in range(n)]
        else:
            oshape = tuple(s for i, s in enumerate(shape) if i not in dims)
            omap = [d[i] for i in range(n) if i not in dims]
        kinds = ["reduction" if i in dims else "parallel" for i in range(n)]
        ins = [self.expand(v, shape) for v in ins]
        inits = inits or [(init, None)] * outs_count
        outs = [self.filled(oshape, iv, dt) for iv, dt in inits]
        return self.generic(n, kinds, ins, [d] * len(ins), outs,
                            [omap] * len(outs), body)

    def sum(self, v, dims, keepdim=False):
        return self.reduce([v], dims, keepdim,
                           lambda a, b: b.addf(a[0], a[1]))[0]


class BodyBuilder:
    def __init__(self, em):
        self.em = em

    def _op(self, text, hint="b"):
        name = self.em.fresh(hint)
        self.em.emit(f"  {name} = {text}")
        return name

    def c(self, v):
        return self.em.const(v)

    def addf(self, a, b):
        return self._op(f"arith.addf {a}, {b} : {ft()}")

    def subf(self, a, b):
        return self._op(f"arith.subf {a}, {b} : {ft()}")

    def mulf(self, a, b):
        return self._op(f"arith.mulf {a}, {b} : {ft()}")

    def divf(self, a, b):
        return self._op(f"arith.divf {a}, {b} : {ft()}")

    def negf(self, a):
        return self._op(f"arith.negf {a} : {ft()}")

    def maxf(self, a, b):
        return self._op(f"arith.maximumf {a}, {b} : {ft()}")

    def minf(self, a, b):
        return self._op(f"arith.minimumf {a}, {b} : {ft()}")

    def cmpf(self, pred, a, b):
        return self._op(f"arith.cmpf {pred}, {a}, {b} : {ft()}")

    def cmpi(self, pred, a, b, t=I64):
        return self._op(f"arith.cmpi {pred}, {a}, {b} : {t}")

    def select(self, c, a, b, t=None):
        t = t or ft()
        return self._op(f"arith.select {c}, {a}, {b} : {t}")

    def ori(self, a, b):
        return self._op(f"arith.ori {a}, {b} : i1")

    def andi(self, a, b, t="i1"):
        return self._op(f"arith.andi {a}, {b} : {t}")

    def xori(self, a, b, t=I64):
        return self._op(f"arith.xori {a}, {b} : {t}", "i")

    def shrui(self, a, b, t=I64):
        return self._op(f"arith.shrui {a}, {b} : {t}", "i")

    def remsi(self, a, b, t="index"):
        return self._op(f"arith.remsi {a}, {b} : {t}", "i")

    def exp(self, a):
        return self._op(f"math.exp {a} : {ft()}")

    def log(self, a):
        return self._op(f"math.log {a} : {ft()}")

    def sqrt(self, a):
        return self._op(f"math.sqrt {a} : {ft()}")

    def rsqrt(self, a):
        return self._op(f"math.rsqrt {a} : {ft()}")

    def erf(self, a):
        return self._op(f"math.erf {a} : {ft()}")

    def sigmoid(self, a):
        one = self.c(1.0)
        return self.divf(one, self.addf(one, self.exp(self.negf(a))))

    def index(self, dim):
        return self._op(f"linalg.index {dim} : index", "i")

    def iconst(self, v, t="index"):
        return self.em.const(v, t)

    def addi(self, a, b, t="index"):
        return self._op(f"arith.addi {a}, {b} : {t}", "i")

    def muli(self, a, b, t="index"):
        return self._op(f"arith.muli {a}, {b} : {t}", "i")

    def to_i64(self, a):
        return self._op(f"arith.index_cast {a} : index to i64", "i")

    def to_index(self, a):
        return self._op(f"arith.index_cast {a} : i64 to index", "i")


def sizes(v):
    return list(v.shape)


class Lowering:
    """Lowers the nodes of a make_fx graph one by one."""

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

    # ---- aliases and views ------------------------------------------------
    def op_detach(self, node, meta, x):
        return x

    def op_clone(self, node, meta, x, memory_format=None):
        return x

    def op_alias(self, node, meta, x):
        return x

    def op_t(self, node, meta, x):
        if len(x.shape) < 2:
            return x
        return self.em.permute(x, [1, 0])

    def op_transpose(self, node, meta, x, d0, d1):
        n = len(x.shape)
        perm = list(range(n))
        perm[d0 % n], perm[d1 % n] = perm[d1 % n], perm[d0 % n]
        return self.em.permute(x, perm)

    def op_permute(self, node, meta, x, perm):
        return self.em.permute(x, [p % len(x.shape) for p in perm])

    def op_expand(self, node, meta, x, shape, implicit=False):
        return self.em.expand(x, self.shape_of(meta))

    def _view(self, node, meta, x, *rest, **kw):
        return self.em.reshape(x, self.shape_of(meta))

    op_view = op__reshape_alias = op__unsafe_view = op_reshape = _view

    def op_unsqueeze(self, node, meta, x, dim):
        return self.em.reshape(x, self.shape_of(meta))

    def op_squeeze(self, node, meta, x, *dims):
        return self.em.reshape(x, self.shape_of(meta))

    def op_slice(self, node, meta, x, dim=0, start=None, end=None, step=1):
        x = self.em.materialize(x)
        n = len(x.shape)
        dim %= n
        size = x.shape[dim]
        start = 0 if start is None else (start + size if start < 0 else start)
        end = size if end is None else min(end + size if end < 0 else end,
                                           size)
        return self._extract(x, dim, start, end - start, step)

    def _extract(self, x, dim, start, length, step=1):
        n = len(x.shape)
        offs = [0] * n
        offs[dim] = start
        shape = list(x.shape)
        shape[dim] = len(range(0, length, step)) if step != 1 else length
        strides = [1] * n
        strides[dim] = step
        name = self.em.fresh("sl")
        self.em.emit(
            f"{name} = tensor.extract_slice {x.name}[{', '.join(map(str, offs))}]"
            f" [{', '.join(map(str, shape))}] [{', '.join(map(str, strides))}]"
            f" : {x.type} to {ttype(shape, x.dtype)}")
        return V(name, shape, x.dtype)

    def op_slice_backward(self, node, meta, g, sizes, dim, start, end, step):
        """The gradient of a slice: zeros of the input's shape with the
        slice's gradient inserted where the slice was read."""
        shape = tuple(int(s) for s in sizes)
        n = len(shape)
        dim %= n
        size = shape[dim]
        start = start + size if start < 0 else min(start, size)
        g = self.em.materialize(g)
        if g.shape == shape:
            return g
        base = self.em.filled(shape, 0.0, g.dtype)
        offs = [0] * n
        offs[dim] = start
        strides = [1] * n
        strides[dim] = step
        name = self.em.fresh("sb")
        self.em.emit(
            f"{name} = tensor.insert_slice {g.name} into {base.name}"
            f"[{', '.join(map(str, offs))}] [{', '.join(map(str, g.shape))}]"
            f" [{', '.join(map(str, strides))}] : {g.type} into "
            f"{ttype(shape, g.dtype)}")
        return V(name, shape, g.dtype)

    def op_split(self, node, meta, x, size, dim=0):
        x = self.em.materialize(x)
        dim %= len(x.shape)
        outs = []
        for start in range(0, x.shape[dim], size):
            outs.append(self._extract(x, dim, start,
                                      min(size, x.shape[dim] - start)))
        return outs

    def op_cat(self, node, meta, xs, dim=0):
        shape = self.shape_of(meta)
        n = len(shape)
        dim %= n
        acc = self.em.empty(shape)
        off = 0
        for x in xs:
            x = self.em.materialize(x)
            offs = [0] * n
            offs[dim] = off
            name = self.em.fresh("cat")
            self.em.emit(
                f"{name} = tensor.insert_slice {x.name} into {acc}"
                f"[{', '.join(map(str, offs))}] [{', '.join(map(str, x.shape))}]"
                f" [{', '.join(['1'] * n)}] : {x.type} into {ttype(shape)}")
            acc = name
            off += x.shape[dim]
        return V(acc, shape)

    # ---- creation ----------------------------------------------------------
    def op_ones_like(self, node, meta, x, **kw):
        return self.em.filled(self.shape_of(meta), 1.0)

    def op_zeros_like(self, node, meta, x, **kw):
        return self.em.filled(self.shape_of(meta), 0.0)

    def op_empty(self, node, meta, *a, **kw):
        return self.em.filled(self.shape_of(meta), 0.0)

    op_empty_like = op_empty

    def op_fill_(self, node, meta, x, value):
        if isinstance(value, V):
            raise Unsupported("export.py: fill_ with a tensor")
        return self.em.filled(self.shape_of(meta), float(value), x.dtype)

    def op_new_zeros(self, node, meta, *a, **kw):
        return self.em.filled(self.shape_of(meta), 0.0)

    def op_arange(self, node, meta, *args, **kw):
        shape = self.shape_of(meta)
        if len(args) == 1:
            start, step = 0, 1
        else:
            start = args[0]
            step = args[2] if len(args) > 2 else 1
        out = V(self.em.empty(shape, I64), shape, I64)
        return self.em.generic(1, ["parallel"], [], [], [out], [["d0"]],
                               lambda a, bb: bb.to_i64(bb.addi(
                                   bb.muli(bb.index(0), bb.iconst(step)),
                                   bb.iconst(start))))[0]

    def op_eq(self, node, meta, a, b):
        shape = self.shape_of(meta)
        if not isinstance(b, V):
            raise Unsupported("export.py: eq with a scalar")
        if a.dtype != I64 or b.dtype != I64:
            raise Unsupported("export.py: eq of non-integer tensors")
        return self.em.ew(shape, [a, b], lambda x, bb: bb.cmpi("eq", x[0],
                                                               x[1]), "i1")

    def op__to_copy(self, node, meta, x, dtype=None, **kw):
        to = TORCH_TYPES.get(dtype, x.dtype) if dtype is not None else x.dtype
        if x.dtype == "i1" and to in FLOATS:
            return self.em.ew(x.shape, [x], lambda a, bb: bb.select(
                a[0], bb.c(1.0), bb.c(0.0)), to)
        if to == x.dtype:
            return x
        if x.dtype in FLOATS and to in FLOATS:
            # Mixed precision: the master weights to the compute type and
            # the gradients back (f32 is the wider; bf16 <-> f16 via f32).
            def body(a, bb):
                v = a[0]
                if x.dtype != F32:
                    v = bb._op(f"arith.extf {v} : {x.dtype} to f32")
                if to != F32:
                    v = bb._op(f"arith.truncf {v} : f32 to {to}")
                return v
            return self.em.ew(x.shape, [x], body, to)
        raise Unsupported(f"export.py: _to_copy from {x.dtype} to {dtype}")

    # ---- elementwise ---------------------------------------------------------
    def _binary(self, meta, a, b, fn, alpha=1):
        shape = self.shape_of(meta)
        ins, pos = [], []
        for v in (a, b):
            if isinstance(v, V):
                pos.append(len(ins))
                ins.append(v)
            else:
                pos.append(("const", float(v)))

        def body(args, bb):
            ops = []
            for p in pos:
                ops.append(args[p] if isinstance(p, int) else bb.c(p[1]))
            y = ops[1]
            if alpha != 1:
                y = bb.mulf(y, bb.c(alpha))
            return fn(bb, ops[0], y)
        return self.em.ew(shape, ins, body)

    def op_add(self, node, meta, a, b, alpha=1):
        return self._binary(meta, a, b, lambda bb, x, y: bb.addf(x, y), alpha)

    op_add_ = op_add

    def op_sub(self, node, meta, a, b, alpha=1):
        return self._binary(meta, a, b, lambda bb, x, y: bb.subf(x, y), alpha)

    # In place on a tensor nothing else reads (make_fx's graphs write only
    # into fresh ones), so the value semantics are the same.
    op_sub_ = op_sub

    def op_mul(self, node, meta, a, b):
        return self._binary(meta, a, b, lambda bb, x, y: bb.mulf(x, y))

    op_mul_ = op_mul

    def op_div(self, node, meta, a, b, rounding_mode=None):
        return self._binary(meta, a, b, lambda bb, x, y: bb.divf(x, y))

    def op_sqrt(self, node, meta, x):
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.sqrt(a[0]))

    def op_rsqrt(self, node, meta, x):
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.rsqrt(a[0]))

    def op_pow(self, node, meta, x, exponent):
        """pow.Tensor_Scalar to a small integer power, as products (x^2 in
        RMSNorm, x^1 in its backward, x^3 in tanh-GELU)."""
        if not isinstance(x, V) or isinstance(exponent, V) or \
                float(exponent) not in (1.0, 2.0, 3.0, 4.0):
            raise Unsupported(f"export.py: pow to the power {exponent}")

        def body(a, bb):
            y = a[0]
            for _ in range(int(exponent) - 1):
                y = bb.mulf(y, a[0])
            return y
        return self.em.ew(self.shape_of(meta), [x], body)

    def op_sigmoid(self, node, meta, x):
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.sigmoid(a[0]))

    def op_silu(self, node, meta, x):
        """x * sigmoid(x) (SwiGLU's gate); its backward arrives decomposed
        into sigmoid, fill_ and sub_."""
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.mulf(a[0], bb.sigmoid(a[0])))

    def op_where(self, node, meta, cond, a, b):
        """where.self: the condition selects (operands broadcast; a 0-d
        zero in dropout and its backward)."""
        if not all(isinstance(v, V) for v in (cond, a, b)) or \
                cond.dtype != "i1" or a.dtype not in FLOATS or \
                b.dtype != a.dtype:
            raise Unsupported("export.py: where other than i1 ? float : "
                              "float")
        return self.em.ew(self.shape_of(meta), [cond, a, b],
                          lambda x, bb: bb.select(x[0], x[1], x[2]))

    def op_scalar_tensor(self, node, meta, value, dtype=None, **kw):
        to = TORCH_TYPES.get(dtype) if dtype is not None else ft()
        if to not in FLOATS:
            raise Unsupported(f"export.py: scalar_tensor of {dtype}")
        return self.em.filled((), float(value), to)

    def op_lms_dropout_mask(self, node, meta, x, seed, salt, p):
        """models.dropout_keep, element by element: the flat index from
        linalg.index, the same 32-bit hash in i64 (no product reaches 2^63),
        its upper 24 bits against the threshold."""
        import models
        shape = self.shape_of(meta)
        n = len(shape)

        def body(a, bb):
            def k(v):
                return bb.iconst(v, I64)
            flat = k(0)
            for i in range(n):
                flat = bb.addi(bb.muli(flat, k(shape[i]), I64),
                               bb.to_i64(bb.index(i)), I64)
            m32 = models.MASK32
            h = bb.xori(bb.andi(flat, k(m32), I64),
                        k((seed & m32) * models.HASH_SEED & m32 ^
                          (salt & m32) * models.HASH_SALT & m32))
            for shift, mul in ((16, models.HASH_MUL1),
                               (15, models.HASH_MUL2)):
                h = bb.andi(bb.muli(bb.xori(h, bb.shrui(h, k(shift))),
                                    k(mul), I64), k(m32), I64)
            h = bb.xori(h, bb.shrui(h, k(15)))
            return bb.cmpi("uge", bb.shrui(h, k(8)),
                           k(models.dropout_threshold(p)))
        out = V(self.em.empty(shape, "i1"), shape, "i1")
        d = [f"d{i}" for i in range(n)]
        return self.em.generic(n, ["parallel"] * n, [], [], [out], [d],
                               body)[0]

    def op_neg(self, node, meta, x):
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.negf(a[0]))

    def op_relu(self, node, meta, x):
        return self.em.ew(self.shape_of(meta), [x],
                          lambda a, bb: bb.maxf(a[0], bb.c(0.0)))

    op_relu_ = op_relu

    def op_threshold_backward(self, node, meta, g, out, threshold):
        def body(a, bb):
            le = bb.cmpf("ule", a[1], bb.c(threshold))
            return bb.select(le, bb.c(0.0), a[0])
        return self.em.ew(self.shape_of(meta), [g, out], body)

    def op_hardtanh(self, node, meta, x, lo=-1.0, hi=1.0):
        return self.em.ew(self.shape_of(meta), [x], lambda a, bb: bb.minf(
            bb.maxf(a[0], bb.c(lo)), bb.c(hi)))

    op_hardtanh_ = op_hardtanh

    def op_hardtanh_backward(self, node, meta, g, x, lo, hi):
        def body(a, bb):
            out = bb.ori(bb.cmpf("ule", a[1], bb.c(lo)),
                         bb.cmpf("uge", a[1], bb.c(hi)))
            return bb.select(out, bb.c(0.0), a[0])
        return self.em.ew(self.shape_of(meta), [g, x], body)

    def op_gelu(self, node, meta, x, approximate="none"):
        if approximate != "none":
            raise Unsupported("export.py: gelu(approximate='tanh')")

        def body(a, bb):
            e = bb.erf(bb.mulf(a[0], bb.c(1 / math.sqrt(2))))
            return bb.mulf(bb.mulf(a[0], bb.c(0.5)), bb.addf(e, bb.c(1.0)))
        return self.em.ew(self.shape_of(meta), [x], body)

    def op_gelu_backward(self, node, meta, g, x, approximate="none"):
        def body(a, bb):
            g_, x_ = a[0], a[1]
            cdf = bb.mulf(bb.c(0.5), bb.addf(
                bb.c(1.0), bb.erf(bb.mulf(x_, bb.c(1 / math.sqrt(2))))))
            pdf = bb.mulf(bb.exp(bb.mulf(bb.mulf(x_, x_), bb.c(-0.5))),
                          bb.c(1 / math.sqrt(2 * math.pi)))
            return bb.mulf(g_, bb.addf(cdf, bb.mulf(x_, pdf)))
        return self.em.ew(self.shape_of(meta), [g, x], body)

    # ---- reductions ------------------------------------------------------------
    def op_sum(self, node, meta, x, dims=None, keepdim=False, dtype=None):
        if dims is None or len(dims) == 0:
            dims = list(range(len(x.shape)))
        return self.em.sum(x, dims, keepdim)

    def op_mean(self, node, meta, x, dims=None, keepdim=False, dtype=None):
        if dims is None:
            dims = list(range(len(x.shape)))
        s = self.em.sum(x, dims, keepdim)
        count = math.prod(x.shape[d] for d in dims)
        return self.em.ew(s.shape, [s],
                          lambda a, bb: bb.divf(a[0], bb.c(float(count))))

    def _adaptive_windows(self, x, out_size):
        """Per spatial dim the uniform window of adaptive average pooling:
        In % Out == 0 (window In/Out) or In == 1 (replication)."""
        ks = []
        for n_in, n_out in zip(x.shape[2:], out_size):
            if n_in % n_out == 0:
                ks.append(("pool", n_in // n_out))
            elif n_in == 1:
                ks.append(("rep", n_out))
            else:
                raise Unsupported("export.py: adaptive_avg_pool2d with "
                                  "non-uniform windows")
        return ks

    def op__adaptive_avg_pool2d(self, node, meta, x, out_size):
        if tuple(out_size) == tuple(x.shape[2:]):
            return x
        ks = self._adaptive_windows(x, out_size)
        shape = self.shape_of(meta)
        if all(kind == "rep" for kind, _ in ks):
            return self.em.materialize(V(x.name, shape, x.dtype, x.bshape,
                                         [0, 1, None, None]))
        if any(kind == "rep" for kind, _ in ks):
            raise Unsupported("export.py: mixed adaptive_avg_pool2d")
        kh, kw = ks[0][1], ks[1][1]
        ker = self.em.filled((kh, kw), 0.0)
        out = self.em.filled(shape, 0.0)
        s = self.em.generic(
            6, ["parallel"] * 4 + ["reduction"] * 2, [x, ker],
            [["d0", "d1", f"d2 * {kh} + d4", f"d3 * {kw} + d5"], ["d4", "d5"]],
            [out], [["d0", "d1", "d2", "d3"]],
            lambda a, bb: bb.addf(a[2], a[0]))[0]
        return self.em.ew(shape, [s], lambda a, bb: bb.divf(
            a[0], bb.c(float(kh * kw))))

    def op__adaptive_avg_pool2d_backward(self, node, meta, g, x):
        if g.shape == x.shape:
            return g
        ks = self._adaptive_windows(x, g.shape[2:])
        if all(kind == "rep" for kind, _ in ks):
            return self.em.sum(g, [2, 3], True)
        kh, kw = ks[0][1], ks[1][1]
        # gx[h, w] = g[h / kh, w / kw] / (kh * kw)
        d = [f"d{i}" for i in range(4)]
        g = self.em.materialize(g)
        out = V(self.em.empty(x.shape), x.shape)
        return self.em.generic(
            4, ["parallel"] * 4, [g],
            [["d0", "d1", f"d2 floordiv {kh}", f"d3 floordiv {kw}"]], [out],
            [d], lambda a, bb: bb.divf(a[0], bb.c(float(kh * kw))))[0]

    # ---- matmul --------------------------------------------------------------
    def _matmul(self, a, b, init=None, batch=False):
        if batch:
            B, M, K = a.shape
            N = b.shape[2]
            loops, kinds = 4, ["parallel"] * 3 + ["reduction"]
            am, bm, om = ["d0", "d1", "d3"], ["d0", "d3", "d2"], ["d0", "d1", "d2"]
            shape = (B, M, N)
        else:
            M, K = a.shape
            N = b.shape[1]
            loops, kinds = 3, ["parallel", "parallel", "reduction"]
            am, bm, om = ["d0", "d2"], ["d2", "d1"], ["d0", "d1"]
            shape = (M, N)
        out = init if init is not None else self.em.filled(shape, 0.0)
        return self.em.generic(
            loops, kinds, [a, b], [am, bm], [out], [om],
            lambda x, bb: bb.addf(x[2], bb.mulf(x[0], x[1])))[0]

    def op_mm(self, node, meta, a, b):
        return self._matmul(a, b)

    def op_bmm(self, node, meta, a, b):
        return self._matmul(a, b, batch=True)

    def op_addmm(self, node, meta, bias, a, b, beta=1, alpha=1):
        if beta != 1 or alpha != 1:
            raise Unsupported("export.py: addmm with alpha/beta")
        init = self.em.materialize(self.em.expand(bias,
                                                        self.shape_of(meta)))
        return self._matmul(a, b, init=init)

    # ---- softmax family -----------------------------------------------------
    def _row_max(self, x, dim):
        return self.em.reduce([x], [dim], True,
                              lambda a, bb: bb.maxf(a[0], a[1]),
                              init=-math.inf)[0]

    def op__log_softmax(self, node, meta, x, dim, half=False):
        m = self._row_max(x, dim)
        s = self.em.reduce([x, m], [dim], True, lambda a, bb: bb.addf(
            a[2], bb.exp(bb.subf(a[0], a[1]))), shape=x.shape)[0]
        return self.em.ew(x.shape, [x, m, s], lambda a, bb: bb.subf(
            bb.subf(a[0], a[1]), bb.log(a[2])))

    def op__log_softmax_backward_data(self, node, meta, g, out, dim, dtype):
        s = self.em.sum(g, [dim], True)
        return self.em.ew(g.shape, [g, out, s], lambda a, bb: bb.subf(
            a[0], bb.mulf(bb.exp(a[1]), a[2])))

    def op__softmax(self, node, meta, x, dim, half=False):
        m = self._row_max(x, dim)
        s = self.em.reduce([x, m], [dim], True, lambda a, bb: bb.addf(
            a[2], bb.exp(bb.subf(a[0], a[1]))), shape=x.shape)[0]
        return self.em.ew(x.shape, [x, m, s], lambda a, bb: bb.divf(
            bb.exp(bb.subf(a[0], a[1])), a[2]))

    def op__softmax_backward_data(self, node, meta, g, out, dim, dtype):
        s = self.em.reduce([g, out], [dim], True, lambda a, bb: bb.addf(
            a[2], bb.mulf(a[0], a[1])), shape=g.shape)[0]
        return self.em.ew(g.shape, [g, out, s], lambda a, bb: bb.mulf(
            a[1], bb.subf(a[0], a[2])))

    # ---- normalization --------------------------------------------------------
    def _channel_view(self, v, shape):
        """A [C]-shaped v seen as broadcast over `shape` along dim 1."""
        return V(v.name, shape, v.dtype, v.bshape, [1])

    def op_native_batch_norm(self, node, meta, x, w, b, rm, rv, training,
                             momentum, eps):
        if not training:
            raise Unsupported("export.py: batch norm in eval mode")
        shape = x.shape
        C = shape[1]
        red = [0] + list(range(2, len(shape)))
        M = float(math.prod(shape) // C)
        s = self.em.sum(x, red)                          # [C]
        mean = self.em.ew((C,), [s], lambda a, bb: bb.divf(a[0], bb.c(M)))
        mean_b = self._channel_view(mean, shape)
        var = self.em.reduce([x, mean_b], red, False, lambda a, bb: bb.addf(
            a[2], bb.mulf(bb.subf(a[0], a[1]), bb.subf(a[0], a[1]))),
            shape=shape)[0]
        invstd = self.em.ew((C,), [var], lambda a, bb: bb.rsqrt(
            bb.addf(bb.divf(a[0], bb.c(M)), bb.c(eps))))
        ins = [x, mean_b, self._channel_view(invstd, shape)]
        if w is not None:
            ins.append(self._channel_view(w, shape))
        if b is not None:
            ins.append(self._channel_view(b, shape))

        def body(a, bb):
            y = bb.mulf(bb.subf(a[0], a[1]), a[2])
            k = 3
            if w is not None:
                y = bb.mulf(y, a[k])
                k += 1
            if b is not None:
                y = bb.addf(y, a[k])
            return y
        out = self.em.ew(shape, ins, body)
        return (out, mean, invstd)

    def op_native_batch_norm_backward(self, node, meta, g, x, w, rm, rv,
                                      save_mean, save_invstd, train, eps,
                                      mask):
        shape = x.shape
        C = shape[1]
        red = [0] + list(range(2, len(shape)))
        M = float(math.prod(shape) // C)
        mean_b = self._channel_view(save_mean, shape)
        inv_b = self._channel_view(save_invstd, shape)
        gb, gdot = self.em.reduce(
            [g, x, mean_b], red, False,
            lambda a, bb: [bb.addf(a[3], a[0]),
                           bb.addf(a[4], bb.mulf(a[0], bb.subf(a[1], a[2])))],
            shape=shape, outs_count=2)
        gw = self.em.ew((C,), [gdot, save_invstd],
                        lambda a, bb: bb.mulf(a[0], a[1]))
        ins = [g, x, mean_b, inv_b, self._channel_view(gb, shape),
               self._channel_view(gdot, shape)]
        if w is not None:
            ins.append(self._channel_view(w, shape))

        def body(a, bb):
            g_, x_, m_, i_, gb_, gd_ = a[:6]
            t = bb.subf(g_, bb.divf(gb_, bb.c(M)))
            xm = bb.subf(x_, m_)
            t = bb.subf(t, bb.divf(bb.mulf(bb.mulf(xm, bb.mulf(i_, i_)), gd_),
                                   bb.c(M)))
            t = bb.mulf(t, i_)
            if w is not None:
                t = bb.mulf(t, a[6])
            return t
        gx = self.em.ew(shape, ins, body)
        return (gx if mask[0] else None, gw if mask[1] else None,
                gb if mask[2] else None)

    def op_native_layer_norm(self, node, meta, x, normalized, w, b, eps):
        if len(normalized) != 1:
            raise Unsupported("export.py: layer norm over several dims")
        shape = x.shape
        n = len(shape)
        D = float(shape[-1])
        s = self.em.sum(x, [n - 1], True)
        mean = self.em.ew(s.shape, [s], lambda a, bb: bb.divf(a[0], bb.c(D)))
        var = self.em.reduce([x, mean], [n - 1], True, lambda a, bb: bb.addf(
            a[2], bb.mulf(bb.subf(a[0], a[1]), bb.subf(a[0], a[1]))),
            shape=shape)[0]
        rstd = self.em.ew(var.shape, [var], lambda a, bb: bb.rsqrt(
            bb.addf(bb.divf(a[0], bb.c(D)), bb.c(eps))))
        out = self.em.ew(shape, [x, mean, rstd, w, b], lambda a, bb: bb.addf(
            bb.mulf(bb.mulf(bb.subf(a[0], a[1]), a[2]), a[3]), a[4]))
        return (out, mean, rstd)

    def op_native_layer_norm_backward(self, node, meta, g, x, normalized,
                                      mean, rstd, w, b, mask):
        shape = x.shape
        n = len(shape)
        D = float(shape[-1])
        rows = list(range(n - 1))
        # Per row: a = sum(g*w), c = sum(g*w*xhat).
        a_, c_ = self.em.reduce(
            [g, w, x, mean, rstd], [n - 1], True,
            lambda a, bb: [bb.addf(a[5], bb.mulf(a[0], a[1])),
                           bb.addf(a[6], bb.mulf(bb.mulf(a[0], a[1]), bb.mulf(
                               bb.subf(a[2], a[3]), a[4])))],
            shape=shape, outs_count=2)

        def gx_body(a, bb):
            g_, w_, x_, m_, r_, A, Cc = a[:7]
            xhat = bb.mulf(bb.subf(x_, m_), r_)
            t = bb.subf(bb.mulf(g_, w_), bb.divf(A, bb.c(D)))
            t = bb.subf(t, bb.divf(bb.mulf(xhat, Cc), bb.c(D)))
            return bb.mulf(t, r_)
        gx = self.em.ew(shape, [g, w, x, mean, rstd, a_, c_], gx_body)
        gw, gb = self.em.reduce(
            [g, x, mean, rstd], rows, False,
            lambda a, bb: [bb.addf(a[4], bb.mulf(a[0], bb.mulf(
                bb.subf(a[1], a[2]), a[3]))), bb.addf(a[5], a[0])],
            shape=shape, outs_count=2)
        return (gx if mask[0] else None, gw if mask[1] else None,
                gb if mask[2] else None)

    # ---- negative log likelihood ---------------------------------------------
    def op_nll_loss_forward(self, node, meta, logp, target, weight,
                            reduction, ignore_index):
        if weight is not None or reduction != 1 or len(logp.shape) != 2:
            raise Unsupported("export.py: nll_loss other than mean over "
                              "[N, C] without class weights")
        logp = self.em.materialize(logp)
        ign = self.em.const(ignore_index, I64)
        zero = self.em.const(0, I64)

        # Sum of logp[n, target[n]] and the count of targets not ignored.
        def body(a, bb):
            keep = bb.cmpi("ne", a[0], ign)
            col = bb.to_index(bb.select(keep, a[0], zero, I64))
            row = bb.index(0)
            v = bb._op(f"tensor.extract {logp.name}[{row}, {col}] : "
                       f"{logp.type}")
            v = bb.select(keep, v, bb.c(0.0))
            one = bb.select(keep, bb.c(1.0), bb.c(0.0))
            return [bb.addf(a[1], v), bb.addf(a[2], one)]
        total, count = self.em.reduce([target], [0], False, body,
                                      outs_count=2)
        loss = self.em.ew((), [total, count], lambda a, bb: bb.negf(
            bb.divf(a[0], a[1])))
        return (loss, count)

    def op_nll_loss_backward(self, node, meta, grad, logp, target, weight,
                             reduction, ignore_index, total_weight):
        if weight is not None or reduction != 1:
            raise Unsupported("export.py: nll_loss other than mean without "
                              "class weights")
        shape = logp.shape
        ign = self.em.const(ignore_index, I64)
        out = V(self.em.empty(shape), shape)

        # d loss / d logp[n, c] = -grad / total where c == target[n].
        def body(a, bb):
            col = bb.to_i64(bb.index(1))
            hit = bb.cmpi("eq", a[0], col)
            keep = bb.cmpi("ne", a[0], ign)
            both = bb._op(f"arith.andi {hit}, {keep} : i1")
            g = bb.negf(bb.divf(a[1], a[2]))
            return bb.select(both, g, bb.c(0.0))
        return self.em.generic(2, ["parallel", "parallel"],
                               [target, grad, total_weight],
                               [["d0"], [], []], [out], [["d0", "d1"]],
                               body)[0]

    # ---- embedding -----------------------------------------------------------
    def op_embedding(self, node, meta, w, tokens, padding_idx=-1,
                     scale=False, sparse=False):
        w = self.em.materialize(w)
        shape = self.shape_of(meta)
        n = len(shape)
        d = [f"d{i}" for i in range(n)]
        out = V(self.em.empty(shape), shape)

        def body(a, bb):
            row = bb.to_index(a[0])
            col = bb.index(n - 1)
            return bb._op(f"tensor.extract {w.name}[{row}, {col}] : {w.type}")
        return self.em.generic(n, ["parallel"] * n, [tokens], [d[:-1]], [out],
                               [d], body)[0]

    def op_embedding_dense_backward(self, node, meta, g, tokens, num_weights,
                                    padding_idx, scale):
        # gw[v, k] = sum over positions p of (tokens[p] == v) * g[p, k]; the
        # scatter PyTorch runs costs one add per element of g.
        D = g.shape[-1]
        npos = len(tokens.shape)
        loops = 2 + npos
        pos = [f"d{2 + i}" for i in range(npos)]
        out = self.em.filled((num_weights, D), 0.0)
        cost = float(math.prod(g.shape))

        def body(a, bb):
            v = bb.to_i64(bb.index(0))
            hit = bb.cmpi("eq", a[0], v)
            return bb.select(hit, bb.addf(a[2], a[1]), a[2])
        kinds = ["parallel", "parallel"] + ["reduction"] * npos
        return self.em.generic(loops, kinds, [tokens, g],
                               [pos, pos + ["d1"]], [out], [["d0", "d1"]],
                               body, cost=cost)[0]

    # ---- convolution ------------------------------------------------------
    def _pad(self, x, pads, value=0.0, dtype=None):
        dtype = dtype or ft()
        """pads: per spatial dim (lo, hi); dims 0 and 1 unpadded."""
        if all(lo == 0 and hi == 0 for lo, hi in pads):
            return x
        x = self.em.materialize(x)
        lo = [0, 0] + [p[0] for p in pads]
        hi = [0, 0] + [p[1] for p in pads]
        shape = tuple(s + l + h for s, l, h in zip(x.shape, lo, hi))
        name = self.em.fresh("pad")
        c = self.em.const(value, dtype)
        self.em.emit(f"{name} = tensor.pad {x.name} low[{', '.join(map(str, lo))}]"
                     f" high[{', '.join(map(str, hi))}] {{")
        self.em.emit(f"^bb0({', '.join(f'%i{k}: index' for k in range(len(shape)))}):")
        self.em.emit(f"  tensor.yield {c} : {dtype}")
        self.em.emit(f"}} : {x.type} to {ttype(shape, dtype)}")
        return V(name, shape, dtype)

    def _dilate(self, x, strides, fill=0.0, dtype=None):
        dtype = dtype or ft()
        """Inserts stride-1 fill elements between spatial elements."""
        if all(s == 1 for s in strides):
            return x
        x = self.em.materialize(x)
        shape = tuple(list(x.shape[:2]) + [(n - 1) * s + 1 for n, s in
                                           zip(x.shape[2:], strides)])
        base = self.em.filled(shape, fill, dtype)
        name = self.em.fresh("dil")
        n = len(shape)
        self.em.emit(
            f"{name} = tensor.insert_slice {x.name} into {base.name}"
            f"[{', '.join(['0'] * n)}] [{', '.join(map(str, x.shape))}]"
            f" [1, 1, {', '.join(map(str, strides))}] : {x.type} into "
            f"{ttype(shape, dtype)}")
        return V(name, shape, dtype)

    def _bias_init(self, b, shape):
        if b is None:
            return self.em.filled(shape, 0.0)
        return self.em.materialize(V(b.name, shape, b.dtype, b.bshape, [1]))

    def op_convolution(self, node, meta, x, w, b, stride, padding, dilation,
                       transposed, output_padding, groups):
        shape = self.shape_of(meta)
        k = len(shape) - 2
        if transposed:
            return self._conv_transposed(x, w, b, stride, padding, dilation,
                                         output_padding, groups, shape)
        depthwise = self._depthwise(x, w, groups)
        xp = self._pad(x, [(p, p) for p in padding])
        sp = [f"d{2 + i}" for i in range(k)]          # output spatial
        kk = [f"d{3 + k + i}" for i in range(k)]      # kernel spatial
        xin = [f"{sp[i]} * {stride[i]} + {kk[i]} * {dilation[i]}"
               for i in range(k)]
        out = self._bias_init(b, shape)
        if depthwise:
            loops = 2 + 2 * k
            kk = [f"d{2 + k + i}" for i in range(k)]
            xin = [f"{sp[i]} * {stride[i]} + {kk[i]} * {dilation[i]}"
                   for i in range(k)]
            maps = [["d0", "d1"] + xin, ["d1", "0"] + kk]
            kinds = ["parallel"] * (2 + k) + ["reduction"] * k
        else:
            loops = 3 + 2 * k
            c = f"d{2 + k}"
            maps = [["d0", c] + xin, ["d1", c] + kk]
            kinds = ["parallel"] * (2 + k) + ["reduction"] * (1 + k)
        return self.em.generic(loops, kinds, [xp, w], maps, [out],
                               [["d0", "d1"] + sp],
                               lambda a, bb: bb.addf(a[2],
                                                     bb.mulf(a[0], a[1])))[0]

    def _depthwise(self, x, w, groups):
        if groups == 1:
            return False
        if groups == x.shape[1] and w.shape[0] == groups and w.shape[1] == 1:
            return True
        raise Unsupported("export.py: grouped convolution other than "
                          "depthwise")

    def _conv_transposed(self, x, w, b, stride, padding, dilation, outpad,
                         groups, shape):
        k = len(shape) - 2
        self._check_transposed(w, stride, padding, dilation, outpad, groups)
        sp = [f"d{2 + i}" for i in range(k)]
        c = f"d{2 + k}"
        xin = [f"{sp[i]} floordiv {stride[i]}" for i in range(k)]
        win = [f"{sp[i]} mod {stride[i]}" for i in range(k)]
        out = self._bias_init(b, shape)
        return self.em.generic(
            3 + k, ["parallel"] * (2 + k) + ["reduction"],
            [x, w], [["d0", c] + xin, [c, "d1"] + win], [out],
            [["d0", "d1"] + sp],
            lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]

    @staticmethod
    def _check_transposed(w, stride, padding, dilation, outpad, groups):
        if (list(w.shape[2:]) != list(stride) or any(padding) or
                any(d != 1 for d in dilation) or any(outpad) or groups != 1):
            raise Unsupported("export.py: transposed convolution other than "
                              "kernel == stride, no padding")

    def op_convolution_backward(self, node, meta, g, x, w, bias_sizes, stride,
                                padding, dilation, transposed, outpad, groups,
                                mask):
        k = len(g.shape) - 2
        red_out = [0] + list(range(2, 2 + k))
        gb = self.em.sum(g, red_out) if mask[2] else None
        if transposed:
            self._check_transposed(w, stride, padding, dilation, outpad,
                                   groups)
            sp = [f"d{2 + i}" for i in range(k)]
            kk = [f"d{3 + k + i}" for i in range(k)]
            gin = [f"{sp[i]} * {stride[i]} + {kk[i]}" for i in range(k)]
            gx = gw = None
            if mask[0]:
                # gx[n,c,s] = sum_{f,kk} g[n,f,s*st+kk] * w[c,f,kk]
                f = f"d{2 + k}"
                out = self.em.filled(x.shape, 0.0)
                gx = self.em.generic(
                    3 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * (1 + k),
                    [g, w], [["d0", f] + gin, ["d1", f] + kk], [out],
                    [["d0", "d1"] + sp],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
            if mask[1]:
                # gw[c,f,kk] = sum_{n,s} x[n,c,s] * g[n,f,s*st+kk]
                nn_ = f"d{2 + k}"
                ss = [f"d{3 + k + i}" for i in range(k)]
                kk2 = [f"d{2 + i}" for i in range(k)]
                gin2 = [f"{ss[i]} * {stride[i]} + {kk2[i]}" for i in range(k)]
                out = self.em.filled(w.shape, 0.0)
                gw = self.em.generic(
                    3 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * (1 + k),
                    [x, g], [[nn_, "d0"] + ss, [nn_, "d1"] + gin2], [out],
                    [["d0", "d1"] + kk2],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
            return (gx, gw, gb)

        depthwise = self._depthwise(x, w, groups)
        K = list(w.shape[2:])
        gx = gw = None
        if mask[1]:
            xp = self._pad(x, [(p, p) for p in padding])
            ww = [f"d{2 + i}" for i in range(k)]          # kernel dims
            if depthwise:
                # gw[c,0,kk] = sum_{n,o} g[n,c,o] * xp[n,c,o*s+kk*d]
                kw_ = [f"d{1 + i}" for i in range(k)]
                n_ = f"d{1 + k}"
                oo = [f"d{2 + k + i}" for i in range(k)]
                xin = [f"{oo[i]} * {stride[i]} + {kw_[i]} * {dilation[i]}"
                       for i in range(k)]
                out = self.em.filled(w.shape, 0.0)
                gw = self.em.generic(
                    2 + 2 * k, ["parallel"] * (1 + k) + ["reduction"] * (1 + k),
                    [g, xp], [[n_, "d0"] + oo, [n_, "d0"] + xin], [out],
                    [["d0", "0"] + kw_],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
            else:
                n_ = f"d{2 + k}"
                oo = [f"d{3 + k + i}" for i in range(k)]
                xin = [f"{oo[i]} * {stride[i]} + {ww[i]} * {dilation[i]}"
                       for i in range(k)]
                out = self.em.filled(w.shape, 0.0)
                gw = self.em.generic(
                    3 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * (1 + k),
                    [g, xp], [[n_, "d0"] + oo, [n_, "d1"] + xin], [out],
                    [["d0", "d1"] + ww],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
        if mask[0]:
            G = self._dilate(g, stride)
            pads = []
            for i in range(k):
                full = G.shape[2 + i] + (K[i] - 1) * dilation[i]
                extra = x.shape[2 + i] + 2 * padding[i] - full
                lo = (K[i] - 1) * dilation[i]
                pads.append((lo, lo + max(0, extra)))
            Gp = self._pad(G, pads)
            padded = tuple(list(x.shape[:2]) + [x.shape[2 + i] + 2 * padding[i]
                                                for i in range(k)])
            sp = [f"d{2 + i}" for i in range(k)]
            if depthwise:
                kk = [f"d{2 + k + i}" for i in range(k)]
                gin = [f"{sp[i]} + {(K[i] - 1) * dilation[i]} - {kk[i]} * "
                       f"{dilation[i]}" for i in range(k)]
                out = self.em.filled(padded, 0.0)
                gxp = self.em.generic(
                    2 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * k,
                    [Gp, w], [["d0", "d1"] + gin, ["d1", "0"] + kk], [out],
                    [["d0", "d1"] + sp],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
            else:
                f = f"d{2 + k}"
                kk = [f"d{3 + k + i}" for i in range(k)]
                gin = [f"{sp[i]} + {(K[i] - 1) * dilation[i]} - {kk[i]} * "
                       f"{dilation[i]}" for i in range(k)]
                out = self.em.filled(padded, 0.0)
                gxp = self.em.generic(
                    3 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * (1 + k),
                    [Gp, w], [["d0", f] + gin, [f, "d1"] + kk], [out],
                    [["d0", "d1"] + sp],
                    lambda a, bb: bb.addf(a[2], bb.mulf(a[0], a[1])))[0]
            gx = gxp
            for i in range(k):
                if padding[i]:
                    gx = self._extract(gx, 2 + i, padding[i], x.shape[2 + i])
        return (gx, gw, gb)

    # ---- max pooling -----------------------------------------------------
    def _maxpool(self, node, meta, x, kernel, stride, padding, dilation,
                 ceil):
        k = len(x.shape) - 2
        kernel = list(kernel) * (k if len(kernel) == 1 else 1)
        stride = list(stride or kernel) * (k if len(stride or kernel) == 1 else 1)
        padding = list(padding) * (k if len(padding) == 1 else 1)
        dilation = list(dilation) * (k if len(dilation) == 1 else 1)
        if ceil or any(d != 1 for d in dilation):
            raise Unsupported("export.py: max pooling with ceil_mode or "
                              "dilation")
        shape = self.shape_of(meta, 0)
        xp = self._pad(x, [(p, p) for p in padding], -math.inf)
        sp = [f"d{2 + i}" for i in range(k)]
        kk = [f"d{2 + k + i}" for i in range(k)]
        xin = [f"{sp[i]} * {stride[i]} + {kk[i]}" for i in range(k)]
        vals = self.em.filled(shape, -math.inf)
        idxs = self.em.filled(shape, -1, I64)
        dims_in = list(x.shape[2:])
        # The window's extents come from a kernel-shaped operand.
        ker = self.em.filled(tuple(kernel), 0.0)

        def body(a, bb):
            # Flat index (row-major over the unpadded spatial dims) of the
            # element read; the first maximum wins, as in PyTorch.
            flat = None
            for i in range(k):
                pos = bb.addi(bb.muli(bb.index(2 + i), bb.iconst(stride[i])),
                              bb.index(2 + k + i))
                pos = bb.addi(pos, bb.iconst(-padding[i]))
                flat = pos if flat is None else bb.addi(
                    bb.muli(flat, bb.iconst(dims_in[i])), pos)
            flat = bb.to_i64(flat)
            better = bb.cmpf("ogt", a[0], a[2])
            first = bb.cmpi("eq", a[3], bb.iconst(-1, I64))
            take = bb.ori(better, first)
            return [bb.select(take, a[0], a[2]),
                    bb.select(take, flat, a[3], I64)]
        out, ind = self.em.generic(
            2 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * k,
            [xp, ker], [["d0", "d1"] + xin, kk], [vals, idxs],
            [["d0", "d1"] + sp] * 2, body)
        return (out, ind)

    def op_max_pool2d_with_indices(self, node, meta, x, kernel, stride=(),
                                   padding=(0,), dilation=(1,), ceil=False):
        return self._maxpool(node, meta, x, kernel, stride, padding, dilation,
                             ceil)

    op_max_pool3d_with_indices = op_max_pool2d_with_indices

    def op_max_pool2d_with_indices_backward(self, node, meta, g, x, kernel,
                                            stride, padding, dilation, ceil,
                                            ind):
        k = len(x.shape) - 2
        kernel = list(kernel) * (k if len(kernel) == 1 else 1)
        stride = list(stride or kernel) * (k if len(stride or kernel) == 1 else 1)
        padding = list(padding) * (k if len(padding) == 1 else 1)
        # gx[p] = sum over windows o containing p of g[o] * (ind[o] == p), as
        # PyTorch's kernel scatters it. Window o holds p at kernel offset
        # r = p + pad - o * s: gathered over r, o = (p + pad - r) / s where
        # that divides, from g and the indices padded by the windows that
        # fall outside (-1: no hit). No dilated or padded copy of the
        # indices at the input's size: the largest extra tensors are g and
        # the indices with a border.
        out_dims = list(g.shape[2:])
        pads = []
        for i in range(k):
            first = (padding[i] - kernel[i] + 1) // stride[i]
            last = (x.shape[2 + i] - 1 + padding[i]) // stride[i]
            pads.append((max(0, -first), max(0, last - (out_dims[i] - 1))))
        Gp = self._pad(g, pads)
        Ip = self._pad(ind, pads, -1, I64)
        sp = [f"d{2 + i}" for i in range(k)]
        kk = [f"d{2 + k + i}" for i in range(k)]
        gin = [f"({sp[i]} + {padding[i]} - {kk[i]}) floordiv {stride[i]} + "
               f"{pads[i][0]}" for i in range(k)]
        out = self.em.filled(x.shape, 0.0)
        dims_in = list(x.shape[2:])
        # Kernel extents come from a zero-size-free helper: a [K...] tensor.
        ker = self.em.filled(tuple(kernel), 0.0)

        def body(a, bb):
            flat = None
            for i in range(k):
                pos = bb.index(2 + i)
                flat = pos if flat is None else bb.addi(
                    bb.muli(flat, bb.iconst(dims_in[i])), pos)
            hit = bb.cmpi("eq", a[1], bb.to_i64(flat))
            for i in range(k):
                # p + pad - r divides by the stride: o holds p at offset r.
                t = bb.addi(bb.index(2 + i), bb.iconst(padding[i]))
                t = bb.addi(t, bb.muli(bb.index(2 + k + i), bb.iconst(-1)))
                rem = bb.remsi(t, bb.iconst(stride[i]))
                hit = bb.andi(hit, bb.cmpi("eq", rem, bb.iconst(0), "index"))
            return bb.select(hit, bb.addf(a[3], a[0]), a[3])
        return self.em.generic(
            2 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * k,
            [Gp, Ip, ker], [["d0", "d1"] + gin, ["d0", "d1"] + gin, kk],
            [out], [["d0", "d1"] + sp], body)[0]

    op_max_pool3d_with_indices_backward = op_max_pool2d_with_indices_backward
