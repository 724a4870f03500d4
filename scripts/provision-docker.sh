#!/usr/bin/env bash
# Install (once) the container engine the compose tier runs on: Debian's
# `docker.io` (dockerd 20.10, API 1.41, with containerd, runc and tini), plus
# the small Debian packages the local stand-in images are made from.
#
# It checks each program, not a package list: `dockerd` specifically (a docker
# CLI alone, as some machines have in /usr/local/bin, runs nothing), the static
# tini that `init: true` needs, and a static busybox. Whatever is missing is
# installed with apt-get, as root; not root: a clear message and exit 1.
# No engine is started here, and the install cannot start one either: while
# apt-get runs, /usr/sbin/policy-rc.d answers 101 (placed only when absent,
# removed afterwards). Starting our own daemon is scripts/dockerd.sh's job.
#
# Progress goes to stderr; stdout gets these lines at the end:
#
#   DOCKERD=/usr/sbin/dockerd
#   DOCKERD_VERSION=20.10.24+dfsg1
#   DOCKER_CLI=/path/to/docker
#   DOCKER_CLI_VERSION=28.2.2
#   TINI_STATIC=/usr/bin/tini-static
#   BUSYBOX_STATIC=/bin/busybox
set -euo pipefail

log() { printf 'provision-docker: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for arg in "$@"; do
  case "$arg" in
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "provision-docker: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# program -> Debian package that ships it (bookworm). busybox-static's binary is
# /bin/busybox; Debian's dynamic `busybox` package would not do inside a
# FROM-scratch image, so check that the one found is static.
# (ldd exits non-zero on a static executable: "not a dynamic executable")
is_static() { ! ldd "$1" >/dev/null 2>&1; }
# dockerd lives in /usr/sbin, which a non-root PATH often lacks.
find_dockerd() { command -v dockerd 2>/dev/null || { [ -x /usr/sbin/dockerd ] && echo /usr/sbin/dockerd; } || true; }
missing=()
[ -n "$(find_dockerd)" ] || missing+=(docker.io)
[ -x /usr/bin/tini-static ] || missing+=(tini)
if ! { [ -x /bin/busybox ] && is_static /bin/busybox; }; then missing+=(busybox-static); fi
# what scripts/compose-images.sh builds the stand-in images with: mmdebstrap (the Debian root filesystem)
# and Debian's pristine Mozilla CA set (the collector and Jaeger stand-ins' bundle)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
[ -d /usr/share/ca-certificates/mozilla ] || missing+=(ca-certificates)

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    die "missing: ${missing[*]}. Install them as root (apt-get install ${missing[*]}), or run this script as root."
  fi
  command -v apt-get >/dev/null 2>&1 || die "missing: ${missing[*]}, and apt-get is not here: install Docker Engine (dockerd) another way"
  t0=$(date +%s)
  placed_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# placed by hermes-aep provision-docker.sh during apt-get; removed after\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    placed_policy=1
  fi
  # shellcheck disable=SC2317 # called through the trap
  remove_policy() { [ "$placed_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d; }
  trap remove_policy EXIT
  log "installing ${missing[*]} with apt-get"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  remove_policy
  trap - EXIT
  log "installed in $(( $(date +%s) - t0 ))s"
fi

DOCKERD="$(find_dockerd)"
[ -n "$DOCKERD" ] || die "dockerd is still missing after the install"
[ -x /usr/bin/tini-static ] || die "/usr/bin/tini-static is still missing after the install"
if ! { [ -x /bin/busybox ] && is_static /bin/busybox; }; then
  die "/bin/busybox is not a static busybox (apt-get install busybox-static)"
fi
# `dockerd --version`: "Docker version 20.10.24+dfsg1, build 5d6db84"
DOCKERD_VERSION="$("$DOCKERD" --version | sed -n 's/^Docker version \([^,]*\),.*/\1/p')"
DOCKER_CLI="$(command -v docker || true)"
[ -n "$DOCKER_CLI" ] || die "no docker CLI on PATH"
DOCKER_CLI_VERSION="$("$DOCKER_CLI" version --format '{{.Client.Version}}' 2>/dev/null || true)"
[ -n "$DOCKER_CLI_VERSION" ] || die "$DOCKER_CLI version --format reported no client version"
log "dockerd $DOCKERD_VERSION ($DOCKERD), docker CLI $DOCKER_CLI_VERSION ($DOCKER_CLI)"

echo "DOCKERD=$DOCKERD"
echo "DOCKERD_VERSION=$DOCKERD_VERSION"
echo "DOCKER_CLI=$DOCKER_CLI"
echo "DOCKER_CLI_VERSION=$DOCKER_CLI_VERSION"
echo "TINI_STATIC=/usr/bin/tini-static"
echo "BUSYBOX_STATIC=/bin/busybox"
