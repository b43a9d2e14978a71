"""The objects a level rebuild (rebuild.py, docs/level.md 11) writes from the scene's
Empties: doors and furniture from their properties, every other type from the data it was
imported with (as OniSplit's XML, or whole, list_file.py), placed as the Empties stand; and
the class animation of a door whose leaves' motion was edited."""

import dataclasses

import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import text
from ....core.report import listed
from ...blender.oban.targets import is_animated
from ...engine.doors import MIRROR, flipped, leaf_flips, placements
from ...engine.to_blender import blender_matrices
from ...engine.to_oni import oni_matrices
from ...io.import_frame import import_frame
from ...io.level.model import Door, Furniture
from ...io.level.object_lists import LIST_PREFIX
from ...io.level.properties import OBJECT_ID, OSD, door_fields, furniture_fields, object_header
from ...io.level_rebuild.class_files import class_file_name
from ...io.level_rebuild.list_file import LIST_NAMES, list_file_bytes
from ...io.level_rebuild.master_xml import OtherObject
from ...io.level_rebuild.object_xml import CLASS_TYPES, OSD_TYPES, level_given, level_osd_xml
from ...io.oban.write import oni_file_bytes
from ...io.objects.properties import OBJECT_DOOR_LEAF
from ..shared.as_read import matrix_as_read
from ..shared.motion import animation_of, motions

OWN_LISTS = ("CMBT", "MELE")   # the types -create:level does not take: written in lists of their own (whole_lists)
RIGID = 1e-4        # relative: a placement whose columns are this close to one length, at right angles, is rigid
FLOAT32_MAX = float(np.finfo(np.float32).max)   # a placement is stored as float32


def door_animations(context, doors, frame, tolerance):
    """({OBAN file: bytes} of each door class whose leaves' motion was edited, written by the OBAN
    export from that motion as the door stood when imported (a flipped leaf's flip undone); what
    refuses them: leaves of one class edited to move differently). `tolerance`: the keys'
    (shared/motion.py)."""
    written, refused, leaves = {}, [], []   # leaves: (leaf, behind, flipped)
    for door in doors:
        label = f"object '{door.name}'"
        try:
            behind = _placement(door, object_header(door, label), frame)[3]
            mirror = door_fields(door, label, (0, 0, 0))["door_flags"] & MIRROR
        except ObanError as error:
            refused.append(str(error))
            continue
        flips = leaf_flips(bool(mirror), 2)
        leaves += [(leaf, behind, flips[int(leaf[OBJECT_DOOR_LEAF]) % 2]) for leaf in door.children
                   if OBJECT_DOOR_LEAF in leaf and is_animated(leaf)]
    sampled = motions(context, [(leaf, behind) for leaf, behind, _ in leaves], *frame)
    for (leaf, _, flip), motion in zip(leaves, sampled):
        try:
            animation, unchanged = animation_of(motion, tolerance)
        except ObanError as error:
            refused.append(str(error))
            continue
        if unchanged:
            continue
        animation = flipped(animation) if flip else animation
        name, data = f"OBAN{animation.name}.oni", oni_file_bytes(animation)
        if written.get(name, (data,))[0] != data:
            refused.append(f"object '{leaf.name}': it moves otherwise than '{written[name][1]}', another "
                           f"leaf of door class animation '{animation.name}'")
        written.setdefault(name, (data, leaf.name))
    return {name: data for name, (data, _) in written.items()}, refused


def scene_objects(empties, classes, frame):
    """([Door, Furniture or OtherObject] in id order, [OtherObject of a type -create:level does
    not take, its own data as bytes] in id order, {(type, why): how many left out}, what
    refuses them: two Empties of one type and id among them)."""
    written, own, left_out, refused = [], [], {}, []
    headers = []
    for obj in empties:
        try:
            headers.append((object_header(obj, f"object '{obj.name}'"), obj))
        except ObanError as error:
            refused.append(str(error))
    same = {}
    for header, obj in headers:
        same.setdefault((header.kind, header.id), []).append(obj.name)
    refused += [f"objects {listed(names)} are each {kind} {object_id} (an Empty copied, or the level imported twice): "
                f"give each object an id of its own ({OBJECT_ID}), or delete the copy"
                for (kind, object_id), names in same.items() if len(names) > 1]
    for header, obj in sorted(headers, key=lambda pair: (pair[0].id, pair[1].name)):
        kind, object_id, label = header.kind, header.id, f"object '{obj.name}'"
        takes_data = kind in OSD_TYPES or kind in OWN_LISTS
        why = (f"no object list takes {kind}" if kind not in ("DOOR", "FURN") and not takes_data else
               f"they hold no {OSD} (the data they were imported with)" if takes_data and OSD not in obj
               else None)
        if why:
            left_out[kind, why] = left_out.get((kind, why), 0) + 1
            continue
        try:
            position, rotation, moved, _ = _placement(obj, header, frame)
            flags = header.flags
            if kind == "DOOR":
                fields = door_fields(obj, label, header.position)
                fields["frame_position"] = (moved[:3, :3] @ fields["frame_position"] + moved[:3, 3]).astype(np.float32)
                written.append(Door(id=object_id, flags=flags, position=position, rotation=rotation,
                                    textures=(None, None), door_class=None, **fields))
                if not has_class(classes, kind, written[-1].class_name):
                    refused.append(f"{label}: door class '{written[-1].class_name}' is not one of the level's")
            elif kind == "FURN":
                written.append(Furniture(id=object_id, flags=flags, position=position, rotation=rotation,
                                         geometry=None, **furniture_fields(obj, label)))
                if not has_class(classes, "OFGA", written[-1].class_name):
                    refused.append(f"{label}: furniture class '{written[-1].class_name}' is not one of the level's")
            elif kind in OWN_LISTS:
                own.append(OtherObject(kind, object_id, flags, position, rotation, "", _payload(obj, label)))
            else:
                payload = _payload(obj, label)
                given, whole = level_given(kind, payload)
                osd = level_osd_xml(kind, given, obj.name, label)
                named = _class_of(payload) if kind in CLASS_TYPES else None
                if named is not None and not has_class(classes, kind, named):
                    refused.append(f"{label}: {kind} class '{named}' is not one of the level's")
                    continue
                written.append(OtherObject(kind, object_id, flags, position, rotation, osd, payload, whole))
        except ObanError as error:
            refused.append(str(error))
    return written, own, left_out, refused


def _payload(obj, label) -> bytes:
    """An object's own data as imported (OSD, hex); ObanError where it is not hex."""
    try:
        return bytes.fromhex(text(obj, OSD, label))
    except ValueError as error:
        raise ObanError(label, f"its data ({OSD}) is not hex: {error}") from None


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


def _placement(obj, header, frame):
    """(position, degrees x y z in [0, 360), the placement's change as a 4 x 4 in Oni axes, and
    in Blender's) of an Empty: as read where it has not moved, else from its world matrix;
    ObanError where that matrix is not finite, flattens, scales, shears or mirrors the object
    (Euler angles of a reflection would turn it otherwise)."""
    label = f"object '{obj.name}'"
    position, rotation = header.position, header.rotation
    read = placements(position[None].astype(np.float64), rotation[None].astype(np.float64))[0]
    found = moved_placement(obj, label, read, frame)
    if found is None:
        return position, rotation, np.eye(4), np.eye(4)
    oni, lengths, world, imported = found
    basis = oni[:3, :3] / lengths
    if np.linalg.det(basis) < 0:
        raise ObanError(label, "its placement is mirrored (scaled negatively on an axis): an object list holds a "
                               "position and a rotation, no reflection")
    if np.abs(lengths - 1).max() > RIGID or np.abs(basis.T @ basis - np.eye(3)).max() > RIGID:
        raise ObanError(label, "its placement is scaled or sheared: an object list holds a position and a rotation, "
                               "no scale (an Empty's size is its Display Size)")
    x = np.degrees(np.arctan2(basis[2, 1], basis[2, 2]))
    y = np.degrees(np.arcsin(np.clip(-basis[2, 0], -1, 1)))
    z = np.degrees(np.arctan2(basis[1, 0], basis[0, 0]))
    moved = placements(oni[None, :3, 3], np.array([[x, y, z]]))[0] @ np.linalg.inv(read)
    degrees = (np.array([x, y, z]) % 360).astype(np.float32)
    degrees[degrees >= 360] = 0            # a tiny negative angle's remainder rounds to 360
    return oni[:3, 3].astype(np.float32), degrees, moved, world @ np.linalg.inv(imported)


def moved_placement(obj, label, read, frame):
    """None where the object stands where the import put it (`read`, its engine matrix: the
    world matrix as read, shared/as_read.py), else (its world matrix in Oni's axes and units, that matrix's
    column lengths, the world matrix, the imported one); ObanError where it is not finite in
    float32 or scales the object to nothing. `frame`: the (scale, axes) where the object does not say."""
    scale, axes = import_frame(obj, label, *frame)
    world = np.asarray(obj.matrix_world, np.float64)
    imported = blender_matrices(read, axes, scale)
    if matrix_as_read(world, imported):
        return None
    oni = oni_matrices(world, axes, scale)
    lengths = np.linalg.norm(oni[:3, :3], axis=0)
    if not (np.abs(oni) <= FLOAT32_MAX).all() or not (lengths > 0).all():
        raise ObanError(label, "its placement (world matrix) is not finite in float32, as stored, or scaled to "
                               "nothing")
    return oni, lengths, world, imported
