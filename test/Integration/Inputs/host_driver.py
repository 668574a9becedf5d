#!/usr/bin/env python3
"""Runs one function of a lowered module from a host written apart from it.

    host_driver.py MODEL.mlir --function F --lowered F.ll.mlir
                   [--carved CARVED.mlir] --work DIR
                   --runtime liblms_runtime.so --utils U1.so,U2.so

A host of the host-arena convention (`lms.arena_arguments`, Arena.md
"Arguments in the arena"), and, without --carved, an ordinary host of the
same function, so that the two can be compared:

- MODEL.mlir is the function as written (tensor types); its signature
  gives the arguments' and results' types.
- F.ll.mlir is the module lowered to the LLVM dialect
  (`--lms-host-pipeline`); it is compiled apart (mlir-translate, llc,
  ld.lld) into a shared library, as a host links a compiled model.
- With --carved (the IR after --lms-carve-arena, which has
  `lms.arena_bytes`, `lms.argument_offsets` and `lms.result_offsets` on F),
  the host allocates one device arena of `lms.arena_bytes`, writes each
  placed argument at its offset, passes the others as device allocations
  of their own and the arena last, and reads the results (freeing those
  that are allocations of their own). Without it, every argument is a
  device allocation of its own (the function frees those it owns).

Each argument is filled with the same deterministic pattern in both modes;
the host prints one checksum (the sum of the elements, in order) per
result, so the two outputs compare exactly. The driver is lowered with
upstream passes only (mlir-opt) and run by mlir-runner with the runtime,
the runner utilities and the compiled function.
"""
import argparse
import os
import re
import subprocess
import sys

FLOATS = {"f32", "f64", "f16"}


def tensor_types(text):
    """The types of a comma-separated list, split at top-level commas."""
    types, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            types.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        types.append(text[start:].strip())
    return types


def signature(model, function):
    """(argument types, result types, borrowed arguments) of `function` in
    MODEL, as memrefs."""
    text = open(model).read()
    m = re.search(r"^\s*func\.func\s+(?:public\s+)?@" +
                  re.escape(function) + r"\s*\(", text, re.MULTILINE)
    if not m:
        sys.exit(f"host_driver: no function @{function} in {model}")
    i, depth = m.end(), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    args = [a.split(":", 1)[1].strip() for a in
            tensor_types(text[m.end():i - 1])]
    # A borrowed argument (lms.borrowed) is the host's to free.
    borrowed = ["lms.borrowed" in a for a in args]
    args = [re.sub(r"\s*\{.*\}$", "", a) for a in args]
    rest = text[i:]
    results = []
    r = re.match(r"\s*->\s*", rest)
    if r:
        rest = rest[r.end():]
        if rest.startswith("("):
            j, depth = 1, 1
            while depth:
                depth += {"(": 1, ")": -1}.get(rest[j], 0)
                j += 1
            results = tensor_types(rest[1:j - 1])
        else:
            results = [re.match(r"tensor<[^>]*>", rest).group(0)]
    memref = lambda t: t.replace("tensor<", "memref<")
    return [memref(a) for a in args], [memref(r) for r in results], borrowed


def shape(memref_type):
    """(dims, element type) of memref<AxBxT>."""
    parts = memref_type[len("memref<"):-1].split("x")
    return [int(d) for d in parts[:-1]], parts[-1]


def carved_layout(carved, function):
    """(arena bytes, argument offsets, result offsets) of `function` in the
    IR after --lms-carve-arena."""
    for line in open(carved):
        if re.search(r"func\.func\s+@" + re.escape(function) + r"\(", line):
            arena = re.search(r"lms\.arena_bytes = (\d+)", line)
            args = re.search(r"lms\.argument_offsets = array<i64(?:: ([^>]*))?>",
                             line)
            results = re.search(
                r"lms\.result_offsets = array<i64(?:: ([^>]*))?>", line)
            if not (arena and args and results):
                sys.exit(f"host_driver: @{function} in {carved} has no "
                         "arena layout (lms.arena_bytes, "
                         "lms.argument_offsets, lms.result_offsets)")
            numbers = lambda g: [int(x) for x in g.split(",")] if g else []
            return (int(arena.group(1)), numbers(args.group(1)),
                    numbers(results.group(1)))
    sys.exit(f"host_driver: no function @{function} in {carved}")


class Emitter:
    def __init__(self):
        self.lines = []
        self.count = 0

    def __call__(self, line):
        self.lines.append("  " + line)

    def fresh(self, stem):
        self.count += 1
        return f"%{stem}{self.count}"


def flat(emit, value, memref_type):
    """A 1-D view of `value` (identity layout)."""
    dims, element = shape(memref_type)
    n = 1
    for d in dims:
        n *= d
    if len(dims) == 1:
        return value, n, element
    if not dims:
        out = emit.fresh("flat")
        emit(f"{out} = memref.expand_shape {value} [] output_shape [1] : "
             f"{memref_type} into memref<1x{element}>")
        return out, 1, element
    out = emit.fresh("flat")
    reassoc = "[" + ", ".join(str(i) for i in range(len(dims))) + "]"
    emit(f"{out} = memref.collapse_shape {value} [{reassoc}] : "
         f"{memref_type} into memref<{n}x{element}>")
    return out, n, element


def fill(emit, value, memref_type, k):
    """Element i of argument k: ((7 i + 3 k) mod 17) / 64 (floats: from 0 to
    1/4, as images and weights are) or that numerator mod 7 (integers: class
    labels, indices)."""
    buf, n, element = flat(emit, value, memref_type)
    i = emit.fresh("i")
    emit(f"scf.for {i} = %c0 to %c{n} step %c1 {{")
    m = emit.fresh("m")
    emit(f"  {m} = arith.muli {i}, %c7 : index")
    s = emit.fresh("s")
    emit(f"  {s} = arith.addi {m}, %c{3 * k} : index")
    r = emit.fresh("r")
    emit(f"  {r} = arith.remui {s}, %c17 : index")
    v = emit.fresh("v")
    if element in FLOATS:
        w = emit.fresh("w")
        emit(f"  {w} = arith.index_cast {r} : index to i64")
        f = emit.fresh("f")
        emit(f"  {f} = arith.sitofp {w} : i64 to {element}")
        q = emit.fresh("q")
        emit(f"  {q} = arith.constant 0.015625 : {element}")
        emit(f"  {v} = arith.mulf {f}, {q} : {element}")
    else:
        # Small enough for class labels and indices.
        r7 = emit.fresh("r")
        emit(f"  {r7} = arith.remui {r}, %c7 : index")
        emit(f"  {v} = arith.index_cast {r7} : index to {element}")
    emit(f"  memref.store {v}, {buf}[{i}] : memref<{n}x{element}>")
    emit("}")
    return n


def checksum(emit, value, memref_type):
    """Prints the sum of the elements in order (as f64) and its bits, then
    the bits of a sum weighted by position (element i times i mod 97 + 1),
    which a permutation of the elements changes."""
    buf, n, element = flat(emit, value, memref_type)
    total, weighted = emit.fresh("total"), emit.fresh("weighted")
    i = emit.fresh("i")
    acc, wacc = emit.fresh("acc"), emit.fresh("wacc")
    emit(f"{total}, {weighted} = scf.for {i} = %c0 to %c{n} step %c1 "
         f"iter_args({acc} = %zero, {wacc} = %zero) -> (f64, f64) {{")
    x = emit.fresh("x")
    emit(f"  {x} = memref.load {buf}[{i}] : memref<{n}x{element}>")
    y = emit.fresh("y")
    if element == "f64":
        emit(f"  {y} = arith.addf {x}, %zero : f64")
    elif element in FLOATS:
        emit(f"  {y} = arith.extf {x} : {element} to f64")
    else:
        emit(f"  {y} = arith.sitofp {x} : {element} to f64")
    z = emit.fresh("z")
    emit(f"  {z} = arith.addf {acc}, {y} : f64")
    r, r1 = emit.fresh("r"), emit.fresh("r")
    emit(f"  {r} = arith.remui {i}, %c97 : index")
    emit(f"  {r1} = arith.addi {r}, %c1 : index")
    ri, rf = emit.fresh("ri"), emit.fresh("rf")
    emit(f"  {ri} = arith.index_cast {r1} : index to i64")
    emit(f"  {rf} = arith.sitofp {ri} : i64 to f64")
    wy, wz = emit.fresh("wy"), emit.fresh("wz")
    emit(f"  {wy} = arith.mulf {y}, {rf} : f64")
    emit(f"  {wz} = arith.addf {wacc}, {wy} : f64")
    emit(f"  scf.yield {z}, {wz} : f64, f64")
    emit("}")
    # The sums' bits, so that the comparison is exact.
    bits, wbits = emit.fresh("bits"), emit.fresh("bits")
    emit(f"{bits} = arith.bitcast {total} : f64 to i64")
    emit(f"{wbits} = arith.bitcast {weighted} : f64 to i64")
    emit(f"call @printF64({total}) : (f64) -> ()")
    emit("call @printComma() : () -> ()")
    emit(f"call @printI64({bits}) : (i64) -> ()")
    emit("call @printComma() : () -> ()")
    emit(f"call @printI64({wbits}) : (i64) -> ()")
    emit("call @printNewline() : () -> ()")


def alloc(emit, memref_type):
    t0, t1, out = emit.fresh("t"), emit.fresh("t"), emit.fresh("buf")
    emit(f"{t0} = gpu.wait async")
    emit(f"{out}, {t1} = gpu.alloc async [{t0}] () : {memref_type}")
    emit(f"gpu.wait [{t1}]")
    return out


def dealloc(emit, value, memref_type):
    t0, t1 = emit.fresh("t"), emit.fresh("t")
    emit(f"{t0} = gpu.wait async")
    emit(f"{t1} = gpu.dealloc async [{t0}] {value} : {memref_type}")
    emit(f"gpu.wait [{t1}]")


def driver(function, args, results, borrowed, layout):
    emit = Emitter()
    constants = {0, 1, 7, 17, 97}
    body = Emitter()
    passed, arena, arena_type = [], None, None
    if layout:
        arena_bytes, arg_offsets, result_offsets = layout
        if len(arg_offsets) != len(args) or len(result_offsets) != len(results):
            sys.exit("host_driver: the layout does not match the signature")
        arena_type = f"memref<{arena_bytes}xi8>"
        arena = alloc(body, arena_type)
    else:
        arg_offsets = [-1] * len(args)
        result_offsets = [-1] * len(results)
    callee_args = []
    for k, (t, offset) in enumerate(zip(args, arg_offsets)):
        if offset >= 0:
            c = body.fresh("off")
            body(f"{c} = arith.constant {offset} : index")
            value = body.fresh("arg")
            body(f"{value} = memref.view {arena}[{c}][] : {arena_type} to {t}")
        else:
            value = alloc(body, t)
            if borrowed[k]:
                passed.append((value, t))
            callee_args.append((value, t))
        constants.add(3 * k)
        n = fill(body, value, t, k)
        constants.add(n)
    if layout:
        callee_args.append((arena, arena_type))
    names = ", ".join(v for v, _ in callee_args)
    types = ", ".join(t for _, t in callee_args)
    outs = [body.fresh("res") for _ in results]
    result_list = ", ".join(results)
    if results:
        body(f"{', '.join(outs)} = call @{function}({names}) : ({types}) -> "
             f"({result_list})")
    else:
        body(f"call @{function}({names}) : ({types}) -> ()")
    for value, t, offset in zip(outs, results, result_offsets):
        dims, _ = shape(t)
        n = 1
        for d in dims:
            n *= d
        constants.add(n)
        checksum(body, value, t)
        if offset < 0:
            dealloc(body, value, t)
    # What the function borrowed stays the host's.
    for value, t in passed:
        dealloc(body, value, t)
    if layout:
        dealloc(body, arena, arena_type)
    for c in sorted(constants):
        emit(f"%c{c} = arith.constant {c} : index")
    emit("%zero = arith.constant 0.0 : f64")
    out = [f"func.func private @{function}({types}) -> ({result_list})",
           "func.func private @printF64(f64)",
           "func.func private @printI64(i64)",
           "func.func private @printComma()",
           "func.func private @printNewline()",
           "func.func @main() {"]
    out += emit.lines + body.lines + ["  return", "}"]
    return "\n".join(out) + "\n"


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"host_driver: {' '.join(cmd[:2])} failed ({r.returncode})")
    return r.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--function", required=True)
    p.add_argument("--lowered", required=True)
    p.add_argument("--carved")
    p.add_argument("--work", required=True)
    p.add_argument("--runtime", required=True)
    p.add_argument("--utils", required=True)
    a = p.parse_args()
    args, results, borrowed = signature(a.model, a.function)
    layout = carved_layout(a.carved, a.function) if a.carved else None
    os.makedirs(a.work, exist_ok=True)
    src = os.path.join(a.work, "driver.mlir")
    with open(src, "w") as f:
        f.write(driver(a.function, args, results, borrowed, layout))
    lowered = run(["mlir-opt", src, "--convert-scf-to-cf",
                   "--expand-strided-metadata", "--finalize-memref-to-llvm",
                   "--convert-arith-to-llvm", "--convert-index-to-llvm",
                   "--gpu-to-llvm", "--convert-func-to-llvm",
                   "--convert-cf-to-llvm", "--reconcile-unrealized-casts"])
    driver_ll = os.path.join(a.work, "driver.ll.mlir")
    with open(driver_ll, "w") as f:
        f.write(lowered)
    ir = run(["mlir-translate", "--mlir-to-llvmir", a.lowered])
    obj = os.path.join(a.work, "model.o")
    run(["llc", "-filetype=obj", "-relocation-model=pic", "-o", obj],
        input=ir)
    lib = os.path.join(a.work, "libmodel.so")
    run(["ld.lld", "-shared", obj, "-o", lib])
    libs = ",".join([a.runtime] + a.utils.split(",") + [lib])
    sys.stdout.write(run(["mlir-runner", driver_ll, "-e", "main",
                          "-entry-point-result=void",
                          f"-shared-libs={libs}"]))


if __name__ == "__main__":
    main()
