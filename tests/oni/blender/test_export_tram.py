"""Characters back to the game (docs/characters.md, "Export"): an unchanged import written as
OniSplit wrote it, bit for bit; edited and authored motion fitted, the file's replay by the
plain reference engine against Blender's own evaluation of the action; the TRAM's fields and
events kept; what a TRAM cannot hold refused with nothing written; the dialog and both
command lines."""

import glob
import math
import os

import bpy
import characters_generate as cgen
import numpy as np
import pytest
from character_reference import world_matrices as reference_world
from commands import COMMANDS, run
from paths import DATA
from test_characters import SCALE, part_worlds, play, to_blender

from oban_import.blender.compat import action_fcurves
from oban_import.oni.blender.tram_export import character_armatures, export_characters
from oban_import.oni.io.characters.model import PART_NAMES
from oban_import.oni.io.characters.read import read_character, read_tram_file
from oban_import.ui.options import CharacterExportSettings

pytestmark = pytest.mark.usefixtures("addon")
SAMPLES = os.path.join(DATA, "characters")
ONCC = os.path.join(SAMPLES, "oni", "ONCCchar0.oni")


def import_char0(**options):
    assert bpy.ops.import_anim.oban(filepath=ONCC, global_scale=SCALE, **options) == {"FINISHED"}
    return bpy.data.objects["char0"]


def export(armature, folder, **settings):
    return export_characters(bpy.context, [armature], str(folder), CharacterExportSettings(**settings))


def replay_error(armature, action, path, moved_only=None):
    """Largest rotation and translation differences between Blender's evaluation of `action`
    (each part mesh's world matrix) and the reference engine's replay of the file (of an
    overlay: its tracks on the parts it moves, the others at rest)."""
    tram = read_tram_file(str(path))
    if moved_only is not None:
        rest = np.array([[0, 0, 0, 1]], np.float32)
        for p, track in enumerate(tram.tracks):
            if not (moved_only.used_parts | moved_only.replaced_parts) >> p & 1:
                track.frames, track.values = np.array([0, tram.frames - 1]), np.repeat(rest, 2, axis=0)
    body = read_character(ONCC).body
    wanted = to_blender(np.array(reference_world(body.parents.tolist(), body.translations.tolist(), tram)))
    play(armature, action)
    got = part_worlds(armature, range(tram.frames), "char0", PART_NAMES)
    return np.abs(got[..., :3, :3] - wanted[..., :3, :3]).max(), np.abs(got[..., :3, 3] - wanted[..., :3, 3]).max()


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_an_unchanged_import_is_written_as_onisplit_wrote_it(tmp_path, keys):
    armature = import_char0(keys=keys)
    report = export(armature, tmp_path)
    assert not report.errors and len(report.made) == 6
    for made in report.made:
        name = os.path.basename(made.path)
        with open(made.path, "rb") as mine, open(os.path.join(SAMPLES, "oni", name), "rb") as theirs:
            assert mine.read() == theirs.read(), name
        assert made.note == "unchanged import" and made.error < 1e-5
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in glob.glob(f"{SAMPLES}/oni/TRAM*"))


def test_generated_animations_of_every_case_come_back_bit_for_bit(tmp_path):
    scene = cgen.standard_scene(np.random.default_rng(3))
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    assert bpy.ops.import_anim.oban(filepath=os.path.join(folder, "ONCChero.oni"), keys="FILE") == {"FINISHED"}
    (tmp_path / "out").mkdir()
    report = export(bpy.data.objects["hero"], tmp_path / "out")
    assert not report.errors and len(report.made) == len(read_character(os.path.join(folder, "ONCChero.oni"))
                                                         .animations) >= 8
    for made in report.made:
        name = os.path.basename(made.path)
        with open(made.path, "rb") as mine, open(os.path.join(folder, name), "rb") as theirs:
            assert mine.read() == theirs.read(), name


def test_xml_holds_what_onisplit_wrote(tmp_path):
    report = export(import_char0(), tmp_path, character_format="xml")
    assert not report.errors and len(report.made) == 6
    for made in report.made:
        name = os.path.basename(made.path)
        assert name.endswith(".xml")
        theirs = read_tram_file(os.path.join(SAMPLES, "oni", name[:-4] + ".oni"))
        assert cgen.tram_differences(read_tram_file(made.path), theirs) == [], name


def move_pelvis(armature, action, offset):
    """Add offset(f), a vector in Blender's world axes, to the pelvis location keys at frame 1 + f."""
    rest = np.array(armature.data.bones["Pelvis"].matrix_local)[:3, :3]
    for curve in action_fcurves(action, armature):
        if curve.data_path != 'pose.bones["Pelvis"].location':
            continue
        for k in curve.keyframe_points:
            k.co[1] += (rest.T @ offset(k.co[0] - 1.0))[curve.array_index]
        curve.update()


def edit_walk(armature):
    """The walk with its left thigh swung further (up to 0.2 rad more about x) and the pelvis
    lifted by up to 3 units: every key of those curves moved."""
    action = bpy.data.actions["char0_walk00"]
    thigh = 'pose.bones["LeftThigh"].rotation_quaternion'
    w, x = (c for i in (0, 1) for c in action_fcurves(action, armature) if c.data_path == thigh and c.array_index == i)
    for kw, kx in zip(w.keyframe_points, x.keyframe_points):
        turn = 0.2 * math.sin(kw.co[0] / 5.0)
        qw, qx = kw.co[1], kx.co[1]
        kw.co[1], kx.co[1] = qw * math.cos(turn) - qx * math.sin(turn), qx * math.cos(turn) + qw * math.sin(turn)
    w.update(), x.update()
    move_pelvis(armature, action, lambda f: np.array([0.0, 0.0, SCALE * 3.0 * math.sin(f / 7.0 + 1.0)]))
    return action


def test_edited_motion_is_fitted_and_keeps_the_animations_fields(tmp_path):
    armature = import_char0()
    action = edit_walk(armature)
    report = export(armature, tmp_path, character_actions="ASSIGNED", character_tolerance=1e-3)
    assert not report.errors and len(report.made) == 1
    made = report.made[0]
    assert made.note == "" and made.error <= 1e-3
    rotation, translation = replay_error(armature, action, made.path)
    assert rotation < 2e-3 and translation < 2e-3 * 2.0, (rotation, translation)
    original = read_tram_file(os.path.join(SAMPLES, "oni", "TRAMchar0_walk00.oni"))
    back = read_tram_file(made.path)
    assert set(cgen.tram_differences(back, original)) <= {"tracks", "heights", "velocities"}
    assert len(back.footsteps) == len(original.footsteps) == 5 and back.frames == original.frames == 50
    keys = sum(len(t.frames) for t in back.tracks)
    assert 19 * 2 <= keys < 19 * 50, keys      # fewer keys than frames, each part at least its two ends


def test_a_motion_moved_along_the_ground_as_a_whole_is_the_same_animation(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    move_pelvis(armature, bpy.data.actions["char0_walk00"], lambda f: np.array([3.0, -2.0, 0.0]))
    report = export(armature, tmp_path)
    assert report.made[0].note == "unchanged import"
    with open(report.made[0].path, "rb") as mine, open(os.path.join(SAMPLES, "oni", "TRAMchar0_walk00.oni"), "rb") as f:
        assert mine.read() == f.read()


def test_an_edited_overlay_stays_an_overlay_of_16_byte_keys(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*overlay*")
    action = bpy.data.actions["char0_overlay_q01"]
    chest = next(c for c in action_fcurves(action, armature)
                 if c.data_path == 'pose.bones["Chest"].rotation_quaternion' and c.array_index == 2)
    for k in chest.keyframe_points:
        k.co[1] += 0.1
    chest.update()
    report = export(armature, tmp_path)
    assert not report.errors and report.made[0].note == ""
    original = read_tram_file(os.path.join(SAMPLES, "oni", "TRAMchar0_overlay_q01.oni"))
    back = read_tram_file(report.made[0].path)
    assert set(cgen.tram_differences(back, original)) == {"tracks"}
    assert back.key_size == 16 and not back.heights.any() and not back.velocities.any()
    rotation, translation = replay_error(armature, action, report.made[0].path, moved_only=original)
    assert rotation < 2e-3 and translation < 2e-3 * 2.0, (rotation, translation)


def author(armature, name, poses, interpolation):
    """A new action on the armature: at each (frame, {bone: (axis, angle)}, pelvis location)
    of `poses`, those bones turned and the pelvis placed, keyed; the keys' interpolation set."""
    armature.animation_data_create()
    action = bpy.data.actions.new(name)
    armature.animation_data.action = action
    for frame, turns, location in poses:
        for bone, (axis, angle) in turns.items():
            q = [math.cos(angle / 2), 0.0, 0.0, 0.0]
            q[1 + axis] = math.sin(angle / 2)
            armature.pose.bones[bone].rotation_quaternion = q
            armature.pose.bones[bone].keyframe_insert("rotation_quaternion", frame=frame)
        armature.pose.bones["Pelvis"].location = location
        armature.pose.bones["Pelvis"].keyframe_insert("location", frame=frame)
    for curve in action_fcurves(action, armature):
        for key in curve.keyframe_points:
            key.interpolation = interpolation
    return action


def wave(frames=40):
    return [(1, {"RightArm": (1, 0.0)}, (0, 0, 0)), (20, {"RightArm": (1, 1.2)}, (0, 0.5, 0)),
            (frames, {"RightArm": (1, -0.3)}, (0, 0, 0))]


def walk_cycle(frames=61):
    """Legs swinging, knees bending, the pelvis bobbing and going forward: a key every 5 frames."""
    poses = []
    for frame in range(1, frames + 1, 5):
        phase = 2 * math.pi * (frame - 1) / 30
        poses.append((frame, {"LeftThigh": (0, 0.5 * math.sin(phase)), "RightThigh": (0, -0.5 * math.sin(phase)),
                              "LeftCalf": (0, 0.4 * max(0.0, math.sin(phase + 1))),
                              "RightCalf": (0, 0.4 * max(0.0, -math.sin(phase + 1))),
                              "Chest": (1, 0.1 * math.sin(phase))},
                      (0.0, 0.05 * (frame - 1), 0.1 * abs(math.sin(phase)))))
    return poses


@pytest.mark.parametrize("name, poses, interpolation", [
    ("wave", wave(), "BEZIER"), ("wave_linear", wave(), "LINEAR"), ("walk", walk_cycle(), "BEZIER")])
def test_authored_motion_on_a_new_action(tmp_path, name, poses, interpolation):
    armature = import_char0(character_animations="NONE")
    action = author(armature, name, poses, interpolation)
    report = export(armature, tmp_path)
    assert not report.errors and [os.path.basename(m.path) for m in report.made] == [f"TRAM{name}.oni"]
    back = read_tram_file(report.made[0].path)
    assert back.frames == poses[-1][0] and back.key_size == 6 and back.name == name and back.type == 0
    rotation, translation = replay_error(armature, action, report.made[0].path)
    assert rotation < 2e-3 and translation < 2e-3 * 2.0, (rotation, translation)
    keys = [len(t.frames) for t in back.tracks]
    moved = {p for p, n in enumerate(PART_NAMES) if n in {b for _, turns, _ in poses for b in turns}}
    assert all(k == 2 for p, k in enumerate(keys) if p not in moved)        # still parts: their two ends
    if interpolation == "LINEAR":     # Blender's linear blend of quaternion keys is the engine's: the same keys
        assert [keys[p] for p in sorted(moved)] == [len(poses)] * len(moved)
    else:                             # eased: more, yet fewer than a key a frame
        assert all(len(poses) < keys[p] < back.frames for p in moved), keys
    print(f"{name}: {back.frames} frames, keys {sum(keys)} (moved parts {[keys[p] for p in sorted(moved)]}), "
          f"worst error {report.made[0].error:.2g}")


@pytest.mark.parametrize("bone, channel, value, message", [
    ("LeftArm", "scale", (1.5, 1, 1), "bone 'LeftArm' scales or shears at frame 1"),
    ("Head", "location", (0, 0.5, 0), "bone 'Head' moves away from its parent at frame 1"),
])
def test_what_a_tram_cannot_hold_is_refused_with_nothing_written(tmp_path, bone, channel, value, message):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    setattr(armature.pose.bones[bone], channel, value)
    armature.pose.bones[bone].keyframe_insert(channel, frame=5)
    report = export(armature, tmp_path)
    assert not report.made and len(report.errors) == 1 and message in report.errors[0]
    assert "char0_walk00" in report.errors[0] and os.listdir(tmp_path) == []


def test_too_many_frames_no_keys_and_a_loose_tolerance_are_refused(tmp_path):
    armature = import_char0(character_animations="NONE")
    armature.animation_data_create()
    long = bpy.data.actions.new("long")
    armature.animation_data.action = long
    bone = armature.pose.bones["Head"]
    for frame in (1, 70000):
        bone.keyframe_insert("rotation_quaternion", frame=frame)
    report = export(armature, tmp_path, character_actions="ASSIGNED")
    assert "70000 frames; a TRAM holds 1 to 65535" in report.errors[0]
    armature.animation_data.action = bpy.data.actions.new("empty")
    report = export(armature, tmp_path, character_actions="ASSIGNED")
    assert "has no keys" in report.errors[0] and os.listdir(tmp_path) == []


def test_a_tolerance_6_byte_keys_cannot_meet_is_refused(tmp_path):
    armature = import_char0()
    edit_walk(armature)
    report = export(armature, tmp_path, character_actions="ASSIGNED", character_tolerance=1e-6)
    assert not report.made and "more than the tolerance" in report.errors[0] and os.listdir(tmp_path) == []


def test_only_armatures_of_a_body_are_characters():
    armature = import_char0(character_animations="NONE")
    data = bpy.data.armatures.new("rig")
    other = bpy.data.objects.new("rig", data)
    bpy.context.collection.objects.link(other)
    assert character_armatures(bpy.data.objects) == [armature]


def test_the_dialog_exports_the_selected_armatures(tmp_path):
    armature = import_char0()
    for obj in bpy.context.selected_objects:
        obj.select_set(False)
    with pytest.raises(RuntimeError, match="No character armature to export"):
        bpy.ops.export_anim.tram(directory=str(tmp_path))
    armature.select_set(True)
    assert bpy.ops.export_anim.tram(directory=str(tmp_path), character_actions="ASSIGNED") == {"FINISHED"}
    assert os.listdir(tmp_path) == ["TRAMchar0_walk00.oni"]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_lines_export_a_blends_characters(tmp_path, command):
    blend = tmp_path / "char.blend"
    assert run(command, ONCC, "-o", blend).returncode == 0
    done = run(command, "export", blend, "-o", tmp_path / "out", "--format", "xml", "--actions", "all")
    assert done.returncode == 0, done.stderr
    assert "TRAMchar0_walk00.xml" in done.stdout and "unchanged import" in done.stdout
    assert len(glob.glob(str(tmp_path / "out" / "TRAM*.xml"))) == 6


class Recorder:
    """A panel layout that keeps what is drawn: labels' text and the properties' paths."""

    def __init__(self):
        self.drawn = []

    def label(self, text="", icon="NONE"):
        self.drawn.append(text)

    def prop(self, owner, path, text=""):
        self.drawn.append((owner, path, text))

    def column(self, **_):
        return self


def test_the_panel_shows_the_animation_and_its_edits_and_events_are_written(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*punch*")
    panel = bpy.types.OBJECT_PT_oni_character
    with bpy.context.temp_override(object=armature):
        assert panel.poll(bpy.context)
    with bpy.context.temp_override(object=bpy.data.objects["char0 Head"]):
        assert not panel.poll(bpy.context)
    shown = Recorder()
    panel.draw(type("Drawn", (), {"layout": shown})(), type("Context", (), {"object": armature})())
    action = bpy.data.actions["char0_punch02"]
    assert "Character: char0, body char0, 19 parts" in shown.drawn
    assert "Animation: char0_punch02, 36 frames, 6-byte keys" in "".join(t for t in shown.drawn if isinstance(t, str))
    edited = [path for owner, path, _ in (t for t in shown.drawn if isinstance(t, tuple)) if owner == action]
    assert '["tram_hard_pause"]' in edited and '["tram_to_state"]' in edited
    action["tram_hard_pause"], action["tram_to_state"] = 9, 44          # what the panel's fields set
    action.pose_markers.new("footstep: Right").frame = 12
    action.pose_markers.new("my note").frame = 3                        # the user's own: not an event
    report = export(armature, tmp_path)
    back = read_tram_file(report.made[0].path)
    original = read_tram_file(os.path.join(SAMPLES, "oni", "TRAMchar0_punch02.oni"))
    assert (back.hard_pause, back.to_state) == (9, 44) and report.made[0].note == "unchanged import"
    assert len(back.footsteps) == len(original.footsteps) + 1 and 11 in back.footsteps["frame"].tolist()
    assert set(cgen.tram_differences(back, original)) == {"hard_pause", "to_state", "footsteps"}


def test_trams_from_onisplits_xml_go_onto_the_armature_and_export_as_onisplit_made_them(tmp_path):
    """OniSplit's own XML of each sample (its -extract:xml), imported onto the selected armature
    and written back as .oni: what OniSplit's -create makes of the same XML (the samples, but
    for punch02, whose XML holds an angle that reads back 1 ulp off: data/characters/onisplit)."""
    armature = import_char0(character_animations="NONE")
    armature.select_set(True)
    bpy.context.view_layer.objects.active = armature
    xml = sorted(glob.glob(os.path.join(SAMPLES, "xml", "TRAM*.xml")))
    assert len(xml) == 6
    assert bpy.ops.import_anim.oban(directory=os.path.dirname(xml[0]),
                                    files=[{"name": os.path.basename(p)} for p in xml]) == {"FINISHED"}
    assert len([o for o in bpy.data.objects if o.type == "ARMATURE"]) == 1 and len(bpy.data.actions) == 6
    report = export(armature, tmp_path)
    assert not report.errors and len(report.made) == 6
    for made in report.made:
        name = os.path.basename(made.path)
        created = os.path.join(SAMPLES, "onisplit", "created_from_samples", name)
        with open(made.path, "rb") as mine, open(created if os.path.exists(created) else
                                                 os.path.join(SAMPLES, "oni", name), "rb") as theirs:
            assert mine.read() == theirs.read(), name


@pytest.mark.parametrize("spoil, message", [
    ("delete", "its bones are not the body's parts: no bone 'LeftFist'"),
    ("reparent", "bone 'Head' is under 'Pelvis'; in the body it is under 'Neck'"),
    ("by hand", "bone 'Neck' is under 'Head', a part after it"),
])
def test_bones_that_are_not_the_bodys_parts_are_refused(tmp_path, spoil, message):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    bones = armature.data.edit_bones
    if spoil == "delete":
        bones.remove(bones["LeftFist"])
    else:
        bones["Head"].parent = bones["Pelvis"]
    if spoil == "by hand":      # no import's description: the parts' order must still be the engine's
        for key in ("oni_parts", "oni_part_parents"):
            del armature[key]
        bones["Neck"].parent, bones["Head"].parent = bones["Head"], bones["Neck"]
    bpy.ops.object.mode_set(mode="OBJECT")
    report = export(armature, tmp_path)
    assert not report.made and len(report.errors) == 1 and message in report.errors[0], report.errors
    assert "armature 'char0'" in report.errors[0] and os.listdir(tmp_path) == []
