#!/usr/bin/env bash
# Writes deploy/link-order.txt: the functions the release executables run while they
# start, serve a typical session and sit idle, one mangled symbol a line. Release links
# pass it to lld (--symbol-ordering-file, Package.swift), which puts those functions
# next to each other at the start of the code segment. The kernel maps 16 pages around
# every code page a process touches, so code used at start-up and idle, scattered through
# 19-27 MB of code, kept 12-13 MB of each service resident; laid out together it keeps
# about 8 (docs/performance.md, "Code laid out by use").
#
# A symbol the file names and an executable lacks is skipped, and a function it does not
# name is placed after the listed ones, so a stale file costs memory, never correctness.
# Run this again after large changes to what runs at start-up (it takes a few minutes):
#   deploy/link-order.sh && swift build -c release --static-swift-stdlib
# (the build does not know the file is an input of the link: this script removes the
# release executables at its end, so that the next build links them again).
#
# How: the executables run under valgrind's callgrind, which records every function that
# executes. The services run under a supervisor of a throwaway stack (LOGBOOK_BIN_DIR points
# at wrappers), the CLI runs every command of the session under it too. Valgrind cannot read
# the release builds' DWARF 5, so it runs copies without debug information (the symbol
# table, which is all it needs here, is kept).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"

if ! command -v valgrind >/dev/null; then
    sudo=(); [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq valgrind
fi
swift build -c release --static-swift-stdlib
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"

work="$(mktemp -d /tmp/lb-link-order.XXXXXX)"
home="$work/home"
cleanup() {
    LOGBOOK_HOME="$home" LOGBOOK_CONFIG_DIR="$home/config" "$bin/logbook" stack down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/real" "$work/out" "$home"

grind() {  # grind NAME: the callgrind command line for NAME's stripped copy
    echo valgrind -q --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no \
        --compress-pos=no "--callgrind-out-file=$work/out/$1.%p" "$work/real/$1"
}
for exe in logbook auth records weather-fetcher analytics store logbook-http; do
    strip --strip-debug -o "$work/real/$exe" "$bin/$exe"
done
for exe in auth records weather-fetcher analytics store logbook-http; do
    printf '#!/bin/sh\nexec %s "$@"\n' "$(grind "$exe")" >"$work/bin/$exe"
    chmod +x "$work/bin/$exe"
done

export HOME="$home" LOGBOOK_HOME="$home" LOGBOOK_CONFIG_DIR="$home/config" LOGBOOK_BIN_DIR="$work/bin"
export LOGBOOK_LOG_LEVEL=warning LOGBOOK_HTTP_LISTEN=127.0.0.1:0
# no outside traffic: every provider points at a port that refuses connections
export LOGBOOK_WEATHER_FETCHER_FORECAST_URL=http://127.0.0.1:9/v1/forecast
export LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL=http://127.0.0.1:9/v1/archive
export LOGBOOK_WEATHER_FETCHER_MARINE_URL=http://127.0.0.1:9/v1/marine
export LOGBOOK_WEATHER_FETCHER_NOAA_URL=http://127.0.0.1:9 LOGBOOK_STORE_QUOTES_URL=http://127.0.0.1:9

"$bin/logbook" stack up
lb() { $(grind logbook) "$@" >/dev/null 2>&1 || true; }
lb --version
lb --help
echo 'correct horse battery staple' | lb register linkorder --password-stdin
lb whoami
lb car add Civic --make Honda
lb fillup add --volume 40 --odometer 1000 --total 60
lb fillup add --volume 38 --odometer 1400 --total 58
lb fillup list
lb expense add Coffee 3.50
lb expense list
lb expense summary --by category
lb catch add --species Pike --weight 2.5 --bait spoon --water fresh --lat 59.9 --lon 10.7
lb catch list
lb attend in
lb attend out
lb attend history
lb activity add Guitar
lb timer start Guitar
lb timer stop Guitar
lb timer save Guitar
lb store list
lb networth
lb dashboard
lb status
lb expense list --json
lb expense delete nope
lb call records '$srv.ping' '{}'
lb whoami
# the HTTP edge, when curl is there
if command -v curl >/dev/null; then
    url="$(cat "$home/run/logbook-http.url")"
    token="$(curl -s -X POST "$url/v1/session" -H 'content-type: application/json' \
        -d '{"username":"linkorder","password":"correct horse battery staple"}' |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')"
    curl -s -o /dev/null -X POST "$url/v1/expenses" -H "authorization: Bearer $token" \
        -H 'content-type: application/json' -d '{"name":"Tea","amountMinor":250}'
    curl -s -o /dev/null "$url/v1/expenses" -H "authorization: Bearer $token"
    curl -s -o /dev/null "$url/v1/nope"
    curl -s -o /dev/null "$url/healthz"
fi
sleep 15  # idle: heartbeats, consumers' polls
"$bin/logbook" stack down  # each service exits, and callgrind writes its profile

# Every function of the executables that ran, in any process: those run by the most
# executables first (not processes: the CLI runs once per command, so counting processes
# put the CLI's functions before the ones every service runs all day), those run by the
# same executables together (a service's own functions next to each other), then by name
# (a stable file for a stable program).
python3 - "$work/out" "$work/real/" >"$repo/deploy/link-order.txt" <<'EOF'
import collections, os, re, sys
out, real = sys.argv[1], sys.argv[2]
users = collections.defaultdict(set)
for name in os.listdir(out):
    ob = None
    for line in open(os.path.join(out, name), errors="replace"):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn=") and ob and ob.startswith(real):
            fn = re.sub(r"'\d+$", "", line[3:].strip())  # callgrind's recursion-level suffix
            if not fn.startswith("0x"):
                users[fn].add(ob[len(real):])
def key(f):
    return (-len(users[f]), sorted(users[f]), f)
sys.stdout.write("".join(f + "\n" for f in sorted(users, key=key)))
EOF
for exe in logbook auth records weather-fetcher analytics store logbook-http; do rm -f "$bin/$exe"; done
echo "deploy/link-order.txt: $(wc -l <"$repo/deploy/link-order.txt") functions from $(ls "$work/out" | wc -l) processes"
