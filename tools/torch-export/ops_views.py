"""Aliases and views (lazy where PyTorch's are free), and tensors made from
nothing."""

from emit import F32, FLOATS, I64, TORCH_TYPES, Unsupported, V, ttype


class ViewOps:
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
        name = self.em.insert_slice(g, base.name, shape, offs, strides, "sb",
                                    g.dtype)
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
            acc = self.em.insert_slice(x, acc, shape, offs, [1] * n, "cat")
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
