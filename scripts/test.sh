#!/usr/bin/env bash
# The whole test suite, from a fresh clone: a Docker engine (installed and started on Debian
# as root when missing), the npm dependencies, then unit and integration tests against the
# real 3-node cluster (brought up, and its image built, by the tests' global setup), and the
# HTML reports opened in headless Chromium (Debian's package, installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-engine.sh
bash scripts/ensure-browser.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
# Formatter and linter first (seconds): a style slip fails fast, before the long tests.
npm run lint
npm test
