# Sourced by the provision scripts that install PyPI packages into a cached venv (Hermes, the bench's peer).

# venv_versions VENV DIST...: the installed versions of DIST..., space-separated; fails when the venv or one is missing.
venv_versions() {
  local venv="$1"
  shift
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - "$@" <<'PYEOF' 2>/dev/null
import importlib.metadata as m, sys
print(" ".join(m.version(d) for d in sys.argv[1:]))
PYEOF
}

# venv_install VENV PY SPEC...: create VENV with PY when missing (PY must exist), then pip install SPEC... into it.
venv_install() {
  local venv="$1" py="$2"
  shift 2
  command -v "$py" >/dev/null 2>&1 || { echo "$py not found (needed to create $venv)" >&2; return 1; }
  mkdir -p "$(dirname "$venv")"
  if [ ! -x "$venv/bin/python" ]; then
    echo "creating venv at $venv" >&2
    "$py" -m venv "$venv"
  fi
  echo "installing $* into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
}
