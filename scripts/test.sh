#!/usr/bin/env bash
# The whole test suite, from a fresh clone: a Docker engine (installed and started on Debian
# as root when missing), the npm dependencies, then unit and integration tests against real
# 3-node clusters (five, side by side: the image is built once, when missing), and the
# HTML reports opened in headless Chromium (Debian's package, installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# The engine and the browser (on a fresh machine both use apt: one after the other, one dpkg
# lock) beside npm ci, the linter and the build: a warm run waits about 2 s here, not 5.
(bash scripts/ensure-engine.sh && bash scripts/ensure-browser.sh) &
setup_pid=$!
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
# The tools straight from node_modules/.bin: npx or npm run would cost about 1 s of CPU each time
# before the tool itself starts (eight times a run).
bin=node_modules/.bin
# Formatter and linter (npm run lint), beside the build: a style slip fails before the long tests.
"$bin/biome" check . &
lint_pid=$!
# The build (the integration tests run bin/, which loads dist/), then the integration tests in
# five shards, each against its own cluster (scripts/test-integration.sh). Beside them, the tests'
# type check and the unit tests: under a minute of CPU, while the shards mostly wait on brokers.
# `npm test` runs the same in one session.
# Both compilers are incremental (tsconfig*.json: .tsbuildinfo), yet with nothing changed each
# still costs 3 to 5 CPU-s (every file read and hashed). So each is skipped when nothing it reads
# has changed since it last succeeded: a stamp written on success, and no file, nor folder (a file
# added, renamed or deleted changes its folder), newer than the stamp.
stamps=node_modules/.cache/rmq-bench
mkdir -p "$stamps"
# unchanged STAMP INPUT...: the stamp exists and nothing among the inputs is newer.
unchanged() {
  local stamp="$1"
  shift
  [ -f "$stamp" ] && [ -z "$(find "$@" -newer "$stamp" -print -quit)" ]
}
build_inputs=(src tsconfig.json package-lock.json)
if unchanged "$stamps/build.ok" "${build_inputs[@]}" && [ -f dist/cli/main.js ]; then
  echo "test: build skipped: nothing in ${build_inputs[*]} changed since the last build" >&2
else
  rm -f "$stamps/build.ok"
  touch "$stamps/build.started"
  "$bin/tsc" -p tsconfig.json
  mv "$stamps/build.started" "$stamps/build.ok" # the time the build started: an edit during it builds again
fi
wait "$lint_pid"
wait "$setup_pid"
typecheck() {
  local inputs=(src test bench vitest.config.ts tsconfig.json tsconfig.test.json package-lock.json)
  if unchanged "$stamps/typecheck.ok" "${inputs[@]}"; then
    echo "test: type check skipped: nothing in ${inputs[*]} changed since the last clean check"
    return 0
  fi
  rm -f "$stamps/typecheck.ok"
  touch "$stamps/typecheck.started"
  # `|| return`: called on the left of &&, the function runs without errexit.
  "$bin/tsc" -p tsconfig.test.json --noEmit || return
  mv "$stamps/typecheck.started" "$stamps/typecheck.ok"
}
# Tests that passed only on their own retry (test/retry-reporter.ts) are listed at the very end.
retried=$(mktemp)
trap 'rm -f "$retried"' EXIT
export RMQ_BENCH_RETRIED_FILE="$retried"
(typecheck && "$bin/vitest" run --project unit) 2>&1 | sed -u 's/^/[unit] /' &
unit_pid=$!
code_integration=0
bash scripts/test-integration.sh || code_integration=$?
code_unit=0
wait "$unit_pid" || code_unit=$?
if [ -s "$retried" ]; then
  echo "test: $(wc -l <"$retried") tests passed only on a retry (each carries its own retry, with a comment saying why):" >&2
  cat "$retried" >&2
else
  echo "test: no test needed a retry" >&2
fi
echo "test: type check and unit tests exit $code_unit, integration tests exit $code_integration" >&2
[ "$code_unit" -eq 0 ] && [ "$code_integration" -eq 0 ]
