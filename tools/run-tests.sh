#!/usr/bin/env bash
# Quick start #2: set up (idempotent), then run the whole test suite.
#   tools/run-tests.sh [ctest options...]     e.g. -L unit, -R Conv, -E e2e
#   WT_TEST_JOBS=4 tools/run-tests.sh         parallel ctest jobs (default 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/setup.sh

echo "==> running tests"
exec ctest --test-dir build --output-on-failure --no-tests=error -j"${WT_TEST_JOBS:-2}" "$@"
