# shellcheck shell=bash
# Sourced (never run) by the run.sh of the tests that drive Chromium, tests/browser/ and
# tests/share/: sets REPO, exports CHROMIUM (default Debian's /usr/bin/chromium) and
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD (browsers are never downloaded by npm), and makes sure that
# Chromium is there (scripts/ensure-chromium installs it with apt-get when missing and root).
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
"$REPO/scripts/ensure-chromium"
