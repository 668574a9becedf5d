"""What the lowering emits with: tensor values (V, with lazy views), the
emitter of MLIR text (tensor.empty, linalg.fill, linalg.generic and view
helpers), the builder of generic payloads, and the float type of the node
being lowered (ft())."""

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

    def insert_slice(self, src, dest, shape, offsets, strides, hint,
                     dtype=None):
        """Emits `tensor.insert_slice` of the plain value `src` into the
        tensor named `dest` (of `shape`) at `offsets` with `strides`;
        returns the result's name."""
        name = self.fresh(hint)
        self.emit(
            f"{name} = tensor.insert_slice {src.name} into {dest}"
            f"[{', '.join(map(str, offsets))}] "
            f"[{', '.join(map(str, src.shape))}]"
            f" [{', '.join(map(str, strides))}] : {src.type} into "
            f"{ttype(shape, dtype)}")
        return name

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
