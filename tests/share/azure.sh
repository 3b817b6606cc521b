#!/usr/bin/env bash
# `tlparse-build publish az://...` and `tlparse-build proxy az://...` against Azurite, Azure
# Storage's emulator, on loopback: tests/share/azure.py beside scripts/with-azurite (which
# installs azurite from npm into tests/share/azurite on first use).
# Needs: node and npm, python3 (standard library only). Bounded: killed after 10 minutes.
# Usage (from anywhere): tests/share/azure.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# shellcheck source=tests/share/debug-binary.sh
source "$REPO/tests/share/debug-binary.sh" # TLPARSE_BUILD
exec timeout 600 scripts/with-azurite python3 tests/share/azure.py
