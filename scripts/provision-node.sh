#!/usr/bin/env bash
# Provision one Node.js release from the npm registry's `node` package (it
# installs the official binary for this platform) into a version-keyed
# directory outside the repository:
#
#   ${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}/node-<version>/node_modules/.bin/node
#
# .ci/run uses it to run the README's commands on Node 24 (and the unit tier on
# Node 22) whatever `node` the machine has; the unit tier uses it for the
# older Node the shim must still fail open under (test/support/node-release.ts).
#
#   scripts/provision-node.sh 24.21.0      (or NODE_VERSION=24.21.0)
#
# To put that release first on PATH in your shell (any `node` that runs npm can fetch it):
#
#   eval "$(scripts/provision-node.sh 24.21.0 --export)"
#
# which prints only `export PATH="<prefix>/node_modules/node/bin:$PATH"`: the directory of the binary itself,
# which is also npm's global bin directory for that node (`npm prefix -g` is <prefix>/node_modules/node), so a
# later `npm link` in the checkout puts `hermes-aep` beside it, on PATH.
#
# `--cached` never installs: it prints the two lines below when the release is in the cache, and otherwise exits 3
# with nothing on stdout (the tests read the cache this way; `npm test` provisions it first).
#
# Idempotent: a cached binary that answers `--version` with the release is
# used as is. Needs `npm` on PATH (any version; the package's install script
# runs with whatever `node` is first on PATH, and npm may warn that the script
# is not in its allowScripts list: the binary is checked afterwards either
# way). Progress goes to stderr; stdout ends with exactly two lines:
#
#   NODE=/abs/path/node_modules/.bin/node
#   NODE_BIN_DIR=/abs/path/node_modules/.bin
#
# Environment:
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
set -euo pipefail

MODE=lines
VERSION="${NODE_VERSION:-}"
for arg in "$@"; do
  case "$arg" in
    --export) MODE=export ;;
    --cached) MODE=cached ;;
    -*) printf 'provision-node: unknown option %s (--export, --cached)\n' "$arg" >&2; exit 2 ;;
    *) VERSION="$arg" ;;
  esac
done

log() { printf 'provision-node: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "give an exact release (x.y.z) as the argument or NODE_VERSION, not '${VERSION}'"

# shellcheck source=lib/cache.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
PREFIX="$CACHE_ROOT/node-$VERSION"
BIN_DIR="$PREFIX/node_modules/.bin"

# One provisioning run per release at a time (parallel CI jobs / test runs).
lock_cache "$CACHE_ROOT" "provision-node-$VERSION"

# the binary in DIR runs here and is the release asked for
runs() { [ "$("$1/node_modules/.bin/node" --version 2>/dev/null)" = "v$VERSION" ]; }

if runs "$PREFIX"; then
  log "cached: $BIN_DIR/node"
elif [ "$MODE" = cached ]; then
  log "node $VERSION is not in $CACHE_ROOT (scripts/provision-node.sh $VERSION installs it)"
  exit 3
else
  command -v npm >/dev/null 2>&1 || die "npm not found on PATH (it installs the node@$VERSION package)"
  t0=$(date +%s)
  # into a fresh directory, moved into place only once the binary runs: an
  # interrupted download never leaves a half-installed release behind
  STAGE="$CACHE_ROOT/.node-$VERSION.$$.tmp"
  rm -rf "$STAGE"
  trap 'rm -rf "$STAGE"' EXIT
  mkdir -p "$STAGE"
  log "installing node@$VERSION from the npm registry"
  npm install --prefix "$STAGE" --save-exact --no-audit --no-fund --no-update-notifier --ignore-scripts=false "node@$VERSION" >&2 \
    || die "npm install node@$VERSION failed (no registry access?)"
  runs "$STAGE" || die "node@$VERSION installed, but $STAGE/node_modules/.bin/node does not run as v$VERSION (install scripts blocked? npm config get ignore-scripts)"
  rm -rf "$PREFIX"
  mv "$STAGE" "$PREFIX"
  runs "$PREFIX" || die "$BIN_DIR/node does not run after the move"
  log "installed in $(($(date +%s) - t0))s: $BIN_DIR/node"
fi

if [ "$MODE" = export ]; then
  # the real binary's directory (node_modules/.bin/node is a link to it): npm's global prefix is its parent
  printf 'export PATH="%s:$PATH"\n' "$PREFIX/node_modules/node/bin"
  exit 0
fi
echo "NODE=$BIN_DIR/node"
echo "NODE_BIN_DIR=$BIN_DIR"
