#!/usr/bin/env bash
# THE test command: dependencies, then every test target of the package (unit, runtime
# and end-to-end tests, which start the real executables). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./deploy/install-deps.sh
# Serially: many suites start real services and give them seconds to answer; run all at
# once on a two-core machine, they starve each other's services and fail on time, not on
# behaviour. Concurrency is exercised inside the tests (1,000 concurrent requests, parallel
# buys, a kill -9 during a burst). The whole suite takes about a minute and a half.
swift test --no-parallel "$@"
