#!/usr/bin/env python3
"""The property test at scale: random programs through plan -> lower ->
execute on the emulated device.

    bench/property/run.py [--programs N] [--seed S] [--jobs J] [--json F]

Each program is a random training-step-like function on tensors, written
the way other producers write them: weights as constants (dense and splat),
zero-filled inits shared as destinations, helpers called with values used
again, views (expand/collapse), elementwise ops. For each one and a random
budget between its smallest feasible and its peak, one of
--lms-insert-swaps, --lms-rematerialize and --lms-plan rewrites it (or
--lms-schedule reorders it, with its peak as the budget, or --lms-split
splits it, into a random number of slices or for a budget below its
smallest feasible one; a share of the rematerializations use the moccasin
planner, planner=moccasin, and a share of the combined plans the joint
planner alone, strategy=joint); then
both the original and the rewritten program run on the emulated device.
Checked: the pass succeeds or fails with a clean error; the outputs are the
same; the measured device high-water mark equals the analysed peak and fits
the budget; nothing leaks; --lms-strip gives back the input (the same ops,
in the new order where --lms-plan or --lms-schedule reordered them; the
values are checked by execution). Prints a table
and writes JSON; exits 1 on any violation.

With --loops the programs get scf.for loops carrying a value, whose bodies
read loop-invariants, and a share of the budgets is drawn below the
smallest feasible budget of ops kept whole (planning inside loop bodies,
fetching loop-invariants in each iteration).

By default (--arena, as the passes and pipelines default to arena=true)
the planning passes run with arena=true and the programs are
lowered with arena=true (--lms-carve-arena) and run on an emulated device
that allocates first-fit and checks every carved buffer: checked are the
same outputs, no leak, the measured high-water mark equal to the analysed
arena of @main (its arena, the frame of @step inside it, and the buffers
that cross the call), and the analysed arena of @step within the budget.
The budgets are drawn between the smallest feasible budget with the arena
(arena.min_feasible_bytes of --lms-report-memory) and the unplanned arena
(--floor live: from the live-bytes floor instead).
With --host-arena the programs have no @main: @step is marked
`lms.arena_arguments` (Arena.md, "Arguments in the arena"), so its host
places its argument and results in the arena it passes; the budgets are
drawn between the smallest feasible budget with that arena and its
unplanned arena, and each program runs through a host compiled apart from
it (test/Integration/Inputs/host_driver.py): the unplanned, unmarked @step
by an ordinary host and the rewritten one by the host of the arena.
Checked: the same results (checksums), no leak, the measured high-water
mark equal to the analysed arena of @step and within the budget.
With --no-arena everything runs with arena=false: the budget bounds the
live bytes, each buffer is an allocation of its own, and --lms-split and
--lms-schedule are drawn too (neither has an arena option), as are the
budgets under the smallest feasible one of --loops.

lms-opt's runs go to one lms-opt-server per job (tools/lms-opt-server:
what lms-opt does, for many inputs in one process), which halves a run's
time: starting lms-opt is most of a small program's cost. --no-server
starts lms-opt for each run, as a user does.
"""

import argparse
import atexit
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ir_compare import same_ops  # noqa: E402
from opt_server import Server, parse_command  # noqa: E402
from sweep import sweep_size  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LMS_OPT = os.environ.get("LMS_OPT", os.path.join(ROOT, "build", "bin",
                                                 "lms-opt"))
LMS_OPT_SERVER = os.environ.get(
    "LMS_OPT_SERVER", os.path.join(os.path.dirname(LMS_OPT), "lms-opt-server"))
# lms-opt's runs go to an lms-opt-server per job (--no-server: a process
# each, as a user runs them).
USE_SERVER = True
LOCAL = threading.local()
LLVM = "/usr/lib/llvm-22"
RUNTIME = os.environ.get("LMS_RUNTIME_LIB", os.path.join(ROOT, "build", "lib",
                                                         "liblms_runtime.so"))
SHARED_LIBS = ",".join([RUNTIME, f"{LLVM}/lib/libmlir_runner_utils.so",
                        f"{LLVM}/lib/libmlir_c_runner_utils.so"])
SIZES = [64, 256, 1024]
ALIGN = 256


def t(n):
    return f"tensor<{n}xf32>"


class Program:
    """A random program: @step(%x) -> (two results) and a @main."""

    def __init__(self, rng, pair_rng=None, loop_rng=None, softmax_rng=None,
                 gather_rng=None):
        self.rng = rng
        # With --multi-result: ops with two results drawn from a stream of
        # their own (the other draws, and so the programs without them,
        # stay what they were).
        self.pair_rng = pair_rng
        # With --loops: scf.for loops with static trip counts, from a
        # stream of their own too.
        self.loop_rng = loop_rng
        # With --softmax: softmaxes over a vector (a max, a sum of
        # exp(x - max), their quotient), from a stream of their own.
        self.softmax_rng = softmax_rng
        self.has_softmax = False
        # With --gather: gathers (a vector read through tensor.extract at
        # an index the body computes), from a stream of their own.
        self.gather_rng = gather_rng
        self.lines = []
        self.values = []  # (name, size)
        self.counter = 0
        self.helpers = set()
        self.constants = set()

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, line):
        self.lines.append("  " + line)

    def pick(self, size=None):
        pool = [v for v in self.values if size is None or v[1] == size]
        if not pool:
            return None
        # Usually recent, sometimes far back (gaps that planners can use).
        if self.rng.random() < 0.7:
            pool = pool[-4:]
        return self.rng.choice(pool)

    def elementwise(self, kind, inputs, size, init=None):
        name = self.fresh()
        if init is None:
            init = self.fresh()
            self.emit(f"{init} = tensor.empty() : {t(size)}")
        ins = ", ".join(v for v in inputs)
        types = ", ".join(t(size) for _ in inputs)
        maps = ", ".join(["#id"] * (len(inputs) + 1))
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{maps}], "
                  f"iterator_types = [\"parallel\"]}} ins({ins} : {types}) "
                  f"outs({init} : {t(size)}) {{")
        args = ", ".join(f"%a{i}: f32" for i in range(len(inputs)))
        self.emit(f"^bb0({args}, %o: f32):")
        if kind == "add":
            self.emit("  %r = arith.addf %a0, %a1 : f32")
        elif kind == "mul":
            self.emit("  %r = arith.mulf %a0, %a1 : f32")
        elif kind == "half":
            self.emit("  %h = arith.constant 0.5 : f32")
            self.emit("  %r = arith.mulf %a0, %h : f32")
        elif kind == "max":
            self.emit("  %z = arith.constant 0.0 : f32")
            self.emit("  %r = arith.maximumf %a0, %z : f32")
        self.emit("  linalg.yield %r : f32")
        self.emit(f"}} -> {t(size)}")
        self.values.append((name, size))
        return name

    def zero_filled(self, size):
        """A zero-filled tensor of `size` floats (tensor.empty, linalg.fill):
        its name."""
        empty, name = self.fresh(), self.fresh()
        self.emit(f"{empty} = tensor.empty() : {t(size)}")
        self.emit(f"%z{self.counter} = arith.constant 0.0 : f32")
        self.emit(f"{name} = linalg.fill ins(%z{self.counter} : f32) "
                  f"outs({empty} : {t(size)}) -> {t(size)}")
        return name

    def two_results(self):
        """A generic writing two zero-filled buffers (as a max pooling
        writes its values and indices): both results may be read late."""
        v = self.pair_rng.choice(self.values[-4:])
        size = v[1]
        inits = [self.zero_filled(size) for _ in range(2)]
        name = self.fresh()
        self.emit(f"{name}:2 = linalg.generic {{indexing_maps = [#id, #id, "
                  f"#id], iterator_types = [\"parallel\"]}} ins({v[0]} : "
                  f"{t(size)}) outs({inits[0]}, {inits[1]} : {t(size)}, "
                  f"{t(size)}) {{")
        self.emit("^bb0(%a0: f32, %o0: f32, %o1: f32):")
        self.emit("  %h = arith.constant 0.5 : f32")
        self.emit("  %p = arith.mulf %a0, %h : f32")
        self.emit("  %q = arith.addf %a0, %o1 : f32")
        self.emit("  linalg.yield %p, %q : f32, f32")
        self.emit(f"}} -> ({t(size)}, {t(size)})")
        self.values.append((f"{name}#0", size))
        self.values.append((f"{name}#1", size))

    def softmax(self):
        """softmax(v) as torch-mlir writes it: a max reduction from -inf,
        a sum of exp(v - max) from 0, exp(v - max) / sum."""
        v = self.softmax_rng.choice(self.values[-4:])
        size = v[1]
        n = self.counter + 1
        self.counter += 1
        self.has_softmax = True
        self.emit(f"%sme{n} = tensor.empty() : tensor<f32>")
        self.emit(f"%smi{n} = arith.constant 0xFF800000 : f32")
        self.emit(f"%smf{n} = linalg.fill ins(%smi{n} : f32) outs(%sme{n} : "
                  f"tensor<f32>) -> tensor<f32>")
        self.emit(f"%smm{n} = linalg.generic {{indexing_maps = [#id, #sc], "
                  f"iterator_types = [\"reduction\"]}} ins({v[0]} : {t(size)})"
                  f" outs(%smf{n} : tensor<f32>) {{")
        self.emit("^bb0(%a: f32, %o: f32):")
        self.emit("  %r = arith.maximumf %a, %o : f32")
        self.emit("  linalg.yield %r : f32")
        self.emit("} -> tensor<f32>")
        self.emit(f"%sse{n} = tensor.empty() : tensor<f32>")
        self.emit(f"%ssz{n} = arith.constant 0.0 : f32")
        self.emit(f"%ssf{n} = linalg.fill ins(%ssz{n} : f32) outs(%sse{n} : "
                  f"tensor<f32>) -> tensor<f32>")
        self.emit(f"%sss{n} = linalg.generic {{indexing_maps = [#id, #sc, "
                  f"#sc], iterator_types = [\"reduction\"]}} ins({v[0]}, "
                  f"%smm{n} : {t(size)}, tensor<f32>) outs(%ssf{n} : "
                  f"tensor<f32>) {{")
        self.emit("^bb0(%a: f32, %m: f32, %o: f32):")
        self.emit("  %d = arith.subf %a, %m : f32")
        self.emit("  %e = math.exp %d : f32")
        self.emit("  %r = arith.addf %o, %e : f32")
        self.emit("  linalg.yield %r : f32")
        self.emit("} -> tensor<f32>")
        name = self.fresh()
        self.emit(f"%sye{n} = tensor.empty() : {t(size)}")
        self.emit(f"{name} = linalg.generic {{indexing_maps = [#id, #sc, #sc, "
                  f"#id], iterator_types = [\"parallel\"]}} ins({v[0]}, "
                  f"%smm{n}, %sss{n} : {t(size)}, tensor<f32>, tensor<f32>) "
                  f"outs(%sye{n} : {t(size)}) {{")
        self.emit("^bb0(%a: f32, %m: f32, %s: f32, %o: f32):")
        self.emit("  %d = arith.subf %a, %m : f32")
        self.emit("  %e = math.exp %d : f32")
        self.emit("  %r = arith.divf %e, %s : f32")
        self.emit("  linalg.yield %r : f32")
        self.emit(f"}} -> {t(size)}")
        self.values.append((name, size))

    def gather(self):
        """y[i] = 0.5 * v[(i * k + c) mod n]: a permutation of v read
        through tensor.extract at an index the body computes (as a label
        gather reads the log-probabilities); n = |v|, k odd, so that every
        element is read once."""
        gr = self.gather_rng
        v = gr.choice(self.values[-4:])
        size = v[1]
        k, c = gr.choice([1, 3, 5, 7]), gr.randrange(size)
        n = self.counter + 1
        self.counter += 1
        name = self.fresh()
        self.emit(f"%ge{n} = tensor.empty() : {t(size)}")
        self.emit(f"{name} = linalg.generic {{indexing_maps = [#id], "
                  f"iterator_types = [\"parallel\"]}} outs(%ge{n} : "
                  f"{t(size)}) {{")
        self.emit("^bb0(%o: f32):")
        self.emit("  %gi = linalg.index 0 : index")
        self.emit(f"  %gk = arith.constant {k} : index")
        self.emit(f"  %gc = arith.constant {c} : index")
        self.emit(f"  %gn = arith.constant {size} : index")
        self.emit("  %gik = arith.muli %gi, %gk : index")
        self.emit("  %gic = arith.addi %gik, %gc : index")
        self.emit("  %gj = arith.remui %gic, %gn : index")
        self.emit(f"  %gx = tensor.extract {v[0]}[%gj] : {t(size)}")
        self.emit("  %gh = arith.constant 0.5 : f32")
        self.emit("  %gr = arith.mulf %gx, %gh : f32")
        self.emit("  linalg.yield %gr : f32")
        self.emit(f"}} -> {t(size)}")
        self.values.append((name, size))

    def loop(self):
        """An scf.for of 2 or 3 iterations carrying one value: its body
        reads values from before the loop (loop-invariants) and the carried
        one, and makes tensors of its own (as a layer loop or a split
        does)."""
        lr = self.loop_rng
        # Not a constant: bufferization copies a constant init before the
        # loop, and the analysis keeps the constant through the loop (an
        # over-estimate by its bytes; the planning passes materialize the
        # copy where they rewrite, and the analysis is exact then).
        pool = [v for v in self.values if v[0] not in self.constants]
        carried = lr.choice(pool[-4:])
        size = carried[1]
        n = self.counter + 1
        self.counter += 1
        self.emit(f"%lb{n} = arith.constant 0 : index")
        self.emit(f"%ls{n} = arith.constant 1 : index")
        self.emit(f"%le{n} = arith.constant {lr.choice([2, 3])} : index")
        name, acc = self.fresh(), self.fresh()
        self.emit(f"{name} = scf.for %li{n} = %lb{n} to %le{n} step %ls{n} "
                  f"iter_args({acc} = {carried[0]}) -> ({t(size)}) {{")
        outer = list(self.values)
        self.values.append((acc, size))
        for _ in range(lr.randint(1, 4)):
            v = lr.choice(self.values) if lr.random() < 0.5 else \
                self.values[-1]
            kind = lr.choice(["add", "mul", "half", "max"])
            inputs = [v[0]]
            if kind in ("add", "mul"):
                same = [u for u in self.values if u[1] == v[1]]
                inputs.append(lr.choice(same)[0])
            self.elementwise(kind, inputs, v[1])
        # The carried value of the next iteration: of its size, from a
        # value of the body (or the carried one) and the carried one,
        # written into the carried one's buffer (bufferization wants the
        # yielded value equivalent to the iteration's argument).
        same = [u for u in self.values[len(outer):] if u[1] == size]
        last = self.elementwise("add", [lr.choice(same)[0], acc], size,
                                init=acc)
        self.emit(f"scf.yield {last} : {t(size)}")
        self.emit("}")
        self.values = outer + [(name, size)]

    def add_op(self):
        if self.pair_rng and self.pair_rng.random() < 0.08:
            self.two_results()
        if self.loop_rng and self.loop_rng.random() < 0.15:
            self.loop()
        if self.softmax_rng and self.softmax_rng.random() < 0.12:
            self.softmax()
        if self.gather_rng and self.gather_rng.random() < 0.12:
            self.gather()
        r = self.rng.random()
        if r < 0.12:
            # A weight as a constant: dense or splat.
            size = self.rng.choice(SIZES)
            name = self.fresh()
            if self.rng.random() < 0.5:
                vals = ", ".join(f"{((i * 7) % 13 - 6) / 16:.4f}"
                                 for i in range(size))
                self.emit(f"{name} = arith.constant dense<[{vals}]> : {t(size)}")
            else:
                self.emit(f"{name} = arith.constant dense<0.25> : {t(size)}")
            self.values.append((name, size))
            self.constants.add(name)
        elif r < 0.22:
            # A zero-filled init that later ops may share as destination.
            size = self.rng.choice(SIZES)
            self.values.append((self.zero_filled(size), size))
        elif r < 0.34:
            # A call of a one-op helper; the operand may be used again.
            v = self.pick()
            size = v[1]
            self.helpers.add(size)
            name = self.fresh()
            self.emit(f"{name} = call @helper{size}({v[0]}) : ({t(size)}) -> "
                      f"{t(size)}")
            self.values.append((name, size))
        elif r < 0.42:
            # A view: expand and collapse back (same buffer).
            v = self.pick()
            size = v[1]
            e, c = self.fresh(), self.fresh()
            self.emit(f"{e} = tensor.expand_shape {v[0]} [[0, 1]] "
                      f"output_shape [2, {size // 2}] : {t(size)} into "
                      f"tensor<2x{size // 2}xf32>")
            self.emit(f"{c} = tensor.collapse_shape {e} [[0, 1]] : "
                      f"tensor<2x{size // 2}xf32> into {t(size)}")
            self.values.append((c, size))
        else:
            v = self.pick()
            size = v[1]
            kind = self.rng.choice(["add", "mul", "half", "max"])
            inputs = [v[0]]
            if kind in ("add", "mul"):
                w = self.pick(size) or v
                inputs.append(w[0])
            init = None
            if self.rng.random() < 0.3:
                # Write into an earlier value of the same size (in place
                # where bufferization allows).
                u = self.pick(size)
                if u and u[0] not in inputs:
                    init = u[0]
            self.elementwise(kind, inputs, size, init)

    def build(self, num_ops):
        self.values = [("%x", 1024)]
        for _ in range(num_ops):
            self.add_op()
        outs = [self.values[-1]]
        mid = self.values[len(self.values) // 2]
        if mid[0] != outs[0][0]:
            outs.append(mid)
        text = ["#id = affine_map<(d0) -> (d0)>"]
        if self.has_softmax:
            text.append("#sc = affine_map<(d0) -> ()>")
        for size in sorted(self.helpers):
            text += [f"func.func private @helper{size}(%a: {t(size)}) -> "
                     f"{t(size)} {{",
                     f"  %e = tensor.empty() : {t(size)}",
                     f"  %r = linalg.generic {{indexing_maps = [#id, #id], "
                     f"iterator_types = [\"parallel\"]}} ins(%a : {t(size)}) "
                     f"outs(%e : {t(size)}) {{",
                     "  ^bb0(%i: f32, %o: f32):",
                     "    %h = arith.constant 0.75 : f32",
                     "    %m = arith.mulf %i, %h : f32",
                     "    linalg.yield %m : f32",
                     f"  }} -> {t(size)}",
                     f"  return %r : {t(size)}",
                     "}"]
        rtypes = ", ".join(t(s) for _, s in outs)
        text.append(f"func.func @step(%x: {t(1024)}) -> ({rtypes}) {{")
        text += self.lines
        text.append(f"  return {', '.join(n for n, _ in outs)} : {rtypes}")
        text.append("}")
        text.append("func.func private @printMemrefF32(tensor<*xf32>)")
        text.append("func.func @main() {")
        text.append(f"  %e = tensor.empty() : {t(1024)}")
        text.append(f"  %x = linalg.generic {{indexing_maps = [#id], "
                    f"iterator_types = [\"parallel\"]}} outs(%e : {t(1024)}) {{")
        text.append("  ^bb0(%o: f32):")
        text.append("    %i = linalg.index 0 : index")
        text.append("    %c = arith.constant 11 : index")
        text.append("    %m = arith.remui %i, %c : index")
        text.append("    %n = arith.index_cast %m : index to i32")
        text.append("    %f = arith.sitofp %n : i32 to f32")
        text.append("    %s = arith.constant 0.125 : f32")
        text.append("    %v = arith.mulf %f, %s : f32")
        text.append("    linalg.yield %v : f32")
        text.append(f"  }} -> {t(1024)}")
        names = ", ".join(f"%r{i}" for i in range(len(outs)))
        text.append(f"  {names} = call @step(%x) : ({t(1024)}) -> ({rtypes})"
                    if len(outs) > 1 else
                    f"  %r0 = call @step(%x) : ({t(1024)}) -> ({rtypes})")
        for i, (_, s) in enumerate(outs):
            text.append(f"  %u{i} = tensor.cast %r{i} : {t(s)} to tensor<*xf32>")
            text.append(f"  call @printMemrefF32(%u{i}) : (tensor<*xf32>) -> ()")
        text.append("  return")
        text.append("}")
        return "\n".join(text) + "\n"


def run(cmd, **kw):
    request = parse_command(cmd[1:]) if USE_SERVER and cmd[0] == LMS_OPT \
        else None
    if request is None:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    # What lms-opt would do, in this job's server: the same exit status,
    # standard output and error, and the output file written when it
    # succeeds.
    flags, pipeline, budget, name, text, output = request
    if not hasattr(LOCAL, "server"):
        LOCAL.server = Server(LMS_OPT_SERVER, 600)
    rc, out, err, ir = LOCAL.server.request(flags, pipeline, budget, name,
                                            text)
    if rc == "timeout":
        rc, err = -9, "lms-opt-server: timed out\n"
    if output is not None and rc == 0:
        with open(output, "w") as f:
            f.write(ir)
    return subprocess.CompletedProcess(cmd, rc, out, err)


def report_peak(path):
    r = run([LMS_OPT, path, f"--lms-report-memory=format=json alignment={ALIGN}",
             "-o", "/dev/null"])
    if r.returncode:
        return None
    return {f["name"]: f for f in json.loads(r.stdout)["functions"]}


def execute(path, work, tag, capacity=None, arena=False):
    ll = os.path.join(work, f"{tag}.ll.mlir")
    r = run([LMS_OPT, path, "--lms-host-pipeline=arena=" +
             ("true" if arena else "false"), "-o", ll])
    if r.returncode:
        return None, "lowering failed: " + r.stderr.strip()[-300:]
    stats = os.path.join(work, f"{tag}.stats.json")
    env = dict(os.environ, LMS_RUNTIME="emulated", LMS_RUNTIME_STATS=stats,
               LMS_COPY_DELAY_US="0")
    if capacity:
        env["LMS_DEVICE_BYTES"] = str(capacity)
    if arena:
        env["LMS_DEVICE_ALLOCATOR"] = "first-fit"
    r = run([f"{LLVM}/bin/mlir-runner", ll, "-e", "main",
             "-entry-point-result=void", f"-shared-libs={SHARED_LIBS}"],
            env=env, timeout=300)
    if r.returncode:
        return None, "run failed: " + r.stderr.strip()[-300:]
    out = "\n".join(l for l in r.stdout.splitlines() if "base@" not in l)
    return (out, json.load(open(stats))), None


METHODS = ["insert-swaps", "rematerialize", "plan", "schedule", "split",
           "moccasin", "joint"]


HOST_DRIVER = os.path.join(ROOT, "test", "Integration", "Inputs",
                           "host_driver.py")


def host_arena_program(program):
    """`program` without its @main, with @step marked lms.arena_arguments."""
    text = program[:program.index("func.func private @printMemrefF32")]
    head = re.search(r"^func\.func @step\(.*\) \{$", text, re.MULTILINE)
    line = head.group(0)
    return text.replace(line, line[:-1] + "attributes {lms.arena_arguments} {")


def execute_host(path, source, work, tag, carved_ir=False):
    """Runs @step of `path` from a host compiled apart (host_driver.py): an
    ordinary host, or with `carved_ir` the host of its arena. `source` is
    the program as written (its signature)."""
    ll = os.path.join(work, f"{tag}.ll.mlir")
    cmd = [LMS_OPT, path, "--lms-host-pipeline", "-o", ll]
    carved = os.path.join(work, f"{tag}.carved.mlir")
    if carved_ir:
        cmd.append("-mlir-print-ir-after=lms-carve-arena")
    r = run(cmd)
    if r.returncode:
        return None, "lowering failed: " + r.stderr.strip()[-300:]
    if carved_ir:
        open(carved, "w").write(r.stderr)
    stats = os.path.join(work, f"{tag}.stats.json")
    env = dict(os.environ, LMS_RUNTIME="emulated", LMS_RUNTIME_STATS=stats,
               LMS_COPY_DELAY_US="0", LMS_DEVICE_ALLOCATOR="first-fit",
               PATH=f"{LLVM}/bin:" + os.environ.get("PATH", ""))
    cmd = [sys.executable, HOST_DRIVER, source, "--function", "step",
           "--lowered", ll, "--work", os.path.join(work, tag),
           "--runtime", RUNTIME, "--utils", ",".join(SHARED_LIBS.split(",")[1:])]
    if carved_ir:
        cmd += ["--carved", carved]
    r = run(cmd, env=env, timeout=300)
    if r.returncode:
        return None, "run failed: " + (r.stderr + r.stdout).strip()[-300:]
    return (r.stdout, json.load(open(stats))), None


def same_outputs(expected, actual, tolerant):
    """The printed outputs agree: exactly, or with `tolerant` (a softmax
    split by what it reduces is rescaled online: float reassociation)
    within a relative 1e-5."""
    if expected == actual or not tolerant:
        return expected == actual
    number = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")
    a, b = number.findall(expected), number.findall(actual)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if y != y or abs(x - y) > 1e-5 * max(abs(x), 1e-6):
            return False
    return True


def arena_verdict(result, out, base, planned, tolerant, expected, step_arena,
                  budget):
    """The checks of a run with arenas: the same outputs as `base`, the
    measured high-water mark equal to the analysed arena `expected`, the
    analysed arena of @step within the budget, no leaks."""
    problems = []
    if not same_outputs(base[0], planned[0], tolerant):
        problems.append("different outputs")
    measured = planned[1]["peak_device_bytes"]
    if measured != expected:
        problems.append(f"measured {measured} != analysed arena {expected}")
    if step_arena > budget:
        problems.append(f"analysed arena of @step {step_arena} > budget "
                        f"{budget}")
    if planned[1]["leaked_bytes"]:
        problems.append("leaks")
    # The host-arena mark is the input's, not a rewrite.
    rewritten = "lms." in open(out).read().replace("lms.arena_arguments", "")
    return dict(result, outcome="rewritten" if rewritten else "fits",
                measured=measured, analysed=step_arena,
                violation="; ".join(problems) or None)


def check(index, seed, arena=False, keep=None, multi_result=False,
          loops=False, softmax=False, gather=False, floor_kind="arena",
          host_arena=False):
    rng = random.Random(seed * 100003 + index)
    pair_rng = random.Random(f"pair-{seed}-{index}") if multi_result else None
    loop_rng = random.Random(f"loop-{seed}-{index}") if loops else None
    softmax_rng = random.Random(f"softmax-{seed}-{index}") if softmax \
        else None
    gather_rng = random.Random(f"gather-{seed}-{index}") if gather else None
    builder = Program(rng, pair_rng, loop_rng, softmax_rng, gather_rng)
    program = builder.build(rng.randint(6, 28))
    if host_arena:
        arena = True
        plain_program = program[:program.index(
            "func.func private @printMemrefF32")]
        program = host_arena_program(program)
    # The arena runs plan against arenas; scheduling has no arena option.
    method = rng.choice(METHODS[:3] if arena else METHODS[:4])
    # Splitting is drawn from a stream of its own, so that the programs and
    # methods of earlier seeds stay what they were.
    split_rng = random.Random(f"split-{seed}-{index}")
    if not arena and split_rng.random() < 0.2:
        method = "split"
    # Likewise the moccasin planner for a share of the rematerializations
    # (--lms-rematerialize=planner=moccasin; needs a build with Gecode).
    moccasin_rng = random.Random(f"moccasin-{seed}-{index}")
    pass_name = method
    if method == "rematerialize" and moccasin_rng.random() < 0.4:
        method = "moccasin"
    # And the joint planner alone for a share of the combined plans
    # (--lms-plan=strategy=joint).
    joint_rng = random.Random(f"joint-{seed}-{index}")
    if method == "plan" and joint_rng.random() < 0.4:
        method = "joint"
    result = {"index": index, "method": method}
    with tempfile.TemporaryDirectory() as work:
        if keep:
            # Leave the program and what was made of it for a rerun by hand.
            work = os.path.join(keep, f"{seed}-{index}")
            os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "p.mlir")
        open(src, "w").write(program)
        before = report_peak(src)
        if before is None:
            return dict(result, violation="the input does not analyse")
        peak = before["step"]["peak_bytes"]
        floor = before["step"]["min_feasible_bytes"]
        # With arenas, what the budget bounds starts at the unplanned arena
        # and, with --floor arena, ends at the smallest budget offloading
        # reaches with the arena (below it --lms-insert-swaps can only say
        # so); --floor live draws from the live-bytes floor, as before.
        top = before["step"]["arena"]["bytes"] if arena else peak
        low = floor
        if arena and floor_kind == "arena":
            low = max(floor, before["step"]["arena"]["min_feasible_bytes"])
        budget = rng.randint(min(low, top), top)
        # With loops, a share of the budgets are below the smallest
        # feasible one of ops kept whole, which counts a loop with its
        # body's peak: planning inside the bodies may still fit them.
        if loop_rng and not arena and loop_rng.random() < 0.4 and \
                "scf.for" in program:
            budget = loop_rng.randint(max(1, floor // 2), floor)
        if method == "schedule":
            budget = peak  # reordering never makes the peak larger
        result.update(peak=peak, budget=budget)
        out = os.path.join(work, "planned.mlir")
        options = f"alignment={ALIGN}" if method == "schedule" else \
            f"budget={budget} alignment={ALIGN}" + \
            (" arena=true" if arena else " arena=false")
        if method == "split":
            # A slice count, or a budget below the smallest feasible one.
            if split_rng.random() < 0.5:
                options = (f"slices={split_rng.choice([2, 4, 8])} "
                           f"alignment={ALIGN}")
            else:
                budget = split_rng.randint(max(1, floor // 4), floor)
                options = f"budget={budget} alignment={ALIGN}"
            result.update(budget=budget, options=options)
        if method == "moccasin":
            options += " planner=moccasin iterations=30"
        if method == "joint":
            options += " strategy=joint"
        if pass_name in ("insert-swaps", "rematerialize"):
            options += " stats=true"
        r = run([LMS_OPT, src, f"--lms-{pass_name}={options}", "-o", out])
        # Fidelity of the rewrite to its plan: without an arena a rewrite
        # over its plan's peak is an internal error of the pass (it used to
        # plan again for less), a violation.
        over = re.search(r"peaks at (\d+) bytes, over its plan's (\d+)",
                         r.stderr)
        if over:
            result["over_plan"] = int(over.group(1)) - int(over.group(2))
        if r.returncode:
            clean = r.returncode == 1 and "error:" in r.stderr and \
                "Stack dump" not in r.stderr and \
                "internal error" not in r.stderr
            return dict(result, outcome="clean error" if clean else None,
                        violation=None if clean else
                        "crash or unclear failure: " + r.stderr[-300:])
        after = report_peak(out)
        if after is None:
            return dict(result, violation="the output does not analyse")
        stripped = run([LMS_OPT, out, "--lms-strip"]).stdout
        original = run([LMS_OPT, src]).stdout
        reordered = method in ("plan", "joint", "schedule")
        # Splitting rewrites ops into loops, which --lms-strip keeps; the
        # values are checked by execution. --lms-plan splits too where
        # that gives a faster plan.
        split = method == "split" or \
            open(out).read().count("scf.for") > original.count("scf.for")
        if not split and stripped != original and not (
                reordered and same_ops(stripped, original)):
            return dict(result, violation="strip does not give back the input")
        if not host_arena:
            base, err = execute(src, work, "orig")
            if err:
                return dict(result, violation="original: " + err)
        if host_arena:
            plain = os.path.join(work, "plain.mlir")
            open(plain, "w").write(plain_program)
            base, err = execute_host(plain, src, work, "orig")
            if err:
                return dict(result, violation="original: " + err)
            planned, err = execute_host(out, src, work, "planned",
                                        carved_ir=True)
            if err:
                return dict(result, violation="planned: " + err)
            # The host allocates @step's arena: what it measures is that.
            return arena_verdict(result, out, base, planned,
                                 builder.has_softmax,
                                 after["step"]["arena"]["bytes"],
                                 after["step"]["arena"]["bytes"], budget)
        if arena:
            planned, err = execute(out, work, "planned", arena=True)
            if err:
                return dict(result, violation="planned: " + err)
            # @main holds @step's frame in its arena: it measures @main's.
            return arena_verdict(result, out, base, planned,
                                 builder.has_softmax,
                                 after["main"]["arena"]["bytes"],
                                 after["step"]["arena"]["bytes"], budget)
        planned, err = execute(out, work, "planned", capacity=budget
                               if method != "split" and
                               budget >= after["main"]["peak_bytes"]
                               else None)
        if err:
            return dict(result, violation="planned: " + err)
        measured = planned[1]["peak_device_bytes"]
        analysed = after["main"]["peak_bytes"]
        step_peak = after["step"]["peak_bytes"]
        problems = []
        if not same_outputs(base[0], planned[0], builder.has_softmax):
            problems.append("different outputs")
        if measured != analysed:
            problems.append(f"measured {measured} != analysed {analysed}")
        if method == "split":
            # Splitting for a budget lowers the smallest feasible budget,
            # never raises it (a slice count asked for may: the slices are
            # rounded up to the alignment).
            if "budget=" in options and \
                    after["step"]["min_feasible_bytes"] > floor:
                problems.append(f"smallest feasible budget of @step "
                                f"{after['step']['min_feasible_bytes']} > "
                                f"{floor} before the split")
        elif step_peak > budget:
            problems.append(f"analysed peak of @step {step_peak} > budget "
                            f"{budget}")
        if planned[1]["leaked_bytes"]:
            problems.append("leaks")
        rewritten = "lms." in open(out).read() or stripped != original
        return dict(result, outcome="rewritten" if rewritten else "fits",
                    measured=measured, analysed=analysed,
                    violation="; ".join(problems) or None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=100)
    ap.add_argument("--start", type=int, default=0,
                    help="index of the first program (to rerun one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--arena", action=argparse.BooleanOptionalAction,
                    default=True,
                    help="plan against and lower to an arena per function "
                    "(the default, as the passes' and pipelines' arena=true); "
                    "--no-arena: plan on live bytes and lower each buffer to "
                    "an allocation of its own (arena=false), with splitting, "
                    "scheduling and loops drawn too")
    ap.add_argument("--floor", choices=("arena", "live"), default="arena",
                    help="with --arena, the lowest budget drawn: the "
                    "smallest feasible budget with the arena (the default), "
                    "or on live bytes (the draw before 2026-12-06, which the "
                    "seeded regressions of test/Integration keep; most of "
                    "its budgets are below what the arena allows and end in "
                    "a clean error)")
    ap.add_argument("--multi-result", action="store_true",
                    help="add ops with two results (as a max pooling with "
                    "indices), from a random stream of their own")
    ap.add_argument("--loops", action="store_true",
                    help="add scf.for loops carrying a value, whose bodies "
                    "read loop-invariants (from a random stream of their "
                    "own), and draw a share of the budgets below the "
                    "smallest feasible one of ops kept whole")
    ap.add_argument("--softmax", action="store_true",
                    help="add softmaxes over a vector (max, sum of "
                    "exponentials, quotient), from a random stream of their "
                    "own; outputs of programs with one agree within a "
                    "relative 1e-5 (a split runs them online)")
    ap.add_argument("--gather", action="store_true",
                    help="add gathers (a vector read through tensor.extract "
                    "at an index the body computes, a permutation), from a "
                    "random stream of their own")
    ap.add_argument("--host-arena", action="store_true",
                    help="@step without @main, marked lms.arena_arguments: "
                    "its host places its argument and results in the arena "
                    "it passes; run through a host compiled apart")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep each program's files in DIR/SEED-INDEX")
    ap.add_argument("--server", action=argparse.BooleanOptionalAction,
                    default=True,
                    help="send lms-opt's runs to an lms-opt-server per job "
                    "(the default: starting lms-opt is most of a small "
                    "program's run); --no-server: start lms-opt for each")
    a = ap.parse_args()
    a.programs = sweep_size(a.programs)  # a prefix under the sanitizers
    # Run a copy of lms-opt and of the runtime: a rebuild during a long run
    # replaces the files under build/ (the run then failed to start them).
    global LMS_OPT, LMS_OPT_SERVER, RUNTIME, SHARED_LIBS, USE_SERVER
    USE_SERVER = a.server
    private = tempfile.mkdtemp(prefix="lms-property-")
    atexit.register(shutil.rmtree, private, True)
    for path in (LMS_OPT, RUNTIME) + ((LMS_OPT_SERVER,) if a.server else ()):
        if not os.path.exists(path):
            sys.exit(f"run.py: {path} does not exist (build lms-opt, "
                     f"lms-opt-server and the runtime first, or set LMS_OPT "
                     f"/ LMS_OPT_SERVER / LMS_RUNTIME_LIB, or --no-server)")
    LMS_OPT = shutil.copy2(LMS_OPT, private)
    if a.server:
        LMS_OPT_SERVER = shutil.copy2(LMS_OPT_SERVER, private)
    RUNTIME = shutil.copy2(RUNTIME, private)
    SHARED_LIBS = ",".join([RUNTIME] + SHARED_LIBS.split(",")[1:])
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda i: check(i, a.seed, a.arena, a.keep,
                                              a.multi_result, a.loops,
                                              a.softmax, a.gather,
                                              a.floor, a.host_arena),
                                range(a.start, a.start + a.programs)))
    seconds = time.time() - start
    counts = {}
    for r in results:
        key = (r["method"], r.get("outcome") or "violation")
        counts[key] = counts.get(key, 0) + 1
    violations = [r for r in results if r.get("violation")]
    print(f"| method | rewritten and run | fit without change | clean error | "
          f"violations |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        print(f"| {method} | {counts.get((method, 'rewritten'), 0)} | "
              f"{counts.get((method, 'fits'), 0)} | "
              f"{counts.get((method, 'clean error'), 0)} | "
              f"{sum(1 for r in violations if r['method'] == method)} |")
    over = [r for r in results if r.get("over_plan")]
    print(f"\nrewrites whose analysed peak exceeded their plan's: {len(over)}"
          + (f" (largest {max(r['over_plan'] for r in over)} bytes: programs "
             f"{', '.join(str(r['index']) for r in over[:10])})" if over
             else ""))
    print(f"\n{a.programs} programs (seed {a.seed}) in {seconds:.0f} s: "
          f"{len(violations)} violations")
    for r in violations[:10]:
        print(f"  program {r['index']} ({r['method']}): {r['violation']}")
    if a.json:
        json.dump({"programs": a.programs, "seed": a.seed,
                   "seconds": seconds, "results": results},
                  open(a.json, "w"), indent=1)
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
