#!/usr/bin/env bash
# Fails when a C or C++ source is not formatted as clang-format 14 (Debian
# 12's, installed by scripts/deps.sh; style in .clang-format) formats it.
# Fix with: git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format-14 -i
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
format=clang-format-14
command -v "$format" >/dev/null || {
  echo "check-format: $format not found (scripts/deps.sh installs it)" >&2
  exit 1
}
status=0
while IFS= read -r file; do
  if ! "$format" --dry-run -Werror "$file" >/dev/null 2>&1; then
    echo "check-format: $file is not formatted; run: $format -i $file" >&2
    status=1
  fi
done < <(git ls-files '*.cpp' '*.h' '*.c' 2>/dev/null || find lib include tools unittests bench examples test -name '*.cpp' -o -name '*.h' -o -name '*.c')
exit $status
