#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests, on 127.0.0.1 only, with its data under /tmp.
#
#   eval "$(scripts/postgres.sh start)"   # installs Debian's postgresql if missing (root),
#                                         # starts a server, prints the export line for
#                                         # TABLETOP_TEST_POSTGRES_URL
#   scripts/postgres.sh stop
#
# PGPORT (default 55432) and PGDATA_DIR (default /tmp/tabletop-postgres) choose where.
# The server runs as the postgres user (root may not run it); fsync is off: test data.
set -euo pipefail

port=${PGPORT:-55432}
data=${PGDATA_DIR:-/tmp/tabletop-postgres}
user=tabletop
db=tabletop
url="postgresql://$user:$user@127.0.0.1:$port/$db"

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$found" ] && command -v pg_config >/dev/null 2>&1; then found=$(pg_config --bindir); fi
  echo "$found"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local bin
  bin=$(bindir)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "postgres: no PostgreSQL server installed; as root this script installs it" >&2
      exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends postgresql >&2
    bin=$(bindir)
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$data"
    as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$data.initdb.log" 2>&1 \
      || { cat "$data.initdb.log" >&2; exit 1; }
  fi
  if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c full_page_writes=off -c max_connections=200" \
      >&2
  fi
  local psql=("$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$user'")" ]; then
    "${psql[@]}" -c "CREATE ROLE $user LOGIN PASSWORD '$user'" >&2
  fi
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
    "${psql[@]}" -c "CREATE DATABASE $db OWNER $user" >&2
  fi
  echo "postgres: serving $url (data in $data)" >&2
  echo "export TABLETOP_TEST_POSTGRES_URL=$url"
}

stop() {
  local bin
  bin=$(bindir)
  if [ -f "$data/PG_VERSION" ]; then
    as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
