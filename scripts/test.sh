#!/usr/bin/env bash
# The tests, from a fresh clone: a Docker engine (installed and started on Debian as root when
# missing), the npm dependencies, then the type checks, the unit tests and the integration tests
# against real clusters, and the HTML reports opened in headless Chromium (Debian's package,
# installed when missing).
#   bash scripts/test.sh          the contributor's loop: the default tier, the headline claims on
#                                 the default RabbitMQ 4.3 of 3 nodes (six clusters side by side)
#   bash scripts/test.sh --all    the default tier, then the heavy one: 5 nodes, 3.10, 4.0 and the
#                                 long fault runs (what CI runs: .ci/run)
#   bash scripts/test.sh --heavy  the heavy tier alone
# scripts/test-integration.sh names each tier's files.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  '') TIERS=(default) ;;
  --all) TIERS=(default heavy) ;;
  --heavy) TIERS=(heavy) ;;
  *)
    echo "test: unknown option '$1' (none: the default tier; --all: default then heavy; --heavy: the heavy tier)" >&2
    exit 2
    ;;
esac

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
# The build (the integration tests run bin/, which loads dist/), then the integration tests of
# each tier in shards, each against its own cluster (scripts/test-integration.sh). Beside the
# first tier, the tests' type check and the unit tests. `npm test` runs every file in one session.
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
declare -A CODE TOOK
code_integration=0
for tier in "${TIERS[@]}"; do
  tier_started=$SECONDS
  CODE[$tier]=0
  bash scripts/test-integration.sh "$tier" || CODE[$tier]=$?
  TOOK[$tier]=$((SECONDS - tier_started))
  [ "${CODE[$tier]}" -eq 0 ] || code_integration=1
  if [ "$tier" = "${TIERS[0]}" ]; then
    code_unit=0
    wait "$unit_pid" || code_unit=$?
  fi
done
if [ -s "$retried" ]; then
  echo "test: $(wc -l <"$retried") tests passed only on a retry (each carries its own retry, with a comment saying why):" >&2
  cat "$retried" >&2
else
  echo "test: no test needed a retry" >&2
fi
for tier in "${TIERS[@]}"; do
  echo "test: $tier tier's integration tests exit ${CODE[$tier]} after ${TOOK[$tier]} s" >&2
done
echo "test: type check and unit tests exit $code_unit; whole command $SECONDS s" >&2
[ "$code_unit" -eq 0 ] && [ "$code_integration" -eq 0 ]
