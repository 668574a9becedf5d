#!/usr/bin/env bash
# Regenerates the dialect and pass references from ODS and fails if the copies
# committed under docs/ are out of date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" mlir-doc >/dev/null
gen="$root/build/docs"
status=0
check() {
  if ! cmp -s "$1" "$2"; then
    echo "check-docs: $2 is out of date; run: scripts/build.sh lms-docs" >&2
    status=1
  fi
}
check "$gen/Dialects/LMSDialect.md" "$root/docs/Dialects/LMS.md"
check "$gen/Dialects/LMSTransformOps.md" "$root/docs/Dialects/LMSTransformOps.md"
check "$gen/LMSPasses.md" "$root/docs/Passes.md"
check "$gen/LMSConversionPasses.md" "$root/docs/ConversionPasses.md"
exit $status
