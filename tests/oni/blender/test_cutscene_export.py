"""A cutscene back to the game (docs/cutscenes.md 11): OniSplit's level12 played by the import,
exported (File > Export > Oni Cutscene, and the command line), imported again from the files
written: the camera, each character's base and each placed object the same on every frame;
a cutscene authored from nothing (two cameras cut by a bound marker, Bezier keys); refusals."""

import os

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from cutscene_scene import LEVEL, SCRIPTS

from oban_import.oni.io.trams.files import read_trams
from oban_import.oni.io.trams.write import tram_oni_bytes
from oban_import.ui.exports import BY_FORMAT
from oban_import.ui.options import CutsceneExportSettings

pytestmark = pytest.mark.usefixtures("addon")


def played(function, scripts=SCRIPTS):
    assert bpy.ops.import_anim.oban(filepath=LEVEL, cutscene=function, scripts=scripts) == {"FINISHED"}
    return bpy.context.scene


def shown(names):
    """{name: (T, 4, 4) world matrix on every frame of the scene} of the objects named (the scene's
    camera under the name 'camera')."""
    scene = bpy.context.scene
    objects = {name: scene.camera if name == "camera" else bpy.data.objects[name] for name in names}
    out = {name: [] for name in names}
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        for name, obj in objects.items():
            out[name].append(np.array(obj.matrix_world))
    return {name: np.array(m) for name, m in out.items()}


def keyed():
    """The names of what a cutscene import keyed: its characters' armatures and placed objects."""
    return [obj.name for obj in bpy.data.objects if "oni_cutscene" in obj and obj.type != "CAMERA"]


@pytest.mark.parametrize("function", ["picture", "shots", "props"])
def test_an_imported_cutscene_exported_plays_again_the_same_on_every_frame(function, tmp_path):
    played(function)
    names = ["camera", *keyed()]
    before = shown(names)
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    written = sorted(os.listdir(tmp_path))
    assert "again.bsl" in written and any(name.startswith("OBANagain_shot") for name in written)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("again", str(tmp_path))
    after = shown(names)
    for name in names:
        assert len(after[name]) == len(before[name]) + 1, name   # cm_reset on the tick after the last
        np.testing.assert_allclose(after[name][:-1], before[name], atol=2e-5, err_msg=name)


def test_an_unchanged_import_writes_its_trams_as_they_were_read(tmp_path):
    played("picture")
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    script = (tmp_path / "again.bsl").read_text()
    assert "chr_animate 0 char0_walk00" in script and "chr_envanim 0 again_0_box" in script
    original = next(t for t in read_trams(LEVEL) if t.name == "char0_walk00")
    back = read_trams(str(tmp_path / "TRAMchar0_walk00.oni"))[0]
    assert tram_oni_bytes(back) == tram_oni_bytes(original)


def camera(name, keys, interpolation="BEZIER"):
    """A new camera keyed at (frame, location, rotation) each."""
    obj = bpy.data.objects.new(name, bpy.data.cameras.new(name))
    bpy.context.scene.collection.objects.link(obj)
    for frame, location, rotation in keys:
        obj.location, obj.rotation_euler = location, rotation
        obj.keyframe_insert("location", frame=frame)
        obj.keyframe_insert("rotation_euler", frame=frame)
    for curve in obj.animation_data.action.fcurves if hasattr(obj.animation_data.action, "fcurves") else ():
        for key in curve.keyframe_points:
            key.interpolation = interpolation
    return obj


def test_a_cutscene_made_from_nothing_two_cameras_and_a_cut(tmp_path):
    """Bezier-keyed cameras bound to markers at frames 1 and 31: two shots."""
    assert bpy.ops.import_anim.oban(filepath=LEVEL, character_animations="NONE") == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60
    first = camera("wide", [(1, (18, -18, 3.5), (1.3, 0, 0.8)), (60, (17, -17, 3.2), (1.25, 0, 0.7))])
    second = camera("close", [(31, (8, -6, 1.5), (1.4, 0, 0.2)), (60, (9, -5, 1.6), (1.45, 0, 0.5))])
    scene.timeline_markers.new("open", frame=1).camera = first
    scene.timeline_markers.new("cut", frame=31).camera = second
    before = []
    for frame in range(1, 61):
        scene.frame_set(frame)
        before.append(np.array((first if frame < 31 else second).matrix_world))
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="made", use_selection=False,
                                            tolerance=1e-6) == {"FINISHED"}
    script = (tmp_path / "made.bsl").read_text()
    assert "cm_anim both made_shot01" in script and "sleep 30\n\tcm_anim both made_shot02" in script
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("made", str(tmp_path))
    after = shown(["camera"])["camera"]
    assert len(after) == len(before) + 1             # cm_reset on the tick after the last
    np.testing.assert_allclose(after[:-1], np.array(before), atol=5e-5)   # 1e-6 of the shots' 20 units, and float32


def test_no_camera_is_refused_by_name(tmp_path):
    assert bpy.ops.import_anim.oban(filepath=LEVEL, character_animations="NONE") == {"FINISHED"}
    bpy.context.scene.camera = None
    obj = next(o for o in bpy.data.objects if "oni_script_id" in o)
    obj.select_set(True)
    with pytest.raises(RuntimeError, match="no camera"):
        bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="none", use_selection=False)
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_writes_a_cutscene(command, tmp_path):
    blend = tmp_path / "cut.blend"
    done = run(command, LEVEL, "--cutscene", "picture", "--scripts", SCRIPTS, "-o", blend)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    done = run(command, "export", blend, "-o", out, "--format", "cutscene", "--cutscene", "again")
    assert done.returncode == 0, done.stderr
    assert (out / "again.bsl").is_file() and (out / "OBANagain_shot01.oni").is_file()


def test_what_the_export_does_not_carry_is_named(tmp_path):
    played("props")   # env_show modifiers
    bpy.context.scene.camera.data.lens = 20
    export = BY_FORMAT["cutscene"]
    chosen = export.function("chooser")(bpy.context.scene.objects)
    report = export.run(bpy.context, chosen, str(tmp_path), CutsceneExportSettings(cutscene="again"))
    said = "\n".join(report.warnings)
    assert not report.errors and "field of view" in said and "(env_show) is not carried" in said
