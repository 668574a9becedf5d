"""Batch and layer norm, the negative log likelihood, embeddings (each with its
backward)."""

import math

from emit import I64, Unsupported, V


class NetworkOps:
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
