#!/usr/bin/env bash
# `tlparse-build proxy` over a real S3 API: tests/share/proxy_s3.py beside moto (scripts/with-moto,
# which installs moto into target/moto-venv on first use). Bounded: killed after 10 minutes.
# Usage (from anywhere): tests/share/proxy-s3.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# shellcheck source=tests/share/debug-binary.sh
source "$REPO/tests/share/debug-binary.sh" # TLPARSE_BUILD
# with-moto creates the venv before running the command, so its python is named after that.
exec timeout 600 scripts/with-moto sh -c 'exec target/moto-venv/bin/python tests/share/proxy_s3.py'
