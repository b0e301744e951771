#!/usr/bin/env bash
# Installs the tools the agent-postbox tests drive: swaks (a scriptable SMTP
# client that speaks real SMTP sessions, STARTTLS included) and openssl (the
# tests make a throw-away certificate for the STARTTLS case). Idempotent:
# installs only what is missing and does nothing when everything is there.
#
# --no-install-recommends always: swaks recommends Perl modules the tests do
# not use beyond the TLS one, which is installed explicitly.
#
# Run as root (or with sudo available).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# Debian package → a command (or Perl module file) it provides.
missing=()
command -v swaks >/dev/null 2>&1 || missing+=(swaks)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# swaks needs Net::SSLeay and IO::Socket::SSL for --tls.
perl -MIO::Socket::SSL -e 1 >/dev/null 2>&1 || missing+=(libio-socket-ssl-perl)
perl -MNet::SSLeay -e 1 >/dev/null 2>&1 || missing+=(libnet-ssleay-perl)

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "mail tools: swaks, openssl and Perl's TLS modules are installed; nothing to do"
  exit 0
fi

sudo_prefix=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "mail tools: need root (or sudo) to install ${missing[*]}" >&2
    exit 1
  fi
  sudo_prefix=(sudo --preserve-env=DEBIAN_FRONTEND)
fi

echo "mail tools: installing ${missing[*]}"
if ! "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  "${sudo_prefix[@]}" apt-get update
  "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
