#!/usr/bin/env bash
# Installs everything the demo and the test suite need; safe to run again.
#   apt: blender (3.4.1 on Debian 12) and, for the Python inside it (the system
#        /usr/bin/python3.11): python3-pytest, python3-numpy, python3-hypothesis
#   .venvs/bpy-4.2, .venvs/bpy-4.5, .venvs/bpy-5.0: Blender as a Python module
#        (+ pytest, hypothesis)
#   .venvs/host: pytest-blender, which runs pytest inside the apt blender binary
# Usage: tools/setup.sh [all|4.2|4.5|5.0|apt|host ...]
#        (default: all; e.g. "5.0" for the demo)
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A BPY_PIN=([4.2]=4.2.23 [4.5]=4.5.15 [5.0]=5.0.1)
PYTEST_BLENDER_PIN=3.0.8
HOST_PYTEST_PIN=8.4.2  # pytest 9 deprecates config.inicfg, which pytest-blender reads
versions=("$@")
{ [ ${#versions[@]} -eq 0 ] || [ "${versions[0]}" = all ]; } && versions=(4.2 4.5 5.0 apt host)

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Python 3.11 that can create venvs (the bpy wheels are cp311-only)
python=$(command -v python3.11 || true)
need_venv_python() {
  if [ -z "$python" ] || ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
    apt_install python3.11 python3.11-venv
    python=/usr/bin/python3.11
  fi
}

new_venv() {  # new_venv DIR PIP_ARGS...
  local venv=$1; shift
  need_venv_python
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "$@"
}

for v in "${versions[@]}"; do
  case $v in
    apt)
      if ! [ -x /usr/bin/blender ] || ! [ -x /usr/bin/xvfb-run ] \
          || ! /usr/bin/python3 -c 'import pytest, numpy, hypothesis' 2>/dev/null; then
        apt_install blender python3-pytest python3-numpy python3-hypothesis xvfb xauth
      fi
      ;;
    host)
      venv=.venvs/host
      if ! "$venv/bin/python" -c "from importlib.metadata import version as v; \
          assert v('pytest-blender') == '$PYTEST_BLENDER_PIN' and v('pytest') == '$HOST_PYTEST_PIN'" \
          2>/dev/null; then
        new_venv "$venv" "pytest-blender==$PYTEST_BLENDER_PIN" "pytest==$HOST_PYTEST_PIN"
      fi
      ;;
    *)
      venv=.venvs/bpy-$v
      pin=${BPY_PIN[$v]:?unknown version $v (known: ${!BPY_PIN[*]} apt host)}
      if ! "$venv/bin/python" -c "import bpy, pytest, hypothesis; \
          assert bpy.app.version_string.startswith('$v')" 2>/dev/null; then
        new_venv "$venv" "bpy==$pin" pytest hypothesis
      fi
      ;;
  esac
done
