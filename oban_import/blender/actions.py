"""Actions: an animation's keys on an object, in bulk, with its door marker and its
custom properties (docs/engine.md 3 for the engine's playback)."""

import numpy as np

from ..engine import axes
from ..engine.playback import engine_frames, random_start_frame
from ..oni.oban import RANDOM_START
from ..oni.properties import properties, stored_data
from . import compat

TRANSFORM_GROUP = "Object Transforms"
DOOR_MARKER = "door open"


def ticks(animation, settings):
    """The OBAN frame shown at each key, and the period after which they repeat (None: hold)."""
    if settings.playback == "FRAMES":
        return range(animation.frames), None
    start = 0
    if animation.has(RANDOM_START) and settings.random_start_seed >= 0:
        start = random_start_frame(animation.frames, f"{settings.random_start_seed}:{animation.name}")
    return engine_frames(animation.frames, animation.flags, start)


def animate(obj, name, transforms, settings, period):
    """Keys for location, rotation and scale on every tick, LINEAR, written in bulk; with a
    period, a closing key equal to the first and a Cycles modifier repeat them forever."""
    if period is not None:
        transforms = transforms.take(list(range(len(transforms.columns))) + [0])
    if settings.rotation_mode == "QUATERNION":
        rotation_path, columns = "rotation_quaternion", transforms.columns
    else:
        rotation_path = "rotation_euler"
        euler = axes.eulers(axes.quaternion_matrices(transforms.quaternion), settings.rotation_mode)
        columns = np.concatenate([transforms.location, euler, transforms.scale], axis=1)
    sizes = (("location", 3), (rotation_path, columns.shape[1] - 6), ("scale", 3))
    specs = [(path, i, TRANSFORM_GROUP) for path, size in sizes for i in range(size)]
    action, fcurves = compat.new_object_action(obj, name, specs)
    frames = settings.frame_start + np.arange(len(columns), dtype=np.float32)
    compat.fill_fcurves(fcurves, frames, columns)
    if period is not None:
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


def describe(obj, action, animation):
    """The custom properties: the description on both, the stored keys on the action."""
    described = properties(animation)
    obj.id_properties_ensure().update(described)
    action.id_properties_ensure().update(described | stored_data(animation))
