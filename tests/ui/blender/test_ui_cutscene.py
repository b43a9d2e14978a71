"""The cutscene through its dialogs in a real window (Debian's Blender 3.4 on Xvfb):
File > Import > Oni opened as the menu opens it, its Cutscene group drawn, the Function
field's choices the functions of the scripts folder (or of the selected level's), the import
run as the dialog's button runs it (EXEC_DEFAULT with an undo step: Blender 3.4 crashes when a
timer presses the file browser's button), undone and redone. File > Export > Oni Cutscene
opened as the menu opens it, its Function field and folder filled in, run by Enter pressed in
its file browser (a simulated key: Blender's own handler runs it), the files written and the
window's reports read from its Info editor; with no camera, the error reported there and
nothing written."""

import os

import pytest
from paths import ROOT
from window import run_in_window

from oban_import.ui import options

LEVEL = os.path.join(ROOT, "tests", "data", "cutscene", "level", "level12_Final.dat")
SCRIPTS = os.path.join(ROOT, "tests", "data", "cutscene", "scripts")

SCRIPT = r"""
import time
from oban_import.ui import operators
found = {}
state = {"step": 0, "deadline": time.monotonic() + 60}


def step():
    try:
        if state["step"] == 0:
            window = bpy.context.window_manager.windows[0]
            with bpy.context.temp_override(window=window, screen=window.screen):
                bpy.ops.import_anim.oban("INVOKE_DEFAULT")
            state["step"] = 1
            return 0.5
        opened = file_browser()
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


EXPORT_SCRIPT = r"""
import time
from oban_import.ui.options import CUTSCENE_EXPORT
found = {"runs": []}
state = {"run": -1, "pressed": False, "seen": 0, "deadline": time.monotonic() + 120}


def open_dialog():
    main = bpy.context.window_manager.windows[0]
    with bpy.context.temp_override(window=main, screen=main.screen):   # as File > Export > Oni Cutscene
        bpy.ops.export_anim.oni_cutscene("INVOKE_DEFAULT")
    state["pressed"], state["deadline"] = False, time.monotonic() + 120


def reports():
    # the window's reports not read before, as its Info editor copies them
    main = bpy.context.window_manager.windows[0]
    area = max(main.screen.areas, key=lambda a: a.width * a.height)
    area.type = "INFO"
    region = next(r for r in area.regions if r.type == "WINDOW")
    with bpy.context.temp_override(window=main, screen=main.screen, area=area, region=region):
        bpy.ops.info.select_all(action="SELECT")
        bpy.ops.info.report_copy()
    lines = bpy.context.window_manager.clipboard.splitlines()
    state["seen"], lines = len(lines), lines[state["seen"]:]
    return lines


def step():
    try:
        if state["run"] < 0:
            found["import"] = sorted(bpy.ops.import_anim.oban(filepath=LEVEL, cutscene="picture", scripts=SCRIPTS))
            reports()
            state["run"] = 0
            open_dialog()
            return 0.5
        if time.monotonic() > state["deadline"]:
            raise TimeoutError(f"export {state['run']}: the file browser did not open, or did not close")
        opened = file_browser()
        name, folder = RUNS[state["run"]]
        if not state["pressed"]:
            if opened is None:
                return 0.25
            window, area = opened
            operator = area.spaces.active.active_operator
            found["runs"].append({"operator": operator.bl_idname, "default": operator.cutscene,
                                  "fields": [o.name for o in CUTSCENE_EXPORT.options if hasattr(operator, o.name)]})
            operator.cutscene = name                                 # the Function field
            area.spaces.active.params.directory = folder.encode()   # the folder browsed to
            x, y = area.x + area.width // 2, area.y + area.height // 2
            window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
            for value in ("PRESS", "RELEASE"):   # Enter: the browser's button
                window.event_simulate(type="RET", value=value, x=x, y=y)
            state["pressed"] = True
            return 0.25
        if opened is not None:
            return 0.25
        run = found["runs"][-1]
        run["written"] = sorted(os.listdir(folder))
        run["reports"] = reports()
        if os.path.exists(os.path.join(folder, name + ".bsl")):
            run["script"] = open(os.path.join(folder, name + ".bsl")).read()
        if state["run"] + 1 == len(RUNS):
            leave(found)
        scene = bpy.context.scene   # no camera: none set, no marker bound to one
        scene.camera = None
        found["bound"] = [m.name for m in scene.timeline_markers if m.camera is not None]
        state["run"] += 1
        open_dialog()
        return 0.5
    except Exception:
        leave(found, failed=True)


bpy.app.timers.register(step, first_interval=1.0)
"""


@pytest.mark.window
def test_the_export_dialog_writes_the_cutscene_and_reports_what_it_refuses(tmp_path):
    written, refused = tmp_path / "written", tmp_path / "refused"
    written.mkdir()
    refused.mkdir()
    found = run_in_window(tmp_path, EXPORT_SCRIPT, keys=True, ROOT=ROOT, LEVEL=LEVEL, SCRIPTS=SCRIPTS,
                          RUNS=[("again", str(written)), ("none", str(refused))])
    assert found["import"] == ["FINISHED"]
    made, none = found["runs"]
    assert made["operator"] == "EXPORT_ANIM_OT_oni_cutscene" and made["default"] == "cutscene"
    assert made["fields"] == [o.name for o in options.CUTSCENE_EXPORT.options]
    assert {"again.bsl", "OBANcut_cam_wide.oni", "TRAMchar0_walk00.oni"} <= set(made["written"])
    assert "func void again(void)" in made["script"] and "cm_anim both cut_cam_wide" in made["script"]
    assert any(line.startswith("Exported ") for line in made["reports"]), made["reports"]
    assert any(line.startswith(str(written / "again.bsl")) for line in made["reports"]), made["reports"]
    assert found["bound"] == [] and none["written"] == [] and "script" not in none
    assert any("frame 1: no camera" in line for line in none["reports"]), none["reports"]
