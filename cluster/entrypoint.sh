#!/bin/sh
# rmq-bench node entrypoint: writes the shared Erlang cookie and the node's rabbitmq.conf (the
# settings in /etc/rmq-bench/rabbitmq.conf, then the peer list of rabbit1..N for
# RMQ_BENCH_NODES = 3 or 5, what the RabbitMQ line RMQ_BENCH_RABBITMQ accepts beyond those,
# RMQ_BENCH_PARTITION_HANDLING when set, the host port the node's stream listener is published
# on, from RMQ_BENCH_STREAM_PORT; with RMQ_BENCH_FEATURE_FLAGS=required, an empty
# RABBITMQ_FEATURE_FLAGS), then hands over to the image's own entrypoint. Works with the
# official rabbitmq image and with the image rmq-bench builds from Debian packages (both:
# HOME=/var/lib/rabbitmq, docker-entrypoint.sh drops privileges).
set -eu
home="${HOME:-/var/lib/rabbitmq}"
cookie="${RMQ_BENCH_ERLANG_COOKIE:?RMQ_BENCH_ERLANG_COOKIE must be set}"
nodes="${RMQ_BENCH_NODES:-3}"
case "$nodes" in
  3 | 5) ;;
  *) echo "rmq-bench entrypoint: RMQ_BENCH_NODES=$nodes is not 3 or 5" >&2; exit 64 ;;
esac
line="${RMQ_BENCH_RABBITMQ:-4.3}"
partition_handling="${RMQ_BENCH_PARTITION_HANDLING:-}"
case "$partition_handling" in
  '' | ignore | pause_minority | autoheal) ;;
  *) echo "rmq-bench entrypoint: RMQ_BENCH_PARTITION_HANDLING=$partition_handling is not ignore, pause_minority or autoheal" >&2; exit 64 ;;
esac
stream_base="${RMQ_BENCH_STREAM_PORT:-5552}"
# rabbitN (the compose service's host name) is node N: its stream port on the host is base + N - 1.
host="${HOSTNAME:-$(hostname)}"
index="${host#rabbit}"
case "$index" in
  1 | 2 | 3 | 4 | 5) ;;
  *) echo "rmq-bench entrypoint: host name $host is not rabbit1..rabbit5" >&2; exit 64 ;;
esac
case "$stream_base" in
  '' | *[!0-9]*) echo "rmq-bench entrypoint: RMQ_BENCH_STREAM_PORT=$stream_base is not a port" >&2; exit 64 ;;
esac
stream_port=$((stream_base + index - 1))
feature_flags="${RMQ_BENCH_FEATURE_FLAGS:-stable}"
case "$feature_flags" in
  stable) ;;
  # Set and empty: on a node's first boot RabbitMQ enables no feature flag but the required ones
  # (it reads the variable on that boot only; a node that has booted keeps its flags).
  required) export RABBITMQ_FEATURE_FLAGS= ;;
  *) echo "rmq-bench entrypoint: RMQ_BENCH_FEATURE_FLAGS=$feature_flags is not stable or required" >&2; exit 64 ;;
esac
mkdir -p "$home"
rm -f "$home/.erlang.cookie"
printf '%s' "$cookie" > "$home/.erlang.cookie"
chmod 400 "$home/.erlang.cookie"
chown rabbitmq:rabbitmq "$home" "$home/.erlang.cookie" 2>/dev/null || true

conf=/etc/rabbitmq/rabbitmq.conf
settings() {
  cat /etc/rmq-bench/rabbitmq.conf
  echo
  echo "# Written by cluster/entrypoint.sh for RMQ_BENCH_NODES=$nodes, RMQ_BENCH_RABBITMQ=$line: the peers,"
  echo "# and every quorum queue grown to a member on each node."
  echo "cluster_formation.peer_discovery_backend = classic_config"
  i=1
  while [ "$i" -le "$nodes" ]; do
    echo "cluster_formation.classic_config.nodes.$i = rabbit@rabbit$i"
    i=$((i + 1))
  done
  case "$line" in
    3.*) ;; # no continuous membership reconciliation before 3.13: cluster up grows the members
    *)
      echo "# A quorum queue declared while only one node had booted gets its missing members added as"
      echo "# the other nodes join (rmq-bench cluster up also grows them explicitly)."
      echo "quorum_queue.continuous_membership_reconciliation.enabled = true"
      echo "quorum_queue.continuous_membership_reconciliation.trigger_interval = 10000"
      echo "quorum_queue.continuous_membership_reconciliation.target_group_size = $nodes"
      ;;
  esac
  echo "# A stream client on the host is sent to a stream's leader or replica by the host and port"
  echo "# that node advertises: 127.0.0.1 and its published port (RMQ_BENCH_STREAM_PORT + $index - 1)."
  echo "stream.advertised_host = 127.0.0.1"
  echo "stream.advertised_port = $stream_port"
  if [ -n "$partition_handling" ]; then
    echo "cluster_partition_handling = $partition_handling"
  fi
}
# A container made from an older docker-compose.yml has rabbitmq.conf bind-mounted read-only: it
# keeps that file (its node is clustered already; the peer list matters only on a first boot).
if ! settings 2>/dev/null > "$conf"; then
  echo "rmq-bench entrypoint: $conf is read-only here (a container made by an older docker-compose.yml): kept as it is" >&2
fi
exec docker-entrypoint.sh "$@"
