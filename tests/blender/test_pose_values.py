"""blender/pose_values.py on every supported Blender: bones' pose matrices from their armature's
action's keys as setting the scene on each frame gives them (random trees of bones with any roll,
connected bones, B-Bones, every rotation mode; any of the bones asked for), and every armature
whose bones' pose may depend on more refused (None: the TRAM export then sets the scene).

Tolerance: Blender makes a bone's matrix from its parent's in float32 (two 4x4 products, about
2.5e-7 of the matrix's size), where the keys' matrices are composed in float64: down chains of
random_keys.DEPTH = 3 bones below the root they are within 1e-6 of Blender's; deeper, its
roundings add up (1e-6 twelve bones down), each bone's matrix from its parent's within 5e-7."""

import bpy
import numpy as np
import pytest
from random_keys import DEPTH, key_randomly, keyed_armature, relative_error, sampled_poses

from oban_import.blender import compat, pose_values
from oban_import.blender.pose_values import keyed_poses

FRAMES = np.arange(-10, 51)     # before, between and after keys at frames -5 .. 45


def names(armature):
    return [bone.name for bone in armature.pose.bones]


@pytest.mark.parametrize("seed", range(4))
def test_poses_are_the_scenes(seed):
    armature = keyed_armature(f"keyed {seed}", np.random.default_rng(seed))
    assert max(len(bone.parent_recursive) for bone in armature.data.bones) <= DEPTH
    want = sampled_poses(armature, FRAMES)
    assert relative_error(keyed_poses(bpy.context.scene, armature, names(armature), FRAMES), want) <= 1e-6


def test_each_bone_is_its_parents_pose_its_offset_and_its_keys(monkeypatch):
    """Down a chain of 12 bones, each bone's matrix from its parent's as Blender made it: within
    float32 rounding of one level."""
    armature = bpy.data.objects.new("chain", bpy.data.armatures.new("chain"))
    bpy.context.scene.collection.objects.link(armature)
    bpy.context.view_layer.objects.active = armature
    rng = np.random.default_rng(7)
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for k in range(12):
        bone = armature.data.edit_bones.new(f"link {k}")
        head = rng.uniform(-1, 1, 3)
        bone.head, bone.tail, bone.roll, bone.parent = head, head + rng.normal(size=3), rng.uniform(-3, 3), parent
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    channels = [(f'pose.bones["link {k}"].{path}', index, "") for k in range(12)
                for path, size in (("location", 3), ("rotation_quaternion", 4), ("scale", 3)) for index in range(size)]
    for fcurve in compat.new_object_action(armature, "chain", channels)[1]:
        if fcurve.data_path.endswith(".scale"):
            key_randomly(fcurve, rng, spread=0.25, around=1.0)
        else:
            key_randomly(fcurve, rng)
    want = sampled_poses(armature, FRAMES)
    taken = {}
    monkeypatch.setattr(pose_values, "pose_matrices", lambda *given: taken.setdefault("given", given)[2])
    keyed_poses(bpy.context.scene, armature, names(armature), FRAMES)
    offsets, parents, basis = taken["given"]
    assert parents.tolist() == list(range(-1, 11))
    alone = offsets @ basis
    alone[:, 1:] = want[:, :-1] @ alone[:, 1:]
    assert relative_error(alone, want) <= 5e-7


def test_any_bones_asked_for_are_those_of_all():
    """A leaf, its parent and a root's child, in any order; a bone elsewhere that inherits no
    rotation changes nothing of theirs."""
    armature = keyed_armature("some", np.random.default_rng(4))
    every = keyed_poses(bpy.context.scene, armature, names(armature), FRAMES)
    bones = armature.data.bones
    leaf = next(bone for bone in bones if not bone.children and bone.parent is not None)
    asked = [leaf.name, bones["bone 1"].name, leaf.parent.name]
    lineage = {leaf.name, *(bone.name for bone in leaf.parent_recursive), "bone 1", "bone 0"}
    next(bone for bone in bones if bone.name not in lineage).use_inherit_rotation = False
    some = keyed_poses(bpy.context.scene, armature, asked, FRAMES)
    np.testing.assert_array_equal(some, every[:, [names(armature).index(name) for name in asked]])


def test_no_nla_plays_the_action_whole_whatever_its_influence_blend_and_extrapolation():
    armature = keyed_armature("influence", np.random.default_rng(5))
    data = armature.animation_data
    data.use_nla, data.action_influence, data.action_blend_type = False, 0.5, "ADD"
    data.action_extrapolation = "HOLD_FORWARD"
    data.nla_tracks.new().strips.new("still", 1, bpy.data.actions.new("still"))
    want = sampled_poses(armature, FRAMES)
    assert relative_error(keyed_poses(bpy.context.scene, armature, names(armature), FRAMES), want) <= 1e-6


def test_muted_constraints_leave_the_keys_alone():
    """A bone with constraints, all muted, is passed through the armature's world matrix and back
    by Blender: its own here (float32 rounding of the world matrix's size otherwise)."""
    armature = keyed_armature("constrained", np.random.default_rng(6))
    armature.matrix_world = np.eye(4).tolist()
    for bone in list(armature.pose.bones)[::2]:
        bone.constraints.new("COPY_ROTATION").mute = True
        bone.constraints.new("IK").mute = True
    want = sampled_poses(armature, FRAMES)
    assert relative_error(keyed_poses(bpy.context.scene, armature, names(armature), FRAMES), want) <= 1e-6


def test_a_hidden_armature_has_its_keys_poses():
    """Blender does not evaluate an armature hidden in the viewport (its pose holds where it was
    last shown); its keys' poses are what it would show."""
    armature = keyed_armature("hidden", np.random.default_rng(8))
    want = sampled_poses(armature, FRAMES)
    armature.hide_viewport = True
    assert relative_error(keyed_poses(bpy.context.scene, armature, names(armature), FRAMES), want) <= 1e-6


def refused(armature, what):
    """Give `armature` (keyed_armature) what keeps its bones' poses from its keys alone."""
    bone, pose_bone = armature.data.bones["bone 2"], armature.pose.bones["bone 2"]
    fcurve = next(f for f in compat.played_fcurves(armature) if f.data_path.endswith((".location", ".scale")))
    if what == "rotation not inherited":
        bone.use_inherit_rotation = False
    elif what == "scale inherited on average":
        bone.inherit_scale = "AVERAGE"
    elif what == "location not local":
        bone.use_local_location = False
    elif what == "constraint":
        pose_bone.constraints.new("COPY_LOCATION")
    elif what == "constraint on another bone":
        armature.pose.bones[-1].constraints.new("IK")
    elif what == "driver":
        pose_bone.driver_add("location", 1)
    elif what == "F-curve modifier":
        fcurve.modifiers.new("NOISE")
    elif what == "ELASTIC key":
        fcurve.keyframe_points[0].interpolation = "ELASTIC"
    elif what == "muted F-curve":
        fcurve.mute = True
    elif what == "rotation mode keyed":
        channel = ('pose.bones["bone 2"].rotation_mode', 0, "")
        key_randomly(compat.new_object_action(armature, "modes", [channel], armature.animation_data.action)[1][0],
                     np.random.default_rng(1), keys=2)
    elif what == "NLA track":
        armature.animation_data.nla_tracks.new().strips.new("still", 1, bpy.data.actions.new("still"))
    elif what == "rest position":
        armature.data.pose_position = "REST"
    elif what == "armature data driven":
        armature.data["weight"] = 0.0
        armature.data.driver_add('["weight"]')
    elif what == "time remapped":
        bpy.context.scene.render.frame_map_new = 200
    elif what == "action without slot":
        armature.animation_data.action_slot = None


REFUSED = ["rotation not inherited", "scale inherited on average", "location not local", "constraint",
           "constraint on another bone", "driver", "F-curve modifier", "ELASTIC key", "muted F-curve",
           "rotation mode keyed", "NLA track", "rest position", "armature data driven", "time remapped"]
REFUSED += ["action without slot"] if compat.SLOTTED_ACTIONS else []


@pytest.mark.parametrize("what", REFUSED)
def test_an_armature_whose_poses_may_depend_on_more_is_refused(what):
    armature = keyed_armature("refused", np.random.default_rng(9), count=5, keyed=1)
    assert keyed_poses(bpy.context.scene, armature, names(armature), FRAMES) is not None
    refused(armature, what)
    assert keyed_poses(bpy.context.scene, armature, names(armature), FRAMES) is None
