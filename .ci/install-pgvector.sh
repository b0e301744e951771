#!/usr/bin/env bash
# Installs the pgvector extension into the local PostgreSQL 15 and creates it
# in the test database. Idempotent: exits at once when the server already
# offers the `vector` extension.
#
# Debian bookworm has no pgvector package, so this builds Debian trixie's
# source package against postgresql-server-dev-15. The deb-src line goes into
# a private sources list on the mirror the machine's apt sources already use,
# and only that list is refreshed.
#
# Run as root. Environment: PGHOST (default 127.0.0.1), PGPORT (5432),
# PGUSER (postgres), PGDATABASE (test).
set -euo pipefail

export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}" PGDATABASE="${PGDATABASE:-test}"
export DEBIAN_FRONTEND=noninteractive

psql_value() {
  psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"
}

if [[ "$(psql_value "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")" == "1" ]]; then
  echo "pgvector: already available in PostgreSQL at ${PGHOST}:${PGPORT}; nothing to do"
  exit 0
fi

# The first Debian mirror among the enabled apt sources (one-line .list and deb822 .sources files).
debian_mirror() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$file" ]] || continue
    awk '$1 ~ /^deb(-src)?$/ {
           for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i ~ /^[a-z+]+:\/\//) { uri = $i; suite = $(i + 1); break }
           if (uri ~ /\/debian\/?$/ && suite !~ /-security$/) { print uri; exit }
         }' "$file"
  done
  for file in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$file" ]] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
         {
           uris = ""; suites = ""; enabled = 1
           for (i = 1; i <= NF; i++) {
             if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
             if ($i ~ /^Suites:/) { suites = $i; sub(/^Suites:[ \t]*/, "", suites) }
             if ($i ~ /^Enabled:[ \t]*no/) enabled = 0
           }
           split(uris, list, /[ \t]+/)
           if (enabled && list[1] ~ /\/debian\/?$/ && suites !~ /-security/) { print list[1]; exit }
         }' "$file"
  done
}

mirror="$(debian_mirror | head -n 1)"
mirror="${mirror%/}"
if [[ -z "$mirror" ]]; then
  echo "pgvector: no Debian mirror found in /etc/apt/sources.list{,.d/*}" >&2
  exit 1
fi
echo "pgvector: building Debian trixie's source package from ${mirror}"

if ! apt-get install -y --no-install-recommends postgresql-server-dev-15; then
  apt-get update
  apt-get install -y --no-install-recommends postgresql-server-dev-15
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/sources.list.d"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror} trixie main" > "$work/apt/trixie-src.list"
private_apt=(
  -o "Dir::Etc::SourceList=$work/apt/trixie-src.list"
  -o "Dir::Etc::SourceParts=$work/apt/sources.list.d"
  -o "APT::Get::List-Cleanup=0"
)
apt-get "${private_apt[@]}" update
(cd "$work" && apt-get "${private_apt[@]}" source pgvector)

source_dir="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
# with_llvm=no: skip the LLVM bitcode for JIT, which would need clang.
make -C "$source_dir" with_llvm=no PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
make -C "$source_dir" with_llvm=no PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install

psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION IF NOT EXISTS vector'
echo "pgvector: $(psql_value "SELECT extversion FROM pg_extension WHERE extname = 'vector'") installed in database ${PGDATABASE}"
