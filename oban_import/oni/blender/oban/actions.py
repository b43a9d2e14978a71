"""Actions: an animation's keys on an object, in bulk, with its door marker and its
custom properties (docs/engine.md 3 for the engine's playback)."""

import functools

import numpy as np

from ....blender import compat
from ...engine import to_blender
from ...engine.playback import engine_frames, engine_keys, random_start_frame
from ...io.import_frame import import_properties
from ...io.oban.properties import NAME, PIVOT, descriptions
from ...io.oban.record import MAX_COUNT, RANDOM_START

TRANSFORM_GROUP = "Object Transforms"
DOOR_MARKER = "door open"


def start_frame(animation, settings):
    """The OBAN frame engine playback starts on: a seeded one for RandomStart, else 0."""
    if animation.has(RANDOM_START) and settings.use_random_start:
        return random_start_frame(animation.frames, f"{settings.random_seed}:{animation.name}")
    return 0


def ticks(animation, settings):
    """The OBAN frame shown at each tick, and the period after which they repeat (None: hold)."""
    if settings.playback == "FRAMES":
        return range(animation.frames), None
    return engine_frames(animation.frames, animation.flags, start_frame(animation, settings))


def animate_keys(obj, animation, keys, settings, action=None):
    """The file's own keys (a KeyTransforms), LINEAR, quaternion signs continuous; with
    engine playback laid out as the engine plays them (a Loop closed and cycled, a
    PingPong mirrored and cycled). Location and rotation are keyed, as an OBAN key holds
    them; the scale, the base's and the same on every key, is the object's own."""
    times, columns, period = keys.frames, keys.columns, None   # the keys' signs are continuous already
    if settings.playback != "FRAMES":
        times, columns, period = engine_keys(times, columns, animation.frames, animation.flags,
                                             start_frame(animation, settings))
        columns = columns.copy()
        columns[:, 3:7] = to_blender.continuous(columns[:, 3:7])   # the closing key may face the other way
    frames = (settings.frame_start + times).astype(np.float32)
    return write_keys(obj, animation.name, frames, columns, period is not None, scale_keys=False, action=action)


def animate(obj, name, transforms, settings, period, action=None, scale_keys=True):
    """Keys for location, rotation and scale on every tick, LINEAR, written in bulk; with a
    period, a closing key equal to the first and a Cycles modifier repeat them forever;
    without `scale_keys`, the scale (the first tick's) is the object's own."""
    if period is not None:
        transforms = transforms.take(np.append(np.arange(len(transforms.columns)), 0))
    columns = transforms.columns
    if settings.rotation_mode != "QUATERNION":
        euler = to_blender.eulers(to_blender.quaternion_matrices(transforms.quaternion), settings.rotation_mode)
        columns = np.concatenate([transforms.location, euler, transforms.scale], axis=1)
    return write_keys(obj, name, scene_frames(settings.frame_start, len(columns)), columns, period is not None,
                      scale_keys, action)


def scene_frames(frame_start, count):
    """The scene frames of `count` keys from frame_start, float32 as keys take them: a
    slice of one array made once per start, so an object's keys need no array of their own."""
    frames = _frame_numbers(frame_start)
    return frames[:count] if count <= len(frames) else np.arange(frame_start, frame_start + count, dtype=np.float32)


@functools.lru_cache(maxsize=4)
def _frame_numbers(frame_start):
    frames = np.arange(frame_start, frame_start + 2 * (MAX_COUNT + 1), dtype=np.float32)   # a ping-pong's ticks
    frames.flags.writeable = False
    return frames


def _channels(rotation_path, rotation_size):
    sizes = (("location", 3), (rotation_path, rotation_size), ("scale", 3))
    return [(path, i, TRANSFORM_GROUP) for path, size in sizes for i in range(size)]


CHANNELS = {10: ("rotation_quaternion", _channels("rotation_quaternion", 4)),   # by the columns' count
            9: ("rotation_euler", _channels("rotation_euler", 3))}


def write_keys(obj, name, frames, columns, cyclic, scale_keys=True, action=None):
    """A new action for `obj` (called `name`, or `action`, an empty one made beforehand):
    LINEAR keys at scene `frames` (float32), rows of `columns` (location, quaternion or
    Euler angles, scale), written in bulk; a Cycles modifier on every F-curve when
    `cyclic`. Without `scale_keys` the scale is left unkeyed (the first row's, on the
    object)."""
    rotation_path, channels = CHANNELS[columns.shape[1]]
    if not scale_keys:
        channels = channels[:-3]
    action, fcurves = compat.new_object_action(obj, name, channels, action)
    compat.fill_fcurves(fcurves, frames, columns[:, :len(channels)])
    if cyclic:
        for fcurve in fcurves:
            fcurve.modifiers.new("CYCLES")
    # the rest pose is the first key, so the object also stands right with no action evaluated
    first = columns[0].tolist()
    obj.location, obj.scale = first[:3], first[-3:]
    setattr(obj, rotation_path, first[3:-3])
    return action


def mark_door(action, animation, shown, frame_start):
    """A 'door open' pose marker on the scene frame that shows the door open frame."""
    if animation.door_open_frame and animation.door_open_frame in shown:
        marker = action.pose_markers.new(DOOR_MARKER)
        marker.frame = frame_start + shown.index(animation.door_open_frame)


def action_of(obj):
    """An imported object's action: its own, or, for the child of an import's pivot, the
    pivot's (which its keys move)."""
    for owner in (obj, obj.parent if obj.parent is not None and PIVOT in obj.parent else None):
        if owner is not None and owner.animation_data and owner.animation_data.action:
            return owner.animation_data.action
    return None


def animated_of(obj):
    """The object that carries an imported animation's description: `obj`, or the child of
    `obj` when it is an import's pivot (None when neither)."""
    if NAME in obj:
        return obj
    if PIVOT in obj:
        return next((child for child in obj.children if NAME in child), None)
    return None


def describe(obj, action, animation, settings, described=None):
    """The custom properties: the description on both, the stored keys on the action, how it
    was imported on the object. `described`: what io.oban.properties.descriptions() gave for
    `animation`, when made already."""
    on_object, on_action = described or next(descriptions([animation]))
    imported = import_properties(settings.global_scale, settings.axes, settings.frame_start,
                                 start_frame(animation, settings) if settings.playback == "ENGINE" else 0)
    obj.id_properties_ensure().update(on_object | imported)
    action.id_properties_ensure().update(on_action)
