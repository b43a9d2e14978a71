"""A level written back as the files OniSplit's `-create:level` rebuilds it from (docs/level.md
11): for each level the environment objects come from, a folder named after it holding the
environment and rooms Colladas, the master XML, every object in one OniSplit XML list, the
classes folder and a TGA of each texture the level does not have yet, all as the scene has
them: faces in the file's order (a face added after the one it was made from, new faces
last), the import's scale and axes undone, a point or texture coordinate that has not moved
written as it was read. A level made in Blender (no level file: its objects carry its name,
docs/level.md 12) is written from the scene alone. Anything OniSplit cannot build refuses
that level, naming what; nothing of it is written."""

import os
from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ....core.output_files import FileJob, OutputFile, write_job
from ....core.report import Made, Report, listed
from ....core.tga import tga_bytes
from ...engine.fit_keys import TOLERANCE
from ...io.container.container import raw_path
from ...io.container.library import open_library
from ...io.level.model import QUAD_FLAGS, TRIANGLE, Quads
from ...io.level.properties import ENVIRONMENT, LEVEL_FILE, ROOMS, TYPE
from ...io.level.read import read_level
from ...io.level_rebuild.class_files import class_files
from ...io.level_rebuild.collada import environment_collada, rooms_collada
from ...io.level_rebuild.master_xml import (CLASSES_FOLDER, ENVIRONMENT_FILE, MASTER_FILE, OBJECTS_FILE,
                                            ONISPLIT_MARKERS, ROOMS_FILE, master_xml, objects_xml)
from ...io.level_rebuild.object_xml import CLASS_TYPES
from ...io.level_rebuild.place import PLACED_FOLDER
from ...io.objects.mesh_write import WORLD_LIMIT
from ..shared.as_read import kept_as_read
from ..shared.textures import NOT_IN_A_NAME
from .gunk import edited_gunk
from .leaves import remodelled_classes
from .objects import door_animations, has_class, scene_objects, whole_lists
from .placed import export_placed_level, placed_folder, placed_in_level, placed_left_out, placed_objects, placed_setups
from .scene import (check_imported, corner_points, dropped_edits, edited_images, images_otherwise, leaf_edits,
                    levels_of, matched_corners, refusal, scene_faces, settled, shown_images)
from .textures import MAX_NAME, new_textures, onisplit_size, painted_textures

GHOSTS = QUAD_FLAGS["Ghost"] | QUAD_FLAGS["StairsUp"] | QUAD_FLAGS["StairsDown"]   # in the rooms' Collada
CLASSED = ("DOOR", "FURN", *CLASS_TYPES)   # the object types that name a class of the level
ADDED = 1 << 62   # the order key of a face that is no quad of the level: after all of them
LEAVES_MADE = ("OniSplit's -create:level makes a door's leaves of its class (re-model them through one leaf; "
               "delete the door's Empty to remove the door)")


@dataclass
class LevelSource:
    """What a rebuild wrote for one level."""
    name: str
    quads: int
    rooms: int
    objects: int


def level_objects(objects) -> list:
    """The environment mesh objects among `objects`: imported by the add-on, or made in Blender
    (carrying the level's name in ENVIRONMENT); and the placed objects of a level's OBOA."""
    placed = {id(obj) for found in placed_objects(objects, []).values() for obj in found}
    return [obj for obj in objects if obj.type == "MESH" and ENVIRONMENT in obj or id(obj) in placed]


def export_level_rebuilds(context, objects, directory, settings=None) -> Report:
    """Each level of the environment `objects` (with the rooms and object Empties of that level
    in the scene) as a folder `directory`/<level> of OniSplit's rebuild source; Made(master
    XML, LevelSource, first object) per level. `settings`: the scale and axes of objects that
    do not say (made in Blender; None: 1 and Oni's axes); `despite_edits`: write a level
    despite the edits it cannot carry, each then a warning (else they refuse it)."""
    report = Report(unit="levels")
    frame = (settings.global_scale, settings.axes) if settings is not None else (1.0, np.eye(3))
    despite = bool(getattr(settings, "despite_edits", False))
    tolerance = getattr(settings, "tolerance", TOLERANCE)
    levels = levels_of([obj for obj in level_objects(objects) if ENVIRONMENT in obj], report.errors, made_here=True)
    alone = {path: found for path, found in placed_objects(objects, report.errors).items() if (path, "") not in levels}
    report.files = len(levels) + len(alone) + len(report.errors)
    sources = []
    for (path, name), found in levels.items():
        try:
            sources.append((_imported(context, path, found) if path is not None else
                            _made_here(context, name, report.warnings), found))
        except ObanError as error:
            report.errors.append(str(error))
    folders = [(source.name, source.where, lambda source=source, found=found: _rebuild(
        context, source, found, directory, report.warnings, frame, tolerance, despite)) for source, found in sources]
    folders += [(placed_folder(path), path, lambda path=path, found=found: export_placed_level(
        context, path, found, directory, report.warnings, despite, frame, tolerance, LevelSource))
        for path, found in alone.items()]
    report.each(_one_folder_each(folders, directory, report.errors), lambda write: write())
    report.notes += [f"{m.path}: {m.note}" for m in report.made if m.note]
    report.counts = {"levels": len(report.made)}
    return report


def _one_folder_each(folders, directory, errors) -> list:
    """The writers of the (folder name, how messages name the level, writer) whose folder no
    other level would write (whatever the case: a level with an environment by its name, one of
    placed objects alone by its file's); the others' errors into `errors`."""
    by_folder = {}
    for folder in folders:
        by_folder.setdefault(folder[0].casefold(), []).append(folder)
    for same in (same for same in by_folder.values() if len(same) > 1):
        for name, where, _ in same:
            others = " and ".join(other for _, other, _ in same if other != where)
            errors.append(f"{where}: level '{name}', as {others} is: both would write "
                          f"{os.path.join(directory, name)}; nothing written for them: export them apart")
    return [same[0][2] for same in by_folder.values() if len(same) == 1]


@dataclass
class _Source:
    """What a level's rebuild starts from besides its environment objects."""
    where: str                  # how messages name the level: its file, or 'new level NAME'
    name: str
    environment: object         # the Environment read (None: made in Blender)
    sky: str
    classes: dict               # {class file name: bytes}
    same: list                  # the scene's other objects of the level (rooms, Empties)
    sources: list               # the files it was read from, which the rebuild never writes over
    door_classes: dict          # {name: DoorClass} of the level read ({} for a level made in Blender)
    furniture_classes: dict     # {name: FurnitureGeometry}, likewise
    placed: dict                # {setup index: name} of the level read's placed objects (rebuild_placed.placed_setups)
    doors: list                 # [Door] of the level read, their leaves' setups ([] for a level made in Blender)


def _imported(context, path, environment) -> _Source:
    with open_library(path) as library:   # read once for both
        level, classes = read_level(path, library), class_files(path, library=library)
        placed = placed_setups(library.main, level.doors)
    check_imported(path, level.environment, environment)
    same = [obj for obj in context.scene.objects if obj.get(LEVEL_FILE) == path]
    sources = [path, *([raw_path(path)] if os.path.splitext(path)[1].lower() == ".dat" else [])]
    return _Source(path, level.name, level.environment, level.sky, classes, same, sources, level.door_classes,
                   level.furniture_classes, placed, level.doors)


def _made_here(context, name, warnings) -> _Source:
    """A level made in Blender: its rooms carry its name in ROOMS, its Empties in ENVIRONMENT.
    Where an Empty is of a type with a class (a door, furniture, ...), the classes of the
    levels imported into the scene come with it (the first level's where two have one)."""
    where = f"new level '{name}'"
    if not name or len(name) > MAX_NAME or NOT_IN_A_NAME.search(name):
        raise ObanError(where, f"cannot be written: a level's name ({ENVIRONMENT}) is 1 to {MAX_NAME} letters, "
                               "digits, '_', '-' or '.'")
    same = [obj for obj in context.scene.objects if LEVEL_FILE not in obj and name in (
        obj.get(ROOMS), obj.get(ENVIRONMENT) if obj.type == "EMPTY" else None)]
    classes = {}
    if any(obj.get(TYPE) in CLASSED for obj in same):
        for path in dict.fromkeys(obj[LEVEL_FILE] for obj in context.scene.objects if LEVEL_FILE in obj):
            try:
                for file, data in class_files(path).items():
                    classes.setdefault(file, data)
            except ObanError as error:
                warnings.append(f"{where}: the classes of a level imported into the scene are left out: {error}")
    return _Source(where, name, None, "", classes, same, [], {}, {}, {}, [])


def _rebuild(context, source: _Source, environment, directory, warnings, frame, tolerance, despite):
    path, same, classes = source.where, source.same, dict(source.classes)
    faces = [scene_faces(obj, source.environment, frame) for obj in environment]
    quads, ghosts, textures, refused = _scene_quads(faces, source.environment, classes)
    floors, floor_counts = _scene_rooms([obj for obj in same if ROOMS in obj and obj.type == "MESH"],
                                        source.environment, frame)
    if not len(floor_counts):
        refused.append("it has no rooms (import it with its environment: the rooms come with it; a level made "
                       f"in Blender needs a mesh of floor polygons carrying its name in {ROOMS})")
    in_lists, own, left_out, wrong = scene_objects([obj for obj in same if TYPE in obj], classes, frame)
    refused += wrong
    classes.update(whole_lists(in_lists, own))
    doors = [obj for obj in same if obj.get(TYPE) == "DOOR"]
    animations, wrong = door_animations(context, doors, frame, tolerance)
    refused += wrong
    classes.update(animations)
    remodelled, remodel_notes, wrong, remodelled_leaves, retextured = remodelled_classes(
        doors, source.door_classes, source.furniture_classes, classes, frame)
    refused += wrong
    classes.update(remodelled)
    shown = shown_images(faces, doors)
    refused += images_otherwise([one for one in shown if has_class(classes, "TXMP", one[1])])   # new ones: new_textures
    edited = edited_images(shown)
    painted, notes, wrong, carried = painted_textures(edited, classes)
    refused += wrong
    classes.update(painted)
    placed = [obj for found in placed_objects(same, []).values() for obj in found]
    placed_files, placed_out, placed_notes, wrong, placed_dropped = (
        placed_in_level(context, path, placed, classes, frame, tolerance) if placed and not refused
        else ({}, {}, [], [], []))
    refused += wrong
    classes.update(placed_files)
    if refused:
        raise refusal(path, "rebuilt", refused)
    settled(path, dropped_edits(edited, doors, "the rebuild writes the level's door classes as read", carried,
                                remodelled_leaves) + retextured + edited_gunk(faces, source.environment)
            + leaf_edits(source.doors, same, LEAVES_MADE) + placed_dropped, despite, warnings, "rebuilt")
    if placed_out:
        placed_notes.append(f"its {len(placed)} placed objects are written to {source.name}/{PLACED_FOLDER}/, apart: "
                            f"run 'python -m oban_import place OUT {os.path.join(directory, source.name)}' after "
                            "-create:level and before -import:nosep, else the level holds none (docs/level.md 13)")
    warnings += [f"{path}: {note}" for note in notes + remodel_notes + placed_notes]
    warnings += placed_left_out(path, source.placed, placed)
    warnings += [f"{path}: {count} {kind} objects left out: {why}" for (kind, why), count in left_out.items()]
    renumbered = [(o.id, k) for k, o in enumerate(in_lists, 1) if o.id != k]
    if renumbered:
        warnings.append(f"{path}: OniSplit numbers the objects -create:level builds 1 to {len(in_lists)} in id order: "
                        f"id {listed([f'{old} becomes {new}' for old, new in renumbered], 1, quoted=False)}")
    sizes = {texture: onisplit_size(pixels) for texture, pixels in textures.items()}
    warnings += [f"{path}: texture '{texture}' is {w} x {h}: OniSplit scales it to {sw} x {sh}"
                 for texture, (w, h, sw, sh) in sizes.items() if (w, h) != (sw, sh)]
    name = source.name
    environment_text, node_flags = environment_collada(quads)
    object_files = [OBJECTS_FILE.format(name)] if in_lists else []
    files = {ENVIRONMENT_FILE.format(name): environment_text,
             ROOMS_FILE.format(name): rooms_collada(floors, floor_counts, ghosts),
             MASTER_FILE.format(name): master_xml(name, node_flags, source.sky, object_files),
             **({OBJECTS_FILE.format(name): objects_xml(in_lists)} if in_lists else {})}
    files[CLASSES_FOLDER] = None
    files.update((os.path.join(CLASSES_FOLDER, file), data) for file, data in classes.items())
    files.update((texture + ".tga", tga_bytes(pixels)) for texture, pixels in textures.items())
    if placed_out:
        files[PLACED_FOLDER] = None
        files.update((os.path.join(PLACED_FOLDER, file), data) for file, data in placed_out.items())
    write_job(FileJob(environment[0], path, [OutputFile(file, data) for file, data in files.items()], folder=name,
                      sources=source.sources), directory)
    summary = LevelSource(name, len(quads.flags), len(floor_counts), len(in_lists) + len(own))
    return Made(os.path.join(directory, name, MASTER_FILE.format(name)), summary, environment[0])


# --- the environment ---------------------------------------------------------------------------

def _scene_quads(faces, environment, classes):
    """(the environment's own Quads in the file's order, the ghosts' (g, 4, 3) corners, {name:
    (h, w, 4) uint8 pixels, bottom row first} of the textures to make from the scene's images,
    what refuses them: a texture neither among the `classes` files nor OniSplit's own, nor
    shown by an image). Gunk (an object tag) is left out: OniSplit makes it from the objects;
    a new face (no quad of the level) is the environment's own and comes last."""
    refused = [message for found in faces for message in found.refused]
    images = {}
    for found in faces:
        for name, image in zip(found.slot_names, found.slot_images):
            if image is not None:
                images.setdefault(name, {})[image.name] = image
    if refused:
        return None, None, {}, refused
    merged = {key: np.concatenate([_face_rows(found, k, environment)[key] for k, found in enumerate(faces)])
              for key in ("key", "object", "face", "points", "uvs", "shades", "flags", "tag", "texture_name")}
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
               if name not in ONISPLIT_MARKERS and not has_class(classes, "TXMP", name)]
    textures, of_textures, of_faces = new_textures(unknown, images)
    refused += of_textures
    for row in np.flatnonzero(keep & np.isin(merged["texture_name"], list(of_faces))).tolist()[:5]:
        found, face, name = faces[merged["object"][row]], merged["face"][row], merged["texture_name"][row]
        refused.append(f"{found.label} face {face}: {of_faces[name]}")
    quads = Quads(points=merged["points"][keep], texture_coordinates=merged["uvs"][keep],
                  shades=merged["shades"][keep], flags=merged["flags"][keep], textures=rank[texture.ravel()],
                  texture_names=names[by_first_use].tolist())
    return quads, merged["points"][ghost], textures, refused


def _face_rows(found, index, environment) -> dict:
    """An environment object's faces as the rebuild orders and writes them: each after the quad
    it was made from (a new face after all of them), its Triangle flag as its corners say, a
    corner standing on one of its quad's as read (scene.matched_corners: a quad triangulated
    too) that corner's point, and its texture coordinate where it has not moved (float32)."""
    count = len(found.quads)
    known = found.quads >= 0
    flags = np.where(found.sizes == 3, found.flags | TRIANGLE, found.flags & ~np.uint32(TRIANGLE)).astype(np.uint32)
    points, uvs = found.points, found.uvs
    if environment is None:
        points, uvs = points.astype(np.float32), uvs.astype(np.float32)
    else:
        stored = np.where(known, found.quads, 0)
        read_points = environment.points[environment.quad_points[stored]]
        matched = np.where(known[:, None], matched_corners(points, read_points, environment.corner_counts(stored)), -1)
        on, kept = (np.arange(count)[:, None], np.maximum(matched, 0)), (matched >= 0)[:, :, None]
        points = kept_as_read(points, read_points[on], kept)
        uvs = kept_as_read(uvs, environment.texture_coordinates[environment.quad_uvs[stored]][on], kept)
    return {"key": np.where(known, found.quads, ADDED), "object": np.full(count, index), "face": np.arange(count),
            "points": points, "uvs": uvs, "shades": found.shades, "flags": flags, "tag": found.tags,
            "texture_name": np.array(found.slot_names, str)[found.slots]}


# --- the rooms -----------------------------------------------------------------------------------

def _scene_rooms(objects, environment, frame):
    """((k, 3) float32 corners, (r,) counts) of the rooms' faces, object after object; a room
    whose corners have not moved as read (from `environment`; None: made in Blender)."""
    parts, counts = [], []
    for obj in objects:
        mesh = obj.data
        sizes = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("loop_total", sizes)
        points = corner_points(obj, frame)
        if not np.isfinite(points).all():
            raise ObanError(f"object '{obj.name}'", "a room's corner is not a finite number")
        if (np.abs(points) > WORLD_LIMIT).any():
            raise ObanError(f"object '{obj.name}'", f"a room's corner lies beyond {WORLD_LIMIT:g} units from the "
                                                    "origin on an axis, where the game's world ends (docs/objects.md 9)")
        if environment is not None and np.array_equal(sizes, environment.room_floor_counts):
            points = kept_as_read(points, environment.room_floors)
        parts.append(points.astype(np.float32))
        counts.append(sizes)
    if not parts:
        return np.zeros((0, 3), np.float32), np.zeros(0, np.int32)
    return np.concatenate(parts), np.concatenate(counts)


