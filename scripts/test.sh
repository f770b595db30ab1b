#!/usr/bin/env bash
# The whole test suite, from a fresh clone: a Docker engine (installed and started on Debian
# as root when missing), the npm dependencies, then unit and integration tests against real
# 3-node clusters (five, side by side: the image is built once, when missing), and the
# HTML reports opened in headless Chromium (Debian's package, installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# The engine and the browser (on a fresh machine both use apt: one after the other, one dpkg
# lock) beside npm ci, the linter and the build, rather than before them.
(bash scripts/ensure-engine.sh && bash scripts/ensure-browser.sh) &
setup_pid=$!
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
# The tools straight from node_modules/.bin: npx and npm run would each start npm itself first.
bin=node_modules/.bin
# Formatter and linter (npm run lint), beside the build: a style slip fails before the long tests.
"$bin/biome" check . &
lint_pid=$!
# The build (the integration tests run bin/, which loads dist/), then the integration tests in
# eight shards, each against its own cluster (scripts/test-integration.sh). Beside them, the tests'
# type check and the unit tests, while the shards mostly wait on brokers. `npm test` runs the
# same in one session.
# Both with tsc -b. It compiles a project again after errors, when a tsconfig is newer than the
# project's build info, or when an input newer than it is not what it last compiled (it keeps a
# hash of each). An edit made while a compiler run was reading is older than the build info
# that run then wrote, so the build info is first dated back to its tsconfig files: then every
# input edited since is compared.
# tsc_build INFO TSCONFIG [EXTENDED...]: tsc -b TSCONFIG, its build info INFO first made no newer
# than TSCONFIG and the files it extends.
tsc_build() {
  local info="$1" newest
  shift
  newest=$(ls -t "$@" | head -n 1)
  if [ "$info" -nt "$newest" ]; then touch -r "$newest" "$info"; fi
  "$bin/tsc" -b "$1"
}
tsc_build dist/.tsbuildinfo tsconfig.json
wait "$lint_pid"
wait "$setup_pid"
# Tests that passed only on their own retry (test/retry-reporter.ts) are listed at the very end.
retried=$(mktemp)
trap 'rm -f "$retried"' EXIT
export RMQ_BENCH_RETRIED_FILE="$retried"
(tsc_build node_modules/.cache/rmq-bench/tsconfig.test.tsbuildinfo tsconfig.test.json tsconfig.json && "$bin/vitest" run --project unit) 2>&1 | sed -u 's/^/[unit] /' &
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
