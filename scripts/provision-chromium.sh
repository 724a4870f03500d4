#!/usr/bin/env bash
# Provision the browser the live view's e2e tests and bench drive: Debian's `chromium` package, installed with
# apt-get when it is missing. Nothing else ever brings a browser in (puppeteer-core, the driver, downloads none).
#
#   scripts/provision-chromium.sh
#
# As root a missing package is installed (apt-get update, then apt-get install chromium); as any other user a
# missing package is an error with the command to run. Idempotent: an installed chromium that answers
# `--version` is used as is. Progress goes to stderr; stdout ends with exactly one line:
#
#   CHROMIUM=/abs/path/to/chromium
#
# Environment:
#   CHROMIUM   an executable to use instead (checked with --version, never installed)
set -euo pipefail

find_chromium() {
  if [ -n "${CHROMIUM:-}" ]; then
    echo "$CHROMIUM"
    return 0
  fi
  local candidate
  for candidate in /usr/bin/chromium /usr/lib/chromium/chromium; do
    if [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! path=$(find_chromium); then
  if [ "$(id -u)" != 0 ]; then
    echo "provision-chromium: Debian's chromium is not installed and this is not root: run 'sudo apt-get install chromium' (or set CHROMIUM to a chromium executable)" >&2
    exit 1
  fi
  echo "provision-chromium: installing Debian's chromium with apt-get" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
  path=$(find_chromium) || {
    echo "provision-chromium: apt-get installed chromium but no executable was found at /usr/bin/chromium" >&2
    exit 1
  }
fi

if ! version=$("$path" --version 2>/dev/null); then
  echo "provision-chromium: $path does not answer --version" >&2
  exit 1
fi
echo "provision-chromium: $version" >&2
echo "CHROMIUM=$path"
