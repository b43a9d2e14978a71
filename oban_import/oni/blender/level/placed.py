"""A level's placed objects (docs/objects.md 6) as mesh objects: standing where the engine puts
them, moved by their OBAN as Empties are (oban_motion.build), all of a level or nothing."""

import os

import bpy
from mathutils import Matrix

from ....core.report import Made, Report
from ...engine import to_blender
from ...engine.rotations import split_rotation_scale
from ...io.level.properties import LEVEL_FILE
from ...io.oban.record import LOCALIZED, matrix_from_columns
from ...io.objects.model import Level, PlacedObject
from ...io.objects.properties import object_properties
from ..oban import motion as oban_motion
from ..shared.blocks import SharedBlocks
from ..shared.empties import new_empty
from ..shared.images import Encoders


def import_level(context, level: Level, path: str, settings, collection=None, shared=None,
                 progress=None, doors=None) -> Report:
    """Every object of `level` in `collection` (default: the context's), as Made(path,
    PlacedObject, object) in OBOA order, or (on any exception, re-raised) none: what was
    made (objects, meshes, materials, images, actions) is removed again. `shared`: the
    import's SharedBlocks (meshes, materials, images made once a batch). The scene's fps and
    range, and the unused OBANs (level.unused()), are left to the caller. An object of the
    file's OBOA keeps the file's path (LEVEL_FILE) and its setup's index (OBJECT_SETUP). `doors`: {door id:
    its Empty}, which holds the leaves of that door (keeping where they stand)."""
    report = progress or (lambda fraction: None)
    result = Report(warnings=[f"{path}: {w}" for w in level.warnings], last_frame=settings.frame_start)
    collection = collection or context.collection
    shared = shared or SharedBlocks(settings)
    with Encoders([t for t in _textures(level) if t.name not in shared.images]) as encoders, \
            shared.all_or_nothing():
        animated = [o for o in level.objects if o.animation is not None]
        transforms = dict(zip(map(id, animated), oban_motion.motions_of([o.animation for o in animated], settings)))
        origins = _origins(level.objects, settings)
        for index, (placed, origin) in enumerate(zip(level.objects, origins)):
            obj = _new_object(collection, placed, shared, settings)
            built = _stand(context, placed, obj, settings, transforms.get(id(placed)), origin, collection)
            obj.id_properties_ensure().update(object_properties(placed))
            if placed.setup >= 0:   # an object of the file's OBOA: a rebuild finds it by its file
                obj[LEVEL_FILE] = os.path.abspath(path)
            if placed.leaf >= 0 and doors and placed.door_id in doors:
                _hold(doors[placed.door_id], built.pivot or obj)
            result.made.append(Made(path, placed, obj, built.error, built.note))
            result.warnings += [f"{path}: '{placed.name}': {w}" for w in placed.warnings]
            result.warnings += oban_motion.warnings(path, placed.name, placed.animation.warnings
                                               if placed.animation is not None else [], built)
            if built.note:
                result.notes.append(f"{path}: '{placed.name}': {built.note}")
            result.last_frame = max(result.last_frame, built.last_frame)
            report((index + 1) / len(level.objects))
        shared.pack_images(encoders.png)   # last: the PNGs were made while the rest was built
    return result


def _textures(level: Level) -> list:
    """The textures of the level's meshes, in the order they are used (Encoders keeps the
    first of each name, as SharedBlocks does)."""
    return [part.texture for placed in level.objects for part in placed.meshes if part.texture is not None]


def _origins(objects, settings) -> list:
    """Each object's origin in Blender's terms (4x4) with how closely loc/rot/scale hold it."""
    if not objects:
        return []
    origins = matrix_from_columns([o.origin for o in objects])
    matrices = to_blender.blender_matrices(origins, settings.axes, settings.global_scale)
    errors = split_rotation_scale(matrices[:, :3, :3], per_matrix=True)[2]
    return list(zip(matrices, errors.tolist()))


def _stand(context, placed: PlacedObject, obj, settings, transforms, origin, collection):
    """Where the engine puts the object: its `origin` (matrix, error), or its animation's
    M(f), Localized ones behind their origin."""
    matrix, error = origin
    if placed.animation is None:
        obj.rotation_mode = settings.rotation_mode
        obj.matrix_world = Matrix(matrix.tolist())
        return oban_motion.Built(obj, error, settings.frame_start)
    if placed.animation.has(LOCALIZED):
        transforms = to_blender.in_front(matrix, transforms)
    return oban_motion.build(context, placed.animation, obj, settings, transforms, collection=collection)


def _hold(parent, child):
    """`child` under `parent`, standing where it stood (the parent's inverse kept)."""
    child.parent = parent
    child.matrix_parent_inverse = parent.matrix_world.inverted()


def _new_object(collection, placed, shared, settings):
    """A mesh object of the placed object's parts; for a geometry of no parts (nothing to
    draw) an Empty that shows where it stands."""
    if placed.meshes:
        obj = bpy.data.objects.new(placed.name or "object", shared.mesh(placed.meshes))
    else:
        obj = new_empty(placed.name or "object", settings.global_scale)
    collection.objects.link(obj)
    return obj
