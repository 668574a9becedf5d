"""Convolutions (strided, padded, dilated, depthwise, 3D, transposed) and max
pooling, with their backward."""

import math

from emit import I64, Unsupported, V, ft, ttype


class ConvolutionOps:
    # ---- convolution ------------------------------------------------------
    def _pad(self, x, pads, value=0.0, dtype=None):
        """pads: per spatial dim (lo, hi); dims 0 and 1 unpadded."""
        dtype = dtype or ft()
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
            gx = self._conv_input_grad(g, x, w, stride, padding, dilation,
                                       depthwise)
        return (gx, gw, gb)

    @staticmethod
    def _window_border(X, O, K, stride, padding, dilation):
        """Per spatial dim, the (lo, hi) border around an output-shaped
        tensor that a gather at o = (q + pad - r * dilation) floordiv stride
        reads for every input position q and kernel offset r: the windows
        that fall outside the output, zeros (or "no hit") in the border."""
        pads = []
        for i in range(len(X)):
            lowest = (padding[i] - (K[i] - 1) * dilation[i]) // stride[i]
            highest = (X[i] - 1 + padding[i]) // stride[i]
            pads.append((max(0, -lowest), max(0, highest - (O[i] - 1))))
        return pads

    def _conv_input_grad(self, g, x, w, stride, padding, dilation,
                         depthwise):
        """gx[n,c,q] = sum over f, r of g[n,f,o] * w[f,c,r] where the forward
        read x at q: q + pad = o * stride + r * dilation. Gathered from g
        with a border (zeros for the windows that fall outside) at
        o = (q + pad - r * dilation) floordiv stride, where that divides, as
        cuDNN's backward-data kernel computes it: no stride-dilated copy of
        g (a 1x1 stride-2 convolution's is 4x the size of g, and set
        ResNet-50's smallest feasible budget) and no padded copy of the
        result. Its cost is the forward's multiply-adds."""
        k = len(g.shape) - 2
        K = list(w.shape[2:])
        X = list(x.shape[2:])
        O = list(g.shape[2:])
        pads = self._window_border(X, O, K, stride, padding, dilation)
        Gp = self._pad(g, pads)
        sp = [f"d{2 + i}" for i in range(k)]
        # Loops: n, c, q..., [f,] r... (a depthwise one has no f).
        first_r = 2 + k + (0 if depthwise else 1)
        kk = [f"d{first_r + i}" for i in range(k)]
        gin = []
        for i in range(k):
            e = f"{sp[i]} + {padding[i]} - {kk[i]} * {dilation[i]}"
            gin.append(f"({e}) floordiv {stride[i]} + {pads[i][0]}"
                       if stride[i] != 1 else f"{e} + {pads[i][0]}")
        strided = any(s != 1 for s in stride)

        def body(a, bb):
            acc = bb.addf(a[2], bb.mulf(a[0], a[1]))
            if not strided:
                return acc
            hit = None
            for i in range(k):
                if stride[i] == 1:
                    continue
                t = bb.addi(bb.index(2 + i), bb.iconst(padding[i]))
                t = bb.addi(t, bb.muli(bb.index(first_r + i),
                                       bb.iconst(-dilation[i])))
                rem = bb.remsi(t, bb.iconst(stride[i]))
                ok = bb.cmpi("eq", rem, bb.iconst(0), "index")
                hit = ok if hit is None else bb.andi(hit, ok)
            return bb.select(hit, acc, a[2])
        out = self.em.filled(x.shape, 0.0)
        # The forward's multiply-adds (the gather's iteration space is
        # prod(stride) times larger; only one point in that many hits).
        macs = math.prod(g.shape) * math.prod(K) * \
            (1 if depthwise else w.shape[1])
        cost = 2.0 * macs if strided else None
        if depthwise:
            return self.em.generic(
                2 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * k,
                [Gp, w], [["d0", "d1"] + gin, ["d1", "0"] + kk], [out],
                [["d0", "d1"] + sp], body, cost=cost)[0]
        f = f"d{2 + k}"
        return self.em.generic(
            3 + 2 * k, ["parallel"] * (2 + k) + ["reduction"] * (1 + k),
            [Gp, w], [["d0", f] + gin, [f, "d1"] + kk], [out],
            [["d0", "d1"] + sp], body, cost=cost)[0]

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
        pads = self._window_border(list(x.shape[2:]), out_dims, kernel,
                                   stride, padding, [1] * k)
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
