#!/usr/bin/env bash
# Build the offline base image: Debian bookworm with its python3 (3.11) and venv, from
# Debian's packages only, for machines that reach no container registry.
#
#   scripts/base-image.sh [NAME]     # default tabletop-base:bookworm; FORCE=1 rebuilds
#
# The mirror is read from this machine's own apt sources (deb822 *.sources files or
# sources.list), so no host is named here. Needs root and debootstrap (installed if
# missing). Then `make images BASE_IMAGE=local` builds on it.
set -euo pipefail

name=${1:-tabletop-base:bookworm}
suite=bookworm

if [ -z "${FORCE:-}" ] && docker image inspect "$name" >/dev/null 2>&1; then
  echo "base image: $name exists (FORCE=1 rebuilds it)"
  exit 0
fi

mirror() {
  # deb822 stanzas: the first "Types: deb" stanza whose Suites has the bare suite name.
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "") {
          split(uris, u, " "); print u[1]; found = 1; exit
        }
        types = ""; suites = ""; uris = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:" { $1 = ""; types = $0 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      tolower($1) == "uris:" { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
      END { if (!found) flush() }
    ' "$f" | head -n 1
  done
  # one-line format: deb [options] URI SUITE COMPONENTS...
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    awk -v suite="$suite" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit }
      }'
}

url=$(mirror | head -n 1 || true)
if [ -z "$url" ]; then
  echo "base image: no apt source for $suite found in /etc/apt (sources.list or *.sources)" >&2
  exit 1
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends debootstrap
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/tabletop-base.XXXXXX")
trap 'rm -rf "$root"' EXIT
started=$(date +%s)
echo "base image: debootstrap $suite from the machine's apt mirror into $root"
debootstrap --variant=minbase --include=python3,python3-venv "$suite" "$root" "$url" \
  >"$root.log" 2>&1 || { tail -n 40 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
# Smaller and reproducible enough: no package lists, caches or docs in the image.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/var/log/*
tar -C "$root" -c . | docker import \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["/bin/bash"]' \
  - "$name" >/dev/null
echo "base image: $name built in $(($(date +%s) - started))s" \
  "($(docker run --rm --network host "$name" python3 --version))"
