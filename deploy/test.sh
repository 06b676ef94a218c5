#!/usr/bin/env bash
# THE test command: dependencies, then every test target of the package (unit, runtime
# and end-to-end tests, which start the real executables). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./deploy/install-deps.sh
# Installs the Debian packages named (with sudo when not root).
install_packages() {
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "test: missing $*; run as root or install sudo" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "test: installing $*"
    "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@"
}
# What the tests use beyond the build: strace (the fsync check on a real service).
command -v strace >/dev/null || install_packages strace
# The deployment tests (Tests/EndToEndTests/{Systemd,Kubernetes,MultiHost}Tests.swift):
# systemd-analyze (systemd), ip (iproute2), openssl and curl, and a Python with PyYAML and a pinned
# kubernetes-validate (it ships the Kubernetes schemas) in .build/deploy-venv.
need=()
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v ip >/dev/null || need+=(iproute2)
command -v python3 >/dev/null || need+=(python3)
# the HTTP edge's TLS test (HTTPTLSTests.swift): a throwaway certificate, a real HTTPS client
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
[[ ${#need[@]} -eq 0 ]] || install_packages "${need[@]}"
venv=.build/deploy-venv
if ! "$venv/bin/python3" -c 'import yaml, kubernetes_validate' 2>/dev/null; then
    echo "test: installing kubernetes-validate and PyYAML into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'kubernetes-validate==1.37.0' 'PyYAML==6.0.3'
fi
# Schemathesis, the independent HTTP client of Tests/EndToEndTests/SchemathesisTests.swift:
# the one on PATH, else a pinned one in the same venv (Debian's own python3 has no pip, and
# refuses installs into the system's packages: PEP 668).
if ! command -v schemathesis >/dev/null && [[ ! -x "$venv/bin/schemathesis" ]]; then
    echo "test: installing schemathesis into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'schemathesis==4.32.5'
fi
# Serially: many suites start real services and give them seconds to answer; run all at
# once on a two-core machine, they starve each other's services and fail on time, not on
# behaviour. Concurrency is exercised inside the tests (1,000 concurrent requests, parallel
# buys, a kill -9 during a burst). The whole suite takes about a minute and a half.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
swift test --no-parallel "$@" 2>&1 | tee "$log" || status=$?
# One plain closing line from Swift Testing's summary (XCTest, which has no tests here,
# also prints "Executed 0 tests"): N passed, N failed.
total=$(grep -oE 'Test run with [0-9]+ tests?' "$log" | tail -1 | grep -oE '[0-9]+' || true)
failed=$(grep -E '^✘ Test .* failed after' "$log" | grep -vc '^✘ Test run with' || true)
# The request decoder under libFuzzer for a bounded time (LOGBOOK_FUZZ_SECONDS, default 60;
# 0 only replays the corpus and saved crash inputs), when the whole suite was asked for.
fuzz_status=0
if [[ $# -eq 0 ]]; then
    ./deploy/fuzz.sh "${LOGBOOK_FUZZ_SECONDS:-60}" || fuzz_status=$?
    [[ $fuzz_status == 0 ]] && echo "fuzz: passed" || echo "fuzz: FAILED"
fi
if [[ -n "$total" ]]; then
    # The failures again at the very end, where a CI log's tail is read: each failed test and
    # each issue it recorded (file:line and the expectation), not buried in the run above.
    if [[ $failed != 0 ]]; then
        echo "failures:"
        awk '/^✘ Test .*recorded an issue/ { print "  " $0; more = 1; next }
             more && /^[[:space:]]+↳/ { print "    " $0; next }
             { more = 0 }
             /^✘ Test .*failed after/ && !/^✘ Test run with/ { print "  " $0 }' "$log" | head -80
    fi
    echo "tests: $((total - failed)) passed, $failed failed"
fi
[[ $status == 0 ]] && status=$fuzz_status
exit "$status"
