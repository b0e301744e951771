#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (the /docs page, the
# console). The tests drive it with playwright-core through
# `executablePath: /usr/bin/chromium`; nothing downloads a browser.
# Idempotent: does nothing when /usr/bin/chromium exists.
#
# --no-install-recommends always: the recommends pull in desktop packages
# the headless tests do not use.
#
# Run as root (or with sudo available).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if [[ -x /usr/bin/chromium ]]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed); nothing to do"
  exit 0
fi

sudo_prefix=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "chromium: need root (or sudo) to install chromium" >&2
    exit 1
  fi
  sudo_prefix=(sudo --preserve-env=DEBIAN_FRONTEND)
fi

echo "chromium: installing"
if ! "${sudo_prefix[@]}" apt-get install -y --no-install-recommends chromium; then
  "${sudo_prefix[@]}" apt-get update
  "${sudo_prefix[@]}" apt-get install -y --no-install-recommends chromium
fi
