#!/usr/bin/env python3
"""A mutation fuzzer over the test inputs: parse -> each pass -> verify ->
re-analyse, with the invariants as oracles.

    bench/fuzz/mutate.py [--mutants N] [--seed S] [--jobs J] [--json F]
                         [--save DIR] [--server]

The corpus is the IR of the lit tests (test/**/*.mlir, split at
`// -----`). Each mutant applies one to three textual mutations to one
input (change every use of one dimension size; drop, duplicate or swap lines; replace a number with a boundary
value such as 0, -1 or 2^62; make a dimension dynamic; widen an integer
type; add an `lms.*` attribute with a random value; swap one op name for
another) and then goes through every pass below. Oracles:

  - no crash: lms-opt exits 0 or 1, never by a signal or an assertion, and
    never says "internal error" or prints a stack dump;
  - a pass that succeeds prints IR that parses and verifies again;
  - after a planning pass at a budget in bytes, the memory report of the
    output puts every function at or under the budget (functions with their
    own lms.budget are skipped);
  - --lms-schedule's output verifies, holds the same ops as the input, and
    no function peaks higher than before;
  - --lms-strip of a planning pass's output gives back the input (when the
    input has no LMS ops of its own: strip undoes those too); after
    --lms-plan, which may reorder ops, the same ops in any order (unless it
    split ops into loops, which strip keeps);
  - --lms-split's output (for half the peak, or into 4 slices) verifies.

Mutants that the parser rejects count as executions too (they exercise the
diagnostics). With --server, each run goes to a long-lived lms-opt-server
(one per job: the same parse, verifier, pipeline and printing as lms-opt,
in one process, a fresh context per run) instead of a new lms-opt process,
which is most of a run's cost; a server that dies is counted as lms-opt
dying by that signal, and replaced. Prints a table and writes JSON; exits 1 on any finding, and
with --save writes each finding's input and command into DIR.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import random
import re
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
TIMEOUT = 60
USE_SERVER = False
CHECK_SERVER = False

BOUNDARY = ["0", "1", "-1", "2", "7", "4096", "65536", "2147483648",
            "4611686018427387904", "9223372036854775807",
            "18446744073709551617", "1.0e30", "nan"]
TYPES = ["i1", "i8", "i32", "i64", "i128", "f16", "f32", "f64", "index"]
OPS = ["linalg.exp", "linalg.negf", "linalg.add", "linalg.mul",
       "linalg.matmul", "linalg.fill", "linalg.copy", "tensor.empty",
       "tensor.extract_slice", "tensor.insert_slice", "arith.constant",
       "lms.swap_out", "lms.swap_in", "lms.swap_wait", "lms.recompute",
       "func.call", "scf.for", "scf.yield", "bufferization.alloc_tensor"]
ATTRS = ["lms.budget", "lms.cost", "lms.max_bytes", "lms.trip_count",
         "lms.borrowed", "lms.no_offload", "lms.bugdet"]
ATTR_VALUES = ["0", "-1", "1024", "true", '"x"', "1.5", "18446744073709551617 : i128",
               "unit", "{flops = 1.0}", "[1, 2]"]

# Passes run on each mutant: (name, arguments, planning budget fraction,
# None, or "reorder" for a pass that only reorders: its output verifies,
# holds the same ops and peaks no higher than the input).
PASSES = [
    ("verify", [], None),
    ("liveness", ["--lms-print-liveness"], None),
    ("report", ["--lms-report-memory=format=json"], None),
    ("upload-constants", ["--lms-upload-constants"], None),
    ("deallocate", ["--one-shot-bufferize=bufferize-function-boundaries",
                    "--lms-deallocate"], None),
    ("insert-swaps", ["--lms-insert-swaps"], 0.8),
    ("rematerialize", ["--lms-rematerialize"], 0.8),
    ("plan", ["--lms-plan"], 0.7),
    ("schedule", ["--lms-schedule"], "reorder"),
    ("split", ["--lms-split"], "split"),
    # Last, so that earlier passes keep their random draws.
    ("rematerialize-moccasin",
     ["--lms-rematerialize=planner=moccasin iterations=20"], 0.8),
]

CRASH_SIGNS = ["PLEASE submit a bug report", "Stack dump", "Assertion",
               "internal error", "runtime error:", "AddressSanitizer",
               "LLVM ERROR", "UNREACHABLE"]


def corpus():
    inputs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"),
                                 recursive=True)):
        if "/Output/" in path:
            continue
        with open(path) as f:
            text = f.read()
        for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
            lines = [l for l in chunk.splitlines()
                     if not l.lstrip().startswith("//")]
            body = "\n".join(lines).strip()
            if "func.func" in body:
                inputs.append((os.path.relpath(path, ROOT), body))
    return inputs


def replace_one(rng, line, pattern, replacement):
    """`line` with one random match of `pattern` replaced: by `replacement`
    if it is a string, else by a random one of its entries."""
    matches = list(re.finditer(pattern, line))
    if not matches:
        return line
    m = rng.choice(matches)
    if not isinstance(replacement, str):
        replacement = rng.choice(replacement)
    return line[:m.start()] + replacement + line[m.end():]


def mutate(rng, text):
    # Half the mutants change every use of one dimension size at once (the
    # IR stays well typed, so the passes see it, at boundary sizes).
    if rng.random() < 0.5:
        dims = sorted(set(re.findall(r"(?<=[<x])\d+(?=x)", text)))
        if dims:
            old = rng.choice(dims)
            new = rng.choice(["0", "1", "3", "100000", "1048576",
                              "4611686018427387904", "9223372036854775807"])
            text = re.sub(r"(?<=[<x])%s(?=x)" % old, new, text)
            if rng.random() < 0.5:
                return text + "\n"
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        i = rng.randrange(len(lines))
        if kind == 0 and len(lines) > 1:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 3:
            lines[i] = replace_one(rng, lines[i],
                                   r"(?<![%#\w])-?\d+(\.\d+)?", BOUNDARY)
        elif kind == 4:
            lines[i] = replace_one(rng, lines[i], r"(?<=[<x])\d+(?=x)", "?")
        elif kind == 5:
            lines[i] = replace_one(rng, lines[i], r"\b(i\d+|f\d+|index)\b",
                                   TYPES)
        elif kind == 6:
            m = re.search(r"(\w+\.\w+)(?=[ (])", lines[i])
            if m:
                lines[i] = (lines[i][:m.start()] + rng.choice(OPS) +
                            lines[i][m.end():])
        else:
            m = re.search(r"^(\s*(%\S+ = )?\"?\w+\.\w+\"?)", lines[i])
            value = rng.choice(ATTR_VALUES)
            attr = rng.choice(ATTRS)
            entry = attr if value == "unit" else f"{attr} = {value}"
            if lines[i].lstrip().startswith("func.func") and "{" in lines[i]:
                j = lines[i].rfind("{")
                lines[i] = (lines[i][:j] + f"attributes {{{entry}}} " +
                            lines[i][j:])
            elif m and " : " in lines[i]:
                j = lines[i].rfind(" : ")
                lines[i] = lines[i][:j] + f" {{{entry}}}" + lines[i][j:]
    return "\n".join(lines) + "\n"


# Per job (thread): its server, and whether its runs go to lms-opt processes
# for now (while a server finding is confirmed).
LOCAL = threading.local()


def server_run(args, stdin):
    """An lms-opt command line as a server request (an lms-opt process for
    one the server does not take, as run.py does)."""
    request = parse_command(args, stdin)
    if request is None:
        return process_run(args, stdin)
    flags, pipeline, budget, name, text, _ = request
    if not hasattr(LOCAL, "server"):
        LOCAL.server = Server(LMS_OPT_SERVER, TIMEOUT)
    return LOCAL.server.request(flags, pipeline, budget, name, text)[:3]


MISMATCHES = []


def run(args, stdin=None):
    if USE_SERVER and not getattr(LOCAL, "process", False):
        result = server_run(args, stdin)
        if CHECK_SERVER:
            # The server must answer as lms-opt does: same exit status, same
            # standard output.
            expected = process_run(args, stdin)
            if expected[:2] != result[:2]:
                MISMATCHES.append((args, expected[0], result[0]))
        return result
    return process_run(args, stdin)


def process_run(args, stdin=None):
    try:
        p = subprocess.run([LMS_OPT] + args, input=stdin, capture_output=True,
                           text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def crashed(rc, err):
    if rc == "timeout":
        return "timeout"
    if rc not in (0, 1):
        return f"exit status {rc}"
    for sign in CRASH_SIGNS:
        if sign in err:
            return sign
    return None


def peaks(text):
    rc, out, _ = run(["-", "-allow-unregistered-dialect",
                      "--lms-report-memory=format=json", "-o", "/dev/null"],
                     text)
    if rc != 0:
        return None
    try:
        report = json.loads(out)
    except ValueError:
        return None
    return {f["name"]: f["peak_bytes"] for f in report.get("functions", [])}


def upstream_crash(err):
    """The upstream op whose parser crashed, for a crash while parsing in
    which no frame is LMS code (the stack dump names the parsers it was in):
    upstream's bug, not ours."""
    parsers = re.findall(r"MLIR Parser: custom op parser '([\w.]+)'", err)
    if not parsers or parsers[-1].startswith("lms.") or "lms::" in err:
        return None
    return parsers[-1]


def check(job):
    """A mutant through every pass. With --server, a mutant with findings is
    checked again through lms-opt processes, and those findings are the ones
    reported: a long-lived process also shows upstream's memory errors after
    they happened (a use after free in a parser's error recovery corrupts the
    heap for a later run), which a process that exits never notices."""
    index, seed, source, text = job
    result = check_mutant(index, seed, source, text)
    result["server_only"] = False
    if USE_SERVER and not CHECK_SERVER and result["findings"]:
        LOCAL.process = True
        try:
            confirmed = check_mutant(index, seed, source, text)
        finally:
            LOCAL.process = False
        result["server_only"] = not confirmed["findings"]
        result["findings"] = confirmed["findings"]
    # Crashes inside upstream parsers are upstream's bugs: listed apart.
    result["upstream"] = [(n, w, e) for n, w, e in result["findings"]
                          if upstream_crash(e)]
    result["findings"] = [f for f in result["findings"]
                          if f not in result["upstream"]]
    return result


def check_mutant(index, seed, source, text):
    rng = random.Random(seed)
    mutant = mutate(rng, text)
    findings = []
    executions = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.mlir")
        with open(path, "w") as f:
            f.write(mutant)
        before = peaks(mutant)
        executions += 1
        for name, args, fraction in PASSES:
            budget = None
            extra = []
            if fraction == "reorder":
                rc, out, err = run([path, "-allow-unregistered-dialect"] +
                                   args)
                rc2, original, _ = run([path, "-allow-unregistered-dialect"])
                executions += 2
                why = crashed(rc, err)
                if why:
                    findings.append((name, why, err[-20000:]))
                elif rc == 0 and rc2 == 0:
                    if not same_ops(out, original):
                        findings.append((name, "reordering changed the ops",
                                         ""))
                    after = peaks(out)
                    executions += 1
                    if before and after:
                        higher = {f: (before[f], p) for f, p in after.items()
                                  if f in before and p > before[f]}
                        if higher:
                            findings.append((name, f"peak went up: {higher}",
                                             ""))
                continue
            if fraction == "split":
                # Split for half the peak (or into 4 slices): the output
                # parses and verifies again.
                if not before:
                    continue
                extra = ([f"--lms-budget={max(1, max(before.values()) // 2)}B"]
                         if rng.random() < 0.5 else [])
                split_args = args if extra else ["--lms-split=slices=4"]
                rc, out, err = run([path, "-allow-unregistered-dialect"] +
                                   split_args + extra)
                executions += 1
                why = crashed(rc, err)
                if why:
                    findings.append((name, why, err[-20000:]))
                elif rc == 0:
                    rc2, _, err2 = run(["-", "-allow-unregistered-dialect",
                                        "-o", "/dev/null"], out)
                    executions += 1
                    if rc2 != 0:
                        findings.append((name, "output does not verify",
                                         err2[-2000:]))
                continue
            if fraction is not None:
                if not before or "lms.budget" in mutant:
                    continue
                budget = max(1, int(max(before.values()) * fraction))
                extra = [f"--lms-budget={budget}B"]
            rc, out, err = run([path, "-allow-unregistered-dialect"] + args +
                               extra)
            executions += 1
            why = crashed(rc, err)
            if why:
                findings.append((name, why, err[-20000:]))
                continue
            if rc != 0 or fraction is None:
                continue
            # The output parses and verifies again.
            rc2, _, err2 = run(["-", "-allow-unregistered-dialect", "-o",
                                "/dev/null"], out)
            executions += 1
            if rc2 != 0:
                findings.append((name, "output does not verify", err2[-2000:]))
                continue
            after = peaks(out)
            executions += 1
            if after is not None:
                over = {f: p for f, p in after.items() if p > budget}
                if over:
                    findings.append((name, f"over the budget {budget}: {over}",
                                     ""))
            # --lms-strip gives back the input.
            rc3, stripped, err3 = run(["-", "-allow-unregistered-dialect",
                                       "--lms-strip"], out)
            rc4, original, _ = run([path, "-allow-unregistered-dialect"])
            executions += 2
            why = crashed(rc3, err3)
            if why or rc3 != 0:
                findings.append((name, f"strip failed: {why or rc3}",
                                 err3[-2000:]))
            elif (rc4 == 0 and stripped != original and
                  not (name == "plan" and same_ops(stripped, original)) and
                  # --lms-plan split ops into loops: strip keeps those.
                  not (name == "plan" and out.count("scf.for") >
                       original.count("scf.for")) and
                  not re.search(r"lms\.(swap|recompute)", mutant)):
                # (Strip also undoes the LMS ops an input already had.)
                findings.append((name, "strip does not restore the input", ""))
    return {"index": index, "source": source, "mutant": mutant,
            "findings": findings, "executions": executions,
            "parsed": before is not None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json")
    parser.add_argument("--save")
    parser.add_argument("--server", action="store_true",
                        help="send the runs to lms-opt-server processes")
    parser.add_argument("--check-server", action="store_true",
                        help="also run lms-opt for each run and count the "
                             "runs where the server's exit status or output "
                             "differs")
    args = parser.parse_args()
    args.mutants = sweep_size(args.mutants)  # a prefix under the sanitizers
    global USE_SERVER, CHECK_SERVER
    USE_SERVER = args.server or args.check_server
    CHECK_SERVER = args.check_server
    if USE_SERVER and not os.access(LMS_OPT_SERVER, os.X_OK):
        sys.exit(f"no lms-opt-server at {LMS_OPT_SERVER}: build it "
                 "(scripts/build.sh lms-test-depends)")

    inputs = corpus()
    rng = random.Random(args.seed)
    jobs = []
    for i in range(args.mutants):
        source, text = rng.choice(inputs)
        jobs.append((i, rng.getrandbits(64), source, text))
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(check, jobs))
    elapsed = time.time() - start

    executions = sum(r["executions"] for r in results)
    parsed = sum(r["parsed"] for r in results)
    found = [r for r in results if r["findings"]]
    print(f"| mutants | parsed and analysed | lms-opt runs | findings |")
    print(f"|---|---|---|---|")
    print(f"| {len(results)} | {parsed} | {executions} | {len(found)} |")
    print()
    for r in found:
        for name, why, err in r["findings"]:
            print(f"mutant {r['index']} of {r['source']}: {name}: {why}")
            if err:
                print("  " + err.strip().splitlines()[-1])
    if args.save and found:
        os.makedirs(args.save, exist_ok=True)
        for r in found:
            with open(os.path.join(args.save, f"mutant-{r['index']}.mlir"),
                      "w") as f:
                for name, why, _ in r["findings"]:
                    f.write(f"// {name}: {why}\n")
                f.write(r["mutant"])
    print(f"{len(results)} mutants (seed {args.seed}) in {elapsed:.0f} s: "
          f"{executions} lms-opt runs, {len(found)} with findings")
    upstream = [(r, f) for r in results for f in r["upstream"]]
    for r, (name, why, err) in upstream:
        print(f"upstream: mutant {r['index']} of {r['source']}: {name}: "
              f"{why} in the parser of {upstream_crash(err)}")
    server_only = sum(r["server_only"] for r in results)
    print(f"{len(upstream)} crashes in upstream parsers (not counted); "
          f"{server_only} mutants whose server findings lms-opt did not "
          "reproduce")
    if CHECK_SERVER:
        for command, expected, got in MISMATCHES[:10]:
            print(f"server mismatch: lms-opt {' '.join(command)}: exit "
                  f"{expected}, server {got}")
        print(f"{len(MISMATCHES)} runs where lms-opt-server and lms-opt "
              "differ")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "mutants": len(results),
                       "parsed": parsed, "executions": executions,
                       "seconds": round(elapsed, 1),
                       "server_only": server_only,
                       "server_only_mutants": [r["index"] for r in results
                                               if r["server_only"]],
                       "upstream": [{"index": r["index"],
                                     "source": r["source"], "pass": n,
                                     "why": w, "parser": upstream_crash(e)}
                                    for r, (n, w, e) in upstream],
                       "findings": [{"index": r["index"],
                                     "source": r["source"],
                                     "findings": [[n, w] for n, w, _ in
                                                  r["findings"]]}
                                    for r in found]}, f, indent=2)
    return 1 if found or MISMATCHES else 0


if __name__ == "__main__":
    sys.exit(main())
