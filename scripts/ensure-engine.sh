#!/usr/bin/env bash
# Make a Docker engine (and a compose tool) answer on this machine.
#
# - If `docker info` already answers: nothing to do.
# - On Debian/Ubuntu as root: install Debian's docker.io (and docker-compose when neither
#   `docker compose` nor `docker-compose` exists), start dockerd in the background and wait
#   for its socket with a deadline.
# - Elsewhere: print exactly what to do and exit 69 (EX_UNAVAILABLE).
#
# Environment: RMQ_BENCH_ENGINE_TIMEOUT_S (default 60), RMQ_BENCH_DOCKERD_LOG
# (default /var/log/rmq-bench-dockerd.log).
set -euo pipefail

timeout_s=${RMQ_BENCH_ENGINE_TIMEOUT_S:-60}
dockerd_log=${RMQ_BENCH_DOCKERD_LOG:-/var/log/rmq-bench-dockerd.log}

say() { printf 'ensure-engine: %s\n' "$*" >&2; }
die() { printf 'ensure-engine: %s\n' "$*" >&2; exit "${2:-69}"; }

engine_answers() { docker info >/dev/null 2>&1; }
has_compose() { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; }
is_debian() { [ -r /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
    apt_updated=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
    || die "apt-get install $* failed"
}

if engine_answers && has_compose; then
  say "engine answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null)); compose: $(docker compose version --short 2>/dev/null || docker-compose version --short 2>/dev/null)"
  exit 0
fi

if ! is_debian || [ "$(id -u)" != 0 ]; then
  if ! command -v docker >/dev/null 2>&1; then
    die "no docker client found. Install Docker Desktop (macOS/Windows) or Docker Engine (Linux), start it, and run this again."
  fi
  if ! engine_answers; then
    die "the Docker engine does not answer ('docker info' failed). Start Docker Desktop, or on Linux run: sudo systemctl start docker (or: sudo bash $0 on Debian)."
  fi
  die "no compose tool: install the Docker Compose plugin ('docker compose') or docker-compose."
fi

# Debian, as root.
if ! command -v dockerd >/dev/null 2>&1; then
  apt_install docker.io
fi
if ! has_compose; then
  apt_install docker-compose
fi
# Debian's docker.io does not pull in iptables/ip6tables on minimal systems everywhere.
command -v iptables >/dev/null 2>&1 || apt_install iptables

if ! engine_answers; then
  say "starting dockerd (log: $dockerd_log)"
  # A stale pid file from a killed session stops dockerd from starting.
  if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
    rm -f /var/run/docker.pid
  fi
  if [ -S /var/run/docker.sock ] && ! pgrep -x dockerd >/dev/null 2>&1; then
    rm -f /var/run/docker.sock
  fi
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    # containerd: Debian's dockerd starts its own when none runs.
    nohup dockerd >>"$dockerd_log" 2>&1 </dev/null &
    disown || true
  fi
  deadline=$((SECONDS + timeout_s))
  until engine_answers; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 20 "$dockerd_log" >&2 || true
      die "dockerd did not answer within ${timeout_s} s (log: $dockerd_log)"
    fi
    sleep 0.5
  done
fi

say "engine answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null)); compose: $(docker compose version --short 2>/dev/null || docker-compose version --short 2>/dev/null)"
