"""Selected objects as targets: which animation goes to which object, and the keys that
give it the engine's world matrices under its placement (Localized) and its parent."""

import numpy as np

from ....core.errors import ObanError
from ...engine import to_blender
from ...io.oban.properties import NAME, PLACEMENT
from ...io.oban.record import LOCALIZED


def assign(path, animations, selected):
    """(animation, selected object) pairs: one animation goes to every selected object,
    several each to the selected object of its name (object name or oban_name)."""
    if not selected:
        raise ObanError(path, "target is the selected objects, but no object is selected")
    if len(animations) == 1:
        return [(animations[0], obj) for obj in selected]
    by_name = {obj.get(NAME, obj.name): obj for obj in selected}
    jobs = [(a, by_name[a.name]) for a in animations if a.name in by_name]
    if not jobs:
        raise ObanError(path, f"none of its {len(animations)} animations is named like a selected object")
    return jobs


def placed_transforms(context, animation, obj, shown, settings):
    """World matrices W(f) for an existing object: a Localized animation plays relative to
    the object's placement (kept in PLACEMENT, so importing again does not compound it);
    a parented object gets the parent-space keys that produce W(f)."""
    world = next(to_blender.transforms_many([animation], settings.axes, settings.global_scale,
                                      camera=obj.type == "CAMERA")).matrices()[list(shown)]
    world = _placement(animation, obj) @ world
    if obj.parent is not None:
        world = np.linalg.inv(_parent_matrices(context, obj, len(shown), settings)) @ world
    return to_blender.decompose(world)


def placed_keys(context, animation, obj, settings):
    """The file's keys for an existing object (a KeyTransforms, its `reason` set where they
    cannot be exact): placement and parent as placed_transforms, held by the keys where
    they are a rotation times a uniform scale, and the parent does not move."""
    keys = to_blender.key_transforms_many([animation], settings.axes, settings.global_scale,
                                    camera=obj.type == "CAMERA")[0]
    left = _placement(animation, obj)
    if obj.parent is not None:
        if is_animated(obj.parent):
            keys.reason = f"it is parented to '{obj.parent.name}', which moves"
            return keys
        left = np.linalg.inv(_parent_matrices(context, obj, 1, settings)[0]) @ left
    return to_blender.in_front(left, keys)


def _placement(animation, obj):
    """What a Localized animation plays under: the object's matrix before its first import."""
    if not animation.has(LOCALIZED):
        return np.eye(4)
    if PLACEMENT not in obj:
        obj[PLACEMENT] = [v for row in obj.matrix_world for v in row]
    return np.array(obj[PLACEMENT], np.float64).reshape(4, 4)


def _parent_matrices(context, obj, count, settings):
    """parent world . parent inverse at each key's scene frame (evaluated only if it moves)."""
    def current():
        return np.array(obj.parent.matrix_world) @ np.array(obj.matrix_parent_inverse)
    if not is_animated(obj.parent):
        return current()[None]
    scene, frame = context.scene, context.scene.frame_current
    matrices = []
    for i in range(count):
        scene.frame_set(settings.frame_start + i)
        matrices.append(current())
    scene.frame_set(frame)
    return np.array(matrices)


def is_animated(obj):
    """Keyed, driven, constrained, or under a parent that is."""
    while obj is not None:
        data = obj.animation_data
        if data and (data.action or len(data.drivers)) or len(obj.constraints):
            return True
        obj = obj.parent
    return False
