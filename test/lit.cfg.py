# -*- Python -*-
# lit configuration of the LMS regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LMS"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lms_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%lms_src_root", config.lms_src_root))
config.substitutions.append(("%lms_lib_dir", config.lms_lib_dir))
config.substitutions.append(("%lms_tools_dir", config.lms_tools_dir))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))

llvm_config.use_default_substitutions()

# FileCheck, not and count live in the LLVM tools directory, which Debian does
# not put on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.lms_tools_dir, append_path=True)

tool_dirs = [config.lms_tools_dir, config.llvm_tools_dir]
tools = ["lms-opt", "lms-opt-server", "lms-plan", "lms-bench-placement", "lms-capi-test", "mlir-opt", "mlir-runner", "mlir-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Execution tests: the runtime, mlir-runner's utilities, and python for the
# generators and checkers.
import ctypes
import sys

config.lms_runtime = os.path.join(config.lms_lib_dir, "liblms_runtime.so")
config.substitutions.append(("%lms_runtime", config.lms_runtime))
config.substitutions.append(
    ("%runner_utils", os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%c_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%compare_outputs", sys.executable + " " +
     os.path.join(config.lms_src_root, "test", "Integration", "Inputs",
                  "compare_outputs.py")))
config.substitutions.append(
    ("%check_stats", sys.executable + " " +
     os.path.join(config.lms_src_root, "test", "Integration", "Inputs",
                  "check_stats.py")))
# A host compiled apart from the model (the host-arena convention).
config.substitutions.append(
    ("%host_driver", sys.executable + " " +
     os.path.join(config.lms_src_root, "test", "Integration", "Inputs",
                  "host_driver.py") +
     " --runtime " + config.lms_runtime + " --utils " +
     os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so") + "," +
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(
    ("%gen_models", os.path.join(config.lms_src_root, "tools", "gen-models")))
# A filter that gives a module of the exporter (`module {`) v100-16g's
# device spec with 50 MB/s host links both ways, where offloading costs
# far more than recomputing (the slow-link tests of the joint planner and
# of plan fidelity).
config.substitutions.append(
    ("%with_slow_link",
     "sed -e 's/^module {$/module attributes {dlti.target_system_spec = "
     "#dlti.target_system_spec<\"GPU\" = #dlti.target_device_spec<"
     "\"lms.preset\" = \"v100-16g\", \"lms.h2d_bandwidth\" = 5.0e7 : f64, "
     "\"lms.d2h_bandwidth\" = 5.0e7 : f64>>} {/'"))

if os.path.exists(config.lms_runtime):
    config.available_features.add("lms-runtime")
    try:
        runtime = ctypes.CDLL(config.lms_runtime)
        if runtime.lmsRuntimeCudaDeviceCount() > 0:
            config.available_features.add("cuda-device")
    except OSError as error:
        lit_config.warning("cannot load %s: %s" % (config.lms_runtime, error))

# Under scripts/sanitize.sh: programs that are not instrumented load the
# instrumented runtime, so the sanitizer runtime is preloaded into every test
# command, and its options travel with it.
preload = os.environ.get("LMS_SANITIZER_PRELOAD")
if preload:
    config.environment["LD_PRELOAD"] = preload
    for name in ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
        if name in os.environ:
            config.environment[name] = os.environ[name]
# scripts/sanitize.sh runs a prefix of the random sweeps (property tests,
# fuzzer; bench/sweep.py): the scripts read the divisor, the tests check
# their counts with it (FileCheck -D#DIV=%sweep_divisor).
sweep_divisor = os.environ.get("LMS_SWEEP_DIVISOR") or "1"
config.environment["LMS_SWEEP_DIVISOR"] = sweep_divisor
config.substitutions.append(("%sweep_divisor", sweep_divisor))

# The emulated device is the default for execution tests; tests that need a
# GPU set LMS_RUNTIME=cuda themselves.
config.environment["LMS_RUNTIME"] = "emulated"

# Every graph built with a pass's shared analysis cache is compared with one
# built without it: a rewrite the cache missed is a fatal error in any test.
# Tests of deep call chains (quadratic under the check) set it to 0.
config.environment["LMS_CHECK_ANALYSIS_CACHE"] = "1"

# The planners on graph files: the independent plan checker, the exact
# planner when built with CBC, the moccasin planner when built with Gecode,
# and the benchmark graphs of ../shared when this
# checkout sits next to them (they are not part of the project).
config.substitutions.append(
    ("%check_plan", sys.executable + " " +
     os.path.join(config.lms_src_root, "bench", "remat", "check_plan.py")))
if config.lms_have_cbc:
    config.available_features.add("cbc")
if config.lms_have_gecode:
    config.available_features.add("gecode")
shared_graphs = os.path.join(os.path.dirname(config.lms_src_root), "shared",
                             "data", "graphs", "moccasin", "normalized")
if os.path.isdir(shared_graphs):
    config.available_features.add("moccasin-graphs")
    config.substitutions.append(("%moccasin_graphs", shared_graphs))
shared_models = os.path.join(os.path.dirname(config.lms_src_root), "shared",
                             "data", "models")
if os.path.isdir(shared_models):
    config.available_features.add("shared-models")
    config.substitutions.append(("%shared_models", shared_models))

# The PyTorch importer (tools/torch-export) runs with Debian's python3, which
# has python3-torch and python3-torchvision (scripts/deps.sh installs them).
import subprocess
torch_python = "/usr/bin/python3"
try:
    subprocess.run([torch_python, "-c", "import torch, torchvision"],
                   check=True, capture_output=True, timeout=120)
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
    config.substitutions.append(
        ("%torch_export", torch_python + " " + os.path.join(
            config.lms_src_root, "tools", "torch-export", "export.py")))
    config.substitutions.append(
        ("%torch_compare", torch_python + " " + os.path.join(
            config.lms_src_root, "tools", "torch-export", "compare.py")))
except (OSError, subprocess.SubprocessError):
    pass
