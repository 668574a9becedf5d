"""What the test-program generators of tools/gen-models share."""

import sys


def write_output(out, path):
    """Writes the emitted lines to `path` ('-': stdout)."""
    text = "\n".join(out) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def emit_pattern_init(emit, name, rows, cols, a, b, t):
    """Emits `%name`, a rows x cols f32 tensor with the deterministic values
    ((i*a + j*b) mod 17 - 8) / 64, from a linalg.generic on an empty tensor;
    `t(rows, cols)` spells the tensor type."""
    emit(f"  %{name}_e = tensor.empty() : {t(rows, cols)}")
    emit(f"  %{name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> "
         f"(i, j)>], iterator_types = [\"parallel\", \"parallel\"]}} "
         f"outs(%{name}_e : {t(rows, cols)}) {{")
    emit("  ^bb0(%o: f32):")
    emit("    %i = linalg.index 0 : index")
    emit("    %j = linalg.index 1 : index")
    emit(f"    %ca = arith.constant {a} : index")
    emit(f"    %cb = arith.constant {b} : index")
    emit("    %c17 = arith.constant 17 : index")
    emit("    %ia = arith.muli %i, %ca : index")
    emit("    %jb = arith.muli %j, %cb : index")
    emit("    %s = arith.addi %ia, %jb : index")
    emit("    %m = arith.remui %s, %c17 : index")
    emit("    %mi = arith.index_cast %m : index to i32")
    emit("    %mf = arith.sitofp %mi : i32 to f32")
    emit("    %c8 = arith.constant 8.0 : f32")
    emit("    %c64 = arith.constant 64.0 : f32")
    emit("    %d = arith.subf %mf, %c8 : f32")
    emit("    %v = arith.divf %d, %c64 : f32")
    emit("    linalg.yield %v : f32")
    emit(f"  }} -> {t(rows, cols)}")
