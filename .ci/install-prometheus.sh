#!/usr/bin/env bash
# Installs promtool (Debian's prometheus package), which the metrics test
# uses to check the text that GET /metrics serves (`promtool check metrics`).
# Idempotent: does nothing when promtool is there.
#
# --no-install-recommends always: prometheus recommends the node exporter,
# which the tests do not use. The package's service is not started by the
# tests (they only run promtool).
#
# Run as root (or with sudo available).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if command -v promtool >/dev/null 2>&1; then
  echo "prometheus: promtool is installed; nothing to do"
  exit 0
fi

sudo_prefix=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "prometheus: need root (or sudo) to install prometheus (for promtool)" >&2
    exit 1
  fi
  sudo_prefix=(sudo --preserve-env=DEBIAN_FRONTEND)
fi

echo "prometheus: installing prometheus (for promtool)"
if ! "${sudo_prefix[@]}" apt-get install -y --no-install-recommends prometheus; then
  "${sudo_prefix[@]}" apt-get update
  "${sudo_prefix[@]}" apt-get install -y --no-install-recommends prometheus
fi
