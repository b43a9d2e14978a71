"""A level as the scene holds it (docs/level.md, "In Blender"), read one way for both level
exports (patch.py in place, rebuild.py through OniSplit): each environment
object's faces with their corners, shades, flags, object tags, quads, texture coordinates
and material slots, its points in Oni's space (the object's world matrix applied, the
import's scale and axes undone); every property and attribute checked, what is wrong
named; the check that the level file still holds what was imported, and the refusal's
text."""

from dataclasses import dataclass

import numpy as np

from ....blender import compat
from ....core.errors import ObanError
from ....core.id_properties import text, whole
from ....core.report import listed
from ...blender.shared.fingerprints import image_edited, image_pixels, mesh_edited
from ...blender.shared.mesh_data import corner_uvs, face_ints
from ...engine.to_oni import oni_points
from ...io.import_frame import import_frame
from ...io.level.fingerprint import fingerprint
from ...io.level.model import Environment, packed_shades
from ...io.level.properties import (ENVIRONMENT, FINGERPRINT, FLAGS_ATTRIBUTE, INT32, LEVEL_FILE, OBJECT_ID,
                                    QUAD_ATTRIBUTE, SHADE_ATTRIBUTE, TAG_ATTRIBUTE, TYPE)
from ...io.objects.mesh_write import WORLD_LIMIT
from ...io.objects.properties import OBJECT_DOOR_LEAF, OBJECT_SETUP, PIXELS_FINGERPRINT, TEXTURE_NAME
from ..shared.as_read import close
from ..shared.edits import unheld_edits
from ..shared.textures import slot_textures

WHITE = 0xFFFFFFFF
NAMED = 5            # refusals a message names before it counts the rest


@dataclass
class SceneFaces:
    """An environment mesh object's faces as the scene holds them, by face; a face's corners
    as four (a triangle's third repeated), as the file stores a Triangle quad."""
    obj: object
    label: str                     # how messages name the object
    sizes: np.ndarray              # (f,) int32 corners: 3 or 4 (others refused)
    quads: np.ndarray              # (f,) int64 the quad each face was imported from; -1: none (a new face)
    flags: np.ndarray              # (f,) uint32 (a face attribute deleted: its quad's as read, a new face 0)
    tags: np.ndarray               # (f,) int32 object tags; -1: the environment's own (also a new face's 0)
    shades: np.ndarray             # (f, 4) uint32 0xAARRGGBB (`SHADE_ATTRIBUTE` by name, clamped to 0..1)
    points: np.ndarray             # (f, 4, 3) float64 Oni axes and units, world space
    uvs: np.ndarray                # (f, 4, 2) float64 as stored (v = 1 - Blender's)
    slots: np.ndarray              # (f,) int32 each face's material slot, within slot_names
    slot_names: list               # [str] the TXMP each slot shows (export/shared/textures.slot_textures)
    slot_images: list              # [Image | None] the image each slot shows
    refused: list                  # [str] what no export can write: corners not 3 or 4, points not finite


def levels_of(objects, errors, made_here=False) -> dict:
    """{(level file, ''): its environment objects}, and with `made_here` {(None, level name):
    ...} of the levels made in Blender (ENVIRONMENT without LEVEL_FILE). An object whose
    property is not text is refused into `errors`, and so is every level of its name (or, of
    no name it can tell, every level): what it holds is not dropped from a level written."""
    levels, spoiled = {}, set()
    for obj in objects:
        label = f"object '{obj.name}'"
        try:
            key = (text(obj, LEVEL_FILE, label), "") if LEVEL_FILE in obj else \
                (None, text(obj, ENVIRONMENT, label)) if made_here else None
        except ObanError as error:
            errors.append(str(error))
            spoiled.add(obj.get(ENVIRONMENT) if isinstance(obj.get(ENVIRONMENT), str) else None)
            continue
        if key is not None:
            levels.setdefault(key, []).append(obj)
    for key, found in list(levels.items()):
        if None in spoiled or found[0].get(ENVIRONMENT) in spoiled:
            errors.append(f"{key[0] or found[0].get(ENVIRONMENT)}: nothing written: an object of its environment "
                          f"is refused (above)")
            del levels[key]
    return levels


def scene_faces(obj, environment: Environment | None, frame) -> SceneFaces:
    """Every face of `obj` as the scene holds it; `environment`: the one it was imported from
    (None: made in Blender); `frame`: the (scale, axes) where the object does not say.
    ObanError naming the property that is not what it should be."""
    label = f"object '{obj.name}'"
    scale, axes = import_frame(obj, label, *frame)
    mesh = obj.data
    count = len(mesh.polygons)
    sizes, starts = np.empty(count, np.int32), np.empty(count, np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    mesh.polygons.foreach_get("loop_start", starts)
    corner = starts[:, None] + np.minimum(np.arange(4)[None, :], np.maximum(sizes, 1)[:, None] - 1)
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    stored = len(environment.flags) if environment is not None else 0
    quads = face_ints(mesh, QUAD_ATTRIBUTE, None)
    quads = np.where((quads >= 0) & (quads < stored), quads, -1).astype(np.int64) if quads is not None \
        else np.full(count, -1, np.int64)
    known = quads >= 0
    as_read = np.maximum(quads, 0)

    def kept(name, read, new):   # an attribute, or where it is gone each face's quad's as read
        values = face_ints(mesh, name, None)
        if values is not None:
            return values
        return np.where(known, read[as_read], new) if environment is not None else np.full(count, new, np.int32)

    flags = kept(FLAGS_ATTRIBUTE, environment.flags.view(np.int32) if environment else None, 0).view(np.uint32)
    tags = kept(TAG_ATTRIBUTE, environment.object_tags if environment else None, -1)
    tags = np.where((tags.astype(np.int64) & 0xFFFFFFFF) >> 24 == 0, -1, tags).astype(np.int32)   # no object's
    shades = _shades(mesh, vertex)
    if shades is not None:
        shades = shades[corner]
    else:   # gone: each face's quad's as read, a new face white
        read = environment.shades[as_read] if environment is not None else WHITE
        shades = np.where(known[:, None], read, np.full((count, 4), WHITE, np.uint32)).astype(np.uint32)
    points = _oni_points(obj, mesh, vertex, scale, axes)[corner]
    uvs = corner_uvs(mesh).astype(np.float64)
    uvs[:, 1] = 1.0 - uvs[:, 1]                                # v as stored
    uvs = uvs[corner]
    names, images = (list(column) for column in zip(*slot_textures(mesh)))
    slots = np.clip(face_ints(mesh, compat.MATERIAL_INDEX, np.zeros(count, np.int32)), 0, len(names) - 1)
    refused = [f"{label} face {face}: {sizes[face]} corners (a quad has at most 4: triangulate or split it)"
               for face in np.flatnonzero((sizes < 3) | (sizes > 4))[:3].tolist()]
    bad = ~(np.isfinite(points).all(axis=(1, 2)) & np.isfinite(uvs).all(axis=(1, 2)))
    refused += [f"{label} face {face}: a corner's point or texture coordinate is not a finite number"
                for face in np.flatnonzero(bad)[:3].tolist()]
    far = ~bad & (np.abs(points) > WORLD_LIMIT).any(axis=(1, 2))
    refused += [f"{label} face {face}: a corner lies beyond {WORLD_LIMIT:g} units from the origin on an axis, where "
                "the game's world ends (docs/objects.md 9)" for face in np.flatnonzero(far)[:3].tolist()]
    return SceneFaces(obj, label, sizes, quads, flags, tags, shades, points, uvs, slots.astype(np.int32), names,
                      images, refused)


def _shades(mesh, vertex):
    """(corners,) uint32 0xAARRGGBB of the colour attribute SHADE_ATTRIBUTE (bytes or floats,
    clamped to 0..1; on points or corners), None where the mesh has none."""
    attribute = mesh.color_attributes.get(SHADE_ATTRIBUTE)
    if attribute is None:
        return None
    colours = np.empty(4 * len(attribute.data), np.float32)
    attribute.data.foreach_get("color_srgb", colours)
    colours = colours.reshape(-1, 4)
    if attribute.domain == "POINT":
        colours = colours[vertex]
    return packed_shades(np.rint(np.clip(np.nan_to_num(colours), 0, 1) * 255))


def corner_points(obj, frame) -> np.ndarray:
    """(corners, 3) float64: each corner's point of a mesh object, as scene_faces reads them."""
    mesh = obj.data
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    return _oni_points(obj, mesh, vertex, *import_frame(obj, f"object '{obj.name}'", *frame))


def _oni_points(obj, mesh, vertex, scale, axes) -> np.ndarray:
    """(corners, 3) float64: each corner's point, world space, the import's scale and axes undone."""
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    world = np.asarray(obj.matrix_world, np.float64)
    points = co.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3]
    return oni_points(points, axes, scale)[vertex]


def matched_corners(points, read_points, read_counts) -> np.ndarray:
    """(f, 4) int64: for each of four corners of faces (`points` (f, 4, 3), a triangle's third
    repeated), the corner of the quad each face was made from (`read_points` (f, 4, 3) as read,
    `read_counts` (f,) its corners) standing where it stands (within AS_READ, its own place
    first), -1 for none: a quad triangulated, or its corners turned, keeps every corner."""
    near = close(points[:, :, None, :], read_points[:, None, :, :]).all(axis=3)
    near &= (np.arange(4) < read_counts[:, None])[:, None, :]
    own = near[:, np.arange(4), np.arange(4)]
    return np.where(own, np.arange(4), np.where(near.any(axis=2), near.argmax(axis=2), -1))


def shown_images(faces, doors, placed=()) -> list:
    """(who shows it: '' for the environment, "object 'LEAF': " for a door leaf or a mesh of
    `placed`; the texture's name; the image) of each material slot of the environment's faces,
    the doors' leaves and the `placed` objects."""
    shown = [("", name, image) for found in faces for name, image in zip(found.slot_names, found.slot_images)]
    for obj in leaves_of(doors) + [obj for obj in placed if obj.type == "MESH"]:
        shown += [(f"object '{obj.name}': ", name, image) for name, image in slot_textures(obj.data)]
    return shown


def images_otherwise(shown) -> list:
    """Why a level cannot be written where two images show one texture (by name, whatever the
    case) with other pixels (`shown`: shown_images'): a copy of an image painted, an image given
    another's texture name. Each such texture, naming the images."""
    by_name = {}
    for _, name, image in shown:
        if image is not None and name:
            by_name.setdefault(name.casefold(), (name, {}))[1].setdefault(image.name, image)
    said = []
    for name, images in (found for found in by_name.values() if len(found[1]) > 1):
        pixels = [found for found in map(image_pixels, images.values()) if found is not None]
        if len({(found.shape, found.tobytes()) for found in pixels}) > 1:
            said.append(f"texture '{name}': images {listed(sorted(images))} show it otherwise: make them one image, or "
                        f"give each its own name (the image's or material's '{TEXTURE_NAME}')")
    return said


def edited_images(shown) -> dict:
    """{texture name: {image name: (who shows it, image)}} of the images an import made (their
    fingerprint) among `shown` (shown_images') whose pixels were edited, in the order shown;
    each image's pixels read once."""
    edited, checked = {}, {}
    for who, name, image in shown:
        if image is None or PIXELS_FINGERPRINT not in image:
            continue
        if image.name not in checked:
            checked[image.name] = image_edited(image)
        if checked[image.name]:
            edited.setdefault(name, {}).setdefault(image.name, (who, image))
    return edited


def dropped_edits(edited, doors, what, carried=(), remodelled=()) -> list:
    """The edits to a level an export cannot carry (each saying `what` it writes instead): each
    of the `edited` images (edited_images') but those `carried` (by name); a door leaf's mesh
    edited, but for the leaves `remodelled` (by name: the rebuild wrote their class's geometry
    from them); what a leaf shows that no M3GM holds (modifiers, shape keys, colours)
    (docs/level.md 11, "Edits")."""
    dropped, seen = [], set(carried)
    for name, images in edited.items():
        for image_name, (who, _) in images.items():
            if image_name not in seen:
                seen.add(image_name)
                dropped.append(f"{who}texture '{name}' (image '{image_name}'): its pixels were edited (painted, "
                               f"replaced or resized); {what}")
    for leaf in leaves_of(doors):
        if leaf.name not in remodelled and mesh_edited(leaf.data):
            dropped.append(f"object '{leaf.name}': its mesh was edited (a leaf of door '{leaf.parent.name}'); {what}")
        dropped += [f"object '{leaf.name}': {edit}" for edit in unheld_edits(leaf)]
    return dropped


def leaf_edits(doors, objects, what) -> list:
    """The door leaves of a level deleted or copied in the scene, each saying `what` the export
    writes instead: a leaf setup of a door of `doors` (the level read's) whose Empty is among
    `objects` (the scene's objects of that level) that no object holds (OBJECT_SETUP), or that
    several do (Shift+D keeps a leaf's properties). None where no leaf of the level is in the
    scene (imported without its placed objects)."""
    leaves = [obj for obj in objects if OBJECT_DOOR_LEAF in obj]
    if not leaves:
        return []
    empties = {obj.get(OBJECT_ID): obj for obj in objects if obj.get(TYPE) == "DOOR"}
    holders = {}
    for leaf in leaves:
        holders.setdefault(leaf.get(OBJECT_SETUP), []).append(leaf)
    said = []
    for door in (door for door in doors if door.id in empties):
        label = f"object '{empties[door.id].name}'"
        for k, setup in ((k, setup) for k, setup in enumerate(door.setups) if setup is not None):
            held = sorted(leaf.name for leaf in holders.get(setup, []))
            if not held:
                said.append(f"{label}: its leaf {k} (setup {setup}) was deleted; {what}")
            elif len(held) > 1:
                said.append(f"objects {listed(held)} are each leaf {k} (setup {setup}) of door {label} (a leaf "
                            f"copied keeps its properties): a copy is not written; {what}")
    return said


def leaves_of(doors) -> list:
    """The door leaves (mesh objects) the door Empties `doors` hold."""
    return [leaf for door in doors for leaf in door.children if OBJECT_DOOR_LEAF in leaf and leaf.type == "MESH"]


def settled(path, dropped, despite, warnings, doing, hint="") -> None:
    """Edits an export cannot carry: the level refused, naming each (ObanError), unless the
    user asked to write it despite them (`despite`): then each is a warning."""
    if dropped and not despite:
        raise refusal(path, doing, dropped, hint or "or export with Despite Edits (--despite-edits) to "
                                                   "write it without them")
    warnings += [f"{path}: left out: {edit}" for edit in dropped]


def check_imported(path, environment: Environment | None, objects) -> None:
    """ObanError unless the level file still holds the quads the objects were imported from."""
    label = f"object '{objects[0].name}'"
    if environment is None or fingerprint(environment) != whole(objects[0], FINGERPRINT, label, INT32, 0):
        raise ObanError(path, "its quads are not the ones imported: the file has changed since")


def refusal(path, doing, refused, hint="") -> ObanError:
    """The one text of a refused level: what it cannot be (`doing`), the first reasons, how
    many more, what to do instead."""
    more = f"; and {len(refused) - NAMED} more" if len(refused) > NAMED else ""
    return ObanError(path, f"cannot be {doing}: " + "; ".join(refused[:NAMED]) + more + (f" ({hint})" if hint else ""))
