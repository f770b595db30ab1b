#!/bin/sh
# rmq-bench node entrypoint: writes the shared Erlang cookie, then hands over to the image's
# own entrypoint. Works with the official rabbitmq image and with the image rmq-bench builds
# from Debian packages (both: HOME=/var/lib/rabbitmq, docker-entrypoint.sh drops privileges).
set -eu
home="${HOME:-/var/lib/rabbitmq}"
cookie="${RMQ_BENCH_ERLANG_COOKIE:?RMQ_BENCH_ERLANG_COOKIE must be set}"
mkdir -p "$home"
rm -f "$home/.erlang.cookie"
printf '%s' "$cookie" > "$home/.erlang.cookie"
chmod 400 "$home/.erlang.cookie"
chown rabbitmq:rabbitmq "$home" "$home/.erlang.cookie" 2>/dev/null || true
exec docker-entrypoint.sh "$@"
