#!/usr/bin/env bash
# Runs the real-browser tests of the shared loader (viewers/bundle-loader/) and the reference viewer.
# Usage (from anywhere): tests/browser/run.sh [extra `node --test` args]
# Needs: node >= 20, npm, cargo; Chromium at $CHROMIUM (default /usr/bin/chromium; installed with
# apt-get when missing and we are root). Browsers are never downloaded by npm.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tests/browser/chromium-env.sh
source "$HERE/chromium-env.sh" # REPO, CHROMIUM; Chromium installed when missing

cd "$HERE"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi

BUILT="${CARGO_TARGET_DIR:-$REPO/target}/release/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  (cd "$REPO" && cargo build --release --quiet)
fi

exec node --test --test-reporter=spec --test-concurrency=2 "$@" bundle-loader.test.js cross-origin.test.js proxy-cross-origin.test.js viewer-*.test.js
