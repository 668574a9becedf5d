# -*- Python -*-
# lit configuration that runs the LMS GoogleTest binaries.

import os

import lit.formats

config.name = "LMS-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.lms_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

# A missing unit-test binary must fail the run, not pass silently.
_found = [f for _, _, files in os.walk(config.test_exec_root)
          for f in files if f.endswith("Tests")]
if not _found:
    lit_config.fatal("no GoogleTest binaries under %s: build the "
                     "LMSUnitTests target first" % config.test_exec_root)

# scripts/sanitize.sh runs a prefix of the random sweeps: the unit tests of
# the graph core read the divisor too (unittests/Graph/SweepSize.h).
if os.environ.get("LMS_SWEEP_DIVISOR"):
    config.environment["LMS_SWEEP_DIVISOR"] = os.environ["LMS_SWEEP_DIVISOR"]
