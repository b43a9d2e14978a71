"""A level's placed objects (docs/objects.md 6) as mesh objects: standing where the engine puts
them, moved by their OBAN as Empties are (importer.build), all of a level or nothing."""

from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix

from ..engine import axes
from ..engine.rotations import split_rotation_scale
from ..oni.oban import LOCALIZED, matrix_from_columns
from ..oni.objects import Level, PlacedObject
from ..oni.properties import object_properties
from . import motion
from .datablocks import Snapshot
from .empties import new_empty
from .images import Encoders, new_image, pack
from .materials import UNTEXTURED, new_material
from .meshes import new_mesh


@dataclass
class LevelResult:
    built: list = field(default_factory=list)      # (PlacedObject, Blender object, motion.Built), in OBOA order
    warnings: list = field(default_factory=list)   # "path: 'name': message"
    last_frame: int = 0                            # scene frame of the last key (frame_start if none)

    @property
    def objects(self):
        return [obj for _, obj, _ in self.built]


def import_level(context, level: Level, path: str, settings, progress=None) -> LevelResult:
    """Every object of `level` in context.collection, or (on any exception, re-raised) none:
    what was made (objects, meshes, materials, images, actions) is removed again.
    The scene's fps and range, and the unused OBANs (level.unused()), are left to the caller."""
    report = progress or (lambda fraction: None)
    result = LevelResult(warnings=[f"{path}: {w}" for w in level.warnings], last_frame=settings.frame_start)
    with Encoders(_textures(level)) as encoders:
        made = _Made(encoders)
        try:
            animated = [o for o in level.objects if o.animation is not None]
            transforms = dict(zip(map(id, animated), motion.motions_of([o.animation for o in animated], settings)))
            origins = _origins(level.objects, settings)
            for index, (placed, origin) in enumerate(zip(level.objects, origins)):
                obj = made.object(context.collection, placed, settings)
                built = _stand(context, placed, obj, settings, transforms.get(id(placed)), origin)
                obj.id_properties_ensure().update(object_properties(placed))
                result.built.append((placed, obj, built))
                result.warnings += _warnings(path, placed, built)
                result.last_frame = max(result.last_frame, built.last_frame)
                report((index + 1) / len(level.objects))
            made.pack_images()   # last: the PNGs were made while the rest was built
        except BaseException:
            made.remove()
            raise
    return result


def _textures(level: Level) -> list:
    """The textures of the level's meshes, in the order they are used (Encoders keeps the
    first of each name, as _Made does)."""
    return [part.texture for placed in level.objects for part in placed.meshes if part.texture is not None]


def blender_matrix(matrix: np.ndarray, axes_matrix: np.ndarray, scale: float) -> np.ndarray:
    """[sA 0; 0 1] . W . [sA 0; 0 1]^-1 for (..., 4, 4) engine matrices W (docs/objects.md 6)."""
    c, inverse = np.eye(4), np.eye(4)
    c[:3, :3] = scale * np.asarray(axes_matrix, np.float64)
    inverse[:3, :3] = c[:3, :3].T / (scale * scale)     # A is a signed permutation: A^-1 = A^T
    return c @ matrix @ inverse


def _origins(objects, settings) -> list:
    """Each object's origin in Blender's terms (4x4) with how closely loc/rot/scale hold it."""
    if not objects:
        return []
    matrices = blender_matrix(matrix_from_columns([o.origin for o in objects]), settings.axes, settings.global_scale)
    errors = split_rotation_scale(matrices[:, :3, :3], per_matrix=True)[2]
    return list(zip(matrices, errors.tolist()))


def _stand(context, placed: PlacedObject, obj, settings, transforms, origin):
    """Where the engine puts the object: its `origin` (matrix, error), or its animation's
    M(f), Localized ones behind their origin."""
    matrix, error = origin
    if placed.animation is None:
        obj.rotation_mode = settings.rotation_mode
        obj.matrix_world = Matrix(matrix.tolist())
        return motion.Built(obj, error, settings.frame_start)
    if placed.animation.has(LOCALIZED):
        transforms = axes.in_front(matrix, transforms)
    return motion.build(context, placed.animation, obj, settings, transforms)


def _warnings(path, placed, built):
    messages = [f"{path}: '{placed.name}': {w}" for w in placed.warnings]
    if placed.animation is not None:
        messages += [f"{path}: '{placed.name}': {w}" for w in placed.animation.warnings]
    if built.error > axes.BASE_TOLERANCE:
        messages.append(f"{path}: '{placed.name}': shear or a scale along rotated axes that "
                        f"location/rotation/scale cannot hold; held to within {built.error:.3g} (relative)")
    return messages


class _Made:
    """The data blocks made, shared where the level shares them (an image per texture, a
    material per texture, a mesh per part set); on failure, every new one is removed."""

    def __init__(self, encoders):
        self.images, self.materials, self.meshes = {}, {}, {}
        self.encoders = encoders
        self.snapshot = Snapshot()

    def object(self, collection, placed, settings):
        if placed.meshes:
            obj = bpy.data.objects.new(placed.name or "object", self.mesh(placed.meshes, settings))
        else:   # a geometry of no parts: nothing to draw, an Empty shows where it stands
            obj = new_empty(placed.name or "object", settings.global_scale)
        collection.objects.link(obj)
        return obj

    def mesh(self, parts, settings):
        key = tuple(part.name for part in parts)
        if key not in self.meshes:
            self.meshes[key] = new_mesh(parts[0].name, parts, [self.material(p) for p in parts],
                                        settings.axes, settings.global_scale)
        return self.meshes[key]

    def material(self, part):
        texture = part.texture
        name = texture.name if texture is not None else part.texture_name or UNTEXTURED
        if name not in self.materials:
            image = None
            if texture is not None:
                image = new_image(texture)
                self.images[name] = (image, texture)
            self.materials[name] = new_material(name, texture, image)
        return self.materials[name]

    def pack_images(self):
        for image, texture in self.images.values():
            pack(image, texture, self.encoders.png(texture))

    def remove(self):
        """Everything made since this was created, also what a step that failed half made."""
        self.snapshot.remove()
