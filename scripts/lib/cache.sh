# Sourced by the provision scripts: the version-keyed cache they share, outside
# the working tree, and one lock per script so parallel runs wait, not race.

# The absolute cache root (created if missing): $HERMES_AEP_CACHE or ~/.cache/hermes-aep.
cache_root() {
  local root="${HERMES_AEP_CACHE:-$HOME/.cache/hermes-aep}"
  mkdir -p "$root"
  (cd "$root" && pwd)
}

# lock_cache ROOT NAME: hold $ROOT/.NAME.lock (fd 9) until the script exits.
lock_cache() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$1/.$2.lock"
  flock 9
}
