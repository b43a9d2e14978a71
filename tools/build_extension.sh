#!/usr/bin/env bash
# Builds the Blender extension package (OUTPUT_DIR/oban_import-<version>.zip) from
# the repository root with Blender's own builder, then validates it; the file list
# comes from blender_manifest.toml's [build] section. Install the result with
# Edit > Preferences > Get Extensions > Install from Disk, or
#   blender --command extension install-file -r user_default -e OUTPUT_DIR/oban_import-*.zip
#
# Usage: tools/build_extension.sh [OUTPUT_DIR]        (default: build)
# Env:   BLENDER=/path/to/blender   use that binary (4.2+): `blender --command extension ...`
#        PYTHON=/path/to/python     otherwise, a Python with the bpy module (4.2+) that
#                                   runs bl_pkg/cli/blender_ext.py (default: .venvs/bpy-5.0)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-build}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ -n "${BLENDER:-}" ]; then
  ext() { "$BLENDER" --factory-startup --command extension "$@"; }
else
  PYTHON=${PYTHON:-.venvs/bpy-5.0/bin/python}
  [ -x "$PYTHON" ] || { echo "no $PYTHON: run tools/setup.sh 5.0, or set BLENDER or PYTHON" >&2; exit 1; }
  SCRIPTS=$("$PYTHON" -c "import bpy; print(bpy.utils.system_resource('SCRIPTS'))" | tail -n 1)
  TOOL=$SCRIPTS/addons_core/bl_pkg/cli/blender_ext.py
  [ -f "$TOOL" ] || { echo "no $TOOL (Blender older than 4.2?)" >&2; exit 1; }
  # the tag list `blender --command extension` validates against
  TAGS=$SCRIPTS/modules/_bpy_internal/extensions/tags.py
  ext() { "$PYTHON" "$TOOL" "$@" --valid-tags "$TAGS"; }
fi

VERSION=$(sed -n 's/^version *= *"\(.*\)"/\1/p' blender_manifest.toml)
ZIP=$OUT/oban_import-$VERSION.zip
rm -f "$ZIP"
ext build --source-dir "$ROOT" --output-dir "$OUT"
ext validate "$ZIP"
