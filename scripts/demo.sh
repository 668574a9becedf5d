#!/usr/bin/env bash
# The main job on a bundled example: installs what is missing, builds lms-opt,
# then parses, verifies and prints a program that uses the lms ops, and shows
# the program before LMS rewriting (--lms-strip) as a diff.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/deps.sh"
"$root/scripts/build.sh" lms-opt >/dev/null
opt="$root/build/bin/lms-opt"
example="$root/examples/swapped_mlp.mlir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== $example: parsed, verified and printed by lms-opt"
"$opt" "$example" | tee "$out/rewritten.mlir"
echo
echo "== the same program before LMS rewriting (lms-opt --lms-strip), as a diff"
"$opt" "$example" --lms-strip > "$out/original.mlir"
diff -u "$out/original.mlir" "$out/rewritten.mlir" || true
