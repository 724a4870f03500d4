#!/usr/bin/env bash
# Build (once) the OpenTelemetry Collector described by otel/builder-config.yaml
# and a Jaeger v2 all-in-one binary, into a version-keyed cache outside the repo:
#
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/otelcol-<version>-<manifest sha8>/otelcol
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/jaeger-<version>/jaeger
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/prometheus-<version>/prometheus
#
# A binary that already exists is not rebuilt (pass --force to rebuild).
# Name components to build only those (scripts/local-pipeline.sh: `otelcol jaeger`); none named builds all three.
# Progress goes to stderr; stdout gets one line per component at the end:
#
#   OTELCOL=/abs/path/otelcol
#   JAEGER=/abs/path/jaeger
#   PROMETHEUS=/abs/path/prometheus
#
# so callers can do:  eval "$(scripts/provision-otel.sh)"
#
# Environment:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
#   GOTOOLCHAIN        default "local": never download another Go toolchain
#   GOCACHE/GOMODCACHE honoured as usual (default Go locations)
#   GOFLAGS            default "-trimpath"
#
# Needs: go (>= 1.25), network access to the Go module proxy on first build.
set -euo pipefail

# --- pinned versions -------------------------------------------------------
# Collector release: must equal the version in otel/builder-config.yaml and the
# otel/opentelemetry-collector-contrib image tag in docker-compose.yml.
OTELCOL_VERSION="0.158.0"
OCB_MODULE="go.opentelemetry.io/collector/cmd/builder"
# Jaeger publishes its v2 binary from the same module as v1; the Go module
# version is the v1 tag, the product / image version is the paired v2 tag
# (v1.75.0 <-> v2.12.0, see CHANGELOG.md in the module).
JAEGER_MODULE="github.com/jaegertracing/jaeger"
JAEGER_MODULE_VERSION="v1.75.0"
JAEGER_VERSION="2.12.0"
# Prometheus 3.x publishes its Go module as v0.3MM.P for release v3.MM.P; the
# image tag in docker-compose.yml is the release (v3.16.0 <-> v0.316.0).
PROMETHEUS_MODULE="github.com/prometheus/prometheus"
PROMETHEUS_MODULE_VERSION="v0.316.0"
PROMETHEUS_VERSION="3.16.0"

# --- arguments ---------------------------------------------------------------
FORCE=0
WANT=()
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    otelcol|jaeger|prometheus) WANT+=("$arg") ;;
    -h|--help)
      sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0 ;;
    *) echo "provision-otel: unknown argument: $arg (--force, otelcol, jaeger, prometheus)" >&2; exit 2 ;;
  esac
done
[ "${#WANT[@]}" -gt 0 ] || WANT=(otelcol jaeger prometheus)
wants() { [[ " ${WANT[*]} " == *" $1 "* ]]; }

log() { printf 'provision-otel: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
MANIFEST="$REPO_ROOT/otel/builder-config.yaml"

command -v go >/dev/null 2>&1 || die "go is not on PATH"
[ -f "$MANIFEST" ] || die "missing $MANIFEST"
grep -q "^  version: ${OTELCOL_VERSION}\$" "$MANIFEST" \
  || die "dist.version in $MANIFEST does not match OTELCOL_VERSION=$OTELCOL_VERSION in this script"

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:--trimpath}"
export CGO_ENABLED=0

# shellcheck source=lib/cache.sh
. "$SCRIPT_DIR/lib/cache.sh"
CACHE_ROOT="$(cache_root)"

MANIFEST_SHA8="$(sha256sum "$MANIFEST" | cut -c1-8)"
OTELCOL_DIR="$CACHE_ROOT/otelcol-${OTELCOL_VERSION}-${MANIFEST_SHA8}"
OTELCOL_BIN="$OTELCOL_DIR/otelcol"
JAEGER_DIR="$CACHE_ROOT/jaeger-${JAEGER_VERSION}"
JAEGER_BIN="$JAEGER_DIR/jaeger"
# Built with `remove_all_sd`: no service-discovery providers (Kubernetes,
# cloud APIs, ...), only static targets, which is all the tests scrape; it
# halves what a fresh machine downloads and compiles. The cache key says so.
PROMETHEUS_TAGS="remove_all_sd"
PROMETHEUS_DIR="$CACHE_ROOT/prometheus-${PROMETHEUS_VERSION}-${PROMETHEUS_TAGS}"
PROMETHEUS_BIN="$PROMETHEUS_DIR/prometheus"
OCB_BIN="$CACHE_ROOT/tools/ocb-${OTELCOL_VERSION}/builder"

# One provisioning run at a time per cache (parallel CI jobs / test runs).
lock_cache "$CACHE_ROOT" provision

elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# Temporary build dirs are removed on any exit (success, failure, Ctrl-C).
CLEANUP=()
cleanup() { local d; for d in "${CLEANUP[@]+"${CLEANUP[@]}"}"; do rm -rf "$d"; done; }
trap cleanup EXIT

build_otelcol() {
  if [ "$FORCE" = 0 ] && [ -x "$OTELCOL_BIN" ]; then
    log "otelcol cached: $OTELCOL_BIN"
    return
  fi
  local t0 work
  t0=$(date +%s)
  if [ ! -x "$OCB_BIN" ]; then
    log "installing ocb ${OCB_MODULE}@v${OTELCOL_VERSION}"
    GOBIN="$(dirname "$OCB_BIN")" go install "${OCB_MODULE}@v${OTELCOL_VERSION}"
  fi
  mkdir -p "$OTELCOL_DIR"
  work="$(mktemp -d "$OTELCOL_DIR/.build.XXXXXX")"
  CLEANUP+=("$work")
  log "building otelcol ${OTELCOL_VERSION} (manifest sha8 ${MANIFEST_SHA8}) in $work"
  # output_path in the manifest is relative (./build): run inside the work dir.
  (cd "$work" && "$OCB_BIN" --config "$MANIFEST") >&2
  [ -x "$work/build/otelcol" ] || die "builder produced no $work/build/otelcol"
  cp "$MANIFEST" "$OTELCOL_DIR/builder-config.yaml"
  mv -f "$work/build/otelcol" "$OTELCOL_BIN.tmp"
  mv -f "$OTELCOL_BIN.tmp" "$OTELCOL_BIN"
  log "otelcol built in $(elapsed "$t0"): $("$OTELCOL_BIN" --version)"
}

build_jaeger() {
  if [ "$FORCE" = 0 ] && [ -x "$JAEGER_BIN" ]; then
    log "jaeger cached: $JAEGER_BIN"
    return
  fi
  local t0 work
  t0=$(date +%s)
  mkdir -p "$JAEGER_DIR"
  work="$(mktemp -d "$JAEGER_DIR/.build.XXXXXX")"
  CLEANUP+=("$work")
  # `go install github.com/jaegertracing/jaeger/cmd/jaeger@<v>` is refused because
  # jaeger's go.mod has replace directives; a throw-away module that requires
  # jaeger as a dependency builds the same main package (replaces of a
  # dependency are ignored, which is fine for this binary).
  log "building jaeger ${JAEGER_VERSION} (${JAEGER_MODULE}@${JAEGER_MODULE_VERSION}) in $work"
  (
    cd "$work"
    go mod init hermes-aep.local/jaeger-build >/dev/null 2>&1
    go get -tool "${JAEGER_MODULE}/cmd/jaeger@${JAEGER_MODULE_VERSION}"
    go build -o "$work/jaeger" \
      -ldflags "-s -w -X ${JAEGER_MODULE}/internal/version.latestVersion=v${JAEGER_VERSION}" \
      "${JAEGER_MODULE}/cmd/jaeger"
  ) >&2
  mv -f "$work/jaeger" "$JAEGER_BIN.tmp"
  mv -f "$JAEGER_BIN.tmp" "$JAEGER_BIN"
  log "jaeger built in $(elapsed "$t0"): $("$JAEGER_BIN" version 2>/dev/null | head -c 200)"
}

build_prometheus() {
  if [ "$FORCE" = 0 ] && [ -x "$PROMETHEUS_BIN" ]; then
    log "prometheus cached: $PROMETHEUS_BIN"
    return
  fi
  local t0 work
  t0=$(date +%s)
  mkdir -p "$PROMETHEUS_DIR"
  work="$(mktemp -d "$PROMETHEUS_DIR/.build.XXXXXX")"
  CLEANUP+=("$work")
  # Same throw-away-module build as jaeger (prometheus's go.mod has exclude
  # directives, which `go install pkg@version` refuses). Built without the
  # `builtinassets` tag: the server, its API and PromQL are all there, the web
  # UI's compiled assets (an npm build, not in the module) are not.
  log "building prometheus ${PROMETHEUS_VERSION} (${PROMETHEUS_MODULE}@${PROMETHEUS_MODULE_VERSION}) in $work"
  (
    cd "$work"
    go mod init hermes-aep.local/prometheus-build >/dev/null 2>&1
    go get -tags "$PROMETHEUS_TAGS" -tool "${PROMETHEUS_MODULE}/cmd/prometheus@${PROMETHEUS_MODULE_VERSION}"
    # `prometheus --version` reports the release like the image's binary does
    # (the upstream build sets these through promu; a plain go build leaves them empty).
    go build -tags "$PROMETHEUS_TAGS" -o "$work/prometheus" \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION} -X github.com/prometheus/common/version.Branch=module-${PROMETHEUS_MODULE_VERSION}" \
      "${PROMETHEUS_MODULE}/cmd/prometheus"
  ) >&2
  mv -f "$work/prometheus" "$PROMETHEUS_BIN.tmp"
  mv -f "$PROMETHEUS_BIN.tmp" "$PROMETHEUS_BIN"
  log "prometheus built in $(elapsed "$t0"): $("$PROMETHEUS_BIN" --version 2>&1 | head -n 1)"
}

! wants otelcol || build_otelcol
! wants jaeger || build_jaeger
! wants prometheus || build_prometheus

! wants otelcol || echo "OTELCOL=$OTELCOL_BIN"
! wants jaeger || echo "JAEGER=$JAEGER_BIN"
! wants prometheus || echo "PROMETHEUS=$PROMETHEUS_BIN"
