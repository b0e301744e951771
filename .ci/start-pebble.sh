#!/usr/bin/env bash
# Installs what the agent-gateway tests and bench/gateway-issue.ts drive:
# Debian's `pebble` (Let's Encrypt's RFC 8555 test CA, with
# `pebble-challtestsrv`, a mock DNS server) and `knot` (an authoritative DNS
# server taking RFC 2136 updates). The tests start and stop their own pebble,
# challtestsrv and knotd processes on free loopback ports, so by default this
# script only installs. Idempotent: does nothing when all are installed.
#
#   bash .ci/start-pebble.sh            install only
#   bash .ci/start-pebble.sh --start    also start pebble + pebble-challtestsrv
#                                       on loopback for manual use (prints the
#                                       ports and the environment to use)
#
# --start writes a loopback config and TLS files made with openssl into
# ${AGENTINFRA_PEBBLE_DIR:-/tmp/agentinfra-pebble}, starts both servers in the
# background (pids in that folder) unless they already answer, and prints
# AGENTINFRA_ACME_* variables for `agentinfra serve`. Ports:
# PEBBLE_PORT (14000), PEBBLE_MANAGEMENT_PORT (15000), PEBBLE_HTTP01_PORT
# (5002, the gateway's HTTP-01 listener), CHALLTESTSRV_DNS_PORT (8053),
# CHALLTESTSRV_MANAGEMENT_PORT (8055).
#
# Run as root (or with sudo available). --no-install-recommends always.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

declare -A command_of=([pebble]=pebble [knot]=knotd [openssl]=openssl [curl]=curl)
missing=()
for package in pebble knot openssl curl; do
  command="${command_of[$package]}"
  if ! command -v "$command" >/dev/null 2>&1 && ! [[ -x "/usr/sbin/$command" ]]; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "pebble: pebble, pebble-challtestsrv, knotd, openssl and curl are installed; nothing to install"
else
  sudo_prefix=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "pebble: need root (or sudo) to install ${missing[*]}" >&2
      exit 1
    fi
    sudo_prefix=(sudo --preserve-env=DEBIAN_FRONTEND)
  fi
  echo "pebble: installing ${missing[*]}"
  if ! "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${sudo_prefix[@]}" apt-get update
    "${sudo_prefix[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
  # The knot package enables a system service; the tests run their own knotd.
  if command -v systemctl >/dev/null 2>&1; then "${sudo_prefix[@]}" systemctl disable --now knot >/dev/null 2>&1 || true; fi
fi

[[ "${1:-}" == "--start" ]] || exit 0

state="${AGENTINFRA_PEBBLE_DIR:-/tmp/agentinfra-pebble}"
pebble_port="${PEBBLE_PORT:-14000}"
management_port="${PEBBLE_MANAGEMENT_PORT:-15000}"
http01_port="${PEBBLE_HTTP01_PORT:-5002}"
dns_port="${CHALLTESTSRV_DNS_PORT:-8053}"
challtestsrv_port="${CHALLTESTSRV_MANAGEMENT_PORT:-8055}"
mkdir -p "$state"

if [[ ! -f "$state/cert.pem" ]]; then
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$state/ca.key" -out "$state/ca.pem" -days 365 -subj "/CN=agentinfra pebble TLS CA" 2>/dev/null
  openssl req "${ec[@]}" -keyout "$state/key.pem" -out "$state/leaf.csr" -subj "/CN=localhost" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' > "$state/leaf.ext"
  openssl x509 -req -in "$state/leaf.csr" -CA "$state/ca.pem" -CAkey "$state/ca.key" -CAcreateserial \
    -out "$state/cert.pem" -days 365 -extfile "$state/leaf.ext" 2>/dev/null
fi

cat > "$state/pebble-config.json" <<JSON
{
  "pebble": {
    "listenAddress": "127.0.0.1:${pebble_port}",
    "managementListenAddress": "127.0.0.1:${management_port}",
    "certificate": "${state}/cert.pem",
    "privateKey": "${state}/key.pem",
    "httpPort": ${http01_port},
    "tlsPort": 5001,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": false
  }
}
JSON

answering() { curl -fsS --cacert "$state/ca.pem" "https://127.0.0.1:${pebble_port}/dir" >/dev/null 2>&1; }

if ! curl -fsS -X POST -d '{"host":"probe.invalid."}' "http://127.0.0.1:${challtestsrv_port}/clear-txt" >/dev/null 2>&1; then
  nohup pebble-challtestsrv -dns01 "127.0.0.1:${dns_port}" -management "127.0.0.1:${challtestsrv_port}" \
    -http01 "" -https01 "" -tlsalpn01 "" -defaultIPv4 127.0.0.1 -defaultIPv6 "" >"$state/challtestsrv.log" 2>&1 &
  echo $! > "$state/challtestsrv.pid"
fi
if ! answering; then
  PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 nohup pebble -config "$state/pebble-config.json" \
    -dnsserver "127.0.0.1:${dns_port}" -strict=false >"$state/pebble.log" 2>&1 &
  echo $! > "$state/pebble.pid"
  for _ in $(seq 1 50); do answering && break; sleep 0.2; done
fi
answering || { echo "pebble: did not start; see $state/pebble.log" >&2; exit 1; }

echo "pebble: ACME https://127.0.0.1:${pebble_port}/dir, management https://127.0.0.1:${management_port}, HTTP-01 validation port ${http01_port}"
echo "pebble-challtestsrv: DNS 127.0.0.1:${dns_port} (UDP+TCP), management http://127.0.0.1:${challtestsrv_port}"
echo "export AGENTINFRA_ACME_DIRECTORY_URL=https://127.0.0.1:${pebble_port}/dir"
echo "export AGENTINFRA_ACME_CA_FILE=${state}/ca.pem"
echo "export AGENTINFRA_ACME_HTTP_PORT=${http01_port}"
echo "export AGENTINFRA_DNS_SERVERS=127.0.0.1:${dns_port}"
