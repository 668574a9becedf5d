#!/usr/bin/env python3
"""Writes a random layered graph in the Checkmate/Moccasin graph schema, in
the manner of Moccasin's generator (layers of a few nodes, each node reading
one or two nodes of the layer before and, now and then, one of an earlier
layer). Deterministic: its own generator (SplitMix64), not Python's.

    random_layered.py N SEED > graph.json
"""
import json
import sys

n, seed = int(sys.argv[1]), int(sys.argv[2])
state = seed & (2**64 - 1)


def below(bound):
    """A number in [0, bound) from SplitMix64."""
    global state
    state = (state + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return (z ^ (z >> 31)) % bound


layers, nodes, edges = [], [], []
while len(nodes) < n:
    layer = []
    for _ in range(min(1 + below(4), n - len(nodes))):
        i = len(nodes)
        nodes.append({"id": i, "name": str(i), "cost_cpu": 1 + below(1000),
                      "mem": 10 * (10 + below(600))})
        if layers:
            sources = {layers[-1][below(len(layers[-1]))]
                       for _ in range(1 + below(2))}
            if len(layers) > 1 and below(100) < 30:
                earlier = layers[below(len(layers) - 1)]
                sources.add(earlier[below(len(earlier))])
            edges += [[s, i] for s in sorted(sources)]
        layer.append(i)
    layers.append(layer)
json.dump({"name": f"random_layered_{n}_{seed}", "nodes": nodes,
           "edges": edges, "topo_order": list(range(n))}, sys.stdout)
