#!/usr/bin/env bash
# Provision the pinned Hermes Agent (PyPI hermes-agent) into a cached venv for e2e tests.
# Idempotent: re-running with the pinned version already installed does nothing but print the path.
# Env:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
#   HERMES_VERSION     pinned version (default: 0.18.2)
#   HERMES_PYTHON      interpreter used to create the venv (default: python3.11)
# Last line of output: HERMES=<path to the hermes executable>
# --cached: never install; print that line when the release is in the cache, else exit 3 with nothing on stdout.
set -euo pipefail

CACHED_ONLY=0
[ "${1:-}" = --cached ] && CACHED_ONLY=1

HERMES_VERSION="${HERMES_VERSION:-0.18.2}"
# shellcheck source=lib/cache.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
# One install at a time into the venv (parallel test runs).
lock_cache "$CACHE_ROOT" provision-hermes
PREFIX="$CACHE_ROOT/hermes-$HERMES_VERSION"
VENV="$PREFIX/venv"
PY="${HERMES_PYTHON:-python3.11}"

# shellcheck source=lib/pip-venv.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/pip-venv.sh"

if [ "$(venv_versions "$VENV" hermes-agent || true)" = "$HERMES_VERSION" ] && [ -x "$VENV/bin/hermes" ]; then
  echo "hermes-agent $HERMES_VERSION already installed in $VENV" >&2
elif [ "$CACHED_ONLY" = 1 ]; then
  echo "provision-hermes: hermes-agent $HERMES_VERSION is not in $CACHE_ROOT (scripts/provision-hermes.sh installs it)" >&2
  exit 3
else
  start=$(date +%s)
  venv_install "$VENV" "$PY" "hermes-agent==$HERMES_VERSION" || { echo "provision-hermes: pip could not install Hermes $HERMES_VERSION (PyPI not reachable? Hermes needs Python >=3.11,<3.14: HERMES_PYTHON=$PY)" >&2; exit 1; }
  got="$(venv_versions "$VENV" hermes-agent || true)"
  if [ "$got" != "$HERMES_VERSION" ] || [ ! -x "$VENV/bin/hermes" ]; then
    echo "provision-hermes: install failed (found version '${got:-none}')" >&2
    exit 1
  fi
  echo "installed hermes-agent $HERMES_VERSION in $(( $(date +%s) - start ))s" >&2
fi

echo "HERMES=$VENV/bin/hermes"
