#!/usr/bin/env bash
# Installs the tools the agent-mesh tests drive: wg and wg-quick
# (wireguard-tools), the userspace wireguard-go (this kernel has no WireGuard
# module), nft (nftables), ip (iproute2) and ping (iputils-ping, for the
# tunnel test). Idempotent: installs only what is missing and does nothing
# when everything is there.
#
# --no-install-recommends always: wireguard-tools recommends a kernel image
# and systemd, which turns a 5 s install into a minute.
#
# Run as root (or with sudo available).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# Debian package → a command it provides.
declare -A command_of=(
  [wireguard-tools]=wg
  [wireguard-go]=wireguard-go
  [nftables]=nft
  [iproute2]=ip
  [iputils-ping]=ping
)

missing=()
for package in wireguard-tools wireguard-go nftables iproute2 iputils-ping; do
  if ! command -v "${command_of[$package]}" >/dev/null 2>&1 && ! [[ -x "/usr/sbin/${command_of[$package]}" ]]; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "wireguard: wireguard-tools, wireguard-go, nftables, iproute2 and iputils-ping are installed; nothing to do"
  exit 0
fi

sudo_prefix=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "wireguard: need root (or sudo) to install ${missing[*]}" >&2
    exit 1
  fi
  sudo_prefix=(sudo --preserve-env=DEBIAN_FRONTEND)
fi

echo "wireguard: installing ${missing[*]}"
if ! "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo_prefix[@]}" apt-get update
  "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
