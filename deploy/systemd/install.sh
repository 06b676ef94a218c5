#!/usr/bin/env bash
# Installs the Logbook stack as systemd services on this host (run as root):
#   deploy/systemd/install.sh [--bin DIR] [--root DIR] [SERVICE…]
# Copies `logbook` and the service executables from --bin (default: the release build,
# .build/release) to /opt/logbook/bin, the units to /etc/systemd/system, creates the
# `logbook` user (systemd-sysusers), puts deploy/logbook.conf at /etc/logbook/logbook.conf
# unless one exists (mode 0640, group logbook: it may hold the CURVE secret key), and
# enables logbook.target with the named services (default: all five and `http`, the HTTP
# edge logbook-http, whose unit is logbook-http.service). Start with
#   systemctl start logbook.target
# --root DIR installs into an image or scratch tree instead of this system (nothing is
# reloaded or started; the test suite verifies the units installed that way).
# See docs/operations.md, "A server with systemd".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$repo/.build/release"
root=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --root) root="$(cd "$2" && pwd)"; shift 2 ;;
        *) break ;;
    esac
done
services=("$@")
[[ ${#services[@]} -eq 0 ]] && services=(auth records weather-fetcher analytics store http)
# the executable of each: the service's name, but logbook-http for the edge
executable() { if [[ $1 == http ]]; then echo logbook-http; else echo "$1"; fi; }
[[ $(id -u) -eq 0 || -n "$root" ]] || { echo "install.sh: run as root (or install into --root DIR)" >&2; exit 1; }
for service in "${services[@]}"; do
    [[ -f "$here/logbook-$service.service" ]] || { echo "install.sh: no service named $service" >&2; exit 2; }
done

install -d -m 0755 "$root/opt/logbook/bin" "$root/opt/logbook/share/doc" "$root/etc/systemd/system"
install -m 0755 "$bin/logbook" "$root/opt/logbook/bin/logbook"
for service in "${services[@]}"; do
    install -m 0755 "$bin/$(executable "$service")" "$root/opt/logbook/bin/$(executable "$service")"
    install -m 0644 "$here/logbook-$service.service" "$root/etc/systemd/system/"
done
install -m 0644 "$here/logbook.target" "$root/etc/systemd/system/"
install -m 0644 "$repo/docs/operations.md" "$root/opt/logbook/share/doc/operations.md"
install -D -m 0644 "$here/logbook.sysusers.conf" "$root/usr/lib/sysusers.d/logbook.conf"
if [[ -n "$root" ]]; then
    systemd-sysusers --root="$root" "$root/usr/lib/sysusers.d/logbook.conf"
else
    systemd-sysusers /usr/lib/sysusers.d/logbook.conf
fi
# the group's id as the target system knows it (under --root, not this host's)
# (only root can give files away: an unprivileged --root install leaves them the caller's)
group=()
[[ $(id -u) -eq 0 ]] && group=(-g "$(awk -F: '$1 == "logbook" { print $3 }' "$root/etc/group")")
if [[ ! -e "$root/etc/logbook/logbook.conf" ]]; then
    install -d -m 0750 "${group[@]}" "$root/etc/logbook"
    install -m 0640 "${group[@]}" "$repo/deploy/logbook.conf" "$root/etc/logbook/logbook.conf"
fi
units=()
for service in "${services[@]}"; do units+=("logbook-$service.service"); done
if [[ -n "$root" ]]; then
    systemctl --root="$root" enable logbook.target "${units[@]}"
    echo "installed into $root: ${services[*]}"
else
    systemctl daemon-reload
    systemctl enable logbook.target "${units[@]}"
    echo "installed: ${services[*]}; start with: systemctl start logbook.target"
fi
