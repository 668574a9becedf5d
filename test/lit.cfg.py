# -*- Python -*-
# lit configuration of the LMS regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LMS"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lms_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%lms_src_root", config.lms_src_root))
config.substitutions.append(("%lms_lib_dir", config.lms_lib_dir))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))

llvm_config.use_default_substitutions()

# FileCheck, not and count live in the LLVM tools directory, which Debian does
# not put on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.lms_tools_dir, append_path=True)

tool_dirs = [config.lms_tools_dir, config.llvm_tools_dir]
tools = ["lms-opt", "mlir-opt", "mlir-runner"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
