"""Comparing printed MLIR modules (shared by the fuzzer and the property
test)."""
import re


def same_ops(a, b):
    """Whether two printed modules hold the same ops, in any order: every
    line with its SSA names and map numbers erased, compared as multisets
    (for passes that may reorder ops: --lms-plan, --lms-schedule)."""
    def lines(text):
        return sorted(re.sub(r"#map\d*", "#map", re.sub(r"%[\w.$-]+", "%", l))
                      for l in text.splitlines())
    return lines(a) == lines(b)
