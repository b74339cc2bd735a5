#!/usr/bin/env bash
# What the tests need from outside pip, from Debian's archive:
#   bubblewrap  - the validator's isolation (Linux namespaces); tests FAIL without it
#   chromium    - the real-browser tests (tests/e2e); Playwright's own download cannot work here
# Idempotent and quick when both are there. Recommends are skipped (printer and desktop
# services); fonts-liberation keeps screenshots readable.
#   bash .ci/install-system.sh            both
#   bash .ci/install-system.sh bubblewrap only the sandbox (what ./run test installs itself)
set -euo pipefail
want=${1:-all}
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ "$want" = all ] && ! { [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; }; then
  need+=(chromium fonts-liberation)
fi
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
command -v bwrap >/dev/null
