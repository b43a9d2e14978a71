"""A level written back as the files OniSplit's `-create:level` rebuilds it from (docs/level.md
11): for each level the environment objects come from, a folder named after it holding the
environment and rooms Colladas, the master XML, every object in one OniSplit XML list and the
classes folder, all as the scene has them: faces in the file's order (a face added
after the one it was made from), the import's scale and axes undone, a point or texture
coordinate that has not moved written as it was read. Anything OniSplit cannot build refuses
that level, naming what; nothing of it is written."""

import os
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import ObanError
from ...core.id_properties import signed32
from ...core.report import Made, Report
from ..engine.doors import MIRROR, flipped, leaf_flips, placements
from ..engine.to_blender import blender_matrices
from ..io.container.library import open_library
from ..io.level.class_files import class_file_name, class_files
from ..io.level.collada import environment_collada, rooms_collada
from ..io.level.model import DOOR_FLAGS, EVENT_TYPES, QUAD_FLAGS, TRIANGLE, Door, DoorEvent, Furniture, Quads
from ..io.level.object_xml import CLASS_TYPES, LEVEL_FAULTS, OSD_TYPES, level_faults, osd_xml
from ..io.level.patch import fingerprint
from ..io.level.properties import (DOOR_FLAG_PREFIX, FINGERPRINT, FLAGS_ATTRIBUTE, LEVEL_FILE, OBJECT_FLAGS, OBJECT_ID,
                                   OSD, POSITION, QUAD_ATTRIBUTE, ROOMS, ROTATION, SHADE_ATTRIBUTE, TAG_ATTRIBUTE, TYPE,
                                   UV_MAP)
from ..io.level.read import read_level
from ..io.level.rebuild import (CLASSES_FOLDER, ENVIRONMENT_FILE, MASTER_FILE, MAX_OBJECT_ID, OBJECTS_FILE,
                                ONISPLIT_MARKERS, ROOMS_FILE, OtherObject, master_xml, objects_xml)
from ..io.oban.properties import IMPORT_AXES, IMPORT_SCALE
from ..io.oban.write import oni_file_bytes
from ..io.objects.properties import OBJECT_DOOR_LEAF
from .environment import corner_shades, face_ints, slot_texture_names
from .level_patch import by_level
from .oban_export import Motion, animation_of
from .oban_targets import is_animated

GHOSTS = QUAD_FLAGS["Ghost"] | QUAD_FLAGS["StairsUp"] | QUAD_FLAGS["StairsDown"]   # in the rooms' Collada
SAME = 1e-5    # relative: a point, coordinate or matrix this close to what was read is what was read
ADDED = 1 << 62   # the order key of a face that is no quad of the level: after all of them
LEAF_TOLERANCE = 1e-4   # a leaf's edited motion as an OBAN: the OBAN export's default tolerance


@dataclass
class LevelSource:
    """What a rebuild wrote for one level."""
    name: str
    quads: int
    rooms: int
    objects: int


def export_level_rebuilds(context, objects, directory, settings=None) -> Report:
    """Each level of the environment `objects` (with the rooms and object Empties of that level
    in the scene) as a folder `directory`/<level> of OniSplit's rebuild source; Made(master
    XML, LevelSource, first object) per level."""
    report = Report(unit="levels")
    levels = by_level(objects)
    report.files = len(levels)
    for path, found in levels.items():
        try:
            report.made.append(_rebuild(context, path, found, directory, report.warnings))
        except ObanError as error:
            report.errors.append(str(error))
    report.counts = {"levels": len(report.made)}
    return report


def _rebuild(context, path, environment, directory, warnings):
    with open_library(path) as library:   # read once for both
        level, classes = read_level(path, library), class_files(path, library=library)
    if level.environment is None or signed32(fingerprint(level.environment)) != environment[0].get(FINGERPRINT):
        raise ObanError(path, "its quads are not the ones imported: the file has changed since")
    same = [obj for obj in context.scene.objects if obj.get(LEVEL_FILE) == path]
    quads, ghosts, refused = _scene_quads(environment, level.environment, classes)
    floors, floor_counts = _scene_rooms([obj for obj in same if ROOMS in obj and obj.type == "MESH"],
                                        level.environment)
    if not len(floor_counts):
        refused.append("it has no rooms (import it with its environment: the rooms come with it)")
    listed, left_out, wrong = _scene_objects([obj for obj in same if TYPE in obj], classes)
    refused += wrong
    animations, wrong = _door_animations(context, [obj for obj in same if obj.get(TYPE) == "DOOR"])
    refused += wrong
    classes.update(animations)
    if refused:
        raise ObanError(path, "cannot be rebuilt: " + "; ".join(refused[:5])
                              + (f"; and {len(refused) - 5} more" if len(refused) > 5 else ""))
    warnings += [f"{path}: {count} {kind} objects left out: {why}" for (kind, why), count in left_out.items()]
    warnings += [f"{path}: {kind} objects written, but OniSplit's -create:level does not keep them whole: {fault}"
                 for kind, fault in LEVEL_FAULTS.items() if any(getattr(o, "kind", "") == kind for o in listed)]
    environment_text, node_flags = environment_collada(quads)
    object_files = [OBJECTS_FILE.format(level.name)] if listed else []
    files = {ENVIRONMENT_FILE.format(level.name): environment_text,
             ROOMS_FILE.format(level.name): rooms_collada(floors, floor_counts, ghosts),
             MASTER_FILE.format(level.name): master_xml(level.name, node_flags, level.sky, object_files),
             **({OBJECTS_FILE.format(level.name): objects_xml(listed)} if listed else {})}
    target = os.path.join(directory, level.name)
    _write(target, files, classes)
    summary = LevelSource(level.name, len(quads.flags), len(floor_counts), len(listed))
    return Made(os.path.join(target, MASTER_FILE.format(level.name)), summary, environment[0])


def _write(target, files, classes):
    try:
        os.makedirs(os.path.join(target, CLASSES_FOLDER), exist_ok=True)
        for name, text in files.items():
            with open(os.path.join(target, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        for name, data in classes.items():
            with open(os.path.join(target, CLASSES_FOLDER, name), "wb") as f:
                f.write(data)
    except OSError as error:
        raise ObanError(error.filename or target, f"cannot be written: {error.strerror or error}") from None


# --- the environment ---------------------------------------------------------------------------

def _scene_quads(objects, environment, classes):
    """(the environment's own Quads in the file's order, the ghosts' (g, 4, 3) corners, what
    refuses them: a texture neither among the `classes` files nor OniSplit's own). Gunk (an
    object tag) is left out: OniSplit makes it from the objects."""
    faces = [_faces(obj, k, environment) for k, obj in enumerate(objects)]
    refused = [message for found in faces for message in found.pop("refused")]
    if refused:
        return None, None, refused
    merged = {key: np.concatenate([found[key] for found in faces]) for key in faces[0]}
    order = np.lexsort((merged["face"], merged["object"], merged["key"]))
    merged = {key: values[order] for key, values in merged.items()}
    own = merged["tag"] == -1
    ghost = own & ((merged["flags"] & GHOSTS) != 0)
    keep = own & ~ghost
    names, first, texture = np.unique(merged["texture_name"][keep], return_index=True, return_inverse=True)
    by_first_use = np.argsort(first)   # the textures in the order the quads first use them (TXMA's)
    rank = np.empty(len(names), np.int32)
    rank[by_first_use] = np.arange(len(names))
    unknown = [name for name in names.tolist()
               if name not in ONISPLIT_MARKERS and not _has_class(classes, "TXMP", name)]
    for row in np.flatnonzero(keep & np.isin(merged["texture_name"], unknown)).tolist()[:5]:
        obj, face, name = objects[merged["object"][row]], merged["face"][row], merged["texture_name"][row]
        refused.append(f"object '{obj.name}' face {face}: " + (f"texture '{name}' is not one of the level's TXMPs"
                                                                if name else "its material names no texture")
                       + " (OniSplit could not find it)")
    quads = Quads(points=merged["points"][keep], texture_coordinates=merged["uvs"][keep],
                  shades=merged["shades"][keep], flags=merged["flags"][keep], textures=rank[texture.ravel()],
                  texture_names=names[by_first_use].tolist())
    return quads, merged["points"][ghost], refused


def _faces(obj, index, environment) -> dict:
    """Every face of an environment mesh object as the rebuild needs it (arrays by face)."""
    mesh = obj.data
    count = len(mesh.polygons)
    sizes, starts = np.empty(count, np.int32), np.empty(count, np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    mesh.polygons.foreach_get("loop_start", starts)
    bad = np.flatnonzero((sizes < 3) | (sizes > 4))
    refused = [f"object '{obj.name}' face {face}: {sizes[face]} corners (a quad has at most 4: triangulate or "
               f"split it)" for face in bad[:3].tolist()]
    key = face_ints(mesh, QUAD_ATTRIBUTE, -1).astype(np.int64)
    quads = len(environment.flags)
    known = (key >= 0) & (key < quads)
    key = np.where(known, key, ADDED + np.arange(count))
    flags = face_ints(mesh, FLAGS_ATTRIBUTE, 0).view(np.uint32)
    flags = np.where(sizes == 3, flags | TRIANGLE, flags & ~np.uint32(TRIANGLE)).astype(np.uint32)
    corner = starts[:, None] + np.minimum(np.arange(4)[None, :], np.maximum(sizes, 1)[:, None] - 1)
    points = _oni_points(obj, mesh)[corner]
    uvs = _stored_uvs(mesh)[corner]
    stored = np.where(known, key, 0)
    same_shape = known & (environment.corner_counts(stored) == sizes)
    points = _as_read(points, environment.points[environment.quad_points[stored]], same_shape[:, None, None])
    uvs = _as_read(uvs, environment.texture_coordinates[environment.quad_uvs[stored]], same_shape[:, None, None])
    slots = np.empty(count, np.int32)
    mesh.polygons.foreach_get("material_index", slots)
    slot_names = slot_texture_names(mesh) or [""]
    return {"key": key, "object": np.full(count, index), "face": np.arange(count), "refused": refused,
            "points": points, "uvs": uvs, "shades": _corner_shades(mesh)[corner], "flags": flags,
            "tag": face_ints(mesh, TAG_ATTRIBUTE, -1),
            "texture_name": np.array(slot_names, str)[np.minimum(slots, len(slot_names) - 1)]}


def _oni_points(obj, mesh) -> np.ndarray:
    """(corners, 3) float64: each corner's point, world space, the import's scale and axes undone."""
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    world = np.asarray(obj.matrix_world, np.float64)
    points = co.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3]
    scale, axes = _scale_axes(obj)
    return (points @ axes / scale)[vertex]   # A^-1 = A^T


def _scale_axes(obj) -> tuple:
    """(scale, 3 x 3 axes) an object was imported with (1 and none where it does not say)."""
    return (float(obj.get(IMPORT_SCALE, 1.0)),
            np.array(obj.get(IMPORT_AXES, np.eye(3).ravel().tolist()), np.float64).reshape(3, 3))


def _stored_uvs(mesh) -> np.ndarray:
    """(corners, 2): Blender's (u, v) as stored, v = 1 - v (zeros without a UV map)."""
    layer = mesh.uv_layers.get(UV_MAP) or mesh.uv_layers.active
    uvs = np.zeros(2 * len(mesh.loops), np.float32)
    if layer is not None:
        layer.data.foreach_get("uv", uvs)
    uvs = uvs.reshape(-1, 2).astype(np.float64)
    return np.column_stack([uvs[:, 0], 1.0 - uvs[:, 1]])


def _corner_shades(mesh) -> np.ndarray:
    """(corners,) uint32 0xAARRGGBB of the shade attribute's bytes (white without one)."""
    attribute = mesh.color_attributes.get(SHADE_ATTRIBUTE) or mesh.color_attributes.active_color
    if attribute is None or attribute.domain != "CORNER":
        return np.full(len(mesh.loops), 0xFFFFFFFF, np.uint32)
    return corner_shades(attribute, len(mesh.loops))


def _as_read(values, read, comparable=True) -> np.ndarray:
    """float32 `values`, each one within SAME of what was read (`read`, where `comparable`,
    broadcast: the face or room kept its shape) exactly that."""
    close = np.abs(values - read) <= SAME * np.maximum(1.0, np.abs(read))
    return np.where(comparable & close, read, values).astype(np.float32)


# --- the rooms -----------------------------------------------------------------------------------

def _scene_rooms(objects, environment):
    """((k, 3) float32 corners, (r,) counts) of the rooms' faces, object after object; a room
    whose corners have not moved as read."""
    parts, counts = [], []
    for obj in objects:
        mesh = obj.data
        sizes = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
        points = _oni_points(obj, mesh)
        if np.array_equal(sizes, environment.room_floor_counts):
            points = _as_read(points, environment.room_floors)
        parts.append(points.astype(np.float32))
        counts.append(sizes)
    if not parts:
        return np.zeros((0, 3), np.float32), np.zeros(0, np.int32)
    return np.concatenate(parts), np.concatenate(counts)


# --- the doors' motion -------------------------------------------------------------------------

@dataclass(frozen=True)
class _LeafExport:
    """What the OBAN export of a leaf takes (its scale and axes are the leaf's own)."""
    tolerance: float = LEAF_TOLERANCE
    global_scale: float = 1.0
    axes: np.ndarray = field(default_factory=lambda: np.eye(3))


def _door_animations(context, doors):
    """({OBAN file: bytes} of each door class whose leaves' motion was edited, written by the OBAN
    export from that motion as the door stood when imported (a flipped leaf's flip undone); what
    refuses them: leaves of one class edited to move differently)."""
    settings = _LeafExport()
    written, refused = {}, []
    for door in doors:
        behind = _placement(door)[3]
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


# --- the objects -------------------------------------------------------------------------------

def _scene_objects(empties, classes):
    """([Door, Furniture or OtherObject] in id order, {(type, why): how many left out}, what
    refuses them)."""
    listed, left_out, refused = [], {}, []
    for obj in sorted(empties, key=lambda o: (int(o.get(OBJECT_ID, MAX_OBJECT_ID + 1)), o.name)):
        kind, object_id = str(obj[TYPE]), int(obj.get(OBJECT_ID, 0))
        why = (f"OniSplit's -create:level takes no {kind}" if kind not in ("DOOR", "FURN", *OSD_TYPES) else
               f"they hold no {OSD} (the data they were imported with)" if kind in OSD_TYPES and OSD not in obj
               else None)
        if why:
            left_out[kind, why] = left_out.get((kind, why), 0) + 1
            continue
        if not 0 <= object_id <= MAX_OBJECT_ID:
            refused.append(f"object '{obj.name}': id {object_id} does not fit the game's 24 bits")
            continue
        position, rotation, moved, _ = _placement(obj)
        flags = int(obj.get(OBJECT_FLAGS, 0)) & 0xFFFFFFFF
        if kind == "DOOR":
            listed.append(_door(obj, object_id, flags, position, rotation, moved))
            if not _has_class(classes, kind, listed[-1].class_name):
                refused.append(f"object '{obj.name}': door class '{listed[-1].class_name}' is not one of the level's")
        elif kind == "FURN":
            listed.append(Furniture(id=object_id, flags=flags, position=position, rotation=rotation,
                                    class_name=str(obj.get("oni_furniture_class", "")),
                                    particle=str(obj.get("oni_particle", "")), geometry=None))
            if not _has_class(classes, "OFGA", listed[-1].class_name):
                refused.append(f"object '{obj.name}': furniture class '{listed[-1].class_name}' is not one of the "
                               f"level's")
        else:
            try:
                payload = bytes.fromhex(str(obj[OSD]))
                osd = osd_xml(kind, payload, obj.name, f"object '{obj.name}'")
            except (ObanError, ValueError) as error:
                refused.append(f"object '{obj.name}': its data ({OSD}) cannot be written: {error}")
                continue
            faults = level_faults(kind, payload)
            named = _class_of(payload) if kind in CLASS_TYPES else None
            if named is not None and not _has_class(classes, kind, named):
                refused.append(f"object '{obj.name}': {kind} class '{named}' is not one of the level's")
                continue
            if faults:
                refused.append(f"object '{obj.name}': OniSplit's -create:level fails on its negative "
                               f"{', '.join(faults[:3])}")
                continue
            listed.append(OtherObject(kind, object_id, flags, position, rotation, osd))
    return listed, left_out, refused


def _has_class(classes, tag, name) -> bool:
    """Whether the class files hold the instance `tag` + `name` (tag: the four letters)."""
    return class_file_name(tag + name) in classes


def _class_of(payload) -> str:
    """The class a console, turret or trigger names: its data's first 63 bytes, to the NUL."""
    return payload[:63].split(b"\0", 1)[0].decode("utf-8", "replace")


def _placement(obj):
    """(position, degrees x y z, the placement's change as a 4 x 4 in Oni axes, and in
    Blender's) of an Empty: as read where it has not moved, else from its world matrix."""
    scale, axes = _scale_axes(obj)
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
