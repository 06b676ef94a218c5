#!/usr/bin/env bash
# THE test command: dependencies, then every test target of the package (unit, runtime
# and end-to-end tests, which start the real executables). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./deploy/install-deps.sh
swift test "$@"
