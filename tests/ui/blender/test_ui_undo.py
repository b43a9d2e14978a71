"""Undo in a real Blender window: Debian's blender 3.4.1 on a virtual screen (Xvfb).

Undo needs a window, which neither the bpy module nor `blender -b` has, so this
drives the binary with its UI and reads what a script inside it found."""

import os

import pytest
from paths import ROOT
from window import run_in_window

SAMPLE = os.path.join(ROOT, "tests", "data", "raw", "00011-fan_loop.OBAN")

SCRIPT = r"""
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
        leave(found, failed=True)
    leave(found)

bpy.app.timers.register(run, first_interval=1.0)
"""


@pytest.mark.window
def test_undo_removes_an_import_and_redo_brings_it_back(tmp_path):
    found = run_in_window(tmp_path, SCRIPT, ROOT=ROOT, SAMPLE=SAMPLE)
    assert found["result"] == ["FINISHED"]
    startup = ["Camera", "Cube", "Light"]
    assert found["before"] == [3, 0, startup]
    assert found["imported"] == [4, 1, sorted(startup + ["fan_loop"])]
    assert found["undone"] == [3, 0, startup]
    assert found["redone"] == [4, 1, sorted(startup + ["fan_loop"])]
