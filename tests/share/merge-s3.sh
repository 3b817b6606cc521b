#!/usr/bin/env bash
# `tlparse-build merge` of shards in a bucket: tests/share/merge_s3.py beside moto's S3 server
# (scripts/with-moto, which installs moto into target/moto-venv on first use). Bounded: killed
# after 10 minutes. Usage (from anywhere): tests/share/merge-s3.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# shellcheck source=tests/share/debug-binary.sh
source "$REPO/tests/share/debug-binary.sh" # TLPARSE_BUILD
exec timeout 600 scripts/with-moto sh -c 'exec target/moto-venv/bin/python tests/share/merge_s3.py'
