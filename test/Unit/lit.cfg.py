# -*- Python -*-
# lit configuration that runs the LMS GoogleTest binaries.

import os

import lit.formats

config.name = "LMS-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.lms_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
