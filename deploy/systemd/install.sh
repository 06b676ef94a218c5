#!/usr/bin/env bash
# Installs the Logbook stack as systemd services on this host (run as root):
#   deploy/systemd/install.sh [--bin DIR] [SERVICE…]
# Copies `logbook` and the service executables from DIR (default: the release build,
# .build/release) to /opt/logbook/bin, the units to /etc/systemd/system, creates the
# `logbook` user (systemd-sysusers), puts deploy/logbook.conf at /etc/logbook/logbook.conf
# unless one exists (mode 0640, group logbook: it may hold the CURVE secret key), and
# enables logbook.target with the named services (default: all five). Start with
#   systemctl start logbook.target
# See docs/operations.md, "A server with systemd".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$repo/.build/release"
if [[ "${1:-}" == "--bin" ]]; then bin="$2"; shift 2; fi
services=("$@")
[[ ${#services[@]} -eq 0 ]] && services=(auth records weather-fetcher analytics store)
[[ $(id -u) -eq 0 ]] || { echo "install.sh: run as root" >&2; exit 1; }

install -d -m 0755 /opt/logbook/bin /opt/logbook/share/doc
install -m 0755 "$bin/logbook" /opt/logbook/bin/logbook
for service in "${services[@]}"; do
    install -m 0755 "$bin/$service" "/opt/logbook/bin/$service"
    install -m 0644 "$here/logbook-$service.service" /etc/systemd/system/
done
install -m 0644 "$here/logbook.target" /etc/systemd/system/
install -m 0644 "$repo/docs/operations.md" /opt/logbook/share/doc/operations.md
install -D -m 0644 "$here/logbook.sysusers.conf" /usr/lib/sysusers.d/logbook.conf
systemd-sysusers /usr/lib/sysusers.d/logbook.conf
if [[ ! -e /etc/logbook/logbook.conf ]]; then
    install -d -m 0750 -g logbook /etc/logbook
    install -m 0640 -g logbook "$repo/deploy/logbook.conf" /etc/logbook/logbook.conf
fi
systemctl daemon-reload
units=(); for service in "${services[@]}"; do units+=("logbook-$service.service"); done
systemctl enable logbook.target "${units[@]}"
echo "installed: ${services[*]}; start with: systemctl start logbook.target"
