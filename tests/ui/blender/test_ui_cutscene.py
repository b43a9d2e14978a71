"""The cutscene through the import dialog in a real window (Debian's Blender 3.4 on Xvfb):
File > Import > Oni opened as the menu opens it, its Cutscene group drawn, the Function
field's choices the functions of the scripts folder (or of the selected level's), the import
run as the dialog's button runs it (EXEC_DEFAULT with an undo step: Blender 3.4 crashes when a
timer presses the file browser's button), undone and redone."""

import os

import pytest
from paths import ROOT
from window import run_in_window

LEVEL = os.path.join(ROOT, "tests", "data", "cutscene", "level", "level12_Final.dat")
SCRIPTS = os.path.join(ROOT, "tests", "data", "cutscene", "scripts")

SCRIPT = r"""
import time
from oban_import.ui import operators
found = {}
state = {"step": 0, "deadline": time.monotonic() + 60}


def browser():
    for window in bpy.context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "FILE_BROWSER":
                return window, area
    return None


def step():
    try:
        if state["step"] == 0:
            window = bpy.context.window_manager.windows[0]
            with bpy.context.temp_override(window=window, screen=window.screen):
                bpy.ops.import_anim.oban("INVOKE_DEFAULT")
            state["step"] = 1
            return 0.5
        opened = browser()
        if opened is None:
            if time.monotonic() > state["deadline"]:
                raise TimeoutError("no file browser")
            return 0.25
        window, area = opened
        operator = area.spaces.active.active_operator
        found["groups"] = [name for name in ("cutscene", "scripts", "character_class") if hasattr(operator, name)]
        operator.filepath = LEVEL
        found["beside_the_level"] = operators._functions_found(operator, bpy.context, "")
        operator.scripts = SCRIPTS
        found["choices"] = operators._functions_found(operator, bpy.context, "")
        found["typed"] = operators._functions_found(operator, bpy.context, "sho")
        with bpy.context.temp_override(window=window):
            bpy.ops.wm.window_close()
        main = bpy.context.window_manager.windows[0]
        with bpy.context.temp_override(window=main, screen=main.screen):   # as the dialog's button runs it
            bpy.ops.ed.undo_push(message="before the import")
            found["execute"] = sorted(bpy.ops.import_anim.oban("EXEC_DEFAULT", True, filepath=LEVEL,
                                                               cutscene="shots", scripts=SCRIPTS))
            scene = bpy.context.scene
            found["camera"] = scene.camera.name if scene.camera else None
            found["range"] = [scene.frame_start, scene.frame_end]
            bpy.ops.ed.undo()
            found["undone"] = bpy.context.scene.camera is None or bpy.context.scene.camera.name == "Camera"
            bpy.ops.ed.redo()
            found["redone"] = bpy.context.scene.camera.name if bpy.context.scene.camera else None
        leave(found)
    except Exception:
        leave(found, failed=True)


bpy.app.timers.register(step, first_interval=1.0)
"""


@pytest.mark.window
def test_the_dialog_lists_the_functions_and_imports_the_cutscene(tmp_path):
    found = run_in_window(tmp_path, SCRIPT, ROOT=ROOT, LEVEL=LEVEL, SCRIPTS=SCRIPTS)
    assert sorted(found["groups"]) == ["character_class", "cutscene", "scripts"]
    assert "cut_intro" in found["beside_the_level"]            # IGMD/level12 beside the level
    assert {"shots", "actors", "props", "talk", "picture"} <= set(found["choices"])
    assert found["typed"] == ["shots"]
    assert found["execute"] == ["FINISHED"]
    assert found["camera"] == "shots camera" and found["range"] == [1, 104]
    assert found["undone"] and found["redone"] == "shots camera"
