#!/usr/bin/env bash
# The integration tests of one tier, in shards at once, each against its own cluster.
#   bash scripts/test-integration.sh [default|heavy]
# default (the contributor's loop, the README's test command): the headline claims on the default
#   RabbitMQ 4.3 of 3 nodes, in six shards: the default cluster (rabbit1..3 on 5672-5674 /
#   15672-15674 / 15692) and five more of 3 nodes beside it, rmq-bench-b to -e
#   (rmq-bench-X-rabbit1..3 on 6672, 7672, 8672 and 9672 and the two ports above each; management
#   on 16672 to 19672; Prometheus on 16692 to 19692) and rmq-bench-k (27672, 37672, 37692).
# heavy (`scripts/test.sh --all` runs it after the default tier; CI runs both): rmq-bench-f of 5
#   nodes (11672-11676, 21672-21676, 21692), the older versions, rmq-bench-g (3.10) and
#   rmq-bench-h (4.0) on 12672 and 13672 (management 22672 and 23672), and two of 3 nodes of 4.3
#   for the long runs of fault claims, rmq-bench-i (10672, 20672, 20692) and rmq-bench-j (26672,
#   36672, 36692). Each cluster's stream ports are its AMQP ports less 120 (5552-5554 for the
#   default one, 26552-26554 for j). At its end the heavy clusters are taken down (their volumes
#   kept), so that they do not idle beside the next default run.
# Faults stay within a shard's cluster, so the shards never disturb each other; within a shard the
# files run one at a time. A shard's global setup brings its cluster up (creating its containers,
# the first time, from the 4.3 image built first, or its version's image) and prints how long
# that took. An idle node costs little CPU (docker-compose.yml has no healthcheck: rmq-bench asks
# the management API itself), but the machine is CPU-bound: a tier's time is about its CPU divided
# by the cores (docs/DEVELOPMENT.md, "What a run costs"), which is what decides a file's tier.
#
# The workshop is run in three parts (workshop-run.ts), by the global setup of shards a to c
# (RMQ_BENCH_WORKSHOP_PART), before any test file, and each of those shards holds the files that
# read its part's documents (a file elsewhere would run that part again). The rest is spread so
# the shards end together. Every test file must be in exactly one shard of one tier: a new file
# that is in none fails at once.
#
# A vitest process per shard, not one with a project per cluster: vitest 4.1 runs the projects' global
# setups one after another, in its main process without their test.env, and projects run side by
# side only under one shared maxWorkers: 1 runs the shards in turn, more runs a shard's files at once.
#
# RMQ_BENCH_SHARDS=1 runs the default tier in one session against the default cluster (slower).
set -euo pipefail
cd "$(dirname "$0")/.."

tier="${1:-default}"

# The default tier.
# Workshop part 1 (durability, confirms, transactions) and the files that read it.
shard_a=(workshop-1 producer durability-demo amqp10)
# Part 2 (consumers, dead letters, retry, the checklist) and its files. Not audit.test.ts: it
# drops unroutable messages on purpose, which the nodes count until they restart, and the
# workshop's audit (part 2's last step) fails on such a count: the next run's global setup would
# have to restart this shard's nodes first (resetDropCount in global-setup.ts).
shard_b=(workshop-2 consumer retry-demo dlq-demo)
# Part 3 (delayed retry, consumer timeouts, alarms) and its files.
shard_c=(workshop-3 delayed-retry-demo consumer-timeout-demo delivery-limit-demo alarm-demo cluster package terminal dlq-tools quorum-loss)
# No workshop part. To keep the shards ending together, move a file from the shard that ends
# last to the one that ends first: a run prints each shard's time and each file's, and
# `node bench/test-cost.mjs` each file's CPU.
shard_d=(audit alarm consumer-amqp10 html-report dlq-strategy bench)
shard_e=(failover watch report refusals verify-many outbox error-document)
# The README's fault table under traffic, one witnessed compare per row of 3 nodes (about 25 s
# each, mostly waiting on elections and heals: little CPU), on a cluster of its own so that its
# partitions and cuts run beside the workshop.
shard_k=(fault-table)

# The heavy tier.
# A 5-node cluster (rmq-bench-f-rabbit1..5 on 11672-11676, management 21672-21676): what only five
# nodes can show (the partition ring); and cluster up starting again a node that exits while it
# boots (killed twice: the shard with time to spare).
shard_f=(five-nodes cluster-up-exits)
# The older versions, each a 3-node cluster of its own (its image built from its Debian suite the
# first time): RabbitMQ 3.10 (rmq-bench-g on 12672, mirrored queues, partition handling ignore)
# and 4.0 (rmq-bench-h on 13672: the delivery limit and consumer timeouts before 4.3; the stable
# feature flags enabled under traffic, on the cluster made afresh with only the required ones
# and made afresh again after).
shard_g=(versions-310)
shard_h=(versions-40 feature-flags)
# The long runs of fault claims on 4.3, the files that cost the most CPU: a partition's election
# and heal (netfaults), the chaos schedule, producers killed mid-run, and a cluster made again
# from another clone's files (clone-containers: every node restarted twice).
shard_i=(netfaults chaos producer-crash clone-containers)
# More of them: every leader fault in turn and a rolling restart under traffic (leader-faults),
# compare interrupted by Ctrl+C mid-fault or run without dockerode (compare-extra), the whole
# cluster killed at once (kill-all), and a stream's writer killed under compare (streams).
shard_j=(leader-faults compare-extra amqp10-faults kill-all stream-coordinator streams streams-native thresholds-junit stuck-deliveries)

TIER_default=(a b c d e k)
TIER_heavy=(f g h i j)
declare -A NAME=([a]=rmq-bench [b]=rmq-bench-b [c]=rmq-bench-c [d]=rmq-bench-d [e]=rmq-bench-e [f]=rmq-bench-f [g]=rmq-bench-g [h]=rmq-bench-h [i]=rmq-bench-i [j]=rmq-bench-j [k]=rmq-bench-k)
declare -A AMQP=([a]=5672 [b]=6672 [c]=7672 [d]=8672 [e]=9672 [f]=11672 [g]=12672 [h]=13672 [i]=10672 [j]=26672 [k]=27672)
declare -A MGMT=([a]=15672 [b]=16672 [c]=17672 [d]=18672 [e]=19672 [f]=21672 [g]=22672 [h]=23672 [i]=20672 [j]=36672 [k]=37672)
declare -A PROM=([a]=15692 [b]=16692 [c]=17692 [d]=18692 [e]=19692 [f]=21692 [g]=22692 [h]=23692 [i]=20692 [j]=36692 [k]=37692)
declare -A PART=([a]=1 [b]=2 [c]=3 [d]= [e]= [f]= [g]= [h]= [i]= [j]= [k]=)
declare -A NODE_COUNT=([a]=3 [b]=3 [c]=3 [d]=3 [e]=3 [f]=5 [g]=3 [h]=3 [i]=3 [j]=3 [k]=3)
declare -A RABBITMQ=([a]=4.3 [b]=4.3 [c]=4.3 [d]=4.3 [e]=4.3 [f]=4.3 [g]=3.10 [h]=4.0 [i]=4.3 [j]=4.3 [k]=4.3)

case "$tier" in
  default) SHARDS=("${TIER_default[@]}") ;;
  heavy) SHARDS=("${TIER_heavy[@]}") ;;
  *)
    echo "test-integration: unknown tier '$tier' (default or heavy)" >&2
    exit 2
    ;;
esac

files() { for f in "$@"; do echo "test/integration/$f.test.ts"; done; }
shard_files() {
  local -n list="shard_$1"
  files "${list[@]}"
}

# Each file once, and no file left out.
all=$(find test/integration -name '*.test.ts' | sort) # what vitest.config.ts includes
listed=$(for s in "${TIER_default[@]}" "${TIER_heavy[@]}"; do shard_files "$s"; done | sort)
if [ "$all" != "$listed" ]; then
  echo "test-integration: the shards of the two tiers do not list every integration test file exactly once:" >&2
  diff <(echo "$all") <(echo "$listed") >&2 || true
  exit 1
fi

if [ "${RMQ_BENCH_SHARDS:-}" = "1" ] && [ "$tier" = "default" ]; then
  # shellcheck disable=SC2046
  exec node_modules/.bin/vitest run --project integration $(for s in "${SHARDS[@]}"; do shard_files "$s"; done)
fi

# The 4.3 image first, once: the 4.3 shards' setups would each build it at the same time. In the
# default tier the default cluster's `cluster up` builds it when missing.
if [ "$tier" = "default" ]; then
  node bin/rmq-bench.js cluster up
else
  node bin/rmq-bench.js cluster image
fi

started=$SECONDS
prefix() { sed -u "s/^/[$1] /"; }
declare -A PID
for s in "${SHARDS[@]}"; do
  (
    set +e # a failing shard still says when it ended
    export RMQ_BENCH_NAME="${NAME[$s]}" RMQ_BENCH_AMQP_PORT="${AMQP[$s]}" RMQ_BENCH_MANAGEMENT_PORT="${MGMT[$s]}" RMQ_BENCH_PROMETHEUS_PORT="${PROM[$s]}" RMQ_BENCH_WORKSHOP_PART="${PART[$s]}" RMQ_BENCH_NODES="${NODE_COUNT[$s]}" RMQ_BENCH_RABBITMQ="${RABBITMQ[$s]}"
    # shellcheck disable=SC2046
    node_modules/.bin/vitest run --project integration $(shard_files "$s") 2>&1 | prefix "$s"
    code="${PIPESTATUS[0]}"
    echo "test-integration: shard $s ended (exit $code) after $((SECONDS - started)) s" >&2
    exit "$code"
  ) &
  PID[$s]=$!
done
failed=0
summary=""
for s in "${SHARDS[@]}"; do
  code=0
  wait "${PID[$s]}" || code=$?
  summary+=" shard $s exit $code,"
  [ "$code" -eq 0 ] || failed=1
done
echo "test-integration: tier $tier:${summary} $((SECONDS - started)) s" >&2
if [ "$tier" = "heavy" ]; then
  for s in "${SHARDS[@]}"; do
    RMQ_BENCH_NAME="${NAME[$s]}" RMQ_BENCH_NODES="${NODE_COUNT[$s]}" RMQ_BENCH_RABBITMQ="${RABBITMQ[$s]}" node bin/rmq-bench.js cluster down >/dev/null 2>&1 ||
      echo "test-integration: could not take ${NAME[$s]} down" >&2
  done
fi
[ "$failed" -eq 0 ]
