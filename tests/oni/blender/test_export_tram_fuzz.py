"""The character export on edited scenes (docs/characters.md, "Export"; docs/bad_input.md,
"Exporting characters (TRAM)"): bones deleted, renamed, reparented or scaled, properties of the
armature and the actions edited, keys made NaN, rotations turned, markers moved and added,
actions copied, a few at a time. Each action is then either written, and the file read back is
what the scene shows (the plain reference engine's replay of it against Blender's own
evaluation of the part meshes, its header fields the action's properties, its events the
action's markers), or refused with a message naming it (or its armature), nothing written."""

import math
import os

import bpy
import numpy as np
import pytest
from test_export_tram import import_char0, replay_error

from oban_import.blender.compat import action_fcurves
from oban_import.core.id_properties import unsigned32
from oban_import.oni.export.trams.export import export_characters
from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.properties import MASK_KEYS, PLAIN_KEYS, tram_markers
from oban_import.oni.io.trams.tram import PART_NAMES, RECORD_DTYPE
from oban_import.ui.options import CharacterExportSettings

pytestmark = pytest.mark.usefixtures("addon")
KEPT = ("char0_walk00", "char0_punch02", "char0_overlay_q01")    # events of every kind, 6- and 16-byte keys
EVENT_KINDS = ("footstep", "sound", "particle")
ARMATURE = "armature 'char0'"


class Scene:
    """The imported char0 with KEPT, the edits made to it and what each says of the export:
    `refused` maps an action (or ARMATURE) to the pieces of message its edits expect (one of
    them names it), `may_refuse` to those of edits it may be refused for, `fields` each
    action's edited header fields to the values the file holds where it is written."""

    def __init__(self, rng):
        self.rng = rng
        self.armature = import_char0()
        for action in list(bpy.data.actions):
            if action.name not in KEPT:
                bpy.data.actions.remove(action)
        self.refused, self.may_refuse, self.fields = {}, {}, {name: {} for name in KEPT}

    def action(self):
        return bpy.data.actions[KEPT[self.rng.integers(len(KEPT))]]

    def part(self, first=1):
        """A part (from the `first`) whose bone is still there."""
        names = [name for name in PART_NAMES[first:] if name in self.armature.data.bones]
        return names[self.rng.integers(len(names))]

    def refuse(self, who, says):
        self.refused.setdefault(who, []).append(says)

    def says(self, who) -> list:
        """What a refusal of `who` may say."""
        return self.refused.get(who, []) + self.may_refuse.get(who, [])

    def edit_bones(self, change):
        bpy.context.view_layer.objects.active = self.armature
        bpy.ops.object.mode_set(mode="EDIT")
        try:
            change(self.armature.data.edit_bones)
        finally:
            bpy.ops.object.mode_set(mode="OBJECT")


def delete_bone(scene):
    name = scene.part()
    scene.edit_bones(lambda bones: bones.remove(bones[name]))
    scene.refuse(ARMATURE, f"no bone '{name}'")


def rename_bone(scene):
    name = scene.part()
    scene.armature.data.bones[name].name = name + "_renamed"
    scene.refuse(ARMATURE, f"no bone '{name}'")


def reparent_bone(scene):
    name = scene.part(2)
    parent = PART_NAMES[scene.rng.integers(0, PART_NAMES.index(name))]
    now = scene.armature.data.bones[name].parent
    if parent not in scene.armature.data.bones or now is not None and now.name == parent:
        return
    scene.edit_bones(lambda bones: setattr(bones[name], "parent", bones[parent]))
    scene.refuse(ARMATURE, f"bone '{name}' is under '{parent}'")


def scale_bone(scene):
    action, bone = scene.action(), scene.armature.pose.bones[scene.part(0)]
    scene.armature.animation_data.action = action
    bone.scale = (1.0, 1.0 + scene.rng.uniform(0.01, 0.5), 1.0)
    bone.keyframe_insert("scale", frame=int(scene.rng.integers(1, 30)))
    bone.scale = (1.0, 1.0, 1.0)
    scene.refuse(action.name, "scales or shears")


def armature_property(scene):
    key, value = [("oban_import_scale", 0.0), ("oban_import_scale", math.nan), ("oban_import_axes", [0.5] * 9),
                  ("oni_part_translations", [1.0] * 6), ("oni_parts", list(PART_NAMES[::-1]))][scene.rng.integers(5)]
    scene.armature[key] = value
    scene.refuse(ARMATURE, "oni_part" if key == "oni_parts" else f"property '{key}'")


def action_property(scene):
    """A header field set to a value within it (written as it is) or not (refused, naming it).
    Flags and part masks may make an overlay of a plain animation or the reverse, or another
    overlay, whose replay the keys cannot give: refused then."""
    action = scene.action()
    key = PLAIN_KEYS[scene.rng.integers(len(PLAIN_KEYS))]
    info, held = np.iinfo(RECORD_DTYPE[key[len("tram_"):]]), np.iinfo(np.int32)   # what a Blender integer holds
    low, high = (int(held.min), int(held.max)) if key in MASK_KEYS else (int(info.min), min(int(info.max),
                                                                                           int(held.max)))
    value = int(scene.rng.integers(low, high, endpoint=True))
    scene.fields[action.name][key[len("tram_"):]] = unsigned32(value) if key in MASK_KEYS else value
    if scene.rng.random() < 0.3:
        beyond = [bound for bound in (low - 1, high + 1) if held.min <= bound <= held.max]
        value = [*beyond, 1.5, "text"][scene.rng.integers(len(beyond) + 2)]
        scene.refuse(action.name, f"property '{key}'")
    action[key] = value
    if key in MASK_KEYS:
        scene.may_refuse.setdefault(action.name, []).append("the file would replay it off")


def nan_key(scene):
    action = scene.action()
    curves = [c for c in action_fcurves(action) if c.data_path.startswith("pose.bones")]
    curve = curves[scene.rng.integers(len(curves))]
    curve.keyframe_points[scene.rng.integers(len(curve.keyframe_points))].co[1] = math.nan
    scene.refuse(action.name, f"bone '{curve.data_path.split(chr(34))[1]}'")


def turn_bone(scene):
    """Every key of one bone's rotation of one action turned a little more about its x axis."""
    action = scene.action()
    path = f'pose.bones["{scene.part(0)}"].rotation_quaternion'
    curves = {c.array_index: c for c in action_fcurves(action) if c.data_path == path}
    if len(curves) < 4:
        return        # an overlay's bone it does not key
    turn = scene.rng.uniform(-0.3, 0.3)
    for kw, kx in zip(curves[0].keyframe_points, curves[1].keyframe_points):
        w, x = kw.co[1], kx.co[1]
        kw.co[1], kx.co[1] = w * math.cos(turn) - x * math.sin(turn), x * math.cos(turn) + w * math.sin(turn)
    for curve in curves.values():
        curve.update()


def move_marker(scene):
    """An event marker moved anywhere from before the first frame to past what a TRAM holds, or a
    new one added."""
    action = scene.action()
    frame = int(scene.rng.choice([-5, 0, 1, 20, 40, 65536, 65537, 70000]))
    markers = [m for m in action.pose_markers if m.name.split(":")[0] in EVENT_KINDS]
    if markers and scene.rng.random() < 0.6:
        markers[scene.rng.integers(len(markers))].frame = frame
    else:
        action.pose_markers.new(["footstep: Right", "sound: step_on_it", "particle: dust, LeftFoot, to 9"][
            scene.rng.integers(3)]).frame = frame


def events_out_of_reach(scene):
    """Actions with an event marker (moved) before their first frame, 1, or past frame 65535 of theirs."""
    for name in KEPT:
        if any(not 1 <= m.frame <= 65536 for m in bpy.data.actions[name].pose_markers
               if m.name.split(":")[0] in EVENT_KINDS):
            scene.refuse(name, "what a TRAM can hold")


def copy_action(scene):
    action = scene.action()
    action.copy()
    scene.refuse(action.name, "would write")


EDITS = (delete_bone, rename_bone, reparent_bone, scale_bone, armature_property, action_property, action_property,
         nan_key, turn_bone, turn_bone, move_marker, move_marker, copy_action)


@pytest.mark.parametrize("seed", range(16))
def test_an_edited_scene_is_written_as_it_shows_or_refused(tmp_path, seed):
    rng = np.random.default_rng(seed)
    scene = Scene(rng)
    for edit in rng.choice(EDITS, int(rng.integers(1, 4))):
        edit(scene)
    events_out_of_reach(scene)
    report = export_characters(bpy.context, [scene.armature], str(tmp_path), CharacterExportSettings())
    if ARMATURE in scene.refused:
        assert len(report.errors) == 1 and report.errors[0].startswith(ARMATURE + ": "), report.errors
        assert any(says in report.errors[0] for says in scene.says(ARMATURE)), (scene.refused, report.errors)
        assert os.listdir(tmp_path) == []
        return
    written = {os.path.basename(m.path)[4:-4]: m for m in report.made}
    for name in KEPT:
        errors = [e for e in report.errors if e.startswith(f"action '{name}' of 'char0': ")]
        if errors or name in scene.refused:
            assert errors and any(says in errors[0] for says in scene.says(name)), (scene.refused, report.errors)
            assert f"TRAM{name}.oni" not in os.listdir(tmp_path)
        else:
            assert not errors and name in written, (name, report.errors)
            check_written(bpy.data.actions[name], written[name], scene.fields[name])


def check_written(action, made, fields):
    """The file is what the action shows: its replay, its header fields, its events."""
    back = read_tram_file(made.path)
    overlay = back if back.flags & 0x2000 else None
    rotation, translation = replay_error(bpy.data.objects["char0"], action, made.path, moved_only=overlay)
    assert rotation < 2e-3 and translation < 4e-3, (action.name, rotation, translation)
    for field, value in fields.items():
        assert getattr(back, field) == value, (action.name, field)
    events = {(m.name, int(round(m.frame)) - 1) for m in action.pose_markers if m.name.split(":")[0] in EVENT_KINDS}
    assert set(tram_markers(back, PART_NAMES)) == events, action.name
