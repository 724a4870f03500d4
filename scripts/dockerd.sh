#!/usr/bin/env bash
# Run OUR OWN Docker engine for the compose tier, beside (never instead of) any
# engine the machine already has:
#
#   scripts/dockerd.sh start   start it (a no-op when ours already runs), wait until
#                              `docker info` answers, print the env lines below
#   scripts/dockerd.sh env     print the env lines of the running one (exit 1 if none)
#   scripts/dockerd.sh stop    stop the one whose pid is in OUR pidfile, and only it
#
# stdout (start, env), for  eval "$(scripts/dockerd.sh start)"; export DOCKER_HOST:
#
#   DOCKER_HOST=unix:///run/hermes-aep-dockerd-<id>/docker.sock
#   DOCKERD_STORAGE_DRIVER=overlay2|vfs
#   DOCKERD_PID=<pid>
#   DOCKERD_DATA_ROOT=<dir>
#   DOCKERD_LOG=<file>
#   DOCKERD_STARTED=yes|no      (start only: no when ours already ran, so a caller
#                               that did not start it should not stop it)
#
# Where things live, and why:
#   {cache}/dockerd/            pidfile, log, and one data root per storage driver
#                               (data-overlay2/, data-vfs/). The data root is the
#                               slow thing to rebuild (images, build layers, named
#                               volumes): kept across runs like the other builds in
#                               the provisioning cache, so a warm run reuses it.
#   /run/hermes-aep-dockerd-<id>/  exec root and socket: runtime state that must not
#                               outlive a boot (/run is a tmpfs), and a short path
#                               (a unix socket path is limited to 108 bytes, which a
#                               deep cache path can exceed). <id> is a hash of the
#                               cache dir, so two caches get two separate engines.
#   {cache} = ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}
#
# Storage driver: overlay2 when it works here (fast, shares layers), else vfs
# (a full copy per layer and container: slow and large, but it runs anywhere).
# HERMES_AEP_DOCKERD_STORAGE=overlay2|vfs skips the probe. The driver chosen is
# printed. --iptables=false --ip6tables=false: no firewall rules are written;
# published ports go through docker-proxy on the host, containers on one network
# reach each other by name, and containers have no route out (no NAT).
#
# Never touches an engine it did not start: `stop` signals only the pid in its
# own pidfile, and only after /proc/<pid>/cmdline shows that pidfile. It refuses
# to start while another dockerd runs (both would manage the docker0 bridge and
# the same default address pools).
#
# Environment: HERMES_AEP_CACHE, HERMES_AEP_DOCKERD_STORAGE, HERMES_AEP_DOCKERD_WAIT
# (seconds to wait for `docker info`, default 60). Needs root and dockerd
# (scripts/provision-docker.sh).
set -euo pipefail

log() { printf 'dockerd.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/cache.sh
. "$SCRIPT_DIR/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
STATE_DIR="$CACHE_ROOT/dockerd"
PIDFILE="$STATE_DIR/dockerd.pid"
LOGFILE="$STATE_DIR/dockerd.log"
DRIVER_FILE="$STATE_DIR/storage-driver"
RUN_ID="$(printf '%s' "$STATE_DIR" | sha256sum | cut -c1-8)"
EXEC_ROOT="/run/hermes-aep-dockerd-$RUN_ID"
SOCKET="$EXEC_ROOT/docker.sock"
DOCKER_HOST_VALUE="unix://$SOCKET"
WAIT_S="${HERMES_AEP_DOCKERD_WAIT:-60}"

DOCKERD="$(command -v dockerd 2>/dev/null || { [ -x /usr/sbin/dockerd ] && echo /usr/sbin/dockerd; } || true)"
DOCKER="$(command -v docker 2>/dev/null || true)"

# The pid in our pidfile when that process is alive and is the dockerd started
# with our pidfile; empty otherwise (no file, a stale pid, a reused pid).
our_pid() {
  local pid
  [ -s "$PIDFILE" ] || return 0
  pid="$(tr -dc '0-9' <"$PIDFILE")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 0
  if tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "--pidfile=$PIDFILE"; then
    echo "$pid"
  fi
}

# Pids of dockerd processes that are not ours (read-only look at /proc).
other_dockerds() {
  local mine="$1" d pid exe
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    [ "$pid" != "$mine" ] || continue
    exe="$(readlink "$d/exe" 2>/dev/null || true)"
    case "$exe" in */dockerd) echo "$pid" ;; esac
  done
}

docker_ok() { DOCKER_HOST="$DOCKER_HOST_VALUE" "$DOCKER" info --format '{{.Driver}}' 2>/dev/null; }

print_env() {
  local pid="$1" driver
  driver="$(docker_ok)" || die "our dockerd (pid $pid) does not answer on $SOCKET"
  echo "DOCKER_HOST=$DOCKER_HOST_VALUE"
  echo "DOCKERD_STORAGE_DRIVER=$driver"
  echo "DOCKERD_PID=$pid"
  echo "DOCKERD_DATA_ROOT=$STATE_DIR/data-$driver"
  echo "DOCKERD_LOG=$LOGFILE"
}

# start_with DRIVER: launch dockerd and wait for it; 0 when it answers with that
# driver, 1 when it exits or the deadline passes (it is then stopped: it is ours).
start_with() {
  local driver="$1" pid deadline got
  mkdir -p "$STATE_DIR/data-$driver" "$EXEC_ROOT"
  log "starting dockerd with storage driver $driver (log: $LOGFILE)"
  {
    echo "=== $(date -u +%FT%TZ) dockerd start, storage driver $driver"
  } >>"$LOGFILE"
  # setsid: its own session, so the caller's Ctrl-C or job control does not reach it.
  setsid "$DOCKERD" \
    --data-root="$STATE_DIR/data-$driver" \
    --exec-root="$EXEC_ROOT" \
    --pidfile="$PIDFILE" \
    -H "$DOCKER_HOST_VALUE" \
    --storage-driver="$driver" \
    --iptables=false --ip6tables=false \
    --init-path=/usr/bin/tini-static \
    </dev/null >>"$LOGFILE" 2>&1 9>&- &
  pid=$!
  deadline=$(( $(date +%s) + WAIT_S ))
  while :; do
    if got="$(docker_ok)"; then
      if [ "$got" = "$driver" ]; then
        return 0
      fi
      log "dockerd answered with storage driver '$got', not $driver"
      break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "dockerd exited during start with $driver; last log lines:"
      tail -n 5 "$LOGFILE" | sed 's/^/  /' >&2
      unmount_ours
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "dockerd did not answer within ${WAIT_S}s with $driver"
      break
    fi
    sleep 0.2
  done
  stop_pid "$pid"
  return 1
}

# Once our dockerd is gone: unmount what it left mounted under OUR dirs only (a
# failed overlay2 start leaves its data root bind-mounted; a stopped 20.10 leaves
# the netns/default mount in its exec root). Deepest first.
unmount_ours() {
  local m
  awk -v a="$EXEC_ROOT/" -v b="$STATE_DIR/" 'index($2, a) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || log "could not unmount $m (left as is)"
  done
}

# stop_pid PID: TERM, wait up to 30 s (dockerd stops its containers first), then KILL.
stop_pid() {
  local pid="$1" deadline
  kill -TERM "$pid" 2>/dev/null || return 0
  deadline=$(( $(date +%s) + 30 ))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "dockerd pid $pid still running after 30s: KILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  unmount_ours
  # A KILLed dockerd leaves its own containerd (started under our exec root) behind.
  local cpid
  cpid="$(tr -dc '0-9' 2>/dev/null <"$EXEC_ROOT/containerd/containerd.pid" || true)"
  if [ -n "$cpid" ] && [ -r "/proc/$cpid/cmdline" ] && tr '\0' '\n' <"/proc/$cpid/cmdline" | grep -qF -- "$EXEC_ROOT/"; then
    kill -TERM "$cpid" 2>/dev/null || true
  fi
}

cmd_start() {
  local pid others driver t0
  [ "$(id -u)" = 0 ] || die "dockerd needs root here (rootless mode is not set up); run as root"
  [ -n "$DOCKERD" ] || die "dockerd not found: run scripts/provision-docker.sh"
  [ -n "$DOCKER" ] || die "docker CLI not found: run scripts/provision-docker.sh"
  mkdir -p "$STATE_DIR"
  lock_cache "$CACHE_ROOT" dockerd
  pid="$(our_pid)"
  if [ -n "$pid" ]; then
    log "ours already runs (pid $pid)"
    print_env "$pid"
    echo "DOCKERD_STARTED=no"
    return
  fi
  others="$(other_dockerds "" | tr '\n' ' ')"
  if [ -n "$others" ]; then
    die "another dockerd runs here (pid ${others% }), not started by this script: it is left alone, and ours is not started beside it (both would manage docker0 and the same address pools). Stop it yourself, or use it."
  fi
  rm -f "$PIDFILE"
  t0=$(date +%s%N)
  if [ -n "${HERMES_AEP_DOCKERD_STORAGE:-}" ]; then
    start_with "$HERMES_AEP_DOCKERD_STORAGE" || die "dockerd did not start with storage driver $HERMES_AEP_DOCKERD_STORAGE"
    driver="$HERMES_AEP_DOCKERD_STORAGE"
  elif start_with overlay2; then
    driver=overlay2
  else
    log "overlay2 does not work here: falling back to vfs (every layer and container is a full copy)"
    start_with vfs || die "dockerd did not start with vfs either (see $LOGFILE)"
    driver=vfs
  fi
  echo "$driver" >"$DRIVER_FILE"
  pid="$(our_pid)"
  [ -n "$pid" ] || die "dockerd answers but our pidfile $PIDFILE names no live dockerd"
  log "dockerd pid $pid up in $(( ($(date +%s%N) - t0) / 1000000 ))ms, storage driver $driver, API $(DOCKER_HOST="$DOCKER_HOST_VALUE" "$DOCKER" version --format '{{.Server.APIVersion}}')"
  print_env "$pid"
  echo "DOCKERD_STARTED=yes"
}

cmd_env() {
  local pid
  pid="$(our_pid)"
  [ -n "$pid" ] || die "our dockerd is not running (no live pid in $PIDFILE): scripts/dockerd.sh start"
  print_env "$pid"
}

cmd_stop() {
  local pid
  pid="$(our_pid)"
  if [ -z "$pid" ]; then
    log "ours is not running (no live dockerd with our pidfile $PIDFILE): nothing to stop"
    return
  fi
  log "stopping our dockerd (pid $pid)"
  stop_pid "$pid"
  log "stopped"
}

case "${1:-}" in
  start) cmd_start ;;
  env) cmd_env ;;
  stop) cmd_stop ;;
  -h|--help|help) sed -n '2,49p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: scripts/dockerd.sh start|env|stop" >&2; exit 2 ;;
esac
