#!/usr/bin/env bash
# Sets up Blender 5.0 as a Python module (tools/setup.sh 5.0), writes the bundled
# examples (tools/make_examples.py, tools/make_op2_example.py) and imports them: every
# Oni file (raw, .oni, XML, a level with placed objects, a loose mesh and texture) into
# build/examples.blend, a cutscene of OniSplit's level12 into build/cutscene.blend (its
# script's functions listed first), the Outpost 2 pair into build/sprites.blend, printing tables.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh 5.0
home=build/blender-home   # Blender writes its user files here, not in ~
mkdir -p "$home"
export BLENDER_USER_CONFIG=$PWD/$home/config BLENDER_USER_SCRIPTS=$PWD/$home/scripts
export BLENDER_USER_RESOURCES=$PWD/$home/resources XDG_CACHE_HOME=$PWD/$home/cache
.venvs/bpy-5.0/bin/python tools/make_examples.py
.venvs/bpy-5.0/bin/python tools/make_op2_example.py
.venvs/bpy-5.0/bin/python -m oban_import examples/*.OBAN examples/*.oni examples/*.xml examples/*.dat \
  -o build/examples.blend
.venvs/bpy-5.0/bin/python -m oban_import examples/cutscene/level12_Final.dat \
  --scripts examples/cutscene/IGMD/level12 --list
.venvs/bpy-5.0/bin/python -m oban_import examples/cutscene/level12_Final.dat --cutscene cut_intro \
  -o build/cutscene.blend
.venvs/bpy-5.0/bin/python -m oban_import examples/op2_art.prt -o build/sprites.blend
