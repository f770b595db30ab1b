#!/usr/bin/env bash
# For readers of the article: RabbitMQ 4.3's native delayed retry, measured against
# min(min × delivery count, max). Extra flags go to the command, e.g.
# scripts/delayed-retry-demo.sh --type failed --min 2s --max 10s -n 3 --auto
set -euo pipefail
cd "$(dirname "$0")/.."
exec node bin/rmq-bench.js delayed-retry-demo "$@"
