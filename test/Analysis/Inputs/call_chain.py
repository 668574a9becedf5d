#!/usr/bin/env python3
"""Writes a module of N private functions, each an exp calling the next,
and a @main calling the first.

    call_chain.py N [--hold] > chain.mlir

--hold: each function adds its argument to what the call returns, so that
it holds the argument across the call (the peak grows with the depth, and
a budget under it makes every level offload or recompute around its call).
"""
import sys

n = int(sys.argv[1])
hold = "--hold" in sys.argv[2:]
t = "tensor<16xf32>"
for i in range(n):
    print(f"func.func private @f{i}(%a: {t}) -> {t} {{")
    print(f"  %e = tensor.empty() : {t}")
    print(f"  %x = linalg.exp ins(%a : {t}) outs(%e : {t}) -> {t}")
    if i + 1 < n:
        print(f"  %y = call @f{i + 1}(%x) : ({t}) -> {t}")
        if hold:
            print(f"  %e2 = tensor.empty() : {t}")
            print(f"  %z = linalg.add ins(%y, %a : {t}, {t}) "
                  f"outs(%e2 : {t}) -> {t}")
            print(f"  return %z : {t}")
        else:
            print(f"  return %y : {t}")
    else:
        print(f"  return %x : {t}")
    print("}")
print(f"func.func @main(%a: {t}) -> {t} {{")
print(f"  %r = call @f0(%a) : ({t}) -> {t}")
print(f"  return %r : {t}")
print("}")
