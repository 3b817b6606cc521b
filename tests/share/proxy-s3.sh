#!/usr/bin/env bash
# `tlparse-build proxy` over a real S3 API: tests/share/proxy_s3.py beside moto (scripts/with-moto,
# which installs moto into target/moto-venv on first use). Bounded: killed after 10 minutes.
# Usage (from anywhere): tests/share/proxy-s3.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# The debug build: nothing here is timed, and a release build is a long compile.
BUILT="${CARGO_TARGET_DIR:-$REPO/target}/debug/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  cargo build --quiet
fi
# with-moto creates the venv before running the command, so its python is named after that.
exec timeout 600 scripts/with-moto sh -c 'exec target/moto-venv/bin/python tests/share/proxy_s3.py'
