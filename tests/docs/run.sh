#!/usr/bin/env bash
# Runs the Node tests of the docs (tests/docs/*.test.mjs): llms.txt and llms-full.txt are up to
# date (else: run scripts/regenerate) and within budget, and the reference code of llms-full.txt
# reads real bundles. Installs fzstd (tests/browser's lock) first, and builds the release
# tlparse-build from the current sources (a stale binary would write stale bundles).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$REPO/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
cd "$REPO"
BUILT="${CARGO_TARGET_DIR:-$REPO/target}/release/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  cargo build --release --quiet
fi
exec node --test tests/docs/
