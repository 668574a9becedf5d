#!/usr/bin/env python3
"""Writes a training chain in the Checkmate/Moccasin graph schema: n forward
nodes in a chain, n backward nodes in a chain, backward i reading forward
n-1-i (each node 100 bytes).

    training_chain.py N > chain.json
"""
import json
import sys

n = int(sys.argv[1])
nodes = [{"id": i, "name": f"f{i}", "cost_cpu": 1 + i % 3, "mem": 100}
         for i in range(n)]
nodes += [{"id": n + i, "name": f"b{i}", "cost_cpu": 2, "mem": 100,
           "backward": True} for i in range(n)]
edges = [[i, i + 1] for i in range(2 * n - 1)]
edges += [[n - 1 - i, n + i] for i in range(n)]
json.dump({"name": f"training_chain_{n}", "nodes": nodes, "edges": edges,
           "topo_order": list(range(2 * n))}, sys.stdout)
