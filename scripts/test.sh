#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit regression tests
# and the GoogleTest unit tests). Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/deps.sh"
"$root/scripts/build.sh" lms-test-depends
"$root/scripts/check-docs.sh"
"$root/scripts/check-format.sh"
/usr/lib/llvm-22/bin/lit -sv "$root/build/test"
# As an embedder: install, build examples/embed against the package, run it
# and the plugins.
"$root/scripts/test-install.sh"
