"""An object's world matrix on many frames from its own transform keys, without setting the scene
on each (docs/exports.md 3): keyed_matrices, for an object whose world matrix Blender makes from
those keys alone (`_keys_alone` says when); core/fcurve_math.py does the arithmetic."""

import bpy
import numpy as np

from ..core.fcurve_math import BEZIER, SPACED, basis_matrices, fcurve_values
from .compat import action_fcurves, played_fcurves

SIZES = {"location": 3, "rotation_euler": 3, "rotation_quaternion": 4, "rotation_axis_angle": 4, "scale": 3}
ALSO_MOVING = {"delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale", "rotation_mode"}
ROTATIONS = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}   # else an Euler order


def keyed_matrices(scene, obj, frames):
    """(F, 4, 4) obj's world matrix on each of the scene `frames` (whole numbers) as setting the
    scene there gives it, from its keys; None where it may depend on anything else, or a key's
    value overflows float32."""
    curves = _keys_alone(scene, obj)
    if curves is None:
        return None
    times = np.asarray(frames, np.float32)
    channels = [channel_values(getattr(obj, path), curves.get(path, {}), times)
                for path in ("location", ROTATIONS.get(obj.rotation_mode, "rotation_euler"), "scale")]
    if not all(np.isfinite(values).all() for values in channels):   # Blender clamps what overflows to its range
        return None
    return basis_matrices(*channels, obj.rotation_mode)


def channel_values(own, keys, times):
    """(N, len(own)) float32 a channel's values at `times`: keys[index]'s (fcurve_keys) where that
    index is keyed, its `own` value elsewhere."""
    values = np.repeat(np.array(own, np.float32)[None], len(times), axis=0)
    for index, found in keys.items():
        values[:, index] = fcurve_values(*found, times)
    return values


def plain_time(scene):
    """Whether the scene's frames are its actions' (not remapped) and no frame-change handler
    runs (it could change anything)."""
    handlers = bpy.app.handlers
    return (scene.render.frame_map_old == scene.render.frame_map_new and not handlers.frame_change_pre
            and not handlers.frame_change_post)


def _keys_alone(scene, obj):
    """{data_path: {index: (points, lefts, rights, modes, linear)}} of the keyed channels of obj's
    matrix (location, scale, its rotation mode's rotation) where its world matrix is T.R.S of
    their keys' values and its other channels' own; else None. That takes: the scene's frames
    not remapped and no frame-change handler; no parent, constraint, rigid body, delta
    transform or driver; its active action played as it is (not in tweak mode, no solo track,
    full influence, REPLACE, HOLD) and no NLA strip of a track not muted playing an action that
    moves an object (a quaternion keyed in part beside NLA tracks: their defaults fill the
    rest); its channels' F-curves playing, once each, their keys alone (fcurve_keys)."""
    if not plain_time(scene):
        return None
    rotation = ROTATIONS.get(obj.rotation_mode, "rotation_euler")
    own = [value for path in ("location", rotation, "scale") for value in getattr(obj, path)]
    if (obj.parent is not None or len(obj.constraints) or obj.rigid_body is not None or not np.isfinite(own).all()
            or tuple(obj.delta_location) != (0, 0, 0) or tuple(obj.delta_rotation_euler) != (0, 0, 0)
            or tuple(obj.delta_rotation_quaternion) != (1, 0, 0, 0) or tuple(obj.delta_scale) != (1, 1, 1)):
        return None
    data = obj.animation_data
    if data is None:
        return {}
    tracks = data.nla_tracks
    played = {strip.action for track in tracks if not track.mute for strip in _strips(track.strips)}
    if (len(data.drivers) or data.use_tweak_mode or data.action_influence != 1 or data.action_blend_type != "REPLACE"
            or data.action_extrapolation != "HOLD" or any(track.is_solo for track in tracks)
            or any(map(_moves, played))):
        return None
    fcurves = played_fcurves(obj)
    if fcurves is None:
        return None
    curves, seen = {}, set()
    for fcurve in fcurves:
        path, index = fcurve.data_path, fcurve.array_index
        if path in ALSO_MOVING:
            return None
        if path not in ("location", rotation, "scale"):
            continue
        if (path, index) in seen or not 0 <= index < SIZES[path]:
            return None
        seen.add((path, index))
        keys = fcurve_keys(fcurve)
        if keys is None:
            return None
        if keys:
            curves.setdefault(path, {})[index] = keys
    keyed = len(curves.get(rotation, {}))
    if len(tracks) and rotation == "rotation_quaternion" and 0 < keyed < 4:
        return None
    return curves


def fcurve_keys(fcurve):
    """(points, lefts, rights, modes, linear) of an F-curve Blender plays as its keys alone (not
    muted, nor its group, valid, without modifiers or baked samples): (K, 2) float32 (frame,
    value) and handles (the points where no key is BEZIER: unused), (K,) interpolation, whether
    it is extrapolated linearly; () where it has no keys (it moves nothing); None unless it is
    so played and its keys are finite, CONSTANT, LINEAR or BEZIER, their frames SPACED apart."""
    if (fcurve.mute or not fcurve.is_valid or (fcurve.group is not None and fcurve.group.mute)
            or len(fcurve.modifiers) or len(fcurve.sampled_points)):
        return None
    if not len(fcurve.keyframe_points):
        return ()
    keys = fcurve.keyframe_points
    modes = bytearray(len(keys))   # an enum's bytes: the fast path on every version
    keys.foreach_get("interpolation", modes)
    modes = np.frombuffer(modes, np.uint8)
    if modes.max() > BEZIER:
        return None
    arrays = []
    for name in ("co", "handle_left", "handle_right") if (modes == BEZIER).any() else ("co",):
        array = np.empty(2 * len(keys), np.float32)
        keys.foreach_get(name, array)
        arrays.append(array.reshape(-1, 2))
    points = arrays[0]
    if not all(np.isfinite(array).all() for array in arrays) or (np.diff(points[:, 0]) < SPACED).any():
        return None
    lefts, rights = arrays[1:] or (points, points)
    return points, lefts, rights, modes, fcurve.extrapolation == "LINEAR"


def _strips(strips):
    """Every strip of `strips`, and those inside meta strips."""
    for strip in strips:
        yield strip
        yield from _strips(strip.strips)


def _moves(action):
    """Whether an action holds an F-curve that moves an object (any slot's)."""
    return action is not None and any(f.data_path in SIZES or f.data_path in ALSO_MOVING for f in action_fcurves(action))
