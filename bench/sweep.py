"""How many of a random sweep's programs to run.

scripts/sanitize.sh sets LMS_SWEEP_DIVISOR=4 so that the sweeps of
bench/property/run.py and bench/fuzz/mutate.py run their first quarter (the
same programs, fewer of them) under the sanitizers; a run of one program (a
regression) always runs. The tests check the count with FileCheck's
max(1, div(N, DIV)), DIV being lit's %sweep_divisor.
"""

import os


def sweep_size(count):
    """`count`, or a share of it under LMS_SWEEP_DIVISOR (at least one)."""
    divisor = int(os.environ.get("LMS_SWEEP_DIVISOR") or 1)
    if count > 1 and divisor > 1:
        return max(1, count // divisor)
    return count
