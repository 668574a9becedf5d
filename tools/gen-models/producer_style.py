#!/usr/bin/env python3
"""Writes programs in the style other MLIR producers emit, for tests.

    python3 tools/gen-models/producer_style.py --style torch --with-main -o m.mlir
    python3 tools/gen-models/producer_style.py --style byteir --with-main -o m.mlir

--style torch (torch-mlir's linalg-on-tensors export of a forward pass):
weights are `arith.constant` tensors (`dense_resource<...>` blobs in the
file's `dialect_resources`, an inline `dense<[...]>` bias and a splat), one
zero-filled `tensor.empty` is shared as the `outs` of every matmul of the
same shape, biases are broadcast with `linalg.generic`, and a reshape goes
through `tensor.expand_shape ... output_shape` and `collapse_shape`.

--style byteir (ByteIR's module of many small private functions): every op
is its own private function, `@forward` calls them in turn, and one value is
passed to several calls (so a call is not always its last use).

--with-main adds a @main that builds a deterministic input, calls @forward
and prints a checksum of the result (for execution tests on the emulated
device). --resident-constants puts everything in a module marked
`lms.resident_constants` (weights preloaded: resident from entry).
"""

import argparse
import struct
import sys

from common import emit_pattern_init, write_output


def value(i, j, a, b):
    """A deterministic weight: ((i*a + j*b) mod 17 - 8) / 64."""
    return ((i * a + j * b) % 17 - 8) / 64.0


def blob(rows, cols, a, b):
    """A dense_resource blob: 4-byte alignment header, then f32 values."""
    data = struct.pack("<I", 4)
    for i in range(rows):
        for j in range(cols):
            data += struct.pack("<f", value(i, j, a, b))
    return "0x" + data.hex().upper()


def torch_style(a, emit):
    B, D, W, L, C = a.batch, a.inputs, a.width, a.layers, a.classes
    dims = [D] + [W] * L + [C]
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    resources = []
    emit("#map = affine_map<(d0, d1) -> (d0, d1)>")
    emit("#bias = affine_map<(d0, d1) -> (d1)>")
    emit(f"func.func @forward(%arg0: {t(B, D)}) -> {t(B, C)} {{")
    # Weights first, as torch-mlir emits them.
    for i in range(len(dims) - 1):
        name = f"__w{i}"
        resources.append((name, blob(dims[i], dims[i + 1], 5 + i, 3 + 2 * i)))
        emit(f"  %w{i} = arith.constant dense_resource<{name}> : "
             f"{t(dims[i], dims[i + 1])}")
    bias = ", ".join(f"{value(0, j, 1, 3):e}" for j in range(W))
    emit(f"  %b = arith.constant dense<[{bias}]> : tensor<{W}xf32>")
    emit(f"  %half = arith.constant dense<5.000000e-01> : {t(B, C)}")
    emit("  %cst = arith.constant 0.000000e+00 : f32")
    # One shared zero-filled init per result shape.
    inits = {}
    for c in sorted(set(dims[1:])):
        emit(f"  %empty{c} = tensor.empty() : {t(B, c)}")
        emit(f"  %zero{c} = linalg.fill ins(%cst : f32) outs(%empty{c} : "
             f"{t(B, c)}) -> {t(B, c)}")
        inits[c] = f"%zero{c}"
    h = "%arg0"
    for i in range(len(dims) - 1):
        cin, cout = dims[i], dims[i + 1]
        emit(f"  %mm{i} = linalg.matmul ins({h}, %w{i} : {t(B, cin)}, "
             f"{t(cin, cout)}) outs({inits[cout]} : {t(B, cout)}) -> "
             f"{t(B, cout)}")
        h = f"%mm{i}"
        if i == len(dims) - 2:
            break
        # Bias and ReLU into a fresh empty, as torch-mlir writes them.
        emit(f"  %be{i} = tensor.empty() : {t(B, cout)}")
        emit(f"  %r{i} = linalg.generic {{indexing_maps = [#map, #bias, #map], "
             f"iterator_types = [\"parallel\", \"parallel\"]}} ins({h}, %b : "
             f"{t(B, cout)}, tensor<{cout}xf32>) outs(%be{i} : {t(B, cout)}) {{")
        emit("  ^bb0(%in: f32, %in_0: f32, %out: f32):")
        emit("    %s = arith.addf %in, %in_0 : f32")
        emit("    %m = arith.maximumf %s, %cst : f32")
        emit("    linalg.yield %m : f32")
        emit(f"  }} -> {t(B, cout)}")
        h = f"%r{i}"
        if i == 0:
            emit(f"  %x{i} = tensor.expand_shape {h} [[0], [1, 2]] "
                 f"output_shape [{B}, 2, {cout // 2}] : {t(B, cout)} into "
                 f"{t(B, 2, cout // 2)}")
            emit(f"  %c{i} = tensor.collapse_shape %x{i} [[0], [1, 2]] : "
                 f"{t(B, 2, cout // 2)} into {t(B, cout)}")
            h = f"%c{i}"
    emit(f"  %oe = tensor.empty() : {t(B, C)}")
    emit(f"  %out = linalg.generic {{indexing_maps = [#map, #map, #map], "
         f"iterator_types = [\"parallel\", \"parallel\"]}} ins({h}, %half : "
         f"{t(B, C)}, {t(B, C)}) outs(%oe : {t(B, C)}) {{")
    emit("  ^bb0(%in: f32, %in_0: f32, %out: f32):")
    emit("    %s = arith.mulf %in, %in_0 : f32")
    emit("    linalg.yield %s : f32")
    emit(f"  }} -> {t(B, C)}")
    emit(f"  return %out : {t(B, C)}")
    emit("}")
    return (B, D, C), resources


def byteir_style(a, emit):
    B, D, W, L = a.batch, a.inputs, a.width, a.layers
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    emit("#map = affine_map<(d0, d1) -> (d0, d1)>")
    # One-op helpers, as ByteIR outlines them.
    emit(f"func.func private @Unknown_add(%arg0: {t(B, W)}, %arg1: {t(B, W)}) "
         f"-> {t(B, W)} {{")
    emit(f"  %0 = tensor.empty() : {t(B, W)}")
    emit(f"  %1 = linalg.generic {{indexing_maps = [#map, #map, #map], "
         f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%arg0, %arg1 : "
         f"{t(B, W)}, {t(B, W)}) outs(%0 : {t(B, W)}) {{")
    emit("  ^bb0(%in: f32, %in_0: f32, %out: f32):")
    emit("    %2 = arith.addf %in, %in_0 : f32")
    emit("    linalg.yield %2 : f32")
    emit(f"  }} -> {t(B, W)}")
    emit(f"  return %1 : {t(B, W)}")
    emit("}")
    emit(f"func.func private @Unknown_scale(%arg0: {t(B, W)}) -> {t(B, W)} {{")
    emit("  %cst = arith.constant 5.000000e-01 : f32")
    emit(f"  %0 = tensor.empty() : {t(B, W)}")
    emit(f"  %1 = linalg.generic {{indexing_maps = [#map, #map], "
         f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%arg0 : "
         f"{t(B, W)}) outs(%0 : {t(B, W)}) {{")
    emit("  ^bb0(%in: f32, %out: f32):")
    emit("    %2 = arith.mulf %in, %cst : f32")
    emit("    linalg.yield %2 : f32")
    emit(f"  }} -> {t(B, W)}")
    emit(f"  return %1 : {t(B, W)}")
    emit("}")
    emit(f"func.func private @Unknown_matmul(%arg0: {t(B, D)}, "
         f"%arg1: {t(D, W)}) -> {t(B, W)} {{")
    emit("  %cst = arith.constant 0.000000e+00 : f32")
    emit(f"  %0 = tensor.empty() : {t(B, W)}")
    emit(f"  %1 = linalg.fill ins(%cst : f32) outs(%0 : {t(B, W)}) -> {t(B, W)}")
    emit(f"  %2 = linalg.matmul ins(%arg0, %arg1 : {t(B, D)}, {t(D, W)}) "
         f"outs(%1 : {t(B, W)}) -> {t(B, W)}")
    emit(f"  return %2 : {t(B, W)}")
    emit("}")
    # The step: every value but the last reused by a later call.
    emit(f"func.func @forward(%arg0: {t(B, D)}, %arg1: {t(D, W)}) -> "
         f"{t(B, W)} {{")
    emit(f"  %h = call @Unknown_matmul(%arg0, %arg1) : ({t(B, D)}, {t(D, W)}) "
         f"-> {t(B, W)}")
    prev = "%h"
    for i in range(L):
        emit(f"  %s{i} = call @Unknown_scale({prev}) : ({t(B, W)}) -> {t(B, W)}")
        emit(f"  %a{i} = call @Unknown_add({prev}, %s{i}) : ({t(B, W)}, "
             f"{t(B, W)}) -> {t(B, W)}")
        prev = f"%a{i}"
    emit(f"  %out = call @Unknown_add({prev}, %h) : ({t(B, W)}, {t(B, W)}) "
         f"-> {t(B, W)}")
    emit(f"  return %out : {t(B, W)}")
    emit("}")
    return (B, D, W), []


def emit_main(emit, style, shapes):
    B, D, C = shapes
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    emit("func.func private @printMemrefF32(tensor<*xf32>)")

    def init(name, rows, cols, a, b):
        emit_pattern_init(emit, name, rows, cols, a, b, t)

    emit("func.func @main() {")
    init("x", B, D, 3, 5)
    if style == "torch":
        emit(f"  %r = call @forward(%x) : ({t(B, D)}) -> {t(B, C)}")
    else:
        init("w", D, C, 7, 2)
        emit(f"  %r = call @forward(%x, %w) : ({t(B, D)}, {t(D, C)}) -> "
             f"{t(B, C)}")
    emit("  %zero = arith.constant 0.0 : f32")
    emit("  %se = tensor.empty() : tensor<1xf32>")
    emit("  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1xf32>) -> "
         "tensor<1xf32>")
    emit("  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,"
         " affine_map<(i, j) -> (0)>], iterator_types = [\"reduction\", "
         f"\"reduction\"]}} ins(%r : {t(B, C)}) outs(%sz : tensor<1xf32>) {{")
    emit("  ^bb0(%v: f32, %acc: f32):")
    emit("    %s = arith.addf %v, %acc : f32")
    emit("    linalg.yield %s : f32")
    emit("  } -> tensor<1xf32>")
    emit("  %u = tensor.cast %sum : tensor<1xf32> to tensor<*xf32>")
    emit("  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()")
    emit("  return")
    emit("}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--style", choices=["torch", "byteir"], default="torch")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--inputs", type=int, default=32)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--with-main", action="store_true")
    p.add_argument("--resident-constants", action="store_true")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args()
    if a.width % 2:
        p.error("--width must be even")
    out = []
    emit = out.append
    emit("// Generated by tools/gen-models/producer_style.py "
         + " ".join(x for x in sys.argv[1:] if x not in ("-o", a.output)))
    if a.style == "torch":
        shapes, resources = torch_style(a, emit)
    else:
        shapes, resources = byteir_style(a, emit)
    if a.with_main:
        emit_main(emit, a.style, shapes)
    if a.resident_constants:
        # Affine map aliases stay outside the module.
        aliases = [l for l in out[1:] if l.startswith("#")]
        body = [l for l in out[1:] if not l.startswith("#")]
        out[1:] = aliases + ["module attributes {lms.resident_constants} {"] \
            + body + ["}"]
    if resources:
        emit("{-#")
        emit("  dialect_resources: {")
        emit("    builtin: {")
        emit(",\n".join(f"      {n}: \"{b}\"" for n, b in resources))
        emit("    }")
        emit("  }")
        emit("#-}")
    write_output(out, a.output)


if __name__ == "__main__":
    main()
