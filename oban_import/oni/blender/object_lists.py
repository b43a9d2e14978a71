"""A level's object lists in Blender (docs/level.md, "In Blender"): every object an Empty at
s.A.position, turned by its rotation, with its type, id and fields as custom properties, a
collection per list (type); a door's Empty holds its leaves."""

import bpy
import numpy as np
from mathutils import Matrix

from ...core.report import Made
from ..engine.doors import placements
from ..io.level.model import LevelContents, ObjectList
from ..io.level.properties import door_properties, furniture_properties, object_properties
from .empties import new_empty


def import_object_lists(contents: LevelContents, path, settings, collection) -> tuple[list, dict]:
    """(Made(path, contents, Empty) of every object, in list order; {door id: the Empty of
    the first door of that id}) with a collection per list in `collection`."""
    made, doors = [], {}
    for objects in contents.object_lists:
        if not len(objects.ids):
            continue
        target = bpy.data.collections.new(f"{contents.name} {objects.name}")
        collection.children.link(target)
        details = _details(objects)
        for index, matrix in enumerate(_world_matrices(objects, settings)):
            obj = new_empty(f"{objects.types[index]} {objects.ids[index]}", settings.global_scale)
            obj.matrix_world = Matrix(matrix.tolist())
            found = details.get(int(objects.ids[index]))
            obj.id_properties_ensure().update(object_properties(objects, index) | (found[1] if found else {}))
            target.objects.link(obj)
            made.append(Made(path, contents, obj))
            if found is not None and found[0] is not None:
                doors.setdefault(found[0], obj)
    return made, doors


def _details(objects: ObjectList) -> dict:
    """{object id: (door id or None, the properties of a door's or furniture's own fields)}."""
    details = {door.id: (door.door_id, door_properties(door)) for door in objects.doors}
    details.update({piece.id: (None, furniture_properties(piece)) for piece in objects.furniture})
    return details


def _world_matrices(objects: ObjectList, settings) -> np.ndarray:
    """(n, 4, 4) [sA] . T(position) . Rz . Ry . Rx . [sA]^-1 of every object of a list."""
    change = np.eye(4)
    change[:3, :3] = settings.global_scale * np.asarray(settings.axes, np.float64)
    return change @ placements(objects.positions, objects.rotations) @ np.linalg.inv(change)
