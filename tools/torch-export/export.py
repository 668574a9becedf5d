#!/usr/bin/env python3
"""Exports one training step of a PyTorch model as an MLIR function on tensors.

    python3 tools/torch-export/export.py --model resnet50 --batch 64 \\
        --size 224 --train -o resnet50.mlir

captures forward, loss (mean cross-entropy) and backward with make_fx (the
tracer under functorch's aot_function) and lowers the ATen graph to
linalg/tensor/arith/math (lower.py). The function is

    func.func @train_step(<parameters>, <buffers>, %input, %target)
        -> (<loss>, <one gradient per parameter>)

Parameters are function arguments (weights live on the device for the whole
step, as in training). Targets are integer class indices (per sample, per
voxel or per token); the one-hot encoding happens inside the step.

Tracing uses fake tensors, so any batch size exports in seconds without
running the model. With --with-main (small sizes) the inputs are real,
deterministic tensors embedded as constants, a @main prints every result, and
--reference writes what PyTorch computes for the same step (JSON), for the
execution tests.

Needs Debian's python3-torch and python3-torchvision (scripts/deps.sh).
"""

import argparse
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.utils.stateless import functional_call
except ImportError:
    # Another python3 first on PATH (a virtualenv, pyenv): Debian's has torch.
    if os.path.exists("/usr/bin/python3") and \
            os.path.realpath(sys.executable) != "/usr/bin/python3.11" and \
            sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("export.py: needs PyTorch (Debian's python3-torch; run "
             "LMS_DEPS_EXTRA=torch scripts/deps.sh, then /usr/bin/python3)")

import lower
import models


def register_meta_kernels():
    """Shape-only kernels for the ops PyTorch 1.13 has no meta kernel for
    (convolution and 3D max-pooling backward, 3D max pooling): without them
    fake-tensor tracing runs the real op on zeros, which takes minutes and
    tens of GiB at training batch sizes."""
    lib = torch.library.Library("aten", "IMPL", "Meta")

    def conv_backward(grad, inp, weight, bias_sizes, stride, padding,
                      dilation, transposed, output_padding, groups, mask):
        gi = torch.empty_like(inp) if mask[0] else None
        gw = torch.empty_like(weight) if mask[1] else None
        gb = (grad.new_empty(bias_sizes) if mask[2] and bias_sizes
              else None)
        return gi, gw, gb

    def pool_backward(grad, inp, *rest):
        return torch.empty_like(inp)

    def pool3d(x, kernel, stride=(), padding=(0,), dilation=(1,),
               ceil_mode=False):
        def triple(v, default):
            v = list(v) if v else list(default)
            return v * 3 if len(v) == 1 else v
        k = triple(kernel, kernel)
        s = triple(stride, k)
        p = triple(padding, [0])
        d = triple(dilation, [1])
        out = []
        for n, kk, ss, pp, dd in zip(x.shape[-3:], k, s, p, d):
            span = n + 2 * pp - dd * (kk - 1) - 1
            size = (-(-span // ss) if ceil_mode else span // ss) + 1
            out.append(size)
        shape = list(x.shape[:-3]) + out
        return x.new_empty(shape), x.new_empty(shape, dtype=torch.int64)

    lib.impl("max_pool3d_with_indices", pool3d)
    lib.impl("convolution_backward", conv_backward)
    lib.impl("max_pool3d_with_indices_backward", pool_backward)
    return lib


# The optimizers' settings (PyTorch's defaults where it has them).
SGD_LR, SGD_MOMENTUM = 0.01, 0.9
ADAM_LR, ADAM_BETAS, ADAM_EPS, ADAM_STEP = 1e-3, (0.9, 0.999), 1e-8, 1


def optimizer_states(optimizer, params):
    """The optimizer's state per parameter, as the step reads it: SGD's
    momentum buffer, Adam's first and second moments (after some earlier
    steps: small deterministic values, not zeros)."""
    if optimizer == "none":
        return [], []
    def state(p, k):
        # Real values (the reference run computes with them), cheap to make.
        n = p.numel()
        ramp = torch.arange(n, dtype=torch.float32).reshape(p.shape)
        return (torch.remainder(ramp * (3 + k), 7) - 3) / 64
    if optimizer == "sgd":
        return [state(p, 0) for p in params], ["momentum"]
    return ([state(p, 0) for p in params] +
            [state(p, 1).abs() for p in params], ["exp_avg", "exp_avg_sq"])


def apply_optimizer(optimizer, params, grads, states):
    """One optimizer step, functional (new tensors, as torch.optim.SGD with
    momentum and torch.optim.Adam compute them in place): the new
    parameters, then the new states."""
    if optimizer == "sgd":
        bufs = [SGD_MOMENTUM * b + g for b, g in zip(states, grads)]
        new = [p - SGD_LR * b for p, b in zip(params, bufs)]
        return new + bufs
    n = len(params)
    b1, b2 = ADAM_BETAS
    m = [b1 * mi + (1 - b1) * g for mi, g in zip(states[:n], grads)]
    v = [b2 * vi + (1 - b2) * (g * g) for vi, g in zip(states[n:], grads)]
    c1, c2 = 1 - b1 ** ADAM_STEP, 1 - b2 ** ADAM_STEP
    new = [p - ADAM_LR * (mi / c1) / (torch.sqrt(vi / c2) + ADAM_EPS)
           for p, mi, vi in zip(params, m, v)]
    return new + m + v


def reference_with_torch_optim(model, kind, classes, optimizer, params,
                               buffers, x, y, states, precision="f32"):
    """The step's results as PyTorch computes them with torch.optim itself
    (not apply_optimizer): the loss, the parameters after one SGD or Adam
    step from the given state, then the new state."""
    step, _, _ = make_step(model, kind, classes, precision=precision)
    out = step([p.clone() for p in params], buffers, x, y)
    loss, grads = out[0], out[1:]
    leaves = [p.detach().clone().requires_grad_() for p in params]
    for p, g in zip(leaves, grads):
        p.grad = g.detach().clone()
    n = len(params)
    if optimizer == "sgd":
        opt = torch.optim.SGD(leaves, lr=SGD_LR, momentum=SGD_MOMENTUM)
        for p, b in zip(leaves, states):
            opt.state[p]["momentum_buffer"] = b.clone()
        opt.step()
        new_states = [opt.state[p]["momentum_buffer"] for p in leaves]
    else:
        opt = torch.optim.Adam(leaves, lr=ADAM_LR, betas=ADAM_BETAS,
                               eps=ADAM_EPS)
        for p, m, v in zip(leaves, states[:n], states[n:]):
            opt.state[p]["step"] = torch.tensor(float(ADAM_STEP - 1))
            opt.state[p]["exp_avg"] = m.clone()
            opt.state[p]["exp_avg_sq"] = v.clone()
        opt.step()
        new_states = ([opt.state[p]["exp_avg"] for p in leaves] +
                      [opt.state[p]["exp_avg_sq"] for p in leaves])
    return [loss] + [p.detach() for p in leaves] + new_states


PRECISIONS = {"f32": None, "bf16": torch.bfloat16, "f16": torch.float16}


@contextlib.contextmanager
def no_weight_init():
    """Models built without initializing their weights (torch.nn.init's
    in-place initializers do nothing): for fake tracing only the shapes
    count, and LLaMA's 1.1 billion parameters took most of a minute to
    initialize."""
    saved = {}
    for name in dir(torch.nn.init):
        fn = getattr(torch.nn.init, name)
        if name.endswith("_") and not name.startswith("_") and callable(fn):
            saved[name] = fn
            setattr(torch.nn.init, name, lambda tensor, *a, **k: tensor)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.nn.init, name, fn)


def make_step(model, kind, classes, optimizer="none", precision="f32"):
    pnames = [n for n, _ in model.named_parameters()]
    bnames = [n for n, _ in model.named_buffers()]
    compute = PRECISIONS[precision]

    def low(t):
        """To the compute type (mixed precision): float tensors only."""
        if compute is None or not t.is_floating_point():
            return t
        return t.to(compute)

    def step(params, buffers, x, y, states=()):
        params = [p.requires_grad_() for p in params]
        # Mixed precision: the step takes and returns f32 master weights
        # (their gradients arrive as f32 through the casts' backward) and
        # computes forward and backward in the compute type; the logits go
        # back to f32 for the loss, as torch.autocast does.
        state = dict(zip(pnames, [low(p) for p in params]))
        state.update(zip(bnames, [low(b) for b in buffers]))
        out = functional_call(model, state, (low(x),))
        if compute is not None:
            out = out.float()
        if kind == "voxels":
            # Per-voxel targets: one-hot inside the step.
            logp = torch.log_softmax(out, 1)
            ar = torch.arange(classes).reshape(1, classes, 1, 1, 1)
            onehot = (ar == y.unsqueeze(1)).float()
            loss = -(logp * onehot).sum() / y.numel()
        else:
            # log_softmax + nll_loss, as F.cross_entropy: no one-hot tensor.
            logp = torch.log_softmax(out, -1)
            loss = torch.nn.functional.nll_loss(
                logp.reshape(-1, classes), y.reshape(-1))
        grads = torch.autograd.grad(loss, params)
        if optimizer != "none":
            with torch.no_grad():
                return [loss] + apply_optimizer(
                    optimizer, [p.detach() for p in params], list(grads),
                    list(states))
        return [loss] + list(grads)

    return step, pnames, bnames


def inputs(shape_fn, kind, classes, batch, real, seed):
    shape = shape_fn(batch)
    if not real:
        # Only shapes matter for fake tracing: uninitialized tensors take no
        # time and no touched memory, whatever the batch.
        if kind == "tokens":
            return (torch.empty(shape, dtype=torch.int64),
                    torch.empty(shape, dtype=torch.int64))
        target = (shape[0],) + (tuple(shape[2:]) if kind == "voxels" else ())
        return torch.empty(shape), torch.empty(target, dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    if kind == "tokens":
        x = torch.randint(0, classes, shape, generator=g)
        y = torch.randint(0, classes, shape, generator=g)
    elif kind == "voxels":
        x = torch.randn(shape, generator=g)
        y = torch.randint(0, classes, (shape[0],) + tuple(shape[2:]),
                          generator=g)
    else:
        x = torch.randn(shape, generator=g)
        y = torch.randint(0, classes, (shape[0],), generator=g)
    return x, y


def dense(t):
    """A dense<...> literal of tensor t."""
    if t.dtype == torch.int64:
        flat = [str(int(v)) for v in t.flatten().tolist()]
    else:
        flat = ["%.9e" % v for v in t.flatten().tolist()]

    def nest(values, shape):
        if not shape:
            return values[0]
        step = len(values) // shape[0]
        return "[" + ", ".join(nest(values[i * step:(i + 1) * step],
                                    shape[1:]) for i in range(shape[0])) + "]"
    return "dense<" + nest(flat, list(t.shape)) + ">"


def dtype_of(t):
    return lower.I64 if t.dtype == torch.int64 else lower.F32


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=models.MODELS)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--size", type=int, required=True,
                    help="image side, voxel side, or sequence length")
    ap.add_argument("--train", action="store_true", default=True,
                    help="capture a training step (the only mode)")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--with-main", action="store_true",
                    help="real inputs as constants and a @main printing the "
                         "results (small sizes)")
    ap.add_argument("--reference", help="write PyTorch's results (JSON)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--optimizer", choices=["none", "sgd", "adam"],
                    default="none",
                    help="end the step with an optimizer step: SGD with "
                    "momentum or Adam; the step then takes the optimizer's "
                    "state and returns the new parameters and state "
                    "instead of the gradients")
    ap.add_argument("--dropout", type=float,
                    help="dropout probability of the model's dropout layers "
                    "(default: the model's own: 0.1 for gpt2, none for the "
                    "others); the mask is a hash of the position, --seed "
                    "and the layer, computed the same way by PyTorch and "
                    "by the exported program")
    ap.add_argument("--precision", choices=sorted(PRECISIONS), default="f32",
                    help="compute type of forward and backward; with bf16 "
                    "or f16 the parameters, gradients and optimizer state "
                    "stay f32 (master weights) and the loss is computed in "
                    "f32")
    a = ap.parse_args()
    if a.batch < 1 or a.size < 1:
        sys.exit("export.py: --batch and --size must be positive")

    torch.manual_seed(a.seed)
    if a.dropout is not None and not 0 <= a.dropout < 1:
        sys.exit("export.py: --dropout must be in [0, 1)")
    models.DROPOUT_SEED[0] = a.seed
    real = a.with_main or a.reference
    with (contextlib.nullcontext() if real else no_weight_init()):
        model, shape_fn, kind, classes = models.build(a.model, a.size,
                                                      a.dropout)
    if a.dropout and not any(isinstance(m, models.Dropout)
                             for m in model.modules()):
        sys.exit(f"export.py: {a.model} has no dropout layers")
    step, pnames, bnames = make_step(model, kind, classes, a.optimizer,
                                     a.precision)
    params = [p.detach() for p in model.parameters()]
    buffers = [b.detach() for b in model.buffers()]
    x, y = inputs(shape_fn, kind, classes, a.batch, real, a.seed)
    states, state_kinds = optimizer_states(a.optimizer, params)
    if not real:
        states = [torch.empty_like(t) for t in states]

    # The registrations last as long as the library object.
    # Traced with the real kernels when PyTorch's results are wanted (the
    # reference); otherwise with fake tensors, also for real inputs (an f16
    # step with --with-main: PyTorch 1.13 has no f16 CPU kernels for
    # several ops).
    traced_real = bool(a.reference)
    meta_kernels = register_meta_kernels() if not traced_real else None
    t0 = time.time()
    try:
        gm = make_fx(step, tracing_mode="real" if traced_real else "fake")(
            params, buffers, x, y, states)
    except (RuntimeError, ValueError) as e:
        sys.exit(f"export.py: {a.model} does not run at batch {a.batch}, "
                 f"size {a.size}: {e}")
    t_trace = time.time() - t0
    del meta_kernels  # tracing done: the shape-only kernels may go

    em = lower.Emitter()
    low = lower.Lowering(em)
    flat_inputs = params + buffers + [x, y] + states
    names = ([f"p_{n}" for n in pnames] + [f"b_{n}" for n in bnames] +
             ["input", "target"] +
             [f"{k}_{n}" for k in state_kinds for n in pnames])
    placeholders = {}
    arg_decls = []
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(phs) != len(flat_inputs):
        sys.exit("export.py: unexpected graph inputs")
    for i, (node, t) in enumerate(zip(phs, flat_inputs)):
        v = lower.V(f"%arg{i}", tuple(t.shape), dtype_of(t))
        placeholders[node] = v
        arg_decls.append(f"%arg{i}: {v.type}")

    results = []

    def outputs(vals):
        for v in vals:
            results.append(em.materialize(v))

    try:
        low.run(gm.graph, placeholders, outputs)
    except lower.Unsupported as e:
        sys.exit(str(e))

    n_params = sum(p.numel() for p in params)
    out = []
    out.append(f"// Generated by tools/torch-export/export.py --model {a.model} "
               f"--batch {a.batch} --size {a.size} --train")
    step_kind = {"none": "backward",
                 "sgd": "backward, SGD step with momentum",
                 "adam": "backward, Adam step"}[a.optimizer]
    out[-1] += f" --optimizer {a.optimizer}" if a.optimizer != "none" else ""
    out[-1] += f" --precision {a.precision}" if a.precision != "f32" else ""
    out.append(f"// One training step (forward, mean cross-entropy, "
               f"{step_kind}) of {a.model}: {len(params)} parameter tensors, "
               f"{n_params} parameters; traced in {t_trace:.1f} s.")
    out.append("// Arguments: " + ", ".join(
        f"%arg{i} = {n}" for i, n in enumerate(names)))
    out.append("module {")
    res_types = ", ".join(v.type for v in results)
    out.append(f"func.func @train_step({', '.join(arg_decls)}) -> "
               f"({res_types}) {{")
    out.extend(em.const_lines)
    out.extend(em.lines)
    out.append(f"  return {', '.join(v.name for v in results)} : {res_types}")
    out.append("}")

    if a.with_main:
        out.append("func.func private @printMemrefF32(tensor<*xf32>)")
        out.append("func.func @main() {")
        for i, t in enumerate(flat_inputs):
            out.append(f"  %in{i} = arith.constant {dense(t)} : "
                       f"{lower.ttype(tuple(t.shape), dtype_of(t))}")
        ins = ", ".join(f"%in{i}" for i in range(len(flat_inputs)))
        in_types = ", ".join(lower.ttype(tuple(t.shape), dtype_of(t))
                             for t in flat_inputs)
        out.append(f"  %r:{len(results)} = call @train_step({ins}) : "
                   f"({in_types}) -> ({res_types})")
        for i, v in enumerate(results):
            out.append(f"  %u{i} = tensor.cast %r#{i} : {v.type} to "
                       f"tensor<*xf32>")
            out.append(f"  call @printMemrefF32(%u{i}) : (tensor<*xf32>) -> ()")
        out.append("  return")
        out.append("}")
    out.append("}")
    text = "\n".join(out) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)

    if a.reference:
        if a.optimizer == "none":
            ref = step([p.clone() for p in params], buffers, x, y, states)
        else:
            ref = reference_with_torch_optim(model, kind, classes, a.optimizer,
                                             params, buffers, x, y, states,
                                             a.precision)
        with open(a.reference, "w") as f:
            json.dump({"results": [r.detach().flatten().tolist()
                                   for r in ref]}, f)


if __name__ == "__main__":
    main()
