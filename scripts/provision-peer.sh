#!/usr/bin/env bash
# Provision the bench's in-process peer: Grafana's agento11y-hermes (PyPI) installed, as its README says, into the
# Python environment that runs Hermes. So the cached venv holds both: hermes-agent at HERMES_VERSION and
# agento11y-hermes at PEER_VERSION, keyed by the two versions, outside the working tree (never committed).
# Idempotent: with both versions already installed it only prints the path.
# Env:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
#   HERMES_VERSION     Hermes release (default: 0.18.2)
#   PEER_VERSION       agento11y-hermes release (default: 0.21.0)
#   HERMES_PYTHON      interpreter used to create the venv (default: python3.11)
# Last line of output: PEER_HERMES=<path to that venv's hermes executable>
set -euo pipefail

HERMES_VERSION="${HERMES_VERSION:-0.18.2}"
PEER_VERSION="${PEER_VERSION:-0.21.0}"
# shellcheck source=lib/cache.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
lock_cache "$CACHE_ROOT" provision-peer
VENV="$CACHE_ROOT/agento11y-hermes-$PEER_VERSION+hermes-$HERMES_VERSION/venv"
PY="${HERMES_PYTHON:-python3.11}"

# shellcheck source=lib/pip-venv.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/pip-venv.sh"

if [ "$(venv_versions "$VENV" hermes-agent agento11y-hermes || true)" = "$HERMES_VERSION $PEER_VERSION" ] && [ -x "$VENV/bin/hermes" ]; then
  echo "hermes-agent $HERMES_VERSION with agento11y-hermes $PEER_VERSION already installed in $VENV" >&2
else
  start=$(date +%s)
  venv_install "$VENV" "$PY" "hermes-agent==$HERMES_VERSION" "agento11y-hermes==$PEER_VERSION" \
    || { echo "provision-peer: Hermes $HERMES_VERSION and agento11y-hermes need Python >=3.11" >&2; exit 1; }
  got="$(venv_versions "$VENV" hermes-agent agento11y-hermes || true)"
  if [ "$got" != "$HERMES_VERSION $PEER_VERSION" ] || [ ! -x "$VENV/bin/hermes" ]; then
    echo "provision-peer: install failed (found '${got:-none}')" >&2
    exit 1
  fi
  echo "installed in $(( $(date +%s) - start ))s" >&2
fi

echo "PEER_HERMES=$VENV/bin/hermes"
