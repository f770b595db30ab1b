#!/usr/bin/env bash
# For readers of the article: the same as its failover.sh, but it finds the queue's *leader*,
# measures the election, and restores the node afterwards (pass --no-restore to keep it down).
# Usage: scripts/failover.sh [kill|stop|pause|disconnect] [more rmq-bench failover flags]
set -euo pipefail
cd "$(dirname "$0")/.."
fault=${1:-kill}
shift || true
exec node bin/rmq-bench.js failover --queue demo.orders --fault "$fault" "$@"
