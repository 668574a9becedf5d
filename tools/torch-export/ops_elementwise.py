"""Elementwise ops: arithmetic, activations and their backward, casts, where,
dropout masks."""

import math

from dropout_hash import (HASH_MUL1, HASH_MUL2, HASH_SALT, HASH_SEED, MASK32,
                          dropout_threshold)
from emit import FLOATS, I64, TORCH_TYPES, Unsupported, V, ft


class ElementwiseOps:
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
        """dropout_hash.dropout_keep, element by element: the flat index from
        linalg.index, the same 32-bit hash in i64 (no product reaches 2^63),
        its upper 24 bits against the threshold."""
        shape = self.shape_of(meta)
        n = len(shape)

        def body(a, bb):
            def k(v):
                return bb.iconst(v, I64)
            flat = k(0)
            for i in range(n):
                flat = bb.addi(bb.muli(flat, k(shape[i]), I64),
                               bb.to_i64(bb.index(i)), I64)
            m32 = MASK32
            h = bb.xori(bb.andi(flat, k(m32), I64),
                        k((seed & m32) * HASH_SEED & m32 ^
                          (salt & m32) * HASH_SALT & m32))
            for shift, mul in ((16, HASH_MUL1),
                               (15, HASH_MUL2)):
                h = bb.andi(bb.muli(bb.xori(h, bb.shrui(h, k(shift))),
                                    k(mul), I64), k(m32), I64)
            h = bb.xori(h, bb.shrui(h, k(15)))
            return bb.cmpi("uge", bb.shrui(h, k(8)),
                           k(dropout_threshold(p)))
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
