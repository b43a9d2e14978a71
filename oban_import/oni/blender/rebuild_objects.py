"""The objects a level rebuild (level_rebuild.py, docs/level.md 11) writes from the scene's
Empties: doors and furniture from their properties, every other type from the data it was
imported with (as OniSplit's XML, or whole, list_file.py), placed as the Empties stand; and
the class animation of a door whose leaves' motion was edited."""

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import ObanError
from ..engine.doors import MIRROR, flipped, leaf_flips, placements
from ..engine.to_blender import blender_matrices
from ..io.level.class_files import class_file_name
from ..io.level.list_file import LIST_NAMES, list_file_bytes
from ..io.level.model import DOOR_FLAGS, EVENT_TYPES, Door, DoorEvent, Furniture
from ..io.level.object_lists import LIST_PREFIX
from ..io.level.object_xml import CLASS_TYPES, OSD_TYPES, level_given, level_osd_xml
from ..io.level.properties import DOOR_FLAG_PREFIX, OBJECT_FLAGS, OBJECT_ID, OSD, POSITION, ROTATION, TYPE
from ..io.level.rebuild import MAX_OBJECT_ID, OtherObject
from ..io.oban.properties import IMPORT_AXES, IMPORT_SCALE
from ..io.oban.write import oni_file_bytes
from ..io.objects.properties import OBJECT_DOOR_LEAF
from .oban_export import Motion, animation_of
from .oban_targets import is_animated

SAME = 1e-5    # relative: a point, coordinate or matrix this close to what was read is what was read
LEAF_TOLERANCE = 1e-4   # a leaf's edited motion as an OBAN: the OBAN export's default tolerance
OWN_LISTS = ("CMBT", "MELE")   # the types -create:level does not take: written in lists of their own (whole_lists)


def scale_axes(obj, frame) -> tuple:
    """(scale, 3 x 3 axes) an object was imported with; `frame`'s where it does not say."""
    return (float(obj.get(IMPORT_SCALE, frame[0])),
            np.array(obj[IMPORT_AXES], np.float64).reshape(3, 3) if IMPORT_AXES in obj else frame[1])


@dataclass(frozen=True)
class _LeafExport:
    """What the OBAN export of a leaf takes (its scale and axes are the leaf's own)."""
    tolerance: float = LEAF_TOLERANCE
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: np.eye(3))


def door_animations(context, doors, frame):
    """({OBAN file: bytes} of each door class whose leaves' motion was edited, written by the OBAN
    export from that motion as the door stood when imported (a flipped leaf's flip undone); what
    refuses them: leaves of one class edited to move differently)."""
    settings = _LeafExport()
    written, refused = {}, []
    for door in doors:
        behind = _placement(door, frame)[3]
        flips = leaf_flips(bool(int(door.get("oni_door_flags", 0)) & MIRROR), 2)
        for leaf in door.children:
            if OBJECT_DOOR_LEAF not in leaf or not is_animated(leaf):
                continue
            try:
                animation, unchanged = animation_of(Motion(context, leaf, settings, behind), settings)
            except ObanError as error:
                refused.append(str(error))
                continue
            if unchanged:
                continue
            animation = flipped(animation) if flips[int(leaf[OBJECT_DOOR_LEAF]) % 2] else animation
            name, data = f"OBAN{animation.name}.oni", oni_file_bytes(animation)
            if written.get(name, (data,))[0] != data:
                refused.append(f"object '{leaf.name}': it moves otherwise than '{written[name][1]}', another "
                               f"leaf of door class animation '{animation.name}'")
            written.setdefault(name, (data, leaf.name))
    return {name: data for name, (data, _) in written.items()}, refused


def scene_objects(empties, classes, frame):
    """([Door, Furniture or OtherObject] in id order, [OtherObject of a type -create:level does
    not take, its own data as bytes] in id order, {(type, why): how many left out}, what
    refuses them)."""
    listed, own, left_out, refused = [], [], {}, []
    for obj in sorted(empties, key=lambda o: (int(o.get(OBJECT_ID, MAX_OBJECT_ID + 1)), o.name)):
        kind, object_id = str(obj[TYPE]), int(obj.get(OBJECT_ID, 0))
        takes_data = kind in OSD_TYPES or kind in OWN_LISTS
        why = (f"no object list takes {kind}" if kind not in ("DOOR", "FURN") and not takes_data else
               f"they hold no {OSD} (the data they were imported with)" if takes_data and OSD not in obj
               else None)
        if why:
            left_out[kind, why] = left_out.get((kind, why), 0) + 1
            continue
        if not 0 <= object_id <= MAX_OBJECT_ID:
            refused.append(f"object '{obj.name}': id {object_id} does not fit the game's 24 bits")
            continue
        position, rotation, moved, _ = _placement(obj, frame)
        flags = int(obj.get(OBJECT_FLAGS, 0)) & 0xFFFFFFFF
        if kind == "DOOR":
            listed.append(_door(obj, object_id, flags, position, rotation, moved))
            if not has_class(classes, kind, listed[-1].class_name):
                refused.append(f"object '{obj.name}': door class '{listed[-1].class_name}' is not one of the level's")
        elif kind == "FURN":
            listed.append(Furniture(id=object_id, flags=flags, position=position, rotation=rotation,
                                    class_name=str(obj.get("oni_furniture_class", "")),
                                    particle=str(obj.get("oni_particle", "")), geometry=None))
            if not has_class(classes, "OFGA", listed[-1].class_name):
                refused.append(f"object '{obj.name}': furniture class '{listed[-1].class_name}' is not one of the "
                               f"level's")
        elif kind in OWN_LISTS:
            try:
                payload = bytes.fromhex(str(obj[OSD]))
                own.append(OtherObject(kind, object_id, flags, position, rotation, "", payload))
            except ValueError as error:
                refused.append(f"object '{obj.name}': its data ({OSD}) is not hex: {error}")
        else:
            try:
                payload = bytes.fromhex(str(obj[OSD]))
                given, whole = level_given(kind, payload)
                osd = level_osd_xml(kind, given, obj.name, f"object '{obj.name}'")
            except (ObanError, ValueError) as error:
                refused.append(f"object '{obj.name}': its data ({OSD}) cannot be written: {error}")
                continue
            named = _class_of(payload) if kind in CLASS_TYPES else None
            if named is not None and not has_class(classes, kind, named):
                refused.append(f"object '{obj.name}': {kind} class '{named}' is not one of the level's")
                continue
            listed.append(OtherObject(kind, object_id, flags, position, rotation, osd, payload, whole))
    return listed, own, left_out, refused


def whole_lists(listed, own) -> dict:
    """{class file name: bytes} of the lists written whole (list_file.py): the objects
    -create:level does not take (`own`), with their ids; every object of a type one of whose
    data it does not keep (object_xml.level_given), with the ids it gives them (1... in the
    order of `listed`), to replace its own list of them after it ran."""
    whole = {o.kind for o in listed if isinstance(o, OtherObject) and o.whole}
    records = own + [dataclasses.replace(o, id=k) for k, o in enumerate(listed, 1)
                     if isinstance(o, OtherObject) and o.kind in whole]
    files = {}
    for kind, name in LIST_NAMES.items():
        of = [o for o in records if o.kind == kind]
        if of:
            files[class_file_name(LIST_PREFIX + name)] = list_file_bytes(
                name, [kind] * len(of), [o.id for o in of], [o.flags for o in of], [o.position for o in of],
                [o.rotation for o in of], [o.payload for o in of])
    return files


def has_class(classes, tag, name) -> bool:
    """Whether the class files hold the instance `tag` + `name` (tag: the four letters)."""
    return class_file_name(tag + name) in classes


def _class_of(payload) -> str:
    """The class a console, turret or trigger names: its data's first 63 bytes, to the NUL."""
    return payload[:63].split(b"\0", 1)[0].decode("utf-8", "replace")


def _placement(obj, frame):
    """(position, degrees x y z, the placement's change as a 4 x 4 in Oni axes, and in
    Blender's) of an Empty: as read where it has not moved, else from its world matrix."""
    scale, axes = scale_axes(obj, frame)
    position = np.array(obj.get(POSITION, (0, 0, 0)), np.float32)
    rotation = np.array(obj.get(ROTATION, (0, 0, 0)), np.float32)
    read = placements(position[None].astype(np.float64), rotation[None].astype(np.float64))[0]
    world = np.asarray(obj.matrix_world, np.float64)
    imported = blender_matrices(read, axes, scale)
    if np.abs(imported - world).max() <= SAME * max(1.0, np.abs(world).max()):
        return position, rotation, np.eye(4), np.eye(4)
    c = np.eye(4)
    c[:3, :3] = scale * axes
    oni = np.linalg.inv(c) @ world @ c
    basis = oni[:3, :3] / np.linalg.norm(oni[:3, :3], axis=0)
    x = np.degrees(np.arctan2(basis[2, 1], basis[2, 2]))
    y = np.degrees(np.arcsin(np.clip(-basis[2, 0], -1, 1)))
    z = np.degrees(np.arctan2(basis[1, 0], basis[0, 0]))
    moved = placements(oni[None, :3, 3], np.array([[x, y, z]]))[0] @ np.linalg.inv(read)
    return (oni[:3, 3].astype(np.float32), (np.array([x, y, z]) % 360).astype(np.float32), moved,
            world @ np.linalg.inv(imported))


def _door(obj, object_id, flags, position, rotation, moved) -> Door:
    stored = int(obj.get("oni_door_flags", 0))
    named = sum(bit for name, bit in DOOR_FLAGS.items() if obj.get(DOOR_FLAG_PREFIX + name.lower(), stored & bit))
    door_flags = stored & ~sum(DOOR_FLAGS.values()) | named
    frame = np.array(obj.get("oni_frame_position", position), np.float64)
    return Door(id=object_id, flags=flags, position=position, rotation=rotation,
                class_name=str(obj.get("oni_door_class", "")), door_id=int(obj.get("oni_door_id", 0)),
                key_id=int(obj.get("oni_key_id", 0)), door_flags=door_flags,
                frame_position=(moved[:3, :3] @ frame + moved[:3, 3]).astype(np.float32),
                activation_radius_squared=float(obj.get("oni_activation_radius_squared", 0.0)),
                texture_names=(str(obj.get("oni_texture1", "")), str(obj.get("oni_texture2", ""))),
                textures=(None, None), events=[_event(text) for text in obj.get("oni_events", [])], door_class=None)


def _event(text) -> DoorEvent:
    """'Script: open_gate', 'UnlockDoor: 7', 'None' (properties.event_text) as a DoorEvent."""
    name, _, value = str(text).partition(":")
    kind = EVENT_TYPES.index(name.strip()) if name.strip() in EVENT_TYPES else 0
    if kind == 1:
        return DoorEvent(kind, script=value.strip())
    return DoorEvent(kind, target=int(value) if value.strip().lstrip("-").isdigit() else 0)
