"""What moves an object: the file's keys or every frame (motions_of), and the action that
plays them on it (build), for new objects, selected ones and placed ones alike."""

from dataclasses import dataclass

import numpy as np

from ..engine import axes
from . import actions, targets


@dataclass
class Built:
    obj: object
    error: float       # how far location/rotation/scale are from the exact matrices (relative)
    last_frame: int    # scene frame of the last distinct key
    note: str = ""     # why File Keys were not written (baked on every frame instead)


def motions_of(animations, settings, camera=False, written=False):
    """Yields what each new object is keyed with, in order: the file's keys (KeyTransforms)
    with File Keys where they are exact, else every frame (Transforms; with a note why, in
    File Keys). `camera`: by the camera rule (docs/engine.md 4). Every frame is computed
    as it is taken, a chunk of frames at a time: a caller that writes each motion before
    taking the next reuses a chunk's memory for the next one. `written`: the transforms
    go to F-curves as they are, so they are kept as F-curves keep them, float32 (half the
    memory, the same keys); else (composed with a placement first, or turned into Euler
    angles) float64."""
    keys = [None] * len(animations)   # with File Keys, each one's keys: where not exact, with a reason
    if settings.keys == "FILE":
        keys = axes.key_transforms_many(animations, settings.axes, settings.global_scale, camera)
        for k in keys:
            k.reason = k.reason or _euler_reason(settings)
    dtype = np.float32 if written and settings.rotation_mode == "QUATERNION" else np.float64
    every_frame = axes.transforms_many([a for a, k in zip(animations, keys) if k is None or k.reason], settings.axes,
                                       settings.global_scale, camera, dtype=dtype)
    for k in keys:
        if k is not None and not k.reason:
            yield k
            continue
        transforms = next(every_frame)
        if k is not None:
            transforms.note = f"baked on every frame: {k.reason}"
        yield transforms


def _euler_reason(settings):
    if settings.rotation_mode == "QUATERNION":
        return ""
    return f"the rotation mode is Euler {settings.rotation_mode}, whose angles do not blend as the engine's quaternions"


def build(context, animation, obj, settings, motion=None, action=None, described=None):
    """Animate `obj` with `animation`: a new object with its `motion` (motions_of), or (None)
    an object the user selected, which keeps its placement for Localized animations and
    its parent. `action`: a new, empty one made for it beforehand, else one is made.
    `described`: its custom properties (oni.properties.descriptions), else made here."""
    shown, period = actions.ticks(animation, settings)
    if motion is None:
        motion = _placed_motion(context, animation, obj, shown, settings)
    elif settings.playback != "FRAMES" and isinstance(motion, axes.Transforms):
        motion = motion.take(shown)
    obj.rotation_mode = settings.rotation_mode
    note = ""
    if isinstance(motion, axes.KeyTransforms):
        action = actions.animate_keys(obj, animation, motion, settings, action)
    else:
        action = actions.animate(obj, animation.name, motion, settings, period, action)
        note = motion.note
    actions.mark_door(action, animation, shown, settings.frame_start)
    actions.describe(obj, action, animation, described)
    return Built(obj, motion.error, settings.frame_start + len(shown) - 1, note)


def _placed_motion(context, animation, obj, shown, settings):
    if settings.keys == "FILE":
        keys = targets.placed_keys(context, animation, obj, settings)
        keys.reason = keys.reason or _euler_reason(settings)
        if not keys.reason:
            return keys
    transforms = targets.placed_transforms(context, animation, obj, shown, settings)
    if settings.keys == "FILE":
        transforms.note = f"baked on every frame: {keys.reason}"
    return transforms
