"""A level's object lists in Blender (docs/level.md, "In Blender"): every object an Empty at
s.A.position, turned by its rotation, with its type, id and fields as custom properties, a
collection per list (type); a door's Empty holds its leaves."""

import os

import bpy
from mathutils import Matrix

from ....core.report import Made
from ...engine.doors import placements
from ...engine.to_blender import blender_matrices
from ...io.import_frame import import_properties
from ...io.level.model import LevelContents, ObjectList
from ...io.level.properties import LEVEL_FILE, door_properties, furniture_properties, object_properties
from ..shared.empties import new_empty


def import_object_lists(contents: LevelContents, path, settings, collection) -> tuple[list, dict]:
    """(Made(path, contents, Empty) of every object, in list order; {door id: the Empty of
    the first door of that id}) with a collection per list in `collection`."""
    made, doors = [], {}
    level = {LEVEL_FILE: os.path.abspath(path)} | import_properties(settings.global_scale, settings.axes,
                                                                     settings.frame_start)
    for objects in contents.object_lists:
        if not len(objects.ids):
            continue
        target = bpy.data.collections.new(f"{contents.name} {objects.name}")
        collection.children.link(target)
        details = _details(objects)
        matrices = blender_matrices(placements(objects.positions, objects.rotations), settings.axes,
                                    settings.global_scale)
        for index, matrix in enumerate(matrices):
            obj = new_empty(f"{objects.types[index]} {objects.ids[index]}", settings.global_scale)
            obj.matrix_world = Matrix(matrix.tolist())
            found = details.get(int(objects.ids[index]))
            obj.id_properties_ensure().update(object_properties(objects, index) | (found[1] if found else {}) | level)
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

