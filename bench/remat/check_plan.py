#!/usr/bin/env python3
"""An independent checker of lms-plan plans (no code shared with LMS).

    check_plan.py G.json plan.json [--budget BYTES]

Contract (the issue's): `compute v` needs every predecessor's output resident
and allocates mem(v) (memory during the step = resident bytes + mem(v), or
just resident bytes when v is already resident); `free v` releases a resident
output; `swap_out v` keeps v resident during the step, releases it after;
`swap_in v` allocates it during the step. Every node computed at least once.
Prints peak and compute cost; exits 1 on any violation or a mismatch with the
plan's own peak_bytes/compute_cost.

A plan placed in an arena (lms-plan --arena) has "arena_bytes" and an
"offset" on each step that allocates: the allocation must lie inside the
arena and overlap no resident node's bytes (also the inputs of the step).

A plan that runs the nodes in another order than topo_order (lms-plan
--reorder) says so in "order" (node ids): it must be a topological order of
the graph with every node once, and the plan's first computation of each node
must follow it. Nothing else depends on it: the steps are checked as always.
"""
import json
import sys


def main():
    args = sys.argv[1:]
    budget = None
    if "--budget" in args:
        i = args.index("--budget")
        budget = int(args[i + 1])
        del args[i:i + 2]
    graph = json.load(open(args[0]))
    plan = json.load(open(args[1]))
    mem = {n["id"]: int(n["mem"]) for n in graph["nodes"]}
    cost = {n["id"]: float(n["cost_cpu"]) for n in graph["nodes"]}
    preds = {v: set() for v in mem}
    for u, v in graph["edges"]:
        preds[v].add(u)
    resident, host, computed = set(), set(), set()
    arena = plan.get("arena_bytes")
    where = {}  # resident node -> offset in the arena

    def place(i, v, step):
        if arena is None:
            return
        if "offset" not in step:
            fail(i, f"{v} is allocated without an offset")
        lo, hi = step["offset"], step["offset"] + mem[v]
        if lo < 0 or hi > arena:
            fail(i, f"{v} at [{lo}, {hi}) is outside the arena of {arena}")
        for u, o in where.items():
            if mem[u] and mem[v] and lo < o + mem[u] and o < hi:
                fail(i, f"{v} at [{lo}, {hi}) overlaps {u} at "
                        f"[{o}, {o + mem[u]})")
        where[v] = lo
    used = peak = 0
    total = 0.0

    def fail(i, msg):
        print(f"invalid: step {i}: {msg}")
        sys.exit(1)

    order = plan.get("order")
    if order is not None:
        if sorted(order) != sorted(mem):
            print("invalid: order is not a permutation of the nodes")
            sys.exit(1)
        at = {v: k for k, v in enumerate(order)}
        for u, v in graph["edges"]:
            if at[u] > at[v]:
                print(f"invalid: order runs {v} before its predecessor {u}")
                sys.exit(1)
        firsts = []

    for i, step in enumerate(plan["schedule"]):
        (kind, v), = [(k, x) for k, x in step.items() if k != "offset"]
        if v not in mem:
            fail(i, f"unknown node {v}")
        if kind == "compute":
            missing = [u for u in preds[v] if u not in resident]
            if missing:
                fail(i, f"compute {v} needs {missing[0]}, not resident")
            if order is not None and v not in computed:
                firsts.append(v)
            during = used if v in resident else used + mem[v]
            peak = max(peak, during)
            if v not in resident:
                place(i, v, step)
                resident.add(v)
                used += mem[v]
            computed.add(v)
            total += cost[v]
        elif kind == "free":
            if v not in resident:
                fail(i, f"free {v}, not resident")
            resident.remove(v)
            where.pop(v, None)
            used -= mem[v]
        elif kind == "swap_out":
            if v not in resident:
                fail(i, f"swap_out {v}, not resident")
            peak = max(peak, used)
            resident.remove(v)
            where.pop(v, None)
            used -= mem[v]
            host.add(v)
        elif kind == "swap_in":
            if v not in host or v in resident:
                fail(i, f"swap_in {v} without a host copy or already resident")
            place(i, v, step)
            resident.add(v)
            used += mem[v]
            peak = max(peak, used)
        else:
            fail(i, f"unknown step kind {kind}")
    if order is not None and firsts != order:
        print("invalid: the plan's first computations do not follow order")
        sys.exit(1)
    never = set(mem) - computed
    if never:
        print(f"invalid: node {sorted(never)[0]} is never computed")
        sys.exit(1)
    if plan.get("peak_bytes") is not None and plan["peak_bytes"] != peak:
        print(f"invalid: plan says peak {plan['peak_bytes']}, checked {peak}")
        sys.exit(1)
    if plan.get("compute_cost") is not None and \
            abs(plan["compute_cost"] - total) > 1e-6 * max(1.0, total):
        print(f"invalid: plan says cost {plan['compute_cost']}, checked {total}")
        sys.exit(1)
    if budget is not None and peak > budget:
        print(f"invalid: peak {peak} over the budget {budget}")
        sys.exit(1)
    if arena is not None and budget is not None and arena > budget:
        print(f"invalid: arena {arena} over the budget {budget}")
        sys.exit(1)
    tdi = total / sum(cost.values()) - 1 if sum(cost.values()) else 0.0
    line = f"valid: peak {peak} compute_cost {total:g} TDI {100 * tdi:.3f}%"
    if arena is not None:
        line += f" arena {arena}"
    print(line)


if __name__ == "__main__":
    main()
