#!/usr/bin/env bash
# Make sure a Docker engine answers. Where none does, install Debian's docker.io (as
# root) and start dockerd in the background without a bridge or iptables rules: every
# container of this project uses the host's network and loopback ports only.
#
#   scripts/dockerd.sh            # start it if needed, wait until it answers
#   DOCKERD_LOG=/tmp/dockerd.log  # where its log goes (default below)
set -euo pipefail

log=${DOCKERD_LOG:-/tmp/tabletop-dockerd.log}

if docker info >/dev/null 2>&1; then
  echo "docker: an engine already answers ($(docker version --format '{{.Server.Version}}'))"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "docker: no engine answers and dockerd is not installed; as root this script installs docker.io" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends docker.io
fi
if ! command -v docker >/dev/null 2>&1; then
  echo "docker: dockerd is installed but the docker client is not" >&2
  exit 1
fi

echo "docker: starting dockerd --bridge=none --iptables=false (log: $log)"
# setsid: the engine outlives this script and is not in its process group.
setsid dockerd --bridge=none --iptables=false --ip6tables=false >"$log" 2>&1 </dev/null &
echo $! >/tmp/tabletop-dockerd.pid

for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    echo "docker: engine $(docker version --format '{{.Server.Version}}') answers"
    exit 0
  fi
  sleep 0.5
done
echo "docker: dockerd did not answer within 60s; its log:" >&2
tail -n 50 "$log" >&2
exit 1
