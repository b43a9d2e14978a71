"""blender/fcurve_values.py on every supported Blender: an F-curve's values as Blender's own
evaluation gives them (FCurve.evaluate), an object's world matrix from its keys as setting the
scene on each frame gives it (every rotation mode, NLA strips that move nothing), and every
object whose matrix may depend on more refused (None: the export then sets the scene).

Tolerances: the values are Blender's to the bit on 3.4, 4.2, 4.5 and 5.0 (the same float32 steps,
the cubic in float64); the test allows 1e-6 of the curve's size. A matrix is composed here in
float64 and rounded to float32 once, where Blender rounds each product and sum of T.R.S in
float32: two float32 roundings of the largest entry, under 2.4e-7 of it, within 1e-6."""

import bpy
import numpy as np
import pytest
from random_keys import ROTATION_MODES, key_randomly, keyed_object, relative_error, sampled

from oban_import.blender import compat
from oban_import.blender.fcurve_values import fcurve_keys, keyed_matrices
from oban_import.core.fcurve_math import fcurve_values

FRAMES = np.arange(-10, 51)     # before, between and after keys at frames -5 .. 45


def test_values_are_blenders_on_keys_near_keys_between_and_beyond():
    rng = np.random.default_rng(11)
    obj = bpy.data.objects.new("curves", None)
    bpy.context.scene.collection.objects.link(obj)
    _, fcurves = compat.new_object_action(obj, "curves", [("location", i, "") for i in range(3)])
    worst = 0.0
    for trial in range(120):
        for fcurve in fcurves:
            fcurve.keyframe_points.clear()
            key_randomly(fcurve, rng, spread=1000.0 if trial % 5 == 0 else 3.0)
            keys = fcurve_keys(fcurve)
            frames = keys[0][:, 0]
            times = np.concatenate([rng.uniform(-15, 55, 100), np.round(rng.uniform(-15, 55, 20)), frames,
                                    frames + 9e-5, frames - 9e-5, frames + 1.1e-4, frames - 1.1e-4]).astype(np.float32)
            theirs = np.array([fcurve.evaluate(t) for t in times.tolist()], np.float32)
            size = max(1.0, np.abs(np.concatenate(keys[:3])).max())
            worst = max(worst, np.abs(fcurve_values(*keys, times) - theirs).max() / size)
    assert worst <= 1e-6


@pytest.mark.parametrize("rotation_mode", ROTATION_MODES)
def test_world_matrices_are_the_scenes_in_every_rotation_mode(rotation_mode):
    rng = np.random.default_rng(ROTATION_MODES.index(rotation_mode))
    objects = [keyed_object(f"keyed {n}", rng, rotation_mode) for n in range(6)]
    want = sampled(objects, FRAMES)
    for obj in objects:
        assert relative_error(keyed_matrices(bpy.context.scene, obj, FRAMES), want[obj]) <= 1e-6


def test_an_object_without_animation_keeps_its_matrix():
    rng = np.random.default_rng(5)
    obj = keyed_object("still", rng, "YZX")
    obj.animation_data_clear()
    bpy.context.view_layer.update()
    got = keyed_matrices(bpy.context.scene, obj, FRAMES)
    assert relative_error(got, np.array(obj.matrix_world)[None]) <= 1e-6


def strip_action(name, paths):
    """An action keying `paths` (data path, index) at random, for NLA strips."""
    action = bpy.data.actions.new(name)
    holder = bpy.data.objects.new(f"{name} holder", None)
    _, fcurves = compat.new_object_action(holder, name, [(path, index, "") for path, index in paths], action)
    rng = np.random.default_rng(len(name))
    for fcurve in fcurves:
        key_randomly(fcurve, rng, keys=3)
    holder.animation_data.action = None
    return action


def test_nla_strips_that_move_nothing_and_a_muted_track_leave_the_keys_alone():
    """The active action plays over NLA strips of bone and property keys, beyond its own keys
    (linear extrapolation) too; a muted track's strip moves the object, but is not played."""
    rng = np.random.default_rng(8)
    objects = [keyed_object(f"nla {mode}", rng, mode, keyed=1) for mode in ("XYZ", "QUATERNION", "AXIS_ANGLE")]
    bones = strip_action("bones", [('pose.bones["b"].location', 0), ('["weight"]', 0)])
    moving = strip_action("moving", [("location", 1), ("scale", 0)])
    for obj in objects:
        obj["weight"] = 0.0
        for fcurve in compat.played_fcurves(obj):
            fcurve.extrapolation = "LINEAR"
        played = obj.animation_data.nla_tracks.new()
        played.strips.new("bones", 3, bones)
        played.strips.new("bones again", 100, bones)
        muted = obj.animation_data.nla_tracks.new()
        muted.strips.new("moving", 10, moving)
        muted.mute = True
    want = sampled(objects, FRAMES)
    for obj in objects:
        assert relative_error(keyed_matrices(bpy.context.scene, obj, FRAMES), want[obj]) <= 1e-6


def plain_keyed(name):
    """A mesh object in the scene (a rigid body must be one), its location keyed at random."""
    obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    bpy.context.scene.collection.objects.link(obj)
    obj["weight"] = 0.0
    key_randomly(compat.new_object_action(obj, name, [("location", 0, "")])[1][0], np.random.default_rng(2), keys=3)
    return obj


def refused(obj, what):
    """Give `obj` (plain_keyed) what keeps its matrix from its keys alone."""
    data = obj.animation_data
    fcurve = compat.played_fcurves(obj)[0]
    if what == "parent":
        parent = bpy.data.objects.new("parent", None)
        bpy.context.scene.collection.objects.link(parent)
        obj.parent = parent
    elif what == "constraint":
        obj.constraints.new("COPY_LOCATION")
    elif what == "driver":
        obj.driver_add("empty_display_size")
    elif what == "NLA strip moving it":
        data.nla_tracks.new().strips.new("moving", 1, strip_action("moving", [("rotation_euler", 2)]))
    elif what == "muted NLA strip moving it":
        data.nla_tracks.new().strips.new("moving", 1, strip_action("moving", [("scale", 1)])).mute = True
    elif what == "NLA strip keying a delta":
        data.nla_tracks.new().strips.new("moving", 1, strip_action("moving", [("delta_location", 0)]))
    elif what == "solo NLA track":
        data.nla_tracks.new().strips.new("still", 1, strip_action("still", [('["weight"]', 0)]))
        data.nla_tracks[0].is_solo = True
    elif what == "quaternion keyed in part beside NLA":
        obj.rotation_mode = "QUATERNION"
        new = compat.new_object_action(obj, "part", [("rotation_quaternion", 1, "")])[1][0]
        key_randomly(new, np.random.default_rng(3), keys=2)
        data.nla_tracks.new().strips.new("still", 100, strip_action("still", [('["weight"]', 0)]))
    elif what == "F-curve modifier":
        fcurve.modifiers.new("NOISE")
    elif what == "ELASTIC key":
        fcurve.keyframe_points[0].interpolation = "ELASTIC"
    elif what == "muted F-curve":
        fcurve.mute = True
    elif what == "muted group":
        fcurve.group = _group(data.action)
        fcurve.group.mute = True
    elif what == "keyed delta":
        new = compat.new_object_action(obj, "delta", [("delta_rotation_euler", 0, "")], data.action)[1][0]
        key_randomly(new, np.random.default_rng(4), keys=2)
    elif what in ("delta_location", "delta_rotation_euler", "delta_scale"):
        setattr(obj, what, (0.5, 0, 0))
    elif what == "delta_rotation_quaternion":
        obj.delta_rotation_quaternion = (0.9, 0.1, 0, 0)
    elif what == "influence":
        data.action_influence = 0.5
    elif what == "blend":
        data.action_blend_type = "ADD"
    elif what == "hold forward":
        data.action_extrapolation = "HOLD_FORWARD"
    elif what == "keys too close":
        fcurve.keyframe_points[1].co = fcurve.keyframe_points[0].co[0] + 5e-4, 1.0
    elif what == "a key not a number":
        fcurve.keyframe_points[0].co = fcurve.keyframe_points[0].co[0], float("nan")
    elif what == "time remapped":
        bpy.context.scene.render.frame_map_new = 200
    elif what == "rigid body":
        with bpy.context.temp_override(object=obj, active_object=obj, selected_objects=[obj]):
            bpy.ops.rigidbody.object_add()
    elif what == "action without slot":
        data.action_slot = None


def _group(action):
    """A new group of `action` (4.4+: of its one channelbag)."""
    if compat.SLOTTED_ACTIONS:
        return action.layers[0].strips[0].channelbags[0].groups.new("muted")
    return action.groups.new("muted")


REFUSED = ["parent", "constraint", "driver", "NLA strip moving it", "muted NLA strip moving it",
           "NLA strip keying a delta", "solo NLA track", "quaternion keyed in part beside NLA", "F-curve modifier",
           "ELASTIC key", "muted F-curve", "muted group", "keyed delta", "delta_location", "delta_rotation_euler",
           "delta_scale", "delta_rotation_quaternion", "influence", "blend", "hold forward", "keys too close",
           "a key not a number", "time remapped", "rigid body"]
REFUSED += ["action without slot"] if compat.SLOTTED_ACTIONS else []


@pytest.mark.parametrize("what", REFUSED)
def test_an_object_whose_matrix_may_depend_on_more_is_refused(what):
    obj = plain_keyed("refused")
    assert keyed_matrices(bpy.context.scene, obj, FRAMES) is not None
    refused(obj, what)
    assert keyed_matrices(bpy.context.scene, obj, FRAMES) is None


def test_a_frame_change_handler_refuses_every_object():
    obj = plain_keyed("watched")

    def watcher(scene, depsgraph=None):
        pass
    bpy.app.handlers.frame_change_post.append(watcher)
    try:
        assert keyed_matrices(bpy.context.scene, obj, FRAMES) is None
    finally:
        bpy.app.handlers.frame_change_post.remove(watcher)
    assert keyed_matrices(bpy.context.scene, obj, FRAMES) is not None
