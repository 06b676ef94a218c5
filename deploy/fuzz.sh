#!/usr/bin/env bash
# Fuzzes the request decoder (Tests/Fuzz/Fuzz.swift) with libFuzzer for a bounded time, then
# replays the checked-in corpus and every saved crash input as regression tests.
#   deploy/fuzz.sh [SECONDS]     (default 60; 0 only replays)
# The fuzzing build is separate (.build/fuzz, -sanitize=fuzzer, linked with the toolchain's
# lld: gold fails on it) so it never disturbs the normal one. New interesting inputs go to a scratch corpus; crash inputs are saved under
# Tests/Fuzz/crashes/ (check them in: they are replayed by the regression run from then on).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
corpus=Tests/Fuzz/corpus
crashes=Tests/Fuzz/crashes
mkdir -p "$crashes" .build  # (the build logs go there, before any build has made it)

if [[ "$seconds" != 0 ]]; then
    if ! swift build --product logbook-fuzz --scratch-path .build/fuzz \
        -Xswiftc -sanitize=fuzzer -Xswiftc -DLOGBOOK_FUZZ -Xswiftc -use-ld=lld >.build/fuzz-build.log 2>&1; then
        tail -30 .build/fuzz-build.log
        echo "fuzz: the libFuzzer build failed (does this toolchain support -sanitize=fuzzer?)" >&2
        exit 1
    fi
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    status=0
    # -rss_limit_mb: the services decode real bodies; a leak shows up as growth past this.
    # -dict: JSON's tokens and edge numbers (Tests/Fuzz/json.dict). SWIFT_BACKTRACE=enable=no:
    # Swift's backtracer would take a trap's signal first, and libFuzzer would then neither
    # save the input nor print it (a CI run once lost its crash input that way).
    SWIFT_BACKTRACE=enable=no .build/fuzz/debug/logbook-fuzz "$work" "$corpus" -max_total_time="$seconds" -timeout=10 \
        -dict=Tests/Fuzz/json.dict -rss_limit_mb=4096 -artifact_prefix="$crashes/" -print_final_stats=1 2>"$work/log" || status=$?
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$work/log" || true
    echo "fuzz: $(ls "$work" | wc -l) new inputs beyond the $(ls "$corpus" | wc -l) of the checked-in corpus"
    if [[ $status != 0 ]]; then
        tail -40 "$work/log"
        # The input itself, last, so a CI log that keeps only its tail still shows it.
        grep -E '^(Base64:|artifact_prefix=)' "$work/log" || true
        echo "fuzz: libFuzzer found a failing input (saved under $crashes/)" >&2
        exit 1
    fi
fi
# Regression: the corpus and every crash input found so far, through the normal build.
if ! swift build --product logbook-fuzz >.build/fuzz-replay-build.log 2>&1; then
    tail -30 .build/fuzz-replay-build.log
    exit 1
fi
.build/debug/logbook-fuzz "$corpus" "$crashes"
