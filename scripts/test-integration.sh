#!/usr/bin/env bash
# The integration tests in two shards at once, each against its own 3-node cluster: the default
# one (rabbit1..3 on 5672-5674) and a second one beside it (rmq-bench-b-rabbit1..3 on
# 6672-6674 / 16672-16674 / 16692). Faults stay within a shard's cluster, so the shards never
# disturb each other; within a shard the files run one at a time, as before.
#
# Shard a holds every file that reads the workshop's one run (workshop-run.ts: the walkthrough
# is run once per vitest session), the others go to shard b. Every test file must be in exactly
# one shard: a new file that is in neither fails this script at once.
#
# RMQ_BENCH_SHARDS=1 runs all of it in one session against the default cluster (slower, one cluster).
set -euo pipefail
cd "$(dirname "$0")/.."

shard_a=(
  workshop consumer producer delayed-retry-demo durability-demo retry-demo dlq-demo html-report
  outbox watch dlq-tools consumer-timeout-demo alarm-demo
)
shard_b=(
  netfaults failover producer-crash compare-extra quorum-loss chaos audit bench cluster dlq-strategy alarm report terminal
)

files() { for f in "$@"; do echo "test/integration/$f.test.ts"; done; }

# Each file once, and no file left out.
all=$(ls test/integration/*.test.ts | sort)
listed=$( (files "${shard_a[@]}"; files "${shard_b[@]}") | sort)
if [ "$all" != "$listed" ]; then
  echo "test-integration: the shards do not list every integration test file exactly once:" >&2
  diff <(echo "$all") <(echo "$listed") >&2 || true
  exit 1
fi

if [ "${RMQ_BENCH_SHARDS:-2}" = "1" ]; then
  exec npx vitest run --project integration
fi

# The default cluster first: it builds the image when missing, which the second one then reuses.
node bin/rmq-bench.js cluster up

started=$SECONDS
prefix() { sed -u "s/^/[$1] /"; }
(npx vitest run --project integration $(files "${shard_a[@]}") 2>&1 | prefix a; exit "${PIPESTATUS[0]}") &
pid_a=$!
(
  export RMQ_BENCH_NAME=rmq-bench-b RMQ_BENCH_AMQP_PORT=6672 RMQ_BENCH_MANAGEMENT_PORT=16672 RMQ_BENCH_PROMETHEUS_PORT=16692
  npx vitest run --project integration $(files "${shard_b[@]}") 2>&1 | prefix b
  exit "${PIPESTATUS[0]}"
) &
pid_b=$!
code_a=0
code_b=0
wait "$pid_a" || code_a=$?
wait "$pid_b" || code_b=$?
echo "test-integration: shard a exit $code_a, shard b exit $code_b, $((SECONDS - started)) s" >&2
[ "$code_a" -eq 0 ] && [ "$code_b" -eq 0 ]
