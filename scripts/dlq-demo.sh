#!/usr/bin/env bash
# For readers of the article: its dlq-demo, verified. Extra flags go to the command,
# e.g. scripts/dlq-demo.sh --reason all --auto
set -euo pipefail
cd "$(dirname "$0")/.."
exec node bin/rmq-bench.js dlq-demo "$@"
