"""Reductions, matrix products and the softmax family."""

import math

from emit import Unsupported, V


class ReductionOps:
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
