"""Characters back to the game (docs/characters.md, "Export"): an unchanged import written as
OniSplit wrote it, bit for bit; edited and authored motion fitted, the file's replay by the
plain reference engine against Blender's own evaluation of the action; the TRAM's fields and
events kept; what a TRAM cannot hold refused with nothing written; the dialog and both
command lines."""

import glob
import math
import os
import shutil

import bpy
import characters_generate as cgen
import numpy as np
import pytest
from character_reference import world_matrices as reference_world
from commands import COMMANDS, IN_BPY_MODULE, python_module, run
from paths import DATA
from test_characters import SCALE, part_worlds, play, to_blender

from oban_import.blender.compat import action_fcurves
from oban_import.oni.blender.characters.armature_body import character_armatures
from oban_import.oni.export.trams.export import export_characters
from oban_import.oni.io.characters.read import read_character
from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.tram import PART_NAMES
from oban_import.oni.io.trams.write import tram_oni_bytes
from oban_import.ui.options import CharacterExportSettings

pytestmark = pytest.mark.usefixtures("addon")
SAME_BLENDER = [command for command in COMMANDS if (command is python_module) == IN_BPY_MODULE]   # reads our .blend
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


def test_an_export_into_the_folder_its_trams_were_read_from_is_refused_unless_asked(tmp_path):
    """The sample character imported from a folder of its own, its six TRAMs exported into that
    folder: each would replace the file it was read from, refused naming it, every file as it
    was; with Replace Sources written (the same bytes: an unchanged import)."""
    folder = tmp_path / "char0"
    shutil.copytree(os.path.join(SAMPLES, "oni"), folder)
    assert bpy.ops.import_anim.oban(filepath=str(folder / "ONCCchar0.oni"), global_scale=SCALE) == {"FINISHED"}
    armature = bpy.data.objects["char0"]
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    report = export(armature, folder)
    assert not report.made and len(report.errors) == 6, report.errors
    assert all(": would replace the file it was read from" in error for error in report.errors), report.errors
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == before
    report = export(armature, folder, replace_sources=True)
    assert not report.errors and len(report.made) == 6
    for made in report.made:
        assert open(made.path, "rb").read() == open(os.path.join(SAMPLES, "oni", os.path.basename(made.path)),
                                                    "rb").read()


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


def punch_attack(**changes):
    """The punch's first attack as its property holds it, with `changes`."""
    attack = bpy.data.actions["char0_punch02"]["tram_attacks"][0].to_dict()
    return [attack | changes]


@pytest.mark.parametrize("key, value, message", [
    ("tram_key_size", 7, "property 'tram_key_size' is 7: the engine reads 6 or 16"),
    ("tram_frames", 0, "property 'tram_frames' is 0, not 1 to 65535"),
    ("tram_type", 70000, "property 'tram_type' is 70000, not 0 to 65535"),
    ("tram_action_frame", 1.5, "property 'tram_action_frame' is 1.5, not a whole number"),
    ("tram_flags", "Overlay", "property 'tram_flags' is 'Overlay', not a whole number"),
    ("tram_final_rotation", 1e39, "property 'tram_final_rotation' is 1e+39, past what a float32 holds"),
    ("tram_impact", "a_very_long_impact", "property 'tram_impact' holds an impact name of 18 bytes, longer than "
                                          "the 16 the TRAM stores"),
    ("tram_direct_animations", ["char0_walk00"], "property 'tram_direct_animations' is not two animation names"),
    ("tram_positions", [40000, 0, 0, 0] * 36, "property 'tram_positions' item 0 is 40000, not -32768 to 32767"),
    ("tram_attacks", "damage 70000", "property 'tram_attacks' item 0 field 'damage' is 70000, not 0 to 65535"),
    ("tram_extent_info", {"max_distance": 1.0}, "property 'tram_extent_info' has no 'min_height'"),
    ("tram_name", "", "property 'tram_name' is '', not a name"),
    ("tram_footsteps_bytes", 5, "property 'tram_footsteps_bytes' is not bytes"),
])
def test_properties_a_tram_cannot_hold_are_refused_and_the_other_actions_written(tmp_path, key, value, message):
    armature = import_char0()
    action = bpy.data.actions["char0_punch02"]
    action[key] = punch_attack(damage=70000) if value == "damage 70000" else value
    report = export(armature, tmp_path)
    assert report.errors == [f"action 'char0_punch02' of 'char0': {message}"]
    assert len(report.made) == 5 and "TRAMchar0_punch02.oni" not in os.listdir(tmp_path)


def test_edited_properties_within_their_fields_are_written_as_they_are(tmp_path):
    armature = import_char0()
    action = bpy.data.actions["char0_punch02"]
    edits = {"tram_type": 65535, "tram_action_frame": -32768, "tram_impact": "x" * 16, "tram_final_rotation": -2.5,
             "tram_direct_animations": ["char0_walk00", ""], "tram_attacks": punch_attack(damage=65535, flags=-1)}
    for key, value in edits.items():
        action[key] = value
    report = export(armature, tmp_path)
    assert not report.errors
    back = read_tram_file(str(tmp_path / "TRAMchar0_punch02.oni"))
    assert (back.type, back.action_frame, back.impact, back.final_rotation, back.direct_animations) == (
        65535, -32768, b"x" * 16, np.float32(-2.5), ("char0_walk00", ""))
    assert (int(back.attacks[0]["damage"]), int(back.attacks[0]["flags"])) == (65535, 0xFFFFFFFF)


@pytest.mark.parametrize("key, value, message", [
    ("oban_import_scale", 0.0, "property 'oban_import_scale' is 0.0: a scale is a positive finite number"),
    ("oban_import_scale", float("nan"), "property 'oban_import_scale' is nan, not a finite number"),
    ("oban_import_axes", [1.0] * 9, "property 'oban_import_axes' is not a rotation or reflection of the axes"),
    ("oni_parts", PART_NAMES[:-1], "property 'oni_part_parents' holds 19 numbers, not 18 (for the 18 parts of "
                                   "'oni_parts')"),
    ("oni_parts", ["Pelvis"] * 19, "property 'oni_parts' holds 19 names, 1 of them different: a body has 1 to 32 "
                                   "parts, each named once"),
    ("oni_part_parents", [-1] + [0] * 18, "bone 'LeftCalf' is under 'LeftThigh'; in the body it is under 'Pelvis'"),
    ("oni_part_parents", [-1, 5] + [0] * 17, "property 'oni_part_parents' is not a tree of the parts in the engine's "
                                             "order (the first the root, -1; every other after its parent)"),
    ("oni_part_translations", [0.0] * 3, "property 'oni_part_translations' holds 3 numbers, not 57 (for the 19 "
                                         "parts of 'oni_parts')"),
    ("oban_first_frame", 1.5, "property 'oban_first_frame' is 1.5: not a whole frame of the timeline"),
])
def test_armature_properties_that_are_not_a_body_are_refused(tmp_path, key, value, message):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    armature[key] = value
    report = export(armature, tmp_path)
    assert report.errors == [f"armature 'char0': {message}"] and not report.made and os.listdir(tmp_path) == []


def test_an_import_onto_an_armature_that_is_not_a_body_is_refused(tmp_path):
    armature = import_char0(character_animations="NONE")
    armature["oban_import_scale"] = 0.0
    armature.select_set(True)
    path = os.path.join(SAMPLES, "oni", "TRAMchar0_punch02.oni")
    with pytest.raises(RuntimeError, match=f"{path}: armature 'char0': property 'oban_import_scale' is 0.0"):
        bpy.ops.import_anim.oban(filepath=path)
    assert len(bpy.data.actions) == 0


@pytest.mark.parametrize("marker, frame, message", [
    ("footstep: Left", -3, "marker 'footstep: Left' on frame -3 is before what a TRAM can hold: an event is on "
                           "frame 0 to 65535 from the first frame, 1"),
    ("footstep: Left", 70000, "marker 'footstep: Left' on frame 70000 is past what a TRAM can hold: an event is on "
                              "frame 0 to 65535 from the first frame, 1"),
    ("sound: " + "x" * 54, 5, f"marker 'sound: {'x' * 54}' on frame 5 holds a sound's name of 54 bytes, longer than "
                              f"the 32 the TRAM stores"),
    ("sound: \u20acuro", 5, "marker 'sound: \u20acuro' on frame 5 holds a sound's name that is not Latin-1 text, "
                            "which the TRAM stores"),
    ("particle: a_long_spark_name, Head, to 20", 5, "marker 'particle: a_long_spark_name, Head, to 20' on frame 5 "
                                                    "holds a particle's name of 17 bytes, longer than the 16 the "
                                                    "TRAM stores"),
    ("particle: spark, Tail, to 20", 5, "holds its part (a name or number) 'Tail', not 0 to 18"),
    ("particle: spark, Head, to 70000", 5, "holds its last frame '70000', not 0 to 65535"),
    ("particle: spark, Head", 5, "is not 'particle: <name>, <part>, to <last frame>[, pad <n>]'"),
    ("footstep: Sideways", 5, "holds a footstep's type 'Sideways', not 0 to 65535"),
])
def test_events_a_tram_cannot_hold_are_refused(tmp_path, marker, frame, message):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    bpy.data.actions["char0_walk00"].pose_markers.new(marker).frame = frame
    report = export(armature, tmp_path)
    assert len(report.errors) == 1 and report.errors[0].startswith("action 'char0_walk00' of 'char0': marker ")
    assert message in report.errors[0] and not report.made and os.listdir(tmp_path) == []


def test_events_that_fit_are_written_as_they_are(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    markers = bpy.data.actions["char0_walk00"].pose_markers
    markers["sound: footstep_walk"].frame = 9
    markers.new("sound: " + "x" * 32).frame = 1
    markers.new("sound: " + "\xe9" * 28).frame = 2      # 63 bytes of UTF-8: what a marker holds
    markers.new("particle: spark, Head, to 65535, pad 7").frame = 65536
    back = read_tram_file(export(armature, tmp_path).made[0].path)
    assert [(bytes(s["name"]), int(s["frame"])) for s in back.sounds] == [(b"footstep_walk", 8), (b"x" * 32, 0),
                                                                          (b"\xe9" * 28, 1)]
    assert back.particles.tolist() == [(65535, 65535, PART_NAMES.index("Head"), 7, b"spark")]


def test_two_actions_that_would_write_one_file_are_both_refused(tmp_path):
    armature = import_char0()
    copy = bpy.data.actions["char0_walk00"].copy()          # keeps its tram_name
    report = export(armature, tmp_path)
    says = "would write TRAMchar0_walk00.oni too; nothing written for them: give each its own TRAM name (the " \
           "action's property 'tram_name')"
    assert sorted(report.errors) == [f"action 'char0_walk00' of 'char0': action '{copy.name}' of 'char0' {says}",
                                     f"action '{copy.name}' of 'char0': action 'char0_walk00' of 'char0' {says}"]
    assert len(report.made) == 5 and "TRAMchar0_walk00.oni" not in os.listdir(tmp_path)
    copy["tram_name"] = "CHAR0_WALK00"                    # one file where case does not count
    assert len(export(armature, tmp_path).errors) == 2
    copy["tram_name"] = "char0_walk01"
    report = export(armature, tmp_path)
    assert not report.errors and len(report.made) == 7 and "TRAMchar0_walk01.oni" in os.listdir(tmp_path)


@pytest.mark.parametrize("bone, channel, index, key, value", [
    ("Pelvis", "location", 1, 5, math.inf), ("LeftThigh", "rotation_quaternion", 0, 3, math.nan)])
def test_a_key_that_is_not_finite_is_named_on_its_bone(tmp_path, bone, channel, index, key, value):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    action = bpy.data.actions["char0_walk00"]
    curve = next(c for c in action_fcurves(action, armature)
                 if c.data_path == f'pose.bones["{bone}"].{channel}' and c.array_index == index)
    curve.keyframe_points[key].co[1] = value     # Blender keeps an infinity as float32's largest
    report = export(armature, tmp_path)
    assert report.errors == [f"action 'char0_walk00' of 'char0': bone '{bone}': its {channel}[{index}] key {key} "
                             f"(on frame {key + 1}) is not finite"] and os.listdir(tmp_path) == []


def test_the_dialog_and_the_command_lines_report_a_refused_action_and_write_the_others(tmp_path):
    armature = import_char0()
    bpy.data.actions["char0_punch02"]["tram_key_size"] = 7
    message = "action 'char0_punch02' of 'char0': property 'tram_key_size' is 7: the engine reads 6 or 16"
    armature.select_set(True)
    (tmp_path / "dialog").mkdir()
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.export_anim.tram(directory=str(tmp_path / "dialog"))
    assert len(os.listdir(tmp_path / "dialog")) == 5
    blend = tmp_path / "char.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    for command in SAME_BLENDER:
        done = run(command, "export", blend, "-o", tmp_path / command.__name__)
        assert done.returncode == 1 and f"error: {message}" in done.stderr, done.stderr
        assert len(os.listdir(tmp_path / command.__name__)) == 5


def turn_one_key(action, bone, frame, angle):
    """Turn `bone`'s key on scene frame `frame` by `angle` radians about its x axis."""
    path = f'pose.bones["{bone}"].rotation_quaternion'
    w, x = (next(c for c in action_fcurves(action) if c.data_path == path and c.array_index == i) for i in (0, 1))
    kw, kx = (next(k for k in curve.keyframe_points if k.co[0] == frame) for curve in (w, x))
    qw, qx = kw.co[1], kx.co[1]
    kw.co[1], kx.co[1] = qw * math.cos(angle / 2) - qx * math.sin(angle / 2), qx * math.cos(angle / 2) + qw * math.sin(
        angle / 2)
    w.update(), x.update()


def test_an_edit_of_4e_4_radians_is_fitted_not_written_as_imported(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    action = bpy.data.actions["char0_walk00"]
    turn_one_key(action, "LeftArm", 20, 4e-4)
    made = export(armature, tmp_path).made[0]
    assert made.note == "" and made.error < 1e-3
    original = read_tram_file(os.path.join(SAMPLES, "oni", "TRAMchar0_walk00.oni"))
    assert set(cgen.tram_differences(read_tram_file(made.path), original)) <= {"tracks", "heights", "velocities"}


def test_bones_made_in_another_order_export_the_same_tram(tmp_path):
    """An armature built by hand, its bones made last part first (Blender lists them in another
    order than the parts), resting as the import's: the walk comes out as it went in."""
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    rest = {b.name: (b.head.copy(), b.tail.copy(), b.roll, b.parent.name if b.parent else None)
            for b in armature.data.edit_bones}
    bpy.ops.object.mode_set(mode="OBJECT")
    rig = bpy.data.objects.new("rig", bpy.data.armatures.new("rig"))
    bpy.context.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    for name in reversed(PART_NAMES):
        bone = rig.data.edit_bones.new(name)
        bone.head, bone.tail, bone.roll = rest[name][:3]
    for name in PART_NAMES:
        rig.data.edit_bones[name].parent = rig.data.edit_bones.get(rest[name][3] or "")
    bpy.ops.object.mode_set(mode="OBJECT")
    assert [b.name for b in rig.data.bones] != list(PART_NAMES)
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions["char0_walk00"]
    made = export(rig, tmp_path, character_actions="ASSIGNED").made[0]
    assert made.note == "unchanged import"
    with open(made.path, "rb") as mine, open(os.path.join(SAMPLES, "oni", "TRAMchar0_walk00.oni"), "rb") as theirs:
        assert mine.read() == theirs.read()


def test_bit_31_of_the_flags_and_part_masks_comes_back(tmp_path):
    scene = cgen.standard_scene(np.random.default_rng(3))
    for name in ("walk", "aim_q"):
        tram = scene.trams[name]
        tram.flags, tram.used_parts, tram.replaced_parts = (value | 1 << 31 for value in (
            tram.flags, tram.used_parts, tram.replaced_parts))
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    assert bpy.ops.import_anim.oban(filepath=os.path.join(folder, "ONCChero.oni"), keys="FILE") == {"FINISHED"}
    armature = bpy.data.objects["hero"]
    (tmp_path / "out").mkdir()
    report = export(armature, tmp_path / "out")
    assert not report.errors
    for name in ("walk", "aim_q"):
        with open(tmp_path / "out" / f"TRAM{name}.oni", "rb") as mine, open(os.path.join(folder, f"TRAM{name}.oni"),
                                                                            "rb") as theirs:
            assert mine.read() == theirs.read(), name
    action = bpy.data.actions["walk"]
    turn_one_key(action, "LeftArm", int(action_fcurves(action)[0].keyframe_points[1].co[0]), 0.1)
    armature.animation_data.action = action
    made = export(armature, tmp_path / "out", character_actions="ASSIGNED").made[0]
    back, walk = read_tram_file(made.path), scene.trams["walk"]
    assert made.note == "" and (back.flags, back.used_parts, back.replaced_parts) == (
        walk.flags, walk.used_parts, walk.replaced_parts)


def test_a_particle_marker_blender_cuts_comes_back_as_it_was(tmp_path):
    """'particle: <16 Latin-1 letters, 32 bytes of UTF-8>, Head, to 35, pad 1234' is 65 bytes:
    Blender keeps 63 ('pad 12'); the import cuts it as Blender does, so the marker is still the
    event as read and the file comes back as it was."""
    tram = cgen.random_tram(np.random.default_rng(7), "spark", 40)
    tram.particles = np.array([(3, 35, PART_NAMES.index("Head"), 1234, b"\xe9" * 16)], cgen.tr.PARTICLE_DTYPE)
    path = tmp_path / "TRAMspark.oni"
    path.write_bytes(tram_oni_bytes(tram))
    armature = import_char0(character_animations="NONE")
    armature.select_set(True)
    assert bpy.ops.import_anim.oban(filepath=str(path)) == {"FINISHED"}
    (marker,) = bpy.data.actions["spark"].pose_markers
    assert len(marker.name.encode()) == 63 and marker.name.endswith(", pad 12")
    (tmp_path / "out").mkdir()
    made = export(armature, tmp_path / "out", character_actions="ASSIGNED").made[0]
    assert made.note == "unchanged import" and open(made.path, "rb").read() == path.read_bytes()


def test_keys_after_an_imported_animations_end_lengthen_it(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    action = bpy.data.actions["char0_walk00"]
    head = armature.pose.bones["Head"]
    head.rotation_quaternion = (math.cos(0.3), math.sin(0.3), 0.0, 0.0)
    head.keyframe_insert("rotation_quaternion", frame=60)
    made = export(armature, tmp_path).made[0]
    back = read_tram_file(made.path)
    assert back.frames == 60 and len(back.heights) == 60 and made.note == ""
    rotation, translation = replay_error(armature, action, made.path)
    assert rotation < 2e-3 and translation < 2e-3 * 2.0, (rotation, translation)


def test_an_overlays_root_motion_is_zero(tmp_path):
    """An overlay's pelvis nudged (within the tolerance) is written without root motion: the
    engine takes it from the animation under the overlay."""
    armature = import_char0(character_animations="MATCHING", name_filter="*overlay*")
    for frame, lift in ((1, 0.0), (42, SCALE * 5e-4)):
        armature.pose.bones["Pelvis"].location = (0.0, lift, 0.0)
        armature.pose.bones["Pelvis"].keyframe_insert("location", frame=frame)
    report = export(armature, tmp_path)
    assert not report.errors, report.errors
    made = report.made[0]
    back = read_tram_file(made.path)
    assert made.note == "" and back.flags & cgen.OVERLAY
    assert not back.heights.any() and not back.velocities.any()


def test_a_bone_a_modifier_makes_infinite_is_named(tmp_path):
    armature = import_char0(character_animations="MATCHING", name_filter="*walk*")
    curve = next(c for c in action_fcurves(bpy.data.actions["char0_walk00"], armature)
                 if c.data_path == 'pose.bones["Pelvis"].location' and c.array_index == 1)
    generator = curve.modifiers.new("GENERATOR")
    generator.poly_order, generator.coefficients = 2, (0.0, 0.0, 1e38)     # past float32 from frame 2
    report = export(armature, tmp_path)
    assert report.errors == ["action 'char0_walk00' of 'char0': bone 'Pelvis' is not finite at frame 2 (an F-curve "
                             "modifier, a driver or a constraint makes it so)"] and os.listdir(tmp_path) == []


def test_an_authored_action_whose_name_a_tram_cannot_hold_is_refused(tmp_path):
    armature = import_char0(character_animations="NONE")
    author(armature, "wave\u20ac", wave(), "LINEAR")
    report = export(armature, tmp_path)
    assert report.errors == ["action 'wave\u20ac' of 'char0': its name is 'wave\u20ac', not Latin-1 text, which the "
                             "file's names are, and it has no property 'tram_name' to name its TRAM"]


def import_two_characters(tmp_path, count=30):
    """char1 and char2 (tools/generate: bodies apart, `count` animations each) imported together,
    each action keyed as the file; {character: [its TRAM names]}, the folder they came from."""
    scene = cgen.two_characters(np.random.default_rng(11), count)
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    files = [{"name": f"ONCC{name}.oni"} for name in scene.characters]
    assert bpy.ops.import_anim.oban(directory=folder, files=files, keys="FILE") == {"FINISHED"}
    return {name: scene.collections[name].animations for name in scene.characters}, folder


def written(report, folder):
    """{armature name: [TRAM names written for it]}, every file the bytes of the one imported."""
    by_armature = {}
    for made in report.made:
        name = os.path.basename(made.path)
        with open(made.path, "rb") as mine, open(os.path.join(folder, name), "rb") as theirs:
            assert mine.read() == theirs.read(), name
        by_armature.setdefault(made.block.name, []).append(made.item.name)
    return by_armature


def test_two_characters_each_export_their_own_animations(tmp_path):
    own, folder = import_two_characters(tmp_path)
    char1, char2 = bpy.data.objects["char1"], bpy.data.objects["char2"]
    for chosen in ([char1], [char2], [char1, char2]):
        out = tmp_path / "+".join(armature.name for armature in chosen)
        out.mkdir()
        report = export_characters(bpy.context, chosen, str(out), CharacterExportSettings())
        assert not report.errors and not report.notes
        assert written(report, folder) == {armature.name: own[armature.name] for armature in chosen}
        assert len(os.listdir(out)) == 30 * len(chosen)


def test_the_dialog_and_the_command_lines_export_each_characters_own(tmp_path):
    own, folder = import_two_characters(tmp_path, count=4)
    bpy.data.objects["char1"].select_set(True)
    bpy.data.objects["char2"].select_set(False)
    (tmp_path / "dialog").mkdir()
    assert bpy.ops.export_anim.tram(directory=str(tmp_path / "dialog")) == {"FINISHED"}
    assert sorted(os.listdir(tmp_path / "dialog")) == [f"TRAM{name}.oni" for name in own["char1"]]
    blend = tmp_path / "two.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    for command in SAME_BLENDER:
        out = tmp_path / command.__name__
        done = run(command, "export", blend, "-o", out, "--objects", "char2")
        assert done.returncode == 0, done.stderr
        assert sorted(os.listdir(out)) == [f"TRAM{name}.oni" for name in own["char2"]]
        done = run(command, "export", blend, "-o", out / "both")
        assert done.returncode == 0, done.stderr
        assert len(os.listdir(out / "both")) == 8


def key_pelvis(name, frames=(1, 5)):
    """A new action turning the Pelvis bone over `frames`, assigned to nothing."""
    action = bpy.data.actions.new(name)
    curves = [action.fcurves.new('pose.bones["Pelvis"].rotation_quaternion', index=i) for i in range(4)] \
        if hasattr(action, "fcurves") else None
    if curves is None:       # 5.0: an F-curve lives in a slot's channelbag
        slot = action.slots.new(id_type="OBJECT", name=name)
        bag = action.layers.new("Layer").strips.new(type="KEYFRAME").channelbag(slot, ensure=True)
        curves = [bag.fcurves.new('pose.bones["Pelvis"].rotation_quaternion', index=i) for i in range(4)]
    for curve, values in zip(curves, ((1, 0.9), (0, 0.3), (0, 0), (0, 0))):
        for frame, value in zip(frames, values):
            curve.keyframe_points.insert(frame, value)
    action.use_fake_user = True
    return action


def test_an_action_belongs_to_its_import_and_to_the_armatures_that_show_it(tmp_path):
    own, folder = import_two_characters(tmp_path, count=3)
    char1, char2 = bpy.data.objects["char1"], bpy.data.objects["char2"]
    shared = bpy.data.actions["char1_a01"]
    char2.animation_data.action = shared                          # char1's, shown on char2 too
    track = char2.animation_data.nla_tracks.new()
    track.strips.new("authored", 1, key_pelvis("authored"))        # in char2's NLA alone
    rig = bpy.data.objects.new("rig", bpy.data.armatures.new("rig"))
    bpy.context.collection.objects.link(rig)
    rig.animation_data_create().action = key_pelvis("rig_motion")  # a control rig's own: no character's
    settings = CharacterExportSettings()
    for name in ("char1", "char2", "both"):
        (tmp_path / name).mkdir()
    report = export_characters(bpy.context, [char2], str(tmp_path / "char2"), settings)
    assert not report.errors
    assert sorted(made.item.name for made in report.made) == sorted(own["char2"] + ["char1_a01", "authored"])
    report = export_characters(bpy.context, [char1], str(tmp_path / "char1"), settings)
    assert not report.errors and sorted(made.item.name for made in report.made) == own["char1"]
    report = export_characters(bpy.context, [char1, char2], str(tmp_path / "both"), settings)
    assert len(report.errors) == 2 and all("would write TRAMchar1_a01.oni too" in e for e in report.errors)
    assert len(report.made) == 6 and "rig_motion" not in {made.item.name for made in report.made}


def test_an_action_of_no_armature_is_written_once_for_the_first_and_said(tmp_path):
    import_two_characters(tmp_path, count=2)
    char1, char2 = bpy.data.objects["char1"], bpy.data.objects["char2"]
    key_pelvis("loose")
    for chosen in ([char2, char1], [char1]):
        out = tmp_path / chosen[0].name
        out.mkdir()
        report = export_characters(bpy.context, chosen, str(out), CharacterExportSettings())
        assert not report.errors
        assert [made.block for made in report.made if made.item.name == "loose"] == [chosen[0]]
        assert report.notes == [f"action 'loose' belongs to no armature and moves the bones of 'char1', 'char2': "
                                f"written for '{chosen[0].name}'"]
    renamed = bpy.data.actions["char2_a00"]
    renamed.name = "renamed"                                       # still char2's: recorded by reference
    char2.animation_data.action = None
    report = export_characters(bpy.context, [char1], str(tmp_path), CharacterExportSettings())
    assert "renamed" not in {made.item.name for made in report.made}


def rigged_char0(played="char0_punch02"):
    """char0 with its six animations, and a control rig beside it (a copy of its armature that
    is no character: its properties deleted) playing a copy of `played`; each of char0's bones
    follows the rig's bone of its name (Copy Transforms): char0 shows the rig's motion."""
    armature = import_char0()
    rig = armature.copy()
    rig.data = armature.data.copy()
    rig.name = "rig"
    for key in [key for key in rig.keys() if key.startswith("oni_")]:
        del rig[key]
    bpy.context.collection.objects.link(rig)
    rig.animation_data_create().action = bpy.data.actions[played].copy()
    for bone in armature.pose.bones:
        constraint = bone.constraints.new("COPY_TRANSFORMS")
        constraint.target, constraint.subtarget = rig, bone.name
    return armature, read_tram_file(os.path.join(SAMPLES, "oni", f"TRAM{played}.oni"))


def test_an_armature_driven_by_a_rig_exports_the_motion_it_shows(tmp_path):
    """Actions As Shown: char0, its own action still assigned but its bones following the rig,
    writes the rig's motion (the punch) over the scene's frame range under its tram_name; the
    reference engine replays it as it replays the punch's own file."""
    armature, punch = rigged_char0()
    armature["tram_name"] = "char0_rigged"
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, punch.frames
    report = export(armature, tmp_path, character_actions="SHOWN")
    assert not report.errors and [os.path.basename(m.path) for m in report.made] == ["TRAMchar0_rigged.oni"]
    written = read_tram_file(str(tmp_path / "TRAMchar0_rigged.oni"))
    assert written.frames == punch.frames and written.name == "char0_rigged"
    body = read_character(ONCC).body
    got, wanted = (np.array(reference_world(body.parents.tolist(), body.translations.tolist(), tram))
                   for tram in (written, punch))
    assert np.abs(got[..., :3, :3] - wanted[..., :3, :3]).max() < 2e-3
    assert np.abs(got[..., :3, 3] - wanted[..., :3, 3]).max() < 0.05


def test_a_rigs_constraints_are_never_sampled_into_an_actions_name(tmp_path):
    """All and Assigned: each action is written as its own keys move the bones (the rig's
    constraints muted while it is sampled), here every one as OniSplit wrote it; a note says so."""
    armature, _ = rigged_char0()
    for choice, count in (("ALL", 6), ("ASSIGNED", 1)):
        out = tmp_path / choice
        out.mkdir()
        report = export(armature, out, character_actions=choice)
        assert not report.errors and len(report.made) == count
        for made in report.made:
            name = os.path.basename(made.path)
            assert made.note == "unchanged import", name
            assert open(made.path, "rb").read() == open(os.path.join(SAMPLES, "oni", name), "rb").read(), name
        assert report.notes == ["armature 'char0': constraints on 'Pelvis', 'LeftThigh', 'LeftCalf', 'LeftFoot', "
                                "'RightThigh' and 14 more move its bones: each action is written as its own keys "
                                "move them (Actions: As Shown writes the motion the scene shows)"]
    assert all(not c.mute for bone in armature.pose.bones for c in bone.constraints)   # as they were


def test_the_command_lines_export_an_armature_as_shown(tmp_path):
    armature, punch = rigged_char0()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, punch.frames
    blend = tmp_path / "rigged.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    for command in SAME_BLENDER:
        out = tmp_path / command.__name__
        done = run(command, "export", blend, "-o", out, "--objects", "char0", "--actions", "shown")
        assert done.returncode == 0, done.stderr
        assert os.listdir(out) == ["TRAMchar0.oni"] and read_tram_file(str(out / "TRAMchar0.oni")).frames == punch.frames
