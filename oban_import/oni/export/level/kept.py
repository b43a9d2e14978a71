"""The edits to a level's objects the in-place patch (patch.py, docs/level.md 11) cannot carry:
it rewrites the environment's quads and the textures' pixels alone, every object as read. An
object list's Empty moved, changed, added or deleted; a door leaf deleted, copied or its door's
motion edited; a placed object moved, re-animated, re-meshed, deleted or copied: each named,
never dropped without a word."""

import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import numbers, plain
from ....core.report import listed
from ...blender.oban.targets import is_animated
from ...blender.shared.fingerprints import mesh_edited
from ...engine.doors import placements
from ...engine.fit_keys import TOLERANCE
from ...io.import_frame import import_frame
from ...io.level.properties import OBJECT_ID, TYPE, door_properties, furniture_properties, object_properties
from ...io.oban.record import matrix_from_columns
from ...io.objects.properties import OBJECT_DOOR_LEAF, OBJECT_NAME, OBJECT_ORIGIN, OBJECT_SETUP
from ..shared.edits import unheld_edits
from ..shared.motion import animation_of, motions
from .objects import door_animations, moved_placement
from .scene import leaf_edits

KEPT = "the in-place patch keeps the level's objects as read (rebuild the level to carry it)"


def unpatched_edits(context, level, placed, objects, frame) -> list:
    """What the scene holds otherwise than the in-place patch writes it (as read) of a level's
    objects. `level`: the level read (LevelContents); `placed`: {setup index: name} of its placed
    objects (placed.placed_setups); `objects`: the scene's objects of that level; `frame`:
    (scale, axes) where an object does not say."""
    doors = [obj for obj in objects if obj.get(TYPE) == "DOOR"]
    animations, otherwise = door_animations(context, doors, frame, TOLERANCE)
    return (_empties(level, [obj for obj in objects if TYPE in obj], frame)
            + leaf_edits(level.doors, objects, KEPT)
            + [f"door class animation '{name[4:-4]}': its leaves' motion was edited; {KEPT}" for name in animations]
            + [f"{why}; {KEPT}" for why in otherwise]
            + _placed(context, placed, [obj for obj in objects if OBJECT_NAME in obj and OBJECT_DOOR_LEAF not in obj],
                      frame))


def _empties(level, empties, frame) -> list:
    """The object lists' Empties (`empties`) moved, their properties changed, added or copied,
    and the objects of the level read no Empty holds (deleted); none where no Empty of the
    level is in the scene (imported without its object lists)."""
    if not empties:
        return []
    read = {}   # {(type, id): (the properties the import gave its Empty, its position, rotation)}
    for found in level.object_lists:
        fields = {door.id: door_properties(door) for door in found.doors}
        fields.update({piece.id: furniture_properties(piece) for piece in found.furniture})
        for index, key in enumerate(zip(found.types.tolist(), found.ids.tolist())):
            read[key] = (object_properties(found, index) | fields.get(key[1], {}), found.positions[index],
                         found.rotations[index])
    said, seen = [], set()
    for obj in sorted(empties, key=lambda obj: obj.name):   # a copy after the one it was made of
        key, label = (obj.get(TYPE), obj.get(OBJECT_ID)), f"object '{obj.name}'"
        if key not in read or key in seen:
            said.append(f"{label}: {'a copy of another' if key in seen else 'added, or its type or id changed'}; "
                        f"{KEPT}")
            continue
        seen.add(key)
        properties, position, rotation = read[key]
        changed = [name for name, value in properties.items() if plain(obj.get(name)) != value]
        if changed:
            said.append(f"{label}: its properties {listed(changed)} changed; {KEPT}")
        if _moved(obj, label, placements(position[None].astype(np.float64), rotation[None].astype(np.float64))[0],
                  frame):
            said.append(f"{label}: moved; {KEPT}")
    said += [f"{kind} {object_id} of the level: deleted; {KEPT}" for kind, object_id in read if (kind, object_id)
             not in seen]
    return said


def _placed(context, setups, objects, frame) -> list:
    """The placed objects (`objects`, no door leaves) moved, re-animated, re-meshed, showing what
    no M3GM holds, copied, and the setups of `setups` no object holds (deleted); none of the last
    where no placed object of the level is in the scene (imported without them)."""
    holders = {}
    for obj in objects:
        holders.setdefault(obj.get(OBJECT_SETUP), []).append(obj)
    said = [f"placed object '{name}' (setup {n}): deleted; {KEPT}" for n, name in setups.items()
            if objects and n not in holders]
    said += [f"objects {listed(sorted(obj.name for obj in held))} are each setup {n} (an object copied keeps its "
             f"properties): a copy is not written; {KEPT}" for n, held in holders.items() if len(held) > 1]
    animated = [obj for obj in objects if is_animated(obj)]   # their motions sampled together
    replays = {obj: _replays(motion) for obj, motion in zip(animated, motions(context, [(obj, None) for obj in
                                                                                         animated], *frame))}
    for obj in objects:
        label, mesh = f"object '{obj.name}'", obj.type == "MESH"
        here = import_frame(obj.data, f"{label} mesh '{obj.data.name}'", *frame) if mesh else frame
        if obj in replays:
            how = [] if replays[obj] else ["re-animated"]
        else:
            read = matrix_from_columns(numbers(obj, OBJECT_ORIGIN, label, 12))
            how = ["moved"] if _moved(obj, label, read, here) else []
        if mesh:
            how += (["re-meshed"] if mesh_edited(obj.data) else []) + unheld_edits(obj)
        said += [f"{label}: {what}; {KEPT}" for what in how]
    return said


def _moved(obj, label, read, frame) -> bool:
    """Whether an object stands elsewhere than the import put it (`read`: its engine matrix)."""
    try:
        return moved_placement(obj, label, read, frame) is not None
    except ObanError:   # moved beyond what a level holds
        return True


def _replays(motion) -> bool:
    """Whether an animated object's motion (motions()'s) replays its OBAN as read."""
    try:
        return animation_of(motion, TOLERANCE)[1]
    except ObanError:   # a motion no OBAN can replay
        return False
