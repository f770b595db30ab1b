#!/usr/bin/env bash
# The main demo from a fresh clone: a Docker engine (installed and started on Debian as root
# when missing), the npm dependencies, the cluster, then the demo itself.
# Extra arguments go to the demo command.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-engine.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
node bin/rmq-bench.js cluster up
# The main demo: confirms on vs off, each with a kill of the queue leader mid-run.
node bin/rmq-bench.js compare "$@"
