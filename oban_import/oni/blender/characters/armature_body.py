"""A character armature as a body (docs/characters.md, "In Blender"): its parts, their parents,
the bones' rest matrices, the TRTA translations and how it was imported (scale, axes, first
frame), read once for the import (characters.animate) and the export (tram_export), every
property checked. An armature a character import made keeps them as custom properties; one
built by hand has bones named after the parts (Pelvis, LeftThigh, ...) and the dialog's scale
and axes."""

from dataclasses import dataclass

import bpy
import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import number, numbers
from ...engine.to_oni import oni_points
from ...io.characters.properties import ACTIONS, PARENTS, PARTS, TRANSLATIONS
from ...io.import_frame import FIRST_FRAME, import_frame
from ...io.trams.tram import MAX_PARTS, PART_NAMES

MAX_FRAME = 1 << 20                  # past any frame Blender's timeline reaches


@dataclass
class ArmatureBody:
    armature: object
    names: list                # the part names, in part order: each a bone
    parents: np.ndarray        # (P,) int64, -1 for the root: each part's parent, before it
    rest: np.ndarray           # (P, 4, 4) each part's bone's rest matrix, armature space
    scale: float               # Blender units per Oni unit
    axes: np.ndarray           # (3, 3) Oni -> Blender axes
    translations: np.ndarray   # (P, 3) each part's offset from its parent, Oni units
    first_frame: int | None    # the scene frame of an import's frame 0


def character_armatures(objects):
    """The armatures among `objects` that are characters: one a character import made, or any
    with a bone named after the root part (Pelvis): its bones must then be the body's parts."""
    return [obj for obj in objects if obj.type == "ARMATURE" and (PARTS in obj or PART_NAMES[0] in obj.data.bones)]


def armature_body(armature, scale: float, axes, parts: int = len(PART_NAMES)) -> ArmatureBody:
    """The body `armature` is: an import's (its properties), else its bones named after the
    first `parts` parts, with `scale` and `axes`. ObanError naming the armature and
    the property, or the bone, where they are not a body's."""
    label = f"armature '{armature.name}'"
    names = _names(armature, label, parts)
    parents = _parents(armature, names, label)
    bones = armature.data.bones
    every = np.empty(len(bones) * 16, np.float32)
    bones.foreach_get("matrix_local", every)
    rest = np.swapaxes(every.reshape(-1, 4, 4), 1, 2)[[bones.find(name) for name in names]].astype(np.float64)
    if not np.isfinite(rest).all():
        raise ObanError(label, "a bone's rest matrix is not finite")
    scale, axes = import_frame(armature, label, scale, axes)
    heads = rest[:, :3, 3]
    offsets = heads - np.where(parents[:, None] >= 0, heads[parents], 0.0)
    translations = numbers(armature, TRANSLATIONS, label, 3 * len(names), oni_points(offsets, axes, scale).ravel(), PARTS)
    first_frame = None
    if FIRST_FRAME in armature:
        first_frame = number(armature, FIRST_FRAME, label)
        if first_frame != round(first_frame) or abs(first_frame) > MAX_FRAME:
            raise ObanError(label, f"property '{FIRST_FRAME}' is {first_frame}: not a whole frame of the timeline")
        first_frame = int(first_frame)
    return ArmatureBody(armature, names, parents, rest, scale, axes, translations.reshape(-1, 3), first_frame)


def record_actions(armature, actions):
    """Add `actions` to those the armature's imports made for it (by reference: a renamed
    action stays its own; a removed one drops out)."""
    armature[ACTIONS] = list(dict.fromkeys(recorded_actions(armature) + list(actions)))


def recorded_actions(armature) -> list:
    """The actions the armature's imports made for it, still there (a property the user made
    something else holds none)."""
    listed = armature.get(ACTIONS)
    if not hasattr(listed, "__iter__") or isinstance(listed, str | bytes):
        return []
    return [action for action in listed if isinstance(action, bpy.types.Action)]


def _names(armature, label, parts):
    """The part names: the property's (checked: names, unique, bones), else the first `parts`
    of the engine's."""
    names = armature.get(PARTS, PART_NAMES[:parts])
    if not isinstance(names, list | tuple) or not all(isinstance(name, str) for name in names):
        raise ObanError(label, f"property '{PARTS}' is not a list of names")
    names = list(names)
    if not 1 <= len(names) <= MAX_PARTS or len(set(names)) != len(names):
        raise ObanError(label, f"property '{PARTS}' holds {len(names)} names, {len(set(names))} of them different: "
                               f"a body has 1 to {MAX_PARTS} parts, each named once")
    missing = [name for name in names if name not in armature.data.bones]
    if missing:
        raise ObanError(label, f"its bones are not the body's parts: no bone {', '.join(map(repr, missing))}")
    return names


def _parents(armature, names, label):
    """Each part's parent index, as the armature's bones have them; ObanError where they are not
    the body's (an import's property, else the root alone without one) or not in the engine's
    order (every part after its parent)."""
    bones = armature.data.bones
    parents = [bones[name].parent for name in names]
    found = [names.index(p.name) if p is not None and p.name in names else -1 for p in parents]
    wanted = found
    if PARENTS in armature:
        stored = numbers(armature, PARENTS, label, len(names), per=PARTS)
        if stored[0] != -1 or (stored != np.round(stored)).any() or not (0 <= stored[1:]).all() \
                or not (stored[1:] < np.arange(1, len(stored))).all():
            raise ObanError(label, f"property '{PARENTS}' is not a tree of the parts in the engine's order "
                                   f"(the first the root, -1; every other after its parent)")
        wanted = stored.astype(np.int64).tolist()
    for part, (parent, got, want) in enumerate(zip(parents, found, wanted)):
        if parent is not None and got < 0:
            raise ObanError(label, f"bone {names[part]!r} is under {parent.name!r}, which is not a part")
        if part and got < 0:
            raise ObanError(label, f"bone {names[part]!r} has no parent; only the root part, {names[0]!r}, "
                                   f"may have none")
        if got >= part:   # the engine's order: every part after its parent
            order = f" in property '{PARTS}'" if PARTS in armature else ""
            raise ObanError(label, f"bone {names[part]!r} is under {parent.name!r}, a part after it{order}")
        if got != want:
            where = f"under {names[want]!r}" if want >= 0 else "the root"
            now = f"is under {parent.name!r}" if parent is not None else "has no parent"
            raise ObanError(label, f"bone {names[part]!r} {now}; in the body it is {where}")
    return np.array(found, np.int64)
