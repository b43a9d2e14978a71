"""What moves an object: the file's keys or every frame (motions_of), and the action that
plays them on it (build), for new objects, selected ones and placed ones alike."""

from dataclasses import dataclass

import numpy as np
from mathutils import Matrix

from ...engine import to_blender
from ...io.oban.properties import PIVOT
from ..shared.empties import new_empty
from . import actions as oban_actions
from . import targets as oban_targets


@dataclass
class Built:
    obj: object
    error: float       # how far location/rotation/scale are from the exact matrices (relative)
    last_frame: int    # scene frame of the last distinct key
    note: str = ""     # why File Keys were not written (baked on every frame instead)
    pivot: object = None   # the Empty the keys move, `obj` its child holding the base (File Keys)


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
        keys = to_blender.key_transforms_many(animations, settings.axes, settings.global_scale, camera)
        for k in keys:
            k.reason = k.reason or _euler_reason(settings)
    dtype = np.float32 if written and settings.rotation_mode == "QUATERNION" else np.float64
    baked = [a for a, k in zip(animations, keys) if k is None or k.reason]
    every_frame = to_blender.transforms_many(baked, settings.axes, settings.global_scale, camera, dtype=dtype)
    for k in keys:
        if k is not None and not k.reason:
            yield k
            continue
        transforms = next(every_frame)
        if k is not None:
            transforms.note = f"baked on every frame: {k.reason}"
        yield transforms


def warnings(path, name, read_warnings, built):
    """What to tell of one animated object: what the reader found, and a base (or origin)
    that location/rotation/scale hold only approximately (its measured error)."""
    messages = [f"{path}: '{name}': {w}" for w in read_warnings]
    if built.error > to_blender.BASE_TOLERANCE:
        messages.append(f"{path}: '{name}': shear or a scale along rotated axes that location/rotation/scale "
                        f"cannot hold; held to within {built.error:.3g} (relative)")
    return messages


def _euler_reason(settings):
    if settings.rotation_mode == "QUATERNION":
        return ""
    return f"the rotation mode is Euler {settings.rotation_mode}, whose angles do not blend as the engine's quaternions"


def build(context, animation, obj, settings, motion=None, action=None, described=None, made=None, collection=None):
    """Animate `obj` with `animation`: a new object with its `motion` (motions_of), or (None)
    an object the user selected, which keeps its placement for Localized animations and
    its parent. `action`: a new, empty one made for it beforehand, else one is made.
    `described`: its custom properties (io.oban.properties.descriptions), else made here.
    A pivot made for it goes to `collection` (default: obj's collections, a slow look at
    every collection) and is added to `made` as (pivot, None) as soon as it exists."""
    shown, period = oban_actions.ticks(animation, settings)
    if motion is None:
        motion = _placed_motion(context, animation, obj, shown, settings)
    elif settings.playback != "FRAMES" and isinstance(motion, to_blender.Transforms):
        motion = motion.take(shown)
    obj.rotation_mode = settings.rotation_mode
    note = ""
    pivot = None
    if isinstance(motion, to_blender.KeyTransforms):
        if motion.child is not None:
            pivot = _pivot(obj, animation, motion.child, settings, [collection] if collection else obj.users_collection)
            if made is not None:
                made.append((pivot, None))
        action = oban_actions.animate_keys(pivot or obj, animation, motion, settings, action)
    else:
        action = oban_actions.animate(obj, animation.name, motion, settings, period, action)
        note = motion.note
    oban_actions.mark_door(action, animation, shown, settings.frame_start)
    oban_actions.describe(obj, action, animation, settings, described)
    return Built(obj, motion.error, settings.frame_start + len(shown) - 1, note, pivot)


def _pivot(obj, animation, child, settings, collections):
    """A new Empty in obj's place (in `collections`, with obj's parent and parent inverse),
    named after the animation and marked as its pivot; obj becomes its child, `child` (4x4)
    its local matrix, its own location, rotation and scale the identity."""
    pivot = new_empty(f"{animation.name} pivot", settings.global_scale)
    for collection in collections:
        collection.objects.link(pivot)
    if obj.parent is not None:
        pivot.parent, pivot.matrix_parent_inverse = obj.parent, obj.matrix_parent_inverse.copy()
    pivot.rotation_mode = settings.rotation_mode
    pivot[PIVOT] = animation.name
    obj.parent = pivot
    obj.matrix_parent_inverse = Matrix(child.tolist())
    obj.location, obj.scale = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
    obj.rotation_quaternion, obj.rotation_euler = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return pivot


def _placed_motion(context, animation, obj, shown, settings):
    if settings.keys == "FILE":
        keys = oban_targets.placed_keys(context, animation, obj, settings)
        keys.reason = keys.reason or _euler_reason(settings)
        if not keys.reason:
            return keys
    transforms = oban_targets.placed_transforms(context, animation, obj, shown, settings)
    if settings.keys == "FILE":
        transforms.note = f"baked on every frame: {keys.reason}"
    return transforms
