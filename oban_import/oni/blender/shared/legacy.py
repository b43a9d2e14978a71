"""A scene a .blend of the last release holds, read as today's: the custom properties that
release wrote under keys which meant two things (io/objects/properties.py: LEGACY_OBJECT_KEYS,
LEGACY_MESH_KEYS) moved to today's keys, once, before an export reads the scene (and when a
.blend is opened, for the panel)."""

import bpy

from ....core.id_properties import renamed
from ...io.objects.properties import LEGACY_MESH_KEYS, LEGACY_OBJECT_KEYS, OBJECT_NAME


def upgrade(data=None) -> int:
    """How many objects and meshes of `data` (bpy.data) had keys of the last release moved."""
    data = data or bpy.data
    moved = sum(renamed(obj, LEGACY_OBJECT_KEYS) for obj in data.objects if OBJECT_NAME in obj)
    return moved + sum(renamed(mesh, LEGACY_MESH_KEYS) for mesh in data.meshes)


@bpy.app.handlers.persistent
def upgrade_loaded(*_):
    """load_post: a .blend just opened."""
    upgrade()
