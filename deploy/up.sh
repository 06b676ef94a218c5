#!/usr/bin/env bash
# Builds Logbook and starts the local stack: dependencies, `swift build -c release
# --static-swift-stdlib`, `logbook stack up` (waits until every service answers), then
# `logbook status`.
# Release, not debug: this is the stack people run, and Argon2id hashing and SQLite
# group commit are many times slower in a debug build. The tests use debug builds.
# The Swift runtime and Foundation linked in (as the container image does): a process
# starts without loading and relocating a dozen shared libraries, and holds less memory
# (docs/performance.md, "Static Swift runtime").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./deploy/install-deps.sh
swift build -c release --static-swift-stdlib
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"
# Where logbook is, said last even when the start below fails (to read its logs with it).
trap 'echo; echo "logbook is at $bin/logbook; add it to PATH, e.g.: export PATH=\"$bin:\$PATH\""' EXIT
"$bin/logbook" stack up
# 9 is "answering, but degraded" (for example a consumer still catching up): the stack is
# up and the table above says what is behind, so that is not a failed start.
"$bin/logbook" status || [ $? -eq 9 ]
