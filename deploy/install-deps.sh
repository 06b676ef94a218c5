#!/usr/bin/env bash
# Installs the Debian packages Logbook builds against, only those that are missing, and
# checks that a Swift toolchain is on PATH. Safe to run again: it changes nothing when all
# is there. Uses sudo when not root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# libvips-dev: catch photos (thumbnails, format checks); Debian's build reads HEIC too.
packages=(libzmq3-dev libsqlite3-dev libsodium-dev libvips-dev pkg-config)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    if ! command -v apt-get >/dev/null; then
        echo "install-deps: missing ${missing[*]}, and apt-get is not available; install them by hand" >&2
        exit 1
    fi
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
            exit 1
        fi
        sudo=(sudo)
    fi
    echo "install-deps: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v swift >/dev/null; then
    cat >&2 <<'MSG'
install-deps: `swift` is not on PATH. Logbook needs Swift 6.1 or later:
  curl -O https://download.swift.org/swiftly/linux/swiftly-$(uname -m).tar.gz
  tar zxf swiftly-$(uname -m).tar.gz && ./swiftly init
(or see https://www.swift.org/install/linux/), then open a new shell.
MSG
    exit 1
fi
