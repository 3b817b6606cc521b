#!/usr/bin/env bash
# The end-to-end tests of sharing a bundle: `publish` to a real S3 API server (moto, on loopback,
# through scripts/with-moto), the published viewer read back in headless Chromium, publishes
# killed midway, and the GitHub Pages layout served as Pages serves it.
# Usage (from anywhere): tests/share/run.sh [extra `node --test` args]
# Needs what tests/browser/run.sh needs (its node_modules are used), and python3 for moto.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tests/browser/chromium-env.sh
source "$HERE/../browser/chromium-env.sh" # REPO, CHROMIUM; Chromium installed when missing
if [ ! -d "$REPO/tests/browser/node_modules/playwright-core" ]; then
  (cd "$REPO/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
fi

# shellcheck source=tests/share/debug-binary.sh
source "$REPO/tests/share/debug-binary.sh" # TLPARSE_BUILD

# with-moto runs the command from the repository root (and installs moto on first use).
exec "$REPO/scripts/with-moto" node --test --test-reporter=spec --test-concurrency=1 "$@" "$HERE/publish-s3.test.js" "$HERE/publish-pages.test.js"
