#!/usr/bin/env bash
# For readers of the article: its retry-demo, measured and verified. Extra flags go to the
# command, e.g. scripts/retry-demo.sh --failures 3 --auto
set -euo pipefail
cd "$(dirname "$0")/.."
exec node bin/rmq-bench.js retry-demo "$@"
