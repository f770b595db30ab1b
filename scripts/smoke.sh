#!/usr/bin/env bash
# Smoke test for CI users: engine, dependencies, cluster, then every demo with --auto, stopping
# at the first one whose verdict fails (its exit code is this script's). Each demo's JSON
# document is kept in $SMOKE_OUT (default: smoke-results/). About 4.5 minutes on a warm machine.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${SMOKE_OUT:-smoke-results}"
mkdir -p "$out"
bash scripts/ensure-engine.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx tsc -p tsconfig.json
node bin/rmq-bench.js cluster up

step() {
  local name="$1"
  shift
  local started=$SECONDS
  echo "smoke: $name: rmq-bench $*" >&2
  local code=0
  node bin/rmq-bench.js "$@" --json >"$out/$name.json" || code=$?
  if [ "$code" -ne 0 ]; then
    echo "smoke: FAILED at $name (exit $code after $((SECONDS - started)) s); its output: $out/$name.json" >&2
    exit "$code"
  fi
  echo "smoke: $name passed in $((SECONDS - started)) s" >&2
}

step compare compare -n 5000
step consumer-crash consumer-crash
step prefetch-demo prefetch-demo
step dlq-demo dlq-demo --reason all --auto
step retry-demo retry-demo --auto
step retry-ladder retry-demo --backoff 5s,30s,5m --time-scale 0.05 --auto
step delayed-retry-demo delayed-retry-demo --auto
step consumer-timeout-demo consumer-timeout-demo --auto
step alarm-demo alarm-demo --auto
step dlq-strategy dlq-demo --strategy both --auto
step dlq-inspect dlq inspect
# A minute under the nemesis (kill, stop, pause, disconnect and, where this host can, the network faults).
step chaos chaos --duration 60s --interval 15s --hold 4s --seed 1
echo "smoke: every demo passed (JSON in $out/)" >&2
