#!/usr/bin/env bash
# Smoke test for CI users: engine, dependencies, cluster, then every demo with --auto, stopping
# at the first one whose verdict fails (its exit code is this script's). Each demo's JSON
# document is kept in $SMOKE_OUT (default: smoke-results/), and $SMOKE_OUT/index.html sums up the
# steps that ran (`rmq-bench report`), also when one failed (docs/COMMANDS.md: smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${SMOKE_OUT:-smoke-results}"
mkdir -p "$out"

# The JSON of each step this run started, in order (a stale file from an earlier run stays out).
ran=()
# On every way out (a step failed, the end, Ctrl+C): the page for what ran, and the exit code the
# script had (the failing step's; report's own exit 1 for that step's document adds nothing).
write_index() {
  local code=$?
  trap - EXIT
  if [ "${#ran[@]}" -gt 0 ]; then
    local rc=0 said
    # Its per-document lines would repeat the steps' own; only its error is shown.
    said=$(node bin/rmq-bench.js report "${ran[@]}" --html "$out/index.html" 2>&1 >/dev/null) || rc=$?
    # 0, 1 (a failed document), 65 and 66 (a malformed or unreadable one): the page is written.
    if [ "$rc" -le 1 ] || [ "$rc" -eq 65 ] || [ "$rc" -eq 66 ]; then
      echo "smoke: the steps that ran, in one page: $out/index.html" >&2
    else
      echo "smoke: could not write $out/index.html (rmq-bench report exit $rc): ${said##*$'\n'}" >&2
    fi
    # Every step passed, yet the page failed or disagrees: that is this run's failure.
    if [ "$code" -eq 0 ] && [ "$rc" -ne 0 ]; then
      [ "$rc" -eq 1 ] && echo "smoke: every step passed, yet rmq-bench report found a failed document" >&2
      [ "$rc" -eq 65 ] || [ "$rc" -eq 66 ] && echo "smoke: every step passed, yet rmq-bench report could not read a document: ${said##*$'\n'}" >&2
      code=$rc
    fi
  fi
  exit "$code"
}
trap write_index EXIT
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
  ran+=("$out/$name.json")
  node bin/rmq-bench.js "$@" --json >"$out/$name.json" || code=$?
  if [ "$code" -ne 0 ]; then
    echo "smoke: FAILED at $name (exit $code after $((SECONDS - started)) s); its output: $out/$name.json" >&2
    exit "$code"
  fi
  echo "smoke: $name passed in $((SECONDS - started)) s" >&2
}

step compare compare -n 5000
# RabbitMQ 4's own protocol: the same leader kill, AMQP 1.0 outcomes and pre-settled beside 0-9-1.
step compare-amqp10 compare -n 5000 --protocol amqp10
step delivery-limit-demo delivery-limit-demo --auto
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
