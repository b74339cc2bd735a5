#!/usr/bin/env bash
# Debian's Chromium for the real-browser tests (tests/e2e). Playwright's own browser
# download cannot work here; the tests launch /usr/bin/chromium instead.
# Idempotent and quick when Chromium is already there. Recommends are skipped (printer
# and desktop services); fonts-liberation keeps screenshots readable.
set -euo pipefail
if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-liberation
/usr/bin/chromium --version
