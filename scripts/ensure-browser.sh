#!/usr/bin/env bash
# Headless Chromium for the HTML report tests (driven by playwright-core; a test tool's own
# browser download does not work on a machine without registry access, Debian's package does).
# On Debian as root it installs the chromium package when missing; elsewhere it says what to do.
set -euo pipefail

# Debian's binary itself, not its launcher /usr/bin/chromium (a shell script whose dev-shm check
# prints "[: ...: unexpected operator" where /dev/shm is mounted twice): test/integration/browser.ts
# launches the same one.
DEBIAN_BINARY=/usr/lib/chromium/chromium
BROWSER="${RMQ_BENCH_CHROMIUM:-$DEBIAN_BINARY}"
if [ -x "$BROWSER" ]; then
  echo "ensure-browser: $("$BROWSER" --version 2>/dev/null | head -1) at $BROWSER" >&2
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-browser: installing Debian's chromium (once)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; }
  echo "ensure-browser: $("$DEBIAN_BINARY" --version | head -1)" >&2
  exit 0
fi
echo "ensure-browser: no Chromium at $BROWSER; install it (Debian: apt-get install chromium) or set RMQ_BENCH_CHROMIUM to a Chromium or Chrome binary" >&2
exit 69
