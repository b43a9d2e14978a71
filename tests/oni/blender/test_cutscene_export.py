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

from oban_import.blender.compat import action_fcurves
from oban_import.oni.cutscene import plan_cutscene
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
    objects = {name: found(name) for name in names}
    out = {name: [] for name in names}
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        for name, obj in objects.items():
            out[name].append(np.array(obj.matrix_world))
    return {name: np.array(m) for name, m in out.items()}


def keyed():
    """What a cutscene import keyed: its characters (by the script's name) and placed objects."""
    return [f"character {obj['oni_cutscene_character']}" if obj.type == "ARMATURE" else obj.name
            for obj in bpy.data.objects if "oni_cutscene" in obj and obj.type != "CAMERA"]


def found(name):
    if name == "camera":
        return bpy.context.scene.camera
    if name.startswith("character "):
        return next(o for o in bpy.data.objects if o.get("oni_cutscene_character") == name[10:])
    if name.startswith("script id "):
        return next(o for o in bpy.data.objects if o.get("oni_script_id") == int(name[10:]) and o.type == "MESH")
    return bpy.data.objects[name]


def events(timeline):
    """What a timeline schedules, tick by tick (the statements' layout aside)."""
    return (sorted((e.tick, e.kind, e.oban, e.ticks) for e in timeline.camera),
            sorted((e.tick, e.character, e.kind, e.name, e.norotation, e.frames) for e in timeline.characters),
            sorted((e.tick, e.kind, i, e.oban) for e in timeline.objects for i in range(e.first, e.last + 1)),
            sorted((e.tick, e.id, e.shown) for e in timeline.shows))


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "anew"])
@pytest.mark.parametrize("function", ["picture", "shots", "props", "actors"])
def test_an_imported_cutscene_exported_plays_again_the_same_on_every_frame(function, kept, tmp_path):
    """Kept: what the scene still plays as imported written as it was; anew (the level it was
    imported from not found): every motion fitted."""
    played(function)
    if not kept:
        bpy.context.scene.camera["oni_cutscene_level"] = str(tmp_path / "moved.dat")
    names = ["camera", *keyed()]
    before = shown(names)
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    written = sorted(os.listdir(tmp_path))
    assert any(name.startswith("OBANagain_") for name in written) != kept
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("again", str(tmp_path))
    after = shown(names)
    for name in names:
        assert len(after[name]) == len(before[name]) + 1, name   # cm_reset on the tick after the last
        np.testing.assert_allclose(after[name][:-1], before[name], atol=2e-5, err_msg=name)


@pytest.mark.parametrize("function", ["picture", "props", "actors"])
def test_an_unchanged_import_writes_the_same_obans_trams_and_ticks(function, tmp_path):
    played(function)
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    level = open(LEVEL, "rb").read()
    for name in os.listdir(tmp_path):
        if name.startswith("OBAN"):   # past its header (file header, descriptor, name, the instance's two ids),
            assert (tmp_path / name).read_bytes()[136:] in level, name   # the bytes OniSplit stored in the level
        if name.startswith("TRAM"):
            original = next(t for t in read_trams(LEVEL) if t.name == name[4:-4])
            assert tram_oni_bytes(read_trams(str(tmp_path / name))[0]) == tram_oni_bytes(original), name
    assert not any(name.startswith("OBANagain") for name in os.listdir(tmp_path))
    again = plan_cutscene(LEVEL, "again", str(tmp_path)).timeline
    first = plan_cutscene(LEVEL, function, SCRIPTS).timeline
    camera, characters, objects, shows = events(first)
    if not any(e.kind == "reset" for e in first.camera):   # the written function gives the camera back
        camera.append((first.length, "reset", "", 0))
    assert events(again) == (camera, characters, objects, shows)


def moved(obj, path, frames, by):
    """The keys of `path` on `frames` moved by `by` (a vector)."""
    for curve in action_fcurves(obj.animation_data.action, obj):
        if curve.data_path != path:
            continue
        for key in curve.keyframe_points:
            if key.co[0] in frames:
                for point in (key.co, key.handle_left, key.handle_right):
                    point[1] += by[curve.array_index]
        curve.update()


def test_an_edited_camera_keeps_what_is_unchanged_and_writes_the_edit_anew(tmp_path):
    """shots: the camera moved on frames 21-25 of cut_cam_a's shot (tick 20 on)."""
    played("shots")
    moved(bpy.context.scene.camera, "location", range(21, 26), (0, 0, 0.5))
    before = shown(["camera"])
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    script = (tmp_path / "again.bsl").read_text()
    assert script.index("cm_anim both cut_cam_a") < script.index("sleep 20\n\tcm_anim both again_shot01")
    assert "cm_interpolate" not in script                 # it played on from the edited shot: written anew
    assert "cm_anim both cut_cam_b" in script             # the last shot kept
    assert (tmp_path / "OBANcut_cam_a.oni").read_bytes()[136:] in open(LEVEL, "rb").read()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("again", str(tmp_path))
    np.testing.assert_allclose(shown(["camera"])["camera"][:-1], before["camera"], atol=2e-5)


def test_a_shot_added_to_an_import_and_one_cut(tmp_path):
    """shots: a new camera bound by a marker on frames 11-20 (a shot added inside cut_cam_a's),
    and cut_cam_b's shot cut to a still camera from frame 80: the first 10 ticks kept, the rest
    anew (each span after plays on from one changed, or is changed)."""
    played("shots")
    scene = bpy.context.scene
    imported = scene.camera
    added = camera("added", [(11, (8, -6, 1.5), (1.4, 0, 0.2)), (20, (9, -5, 1.6), (1.45, 0, 0.5))])
    still = camera("still", [(80, (0, -20, 12), (0.6, 0, 0))])
    for frame, bound in ((1, imported), (11, added), (21, imported), (80, still)):
        scene.timeline_markers.new(f"at {frame}", frame=frame).camera = bound
    views = []
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        views.append(np.array((added if 11 <= frame < 21 else still if frame >= 80 else imported).matrix_world))
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    camera_events = [(e.tick, e.oban) for e in plan_cutscene(LEVEL, "again", str(tmp_path)).timeline.camera]
    # kept up to the shot added; anew from it: the rest of cut_cam_a's and the interpolation that plays on from
    # it (to cut_cam_b's shot, at tick 79, which the still camera replaces: anew again); the written cm_reset
    assert camera_events == [(0, "cut_cam_a"), (10, "again_shot01"), (20, "again_shot02"), (79, "again_shot03"),
                             (104, "")]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("again", str(tmp_path))
    np.testing.assert_allclose(shown(["camera"])["camera"][:len(views)], np.array(views), atol=2e-5)


def test_an_edited_character_and_object(tmp_path):
    """actors: the character's base lifted on frames 41-45; the crate of script id 22 moved."""
    played("picture")
    character = found("character 0")
    moved(character, "location", range(41, 46), (0, 0, 0.3))
    crate = next(o for o in bpy.data.objects if o.get("oni_script_id") == 22 and o.animation_data)
    moved(crate, "location", range(30, 61), (0.2, 0, 0))
    names = keyed()
    before = shown(names)
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again") == {"FINISHED"}
    timeline = plan_cutscene(LEVEL, "again", str(tmp_path)).timeline
    _, characters, objects, _ = events(timeline)
    assert (0, "0", "envanim", "cut_box", True, None) in characters            # kept until the edit
    assert (40, "0", "envanim", "again_0_box", False, None) in characters      # anew from it
    assert (0, "anim", 22, "") in objects and (29, "setanim", 22, "again_22_cut_box_001") in objects
    assert [(e.tick, e.oban) for e in timeline.camera] == [(0, "cut_cam_wide"), (60, "")]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("again", str(tmp_path))
    after = shown(names)
    for name in names:
        np.testing.assert_allclose(after[name][:-1], before[name], atol=2e-5, err_msg=name)


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


def pose(armature):
    """(T, B, 4, 4) the armature's bones' pose matrices (armature space) on every frame of the scene."""
    scene, out = bpy.context.scene, []
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        out.append([np.array(bone.matrix) for bone in armature.pose.bones])
    return np.array(out)


def test_a_cutscene_made_from_nothing_a_character_walking_two_trams_and_a_door(tmp_path):
    """Three Bezier-keyed cameras cut by markers at frames 21 and 41; the level's character (as
    the player, 0) walking a Bezier path with two TRAMs back to back in NLA strips; a door (the
    placed object of script id 23) turning open over frames 20-40."""
    assert bpy.ops.import_anim.oban(filepath=LEVEL) == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60
    cameras = [camera("wide", [(1, (18, -18, 3.5), (1.3, 0, 0.8)), (60, (17, -17, 3.2), (1.25, 0, 0.7))]),
               camera("close", [(21, (8, -6, 1.5), (1.4, 0, 0.2)), (40, (9, -5, 1.6), (1.45, 0, 0.5))]),
               camera("high", [(41, (0, -20, 12), (0.6, 0, 0)), (60, (2, -20, 12), (0.6, 0, 0.1))])]
    for frame, bound in zip((1, 21, 41), cameras):
        scene.timeline_markers.new(f"shot {frame}", frame=frame).camera = bound
    character = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    character["oni_cutscene_character"] = "0"
    character.animation_data.action = None
    for frame, location, turn in ((1, (4, -4, 0), 0.0), (30, (6, -2, 0), 0.8), (60, (9, -1, 0), 1.2)):
        character.location, character.rotation_euler = location, (0, 0, turn)
        character.keyframe_insert("location", frame=frame)
        character.keyframe_insert("rotation_euler", frame=frame)
    track = character.animation_data.nla_tracks.new()
    frame = 1
    for name in ("char0_walk00", "char0_punch02"):
        action = bpy.data.actions[name]
        strip = track.strips.new(name, frame, action)
        strip.action_frame_start = action.frame_range[0] + 1   # TRAM frame 1 on its first tick, as the game
        frame = int(strip.frame_end) + 1
    door = next(o for o in bpy.data.objects if o.get("oni_script_id") == 23)
    door.animation_data.action = None
    door.rotation_mode = "XYZ"
    for frame, turn in ((20, 0.0), (40, np.pi / 2)):
        door.rotation_euler = (0, 0, turn)
        door.keyframe_insert("rotation_euler", frame=frame)
    before_pose = pose(character)
    names = ["character 0", "script id 23"]
    scene.camera = cameras[0]
    views = []
    for frame in range(1, 61):
        scene.frame_set(frame)
        views.append(np.array(cameras[(frame > 20) + (frame > 40)].matrix_world))
    before = shown(names)
    assert bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="made", tolerance=1e-6) == {"FINISHED"}
    timeline = plan_cutscene(LEVEL, "made", str(tmp_path)).timeline
    assert [(e.tick, e.oban) for e in timeline.camera] == [(0, "made_shot01"), (20, "made_shot02"),
                                                           (40, "made_shot03"), (60, "")]
    _, characters, objects, _ = events(timeline)
    assert [c[:4] for c in characters] == [(0, "0", "animate", "char0_walk00"), (0, "0", "envanim", "made_0_box"),
                                           (49, "0", "animate", "char0_punch02")]
    assert objects == [(0, "create", 23, ""), (0, "setanim", 23, "made_23_cut_box_003")]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played("made", str(tmp_path))
    after = shown(["camera", *names])   # the punch's last frames play on after the function's 60 ticks
    np.testing.assert_allclose(after["camera"][:60], np.array(views), atol=5e-5)
    for name in names:
        np.testing.assert_allclose(after[name][:60], before[name], atol=5e-5, err_msg=name)
    np.testing.assert_allclose(pose(found("character 0"))[:60], before_pose, atol=1e-4)   # the TRAMs as read


def test_no_camera_is_refused_by_name(tmp_path):
    assert bpy.ops.import_anim.oban(filepath=LEVEL, character_animations="NONE") == {"FINISHED"}
    bpy.context.scene.camera = None
    obj = next(o for o in bpy.data.objects if "oni_script_id" in o)
    obj.select_set(True)
    with pytest.raises(RuntimeError, match="no camera"):
        bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="none", use_selection=False)
    assert not os.listdir(tmp_path)


def _scaled_character():
    found("character 0").delta_scale = (1.2, 1.2, 1.2)   # its scale is keyed


def _two_cameras_on_one_frame():
    scene = bpy.context.scene
    other = bpy.data.objects.new("other", bpy.data.cameras.new("other"))
    scene.collection.objects.link(other)
    scene.timeline_markers.new("one", frame=10).camera = scene.camera
    scene.timeline_markers.new("two", frame=10).camera = other


def _overlapping_strips():
    track = found("character 0").animation_data.nla_tracks[0]
    action = track.strips[0].action
    late = found("character 0").animation_data.nla_tracks.new().strips.new("late", int(track.strips[0].frame_start) + 5,
                                                                            action)
    late.name = "late"   # Blender 3.4 names a new strip after its action, whatever name it is given


@pytest.mark.parametrize("edit, said", [
    (_scaled_character, r"armature '.*': its base is scaled \(\[1.2, 1.2, 1.2\] at frame 1\)"),
    (_two_cameras_on_one_frame, r"frame 10: markers 'one' and 'two' bind two cameras"),
    (_overlapping_strips, r"strips '.*' and 'late' overlap"),
], ids=["scaled character", "two cameras", "overlapping strips"])
def test_what_a_cutscene_cannot_express_is_refused_by_name(edit, said, tmp_path):
    played("picture")
    edit()
    with pytest.raises(RuntimeError, match=said):
        bpy.ops.export_anim.oni_cutscene(directory=str(tmp_path), cutscene="again")
    assert not os.listdir(tmp_path)


def test_a_keyed_lens_and_an_object_not_placed_are_named(tmp_path):
    played("picture")
    scene = bpy.context.scene
    scene.camera.data.lens = 30
    scene.camera.data.keyframe_insert("lens", frame=1)
    cube = bpy.data.objects.new("cube", None)
    scene.collection.objects.link(cube)
    cube.keyframe_insert("location", frame=1)
    export = BY_FORMAT["cutscene"]
    report = export.run(bpy.context, export.function("chooser")(scene.objects), str(tmp_path),
                        CutsceneExportSettings(cutscene="again"))
    said = "\n".join(report.warnings)
    assert not report.errors and "vertical, keyed) is not carried" in said
    assert "1 objects move but are not placed objects of the level (no script id)" in said and "'cube'" in said


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_writes_a_cutscene(command, tmp_path):
    blend = tmp_path / "cut.blend"
    done = run(command, LEVEL, "--cutscene", "picture", "--scripts", SCRIPTS, "-o", blend)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    done = run(command, "export", blend, "-o", out, "--format", "cutscene", "--cutscene", "again")
    assert done.returncode == 0, done.stderr
    assert (out / "again.bsl").is_file() and (out / "OBANcut_cam_wide.oni").is_file()


def test_what_the_export_does_not_carry_is_named(tmp_path):
    played("props")   # env_show modifiers
    bpy.context.scene.camera.data.lens = 20
    export = BY_FORMAT["cutscene"]
    chosen = export.function("chooser")(bpy.context.scene.objects)
    report = export.run(bpy.context, chosen, str(tmp_path), CutsceneExportSettings(cutscene="again"))
    said = "\n".join(report.warnings)
    assert not report.errors and "field of view (61.93° vertical) is not carried" in said
