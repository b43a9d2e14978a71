"""Undo in a real Blender window: Debian's blender 3.4.1 on a virtual screen (Xvfb).

Undo needs a window, which neither the bpy module nor `blender -b` has, so this
drives the binary with its UI and reads what a script inside it found."""

import json
import os
import shutil
import subprocess

import pytest
from paths import ROOT

SAMPLE = os.path.join(ROOT, "tests", "data", "raw", "00011-fan_loop.OBAN")

SCRIPT = r"""
import json, os, sys
sys.path.insert(0, ROOT)
import bpy
import oban_import
oban_import.register()

def counts():
    return [len(bpy.data.objects), len(bpy.data.actions), sorted(o.name for o in bpy.data.objects)]

def run():
    found = {}
    try:
        with bpy.context.temp_override(window=bpy.context.window_manager.windows[0]):
            bpy.ops.ed.undo_push(message="before the import")
            found["before"] = counts()
            # called as from the menu: EXEC_DEFAULT with an undo step
            found["result"] = sorted(bpy.ops.import_anim.oban("EXEC_DEFAULT", True, filepath=SAMPLE))
            found["imported"] = counts()
            bpy.ops.ed.undo()
            found["undone"] = counts()
            bpy.ops.ed.redo()
            found["redone"] = counts()
    except Exception:
        import traceback
        found["error"] = traceback.format_exc()
    finally:  # whatever happened, report it and leave: Blender with a window never quits by itself
        with open(OUT, "w") as f:
            json.dump(found, f)
        sys.stdout.flush()
        os._exit(0)

bpy.app.timers.register(run, first_interval=1.0)
"""


@pytest.mark.window
def test_undo_removes_an_import_and_redo_brings_it_back(tmp_path):
    out = tmp_path / "found.json"
    script = tmp_path / "undo.py"
    script.write_text(f"ROOT = {ROOT!r}\nSAMPLE = {SAMPLE!r}\nOUT = {str(out)!r}\n" + SCRIPT)
    env = dict(os.environ)
    for name in ("BLENDER_USER_CONFIG", "BLENDER_USER_SCRIPTS", "BLENDER_USER_RESOURCES", "XDG_CACHE_HOME", "HOME"):
        env[name] = str(tmp_path / name.lower())
    assert shutil.which("xvfb-run") and shutil.which("blender"), "tools/setup.sh installs xvfb and blender"
    done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", "blender", "--factory-startup",
                           "-noaudio", "--python", str(script)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert out.exists(), done.stdout + done.stderr
    found = json.loads(out.read_text())
    assert "error" not in found, found["error"]
    assert found["result"] == ["FINISHED"]
    startup = ["Camera", "Cube", "Light"]
    assert found["before"] == [3, 0, startup]
    assert found["imported"] == [4, 1, sorted(startup + ["fan_loop"])]
    assert found["undone"] == [3, 0, startup]
    assert found["redone"] == [4, 1, sorted(startup + ["fan_loop"])]
