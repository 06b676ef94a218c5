#!/usr/bin/env bash
# Builds Logbook and starts the local stack: dependencies, `swift build -c release`,
# `logbook stack up` (waits until every service answers), then `logbook status`.
# Release, not debug: this is the stack people run, and Argon2id hashing and SQLite
# group commit are many times slower in a debug build. The tests use debug builds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./deploy/install-deps.sh
swift build -c release
bin="$(swift build -c release --show-bin-path)"
"$bin/logbook" stack up
"$bin/logbook" status
echo
echo "logbook is at $bin/logbook; add it to PATH, e.g.: export PATH=\"$bin:\$PATH\""
