#!/usr/bin/env bash
# Build (once) the Docker Compose v2 CLI plugin from the Go module proxy into a
# version-keyed cache outside the repo, and a Docker config dir that holds it:
#
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/compose-<version>/cli-plugins/docker-compose
#
# That directory is meant to be DOCKER_CONFIG: the docker CLI looks for plugins
# in $DOCKER_CONFIG/cli-plugins/, so `docker compose` works without writing the
# user's ~/.docker. The binary also runs standalone as `docker-compose`.
# A binary that already exists is not rebuilt (pass --force to rebuild).
# Progress goes to stderr; stdout gets exactly two lines at the end:
#
#   DOCKER_CONFIG=/abs/path/compose-<version>
#   DOCKER_COMPOSE=/abs/path/compose-<version>/cli-plugins/docker-compose
#
# so callers can do:  eval "$(scripts/provision-compose.sh)"; export DOCKER_CONFIG
#
# Environment:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
#   COMPOSE_VERSION    Compose release (default below); v2.x builds from the /v2 module
#   GOTOOLCHAIN        default "local": never download another Go toolchain
#
# Needs: go (>= 1.25), network access to the Go module proxy on first build.
set -euo pipefail

# --- pinned version ------------------------------------------------------------
# Compose v5.1.0 shipped a client that refuses engines below API 1.44; from v5.1.4
# on, its client accepts API >= 1.40, so it talks to Debian bookworm's docker.io
# 20.10 (API 1.41). v5.6.0 is the newest release that builds with Go 1.26.
# Fallback if a v5 path breaks on API 1.41: COMPOSE_VERSION=v2.40.3 (no minimum).
COMPOSE_VERSION="${COMPOSE_VERSION:-v5.6.0}"
case "$COMPOSE_VERSION" in
  v2.*) COMPOSE_MODULE="github.com/docker/compose/v2" ;;
  v5.*) COMPOSE_MODULE="github.com/docker/compose/v5" ;;
  *) echo "provision-compose: unsupported COMPOSE_VERSION=$COMPOSE_VERSION (v2.x or v5.x)" >&2; exit 2 ;;
esac

FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help)
      sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0 ;;
    *) echo "provision-compose: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { printf 'provision-compose: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v go >/dev/null 2>&1 || die "go is not on PATH"

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:--trimpath}"
# Static, as upstream's release build (its Dockerfile sets CGO_ENABLED=0).
export CGO_ENABLED=0

# shellcheck source=lib/cache.sh
. "$SCRIPT_DIR/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
CONFIG_DIR="$CACHE_ROOT/compose-${COMPOSE_VERSION}"
PLUGIN="$CONFIG_DIR/cli-plugins/docker-compose"

lock_cache "$CACHE_ROOT" provision-compose

work=""
trap '[ -z "$work" ] || rm -rf "$work"' EXIT

if [ "$FORCE" = 0 ] && [ -x "$PLUGIN" ]; then
  log "compose cached: $PLUGIN"
else
  t0=$(date +%s)
  mkdir -p "$CONFIG_DIR/cli-plugins"
  work="$(mktemp -d "$CONFIG_DIR/.build.XXXXXX")"
  # `go install <module>/cmd@<v>` is refused (compose's go.mod has exclude
  # directives): a throw-away module that requires compose builds the same main
  # package. internal.Version is what `docker compose version` prints, set as
  # upstream's Makefile does.
  log "building compose ${COMPOSE_VERSION} (${COMPOSE_MODULE}/cmd) in $work"
  (
    cd "$work"
    go mod init hermes-aep.local/compose-build >/dev/null 2>&1
    go get -tool "${COMPOSE_MODULE}/cmd@${COMPOSE_VERSION}"
    go build -o "$work/docker-compose" \
      -ldflags "-s -w -X ${COMPOSE_MODULE}/internal.Version=${COMPOSE_VERSION}" \
      "${COMPOSE_MODULE}/cmd"
  ) >&2
  mv -f "$work/docker-compose" "$PLUGIN.tmp"
  mv -f "$PLUGIN.tmp" "$PLUGIN"
  log "compose built in $(( $(date +%s) - t0 ))s"
fi

got="$("$PLUGIN" version --short 2>/dev/null || true)"
[ "v${got#v}" = "$COMPOSE_VERSION" ] || die "$PLUGIN reports version '${got:-none}', expected $COMPOSE_VERSION"
log "compose $COMPOSE_VERSION ready"

echo "DOCKER_CONFIG=$CONFIG_DIR"
echo "DOCKER_COMPOSE=$PLUGIN"
