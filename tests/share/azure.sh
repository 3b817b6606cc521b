#!/usr/bin/env bash
# `tlparse-build publish az://...` and `tlparse-build proxy az://...` against Azurite, Azure
# Storage's emulator, on loopback: tests/share/azure.py beside scripts/with-azurite (which
# installs azurite from npm into tests/share/azurite on first use).
# Needs: node and npm, python3 (standard library only). Bounded: killed after 10 minutes.
# Usage (from anywhere): tests/share/azure.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# The debug build: nothing here is timed, and a release build is a long compile.
BUILT="${CARGO_TARGET_DIR:-$REPO/target}/debug/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  cargo build --quiet
fi
exec timeout 600 scripts/with-azurite python3 tests/share/azure.py
