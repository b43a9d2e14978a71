"""A level written back as the files OniSplit's `-create:level` rebuilds it from (docs/level.md
11): for each level the environment objects come from, a folder named after it holding the
environment and rooms Colladas, the master XML, every object in one OniSplit XML list, the
classes folder and a TGA of each texture the level does not have yet, all as the scene has
them: faces in the file's order (a face added after the one it was made from, new faces
last), the import's scale and axes undone, a point or texture coordinate that has not moved
written as it was read. A level made in Blender (no level file: its objects carry its name,
docs/level.md 12) is written from the scene alone. Anything OniSplit cannot build refuses
that level, naming what; nothing of it is written."""

import dataclasses
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ...blender import compat
from ...core.errors import ObanError
from ...core.id_properties import signed32
from ...core.report import Made, Report
from ...core.tga import tga_bytes
from ..engine.doors import MIRROR, flipped, leaf_flips, placements
from ..engine.to_blender import blender_matrices
from ..io.container.library import open_library
from ..io.level.class_files import class_file_name, class_files
from ..io.level.collada import environment_collada, rooms_collada
from ..io.level.list_file import LIST_NAMES, list_file_bytes
from ..io.level.model import DOOR_FLAGS, EVENT_TYPES, QUAD_FLAGS, TRIANGLE, Door, DoorEvent, Furniture, Quads
from ..io.level.object_lists import LIST_PREFIX
from ..io.level.object_xml import CLASS_TYPES, OSD_TYPES, level_given, level_osd_xml
from ..io.level.patch import fingerprint
from ..io.level.properties import (DOOR_FLAG_PREFIX, ENVIRONMENT, FINGERPRINT, FLAGS_ATTRIBUTE, LEVEL_FILE,
                                   OBJECT_FLAGS, OBJECT_ID, OSD, POSITION, QUAD_ATTRIBUTE, ROOMS, ROTATION,
                                   SHADE_ATTRIBUTE, TAG_ATTRIBUTE, TYPE, UV_MAP)
from ..io.level.read import read_level
from ..io.level.rebuild import (CLASSES_FOLDER, ENVIRONMENT_FILE, MASTER_FILE, MAX_OBJECT_ID, OBJECTS_FILE,
                                ONISPLIT_MARKERS, ROOMS_FILE, OtherObject, master_xml, objects_xml)
from ..io.oban.properties import IMPORT_AXES, IMPORT_SCALE
from ..io.oban.write import oni_file_bytes
from ..io.objects.properties import OBJECT_DOOR_LEAF, TEXTURE_NAME
from .environment import corner_shades, face_ints
from .materials import TEXTURE_NODE
from .oban_export import Motion, animation_of
from .oban_targets import is_animated

GHOSTS = QUAD_FLAGS["Ghost"] | QUAD_FLAGS["StairsUp"] | QUAD_FLAGS["StairsDown"]   # in the rooms' Collada
SAME = 1e-5    # relative: a point, coordinate or matrix this close to what was read is what was read
ADDED = 1 << 62   # the order key of a face that is no quad of the level: after all of them
LEAF_TOLERANCE = 1e-4   # a leaf's edited motion as an OBAN: the OBAN export's default tolerance
OWN_LISTS = ("CMBT", "MELE")   # the types -create:level does not take: written in lists of their own (_whole_lists)
MAX_TEXTURE = 512   # OniSplit's largest texture side: a larger image is scaled down
IMAGE_SUFFIX = re.compile(r"\.(png|tga|jpe?g|bmp|tiff?|exr|dds|webp)$", re.IGNORECASE)
NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_.-]")   # what a level's or new texture's name cannot hold (files, URIs)
MAX_NAME = 60


@dataclass
class LevelSource:
    """What a rebuild wrote for one level."""
    name: str
    quads: int
    rooms: int
    objects: int


def level_objects(objects) -> list:
    """The environment mesh objects among `objects`: imported by the add-on, or made in Blender
    (carrying the level's name in ENVIRONMENT)."""
    return [obj for obj in objects if obj.type == "MESH" and ENVIRONMENT in obj]


def export_level_rebuilds(context, objects, directory, settings=None) -> Report:
    """Each level of the environment `objects` (with the rooms and object Empties of that level
    in the scene) as a folder `directory`/<level> of OniSplit's rebuild source; Made(master
    XML, LevelSource, first object) per level. `settings`: the scale and axes of objects that
    do not say (made in Blender; None: 1 and Oni's axes)."""
    report = Report(unit="levels")
    frame = (settings.global_scale, settings.axes) if settings is not None else (1.0, np.eye(3))
    levels = {}
    for obj in level_objects(objects):   # by level file, or by name for a level made in Blender
        levels.setdefault((obj.get(LEVEL_FILE), "" if LEVEL_FILE in obj else str(obj[ENVIRONMENT])), []).append(obj)
    report.files = len(levels)
    for (path, name), found in levels.items():
        try:
            source = _imported(context, path, found) if path is not None else _made_here(context, name)
            report.made.append(_rebuild(context, source, found, directory, report.warnings, frame))
        except ObanError as error:
            report.errors.append(str(error))
    report.counts = {"levels": len(report.made)}
    return report


@dataclass
class _Source:
    """What a level's rebuild starts from besides its environment objects."""
    where: str                  # how messages name the level: its file, or 'new level NAME'
    name: str
    environment: object         # the Environment read (None: made in Blender)
    sky: str
    classes: dict               # {class file name: bytes}
    same: list                  # the scene's other objects of the level (rooms, Empties)


def _imported(context, path, environment) -> _Source:
    with open_library(path) as library:   # read once for both
        level, classes = read_level(path, library), class_files(path, library=library)
    if level.environment is None or signed32(fingerprint(level.environment)) != environment[0].get(FINGERPRINT):
        raise ObanError(path, "its quads are not the ones imported: the file has changed since")
    same = [obj for obj in context.scene.objects if obj.get(LEVEL_FILE) == path]
    return _Source(path, level.name, level.environment, level.sky, classes, same)


def _made_here(context, name) -> _Source:
    """A level made in Blender: its rooms carry its name in ROOMS, its Empties in ENVIRONMENT."""
    where = f"new level '{name}'"
    if not name or len(name) > MAX_NAME or NOT_IN_A_NAME.search(name):
        raise ObanError(where, f"cannot be written: a level's name ({ENVIRONMENT}) is 1 to {MAX_NAME} letters, "
                               "digits, '_', '-' or '.'")
    same = [obj for obj in context.scene.objects if LEVEL_FILE not in obj and name in (
        obj.get(ROOMS), obj.get(ENVIRONMENT) if obj.type == "EMPTY" else None)]
    return _Source(where, name, None, "", {}, same)


def _rebuild(context, source: _Source, environment, directory, warnings, frame):
    path, same, classes = source.where, source.same, dict(source.classes)
    quads, ghosts, textures, refused = _scene_quads(environment, source.environment, classes, frame)
    floors, floor_counts = _scene_rooms([obj for obj in same if ROOMS in obj and obj.type == "MESH"],
                                        source.environment, frame)
    if not len(floor_counts):
        refused.append("it has no rooms (import it with its environment: the rooms come with it; a level made "
                       f"in Blender needs a mesh of floor polygons carrying its name in {ROOMS})")
    listed, own, left_out, wrong = _scene_objects([obj for obj in same if TYPE in obj], classes, frame)
    refused += wrong
    classes.update(_whole_lists(listed, own))
    animations, wrong = _door_animations(context, [obj for obj in same if obj.get(TYPE) == "DOOR"], frame)
    refused += wrong
    classes.update(animations)
    if refused:
        raise ObanError(path, "cannot be rebuilt: " + "; ".join(refused[:5])
                              + (f"; and {len(refused) - 5} more" if len(refused) > 5 else ""))
    warnings += [f"{path}: {count} {kind} objects left out: {why}" for (kind, why), count in left_out.items()]
    renumbered = [(o.id, k) for k, o in enumerate(listed, 1) if o.id != k]
    if renumbered:
        warnings.append(f"{path}: OniSplit numbers the objects -create:level builds 1 to {len(listed)} in id order: "
                        f"id {renumbered[0][0]} becomes {renumbered[0][1]}"
                        + (f" (and {len(renumbered) - 1} more)" if len(renumbered) > 1 else ""))
    warnings += [f"{path}: texture '{name}' is {w} x {h}: OniSplit scales it to {sw} x {sh}"
                 for name, (w, h, sw, sh) in ((n, _scaled(t[1])) for n, t in textures.items()) if (w, h) != (sw, sh)]
    name = source.name
    environment_text, node_flags = environment_collada(quads)
    object_files = [OBJECTS_FILE.format(name)] if listed else []
    files = {ENVIRONMENT_FILE.format(name): environment_text,
             ROOMS_FILE.format(name): rooms_collada(floors, floor_counts, ghosts),
             MASTER_FILE.format(name): master_xml(name, node_flags, source.sky, object_files),
             **({OBJECTS_FILE.format(name): objects_xml(listed)} if listed else {})}
    binary = {os.path.join(CLASSES_FOLDER, file): data for file, data in classes.items()}
    binary.update((texture + ".tga", tga_bytes(pixels)) for texture, (_, pixels) in textures.items())
    target = os.path.join(directory, name)
    _write(target, files, binary)
    summary = LevelSource(name, len(quads.flags), len(floor_counts), len(listed) + len(own))
    return Made(os.path.join(target, MASTER_FILE.format(name)), summary, environment[0])


def _write(target, files, binary):
    """The texts `files` and the bytes `binary` ({path in `target`: ...}) into `target`."""
    try:
        os.makedirs(os.path.join(target, CLASSES_FOLDER), exist_ok=True)
        for name, text in files.items():
            with open(os.path.join(target, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        for name, data in binary.items():
            with open(os.path.join(target, name), "wb") as f:
                f.write(data)
    except OSError as error:
        raise ObanError(error.filename or target, f"cannot be written: {error.strerror or error}") from None


# --- the environment ---------------------------------------------------------------------------

def _scene_quads(objects, environment, classes, frame):
    """(the environment's own Quads in the file's order, the ghosts' (g, 4, 3) corners, {name:
    (image, (h, w, 4) uint8 pixels, bottom row first)} of the textures to make from the scene's
    images, what refuses them: a texture neither among the `classes` files nor OniSplit's own,
    nor shown by an image). Gunk (an object tag) is left out: OniSplit makes it from the objects."""
    faces = [_faces(obj, k, environment, frame) for k, obj in enumerate(objects)]
    refused = [message for found in faces for message in found.pop("refused")]
    images = {}
    for found in faces:
        for name, image in found.pop("images"):
            images.setdefault(name, {})[image.name] = image
    if refused:
        return None, None, {}, refused
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
    textures, why = _new_textures(unknown, images)
    refused += [message for message in why.values() if message.startswith("texture")]
    for row in np.flatnonzero(keep & np.isin(merged["texture_name"], list(why))).tolist()[:5]:
        obj, face, name = objects[merged["object"][row]], merged["face"][row], merged["texture_name"][row]
        if not why[name].startswith("texture"):
            refused.append(f"object '{obj.name}' face {face}: {why[name]}")
    quads = Quads(points=merged["points"][keep], texture_coordinates=merged["uvs"][keep],
                  shades=merged["shades"][keep], flags=merged["flags"][keep], textures=rank[texture.ravel()],
                  texture_names=names[by_first_use].tolist())
    return quads, merged["points"][ghost], textures, refused


def _new_textures(names, images):
    """({name: (image, pixels)} of the textures `names` the scene's images make, {name: why
    not} of the others: said of the texture ('texture ...') or of each face showing it."""
    made, why = {}, {}
    for name in names:
        shown = images.get(name, {})
        if not name:
            why[name] = "its material names no texture and shows no image (OniSplit could not find it)"
        elif not shown:
            why[name] = f"texture '{name}' is not one of the level's TXMPs and its material shows no image to make " \
                        "it from (OniSplit could not find it)"
        elif len(shown) > 1:
            images_named = ", ".join(map(repr, sorted(shown)))
            why[name] = f"texture '{name}': images {images_named} would all make it: rename all but one"
        elif len(name) > MAX_NAME or NOT_IN_A_NAME.search(name):
            why[name] = f"texture '{name}': a new texture's name is 1 to {MAX_NAME} letters, digits, '_', '-' or " \
                        "'.' (it names its TGA file and TXMP)"
        else:
            image = next(iter(shown.values()))
            pixels = _image_pixels(image)
            if pixels is None:
                why[name] = f"texture '{name}': image '{image.name}' has no pixels (its file is missing?)"
            else:
                made[name] = (image, pixels)
    return made, why


def _image_pixels(image):
    """(h, w, 4) uint8 of an image's pixels, bottom row first (as Blender keeps them); None
    where it has none."""
    width, height = image.size[:]
    channels = image.channels
    if not width or not height or channels not in (1, 3, 4):
        return None
    values = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(values)
    values = values.reshape(height, width, channels)
    rgba = np.ones((height, width, 4), np.float32)
    rgba[:, :, :3] = values[:, :, :3] if channels > 1 else values
    if channels == 4:
        rgba[:, :, 3] = values[:, :, 3]
    return np.rint(np.clip(rgba, 0, 1) * 255).astype(np.uint8)


def _scaled(pixels) -> tuple:
    """(w, h, and the w, h OniSplit makes of it: the longer side at most MAX_TEXTURE, then each
    side the power of two at or below it)."""
    height, width = pixels.shape[:2]
    w, h = width, height
    if max(w, h) > MAX_TEXTURE:
        w, h = (MAX_TEXTURE, MAX_TEXTURE * h // w) if w > h else (MAX_TEXTURE * w // h, MAX_TEXTURE)
    return width, height, *(v if v <= 2 else 1 << (v.bit_length() - 1) for v in (w, h))


def _faces(obj, index, environment, frame) -> dict:
    """Every face of an environment mesh object as the rebuild needs it (arrays by face; and
    the images its materials show, by the texture name they give)."""
    mesh = obj.data
    count = len(mesh.polygons)
    sizes, starts = np.empty(count, np.int32), np.empty(count, np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    mesh.polygons.foreach_get("loop_start", starts)
    bad = np.flatnonzero((sizes < 3) | (sizes > 4))
    refused = [f"object '{obj.name}' face {face}: {sizes[face]} corners (a quad has at most 4: triangulate or "
               f"split it)" for face in bad[:3].tolist()]
    key = face_ints(mesh, QUAD_ATTRIBUTE, -1).astype(np.int64)
    known = (key >= 0) & (key < (len(environment.flags) if environment is not None else 0))
    key = np.where(known, key, ADDED)
    flags = face_ints(mesh, FLAGS_ATTRIBUTE, 0).view(np.uint32)
    flags = np.where(sizes == 3, flags | TRIANGLE, flags & ~np.uint32(TRIANGLE)).astype(np.uint32)
    corner = starts[:, None] + np.minimum(np.arange(4)[None, :], np.maximum(sizes, 1)[:, None] - 1)
    points, uvs = _oni_points(obj, mesh, frame)[corner], _stored_uvs(mesh)[corner]
    if environment is None:
        points, uvs = points.astype(np.float32), uvs.astype(np.float32)
    else:
        stored = np.where(known, key, 0)
        same_shape = (known & (environment.corner_counts(stored) == sizes))[:, None, None]
        points = _as_read(points, environment.points[environment.quad_points[stored]], same_shape)
        uvs = _as_read(uvs, environment.texture_coordinates[environment.quad_uvs[stored]], same_shape)
    slots = face_ints(mesh, compat.MATERIAL_INDEX, 0)
    names, images = _slot_textures(mesh)
    return {"key": key, "object": np.full(count, index), "face": np.arange(count), "refused": refused,
            "points": points, "uvs": uvs, "shades": _corner_shades(mesh)[corner], "flags": flags,
            "tag": face_ints(mesh, TAG_ATTRIBUTE, -1),
            "texture_name": np.array(names, str)[np.minimum(slots, len(names) - 1)],
            "images": [(name, image) for name, image in zip(names, images) if image is not None]}


def _slot_textures(mesh) -> tuple:
    """([the TXMP each material slot shows: the material's TEXTURE_NAME, else its image's name
    without a file extension, characters a name cannot hold as '_' ('' none)], [its image or
    None]); one slot of neither for a mesh without materials."""
    names, images = [], []
    for material in list(mesh.materials) or [None]:
        image = _material_image(material)
        name = str(material.get(TEXTURE_NAME, "")) if material is not None else ""
        if not name and image is not None:
            name = NOT_IN_A_NAME.sub("_", IMAGE_SUFFIX.sub("", image.name))
        names.append(name)
        images.append(image)
    return names, images


def _material_image(material):
    """The image a material shows: its TEXTURE_NODE's (as imported), else its first image node's."""
    tree = getattr(material, "node_tree", None)
    if tree is None:
        return None
    nodes = sorted((n for n in tree.nodes if n.bl_idname == "ShaderNodeTexImage" and n.image is not None),
                   key=lambda n: n.name != TEXTURE_NODE)
    return nodes[0].image if nodes else None


def _oni_points(obj, mesh, frame) -> np.ndarray:
    """(corners, 3) float64: each corner's point, world space, the import's scale and axes undone."""
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    world = np.asarray(obj.matrix_world, np.float64)
    points = co.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3]
    scale, axes = _scale_axes(obj, frame)
    return (points @ axes / scale)[vertex]   # A^-1 = A^T


def _scale_axes(obj, frame) -> tuple:
    """(scale, 3 x 3 axes) an object was imported with; `frame`'s where it does not say."""
    return (float(obj.get(IMPORT_SCALE, frame[0])),
            np.array(obj[IMPORT_AXES], np.float64).reshape(3, 3) if IMPORT_AXES in obj else frame[1])


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

def _scene_rooms(objects, environment, frame):
    """((k, 3) float32 corners, (r,) counts) of the rooms' faces, object after object; a room
    whose corners have not moved as read (from `environment`; None: made in Blender)."""
    parts, counts = [], []
    for obj in objects:
        mesh = obj.data
        sizes = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
        points = _oni_points(obj, mesh, frame)
        if environment is not None and np.array_equal(sizes, environment.room_floor_counts):
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


def _door_animations(context, doors, frame):
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


# --- the objects -------------------------------------------------------------------------------

def _scene_objects(empties, classes, frame):
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
            if not _has_class(classes, kind, listed[-1].class_name):
                refused.append(f"object '{obj.name}': door class '{listed[-1].class_name}' is not one of the level's")
        elif kind == "FURN":
            listed.append(Furniture(id=object_id, flags=flags, position=position, rotation=rotation,
                                    class_name=str(obj.get("oni_furniture_class", "")),
                                    particle=str(obj.get("oni_particle", "")), geometry=None))
            if not _has_class(classes, "OFGA", listed[-1].class_name):
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
            if named is not None and not _has_class(classes, kind, named):
                refused.append(f"object '{obj.name}': {kind} class '{named}' is not one of the level's")
                continue
            listed.append(OtherObject(kind, object_id, flags, position, rotation, osd, payload, whole))
    return listed, own, left_out, refused


def _whole_lists(listed, own) -> dict:
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


def _has_class(classes, tag, name) -> bool:
    """Whether the class files hold the instance `tag` + `name` (tag: the four letters)."""
    return class_file_name(tag + name) in classes


def _class_of(payload) -> str:
    """The class a console, turret or trigger names: its data's first 63 bytes, to the NUL."""
    return payload[:63].split(b"\0", 1)[0].decode("utf-8", "replace")


def _placement(obj, frame):
    """(position, degrees x y z, the placement's change as a 4 x 4 in Oni axes, and in
    Blender's) of an Empty: as read where it has not moved, else from its world matrix."""
    scale, axes = _scale_axes(obj, frame)
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
