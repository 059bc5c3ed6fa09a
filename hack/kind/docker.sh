#!/usr/bin/env bash
# A Docker engine for `make e2e-kind`, from Debian's packages, kept apart from everything else
# on the machine: installs Debian's Docker engine package if dockerd is missing, starts dockerd if its socket does not
# answer, and prints the DOCKER_HOST to use. dockerd has its own data root, exec root, pidfile
# and socket, and starts its own managed containerd under its exec root, so it never touches
# the containerd of the real node (hack/realnode/realnode.sh: /run/policyattachment-node) or a system
# Docker. It does not add iptables rules or turn on ip_forward (kind's one node needs neither:
# the host reaches the API server through docker-proxy on 127.0.0.1).
#
#   eval "export DOCKER_HOST=$(hack/kind/docker.sh)"   # install and start once, then print
#   hack/kind/docker.sh stop                            # stop dockerd (and its containerd)
#
# These machines withhold CAP_SYS_RESOURCE from every process's bounding set, and Docker 20.10
# asks runc for every capability it knows for a --privileged container (kind's nodes are
# privileged): runc fails with "unable to apply caps: operation not permitted". dockerd's
# default runtime here is a wrapper around runc that drops the capabilities the bounding set
# lacks from the bundle's config.json (docker run) and the process file (docker exec) before
# runc reads them.
#
# Needs root. Measured on 2 cores (issue 31): install about 6 s, start about 2 s.
set -euo pipefail
# shellcheck source=../lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolchain.sh"

ROOT="${DOCKER_ROOT:-/var/lib/policyattachment-docker}"
RUN=/run/policyattachment-docker
SOCK="$RUN/docker.sock"
HOST="unix://$SOCK"
PIDFILE="$RUN/dockerd.pid"
LOG="$ROOT/dockerd.log"
log() { echo "docker: $*" >&2; }

stop() {
  [ -f "$PIDFILE" ] || { log "not running"; return 0; }
  local pid; pid="$(cat "$PIDFILE")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -f "$PIDFILE"
  ip link del docker0 2>/dev/null || true
  log "stopped"
}

case "${1:-up}" in
stop) stop; exit 0 ;;
up) ;;
*) echo "usage: hack/kind/docker.sh [up | stop]" >&2; exit 2 ;;
esac

if ! command -v dockerd >/dev/null; then
  log "installing Debian's Docker engine package..."
  apt-get update -qq
  # The package is named after Docker's registry host; the repository names no registry
  # host, so apt is given the name as a pattern that matches only that package.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends 'docker[.]io' >&2
fi
if ! docker -H "$HOST" version >/dev/null 2>&1; then
  log "starting dockerd (data $ROOT, log $LOG)..."
  mkdir -p "$ROOT" "$RUN"
  # The capabilities missing from the bounding set, by name (capsh names them in lower case).
  missing=""
  bnd=$((16#$(awk '/^CapBnd/ {print $2}' /proc/self/status)))
  last=$(cat /proc/sys/kernel/cap_last_cap)
  for i in $(seq 0 "$last"); do
    if [ $(( (bnd >> i) & 1 )) -eq 0 ]; then
      missing="$missing $(capsh --decode=$(printf '%x' $((1 << i))) | sed 's/.*=//' | tr a-z A-Z)"
    fi
  done
  cat >"$ROOT/runc" <<WRAP
#!/bin/sh
# runc, minus the capabilities this machine's bounding set lacks:$missing
# create: the bundle's config.json; exec: the --process file (docker exec).
files=""; prev=""
for a in "\$@"; do
  case "\$prev" in --bundle|-b) files="\$files \$a/config.json" ;; --process|-p) files="\$files \$a" ;; esac
  case "\$a" in --bundle=*) files="\$files \${a#--bundle=}/config.json" ;; --process=*) files="\$files \${a#--process=}" ;; esac
  prev="\$a"
done
for f in \$files; do
  [ -f "\$f" ] || continue
  for c in$missing; do
    sed -i -e "s/\"\$c\",//g" -e "s/,\"\$c\"//g" -e "s/\"\$c\"//g" "\$f"
  done
done
exec /usr/sbin/runc "\$@"
WRAP
  chmod +x "$ROOT/runc"
  nohup dockerd --data-root "$ROOT/data" --exec-root "$RUN/exec" --pidfile "$PIDFILE" \
    --host "$HOST" --iptables=false --ip-forward=false --ip-masq=false \
    --add-runtime "pa-runc=$ROOT/runc" --default-runtime pa-runc >"$LOG" 2>&1 &
  for _ in $(seq 60); do
    docker -H "$HOST" version >/dev/null 2>&1 && break
    sleep 1
  done
  docker -H "$HOST" version >/dev/null 2>&1 || { log "dockerd did not answer; see $LOG"; exit 1; }
fi
echo "$HOST"
