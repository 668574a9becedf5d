"""lms-opt command lines sent to an lms-opt-server (tools/lms-opt-server):
what lms-opt does to one input, many inputs in one process. Starting
lms-opt (loading libMLIR.so, registering every dialect and pass) takes
about 0.14 s here, which is most of a small program's run; the mutation
fuzzer (bench/fuzz/mutate.py --server) and the property runner
(bench/property/run.py) send their runs here instead.
"""

import os
import subprocess
import threading


class Server:
    """An lms-opt-server process, started at its first request and again
    after one that ended it."""

    def __init__(self, binary, timeout):
        self.binary = binary
        self.timeout = timeout
        self.proc = None

    def start(self):
        read, write = os.pipe()
        self.proc = subprocess.Popen(
            [self.binary, f"--response-fd={write}"], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(write,))
        os.close(write)
        self.responses = os.fdopen(read, "rb")

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.responses.close()
        self.proc = None

    def request(self, flags, pipeline, budget, name, text):
        """(exit status, stdout, stderr, output IR): the exit status lms-opt
        would return ("timeout" past the timeout, the signal's negative when
        the server died); the output IR apart only with flag 4, else None."""
        if self.proc is None:
            self.start()
        data = [x.encode() for x in (pipeline, budget, name, text)]
        header = "RUN " + " ".join([str(flags)] + [str(len(d)) for d in data])
        header += "\n"
        timer = threading.Timer(self.timeout, self.proc.kill)
        timer.start()
        try:
            self.proc.stdin.write(header.encode() + b"".join(data))
            self.proc.stdin.flush()
            line = self.responses.readline()
            fields = line.split()
            apart = bool(flags & 4)
            if len(fields) != 4 + apart or fields[0] != b"DONE":
                raise BrokenPipeError
            out = self.responses.read(int(fields[2]))
            err = self.responses.read(int(fields[3]))
            ir = self.responses.read(int(fields[4])) if apart else None
            # Upstream's parser writes to freed memory when a block is
            # redefined inside a region (valgrind: Operation::
            # dropAllReferences on a block GenericOp::parse freed): a fresh
            # process for the next run, so that no later run meets the
            # corrupted heap.
            if b"redefinition of block" in err:
                self.stop()
            return (int(fields[1]), out.decode(errors="replace"),
                    err.decode(errors="replace"),
                    ir.decode(errors="replace") if apart else None)
        except (BrokenPipeError, ValueError, OSError):
            # The server died on this run: as lms-opt would have.
            timed_out = not timer.is_alive()
            self.proc.kill()
            rc = self.proc.wait()
            self.responses.close()
            self.proc = None
            if timed_out:
                return "timeout", "", "", None
            return (rc if rc != 0 else -1), "", "", None
        finally:
            timer.cancel()


def parse_command(args, stdin=None):
    """An lms-opt command line (without the program) as a request:
    (flags, pipeline, budget, name, text, output file or None), or None for
    a command line the server does not take (-mlir-* options, two inputs).
    The passes run in their order, nested as lms-opt nests them."""
    flags, budget, passes, text, output = 0, "", [], stdin, "-"
    name, inputs = "<stdin>", 0
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-allow-unregistered-dialect":
            flags |= 1
        elif arg == "-o":
            i += 1
            output = args[i]
        elif arg.startswith("--lms-budget="):
            budget = arg[len("--lms-budget="):]
        elif arg.startswith("--"):
            pass_name, _, options = arg[2:].partition("=")
            passes.append(f"{pass_name}{{{options}}}" if options
                          else pass_name)
        elif arg == "-":
            inputs += 1
        elif arg.startswith("-"):
            return None
        else:
            with open(arg) as f:
                text = f.read()
            name = arg
            inputs += 1
        i += 1
    if inputs > 1:
        return None
    if output != "/dev/null":
        flags |= 2
    if output not in ("-", "/dev/null"):
        flags |= 4
    else:
        output = None
    return flags, ",".join(passes), budget, name, text or "", output
