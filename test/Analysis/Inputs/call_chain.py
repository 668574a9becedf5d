#!/usr/bin/env python3
"""Writes a module of N private functions, each an exp calling the next,
and a @main calling the first.

    call_chain.py N [--hold] > chain.mlir
    call_chain.py N --fan > fan.mlir

--fan: instead, @main calls N functions one after another (each on the
last one's result), the shape of a module of many functions called from
one entry; each function holds its argument across three ops, so that a
budget of 3 KiB makes every one of them offload it.

--hold: each function adds its argument to what the call returns, so that
it holds the argument across the call (the peak grows with the depth, and
a budget under it makes every level offload or recompute around its call).
"""
import sys

n = int(sys.argv[1])
hold = "--hold" in sys.argv[2:]
if "--fan" in sys.argv[2:]:
    t = "tensor<256xf32>"
    steps = [("x", "exp", ["%a"]), ("y", "exp", ["%x"]), ("w", "exp", ["%y"]),
             ("z", "add", ["%w", "%x"]), ("r", "add", ["%z", "%a"])]
    for i in range(n):
        print(f"func.func private @f{i}(%a: {t}) -> {t} {{")
        for name, kind, ins in steps:
            types = ", ".join([t] * len(ins))
            print(f"  %e{name} = tensor.empty() : {t}")
            print(f"  %{name} = linalg.{kind} ins({', '.join(ins)} : {types}) "
                  f"outs(%e{name} : {t}) -> {t}")
        print(f"  return %r : {t}")
        print("}")
    print(f"func.func @main(%a: {t}) -> {t} {{")
    last = "%a"
    for i in range(n):
        print(f"  %r{i} = call @f{i}({last}) : ({t}) -> {t}")
        last = f"%r{i}"
    print(f"  return {last} : {t}")
    print("}")
    sys.exit(0)
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
