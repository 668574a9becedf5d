#!/usr/bin/env python3
"""Writes a module of N private functions, each an exp calling the next,
and a @main calling the first.

    call_chain.py N > chain.mlir
"""
import sys

n = int(sys.argv[1])
t = "tensor<16xf32>"
for i in range(n):
    print(f"func.func private @f{i}(%a: {t}) -> {t} {{")
    print(f"  %e = tensor.empty() : {t}")
    print(f"  %x = linalg.exp ins(%a : {t}) outs(%e : {t}) -> {t}")
    if i + 1 < n:
        print(f"  %y = call @f{i + 1}(%x) : ({t}) -> {t}")
        print(f"  return %y : {t}")
    else:
        print(f"  return %x : {t}")
    print("}")
print(f"func.func @main(%a: {t}) -> {t} {{")
print(f"  %r = call @f0(%a) : ({t}) -> {t}")
print(f"  return %r : {t}")
print("}")
