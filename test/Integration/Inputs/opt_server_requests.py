"""Sends lms-opt-server a few requests and prints its responses: a run that
prints its output, one with an unknown pass, one whose input does not parse,
a run with its output apart (flag 4, as lms-opt -o FILE) and a failing one,
then a request it cannot read."""

import os
import subprocess
import sys


def request(flags, pipeline, budget, name, text):
    data = [x.encode() for x in (pipeline, budget, name, text)]
    header = "RUN " + " ".join([str(flags)] + [str(len(d)) for d in data])
    return header.encode() + b"\n" + b"".join(data)


ok = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
stdin = (request(2, "lms-report-memory", "", "in.mlir", ok) +
         request(2, "no-such-pass", "", "in.mlir", ok) +
         request(2, "", "", "bad.mlir", "func.func @g( {\n") +
         request(6, "lms-report-memory", "", "in.mlir", ok) +
         request(6, "lms-insert-swaps{budget=1}", "", "in.mlir", ok) +
         b"RUN nonsense\n")
read, write = os.pipe()
server = subprocess.run([sys.argv[1], f"--response-fd={write}"], input=stdin,
                        pass_fds=(write,), capture_output=True)
os.close(write)
with os.fdopen(read, "rb") as responses:
    sys.stdout.write(responses.read().decode())
sys.stdout.write(server.stderr.decode())
print("exit", server.returncode)
