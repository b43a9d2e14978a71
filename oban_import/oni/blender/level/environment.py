"""A level's environment in Blender (docs/level.md, "In Blender"): every quad one face (a
triangle where its flags say so), corners in the stored order at s.A.p, with its texture
coordinates, its shades as a byte colour per corner, its flags, object tag and index as face
attributes, and a material per texture and way of drawing. What the game draws is one visible
object; the quads it does not draw (markers) and each door's closed gunk are objects of their
own in hidden collections."""

import os

import bpy
import numpy as np

from ....blender import compat
from ....core.report import Made
from ...engine.environment import quad_groups
from ...engine.to_blender import blender_points
from ...io.import_frame import import_properties
from ...io.level.fingerprint import fingerprint
from ...io.level.model import QUAD_FLAGS, TWO_SIDED, Environment, LevelContents
from ...io.level.properties import (ENVIRONMENT, FINGERPRINT, FLAGS_ATTRIBUTE, LEVEL_FILE, QUAD_ATTRIBUTE, ROOMS,
                                    SHADE_ATTRIBUTE, TAG_ATTRIBUTE, UV_MAP)
from ..shared.materials import UNTEXTURED

TRANSPARENT = QUAD_FLAGS["Transparent"]
# the hidden collections' names, after the level's
MARKERS, DOOR_GUNK, ROOM_FLOORS = "markers", "door gunk", "rooms"


def import_environment(contents: LevelContents, path, settings, collection, shared) -> list:
    """Made(path, contents, object) of each object made of `contents.environment` in
    `collection`: the drawn quads, then the markers, each door's gunk and the door frames
    InDoorFrame doors hide (those in hidden collections)."""
    made = _objects(contents, quad_groups(contents.environment, contents), path, settings, collection, shared)
    shared.remove_templates()
    shared.pack_images()   # here, not on encoder threads: the build is Blender calls that keep Python's lock
    return made


def _objects(contents, groups, path, settings, collection, shared):
    environment, made = contents.environment, []
    properties = {ENVIRONMENT: environment.name, LEVEL_FILE: os.path.abspath(path),
                  FINGERPRINT: fingerprint(environment)} | \
        import_properties(settings.global_scale, settings.axes, settings.frame_start)
    for name, quads, hidden in [(f"{contents.name} environment", groups.drawn, None),
                                (f"{contents.name} markers", groups.markers, MARKERS),
                                *[(f"DOOR {door} gunk", quads, DOOR_GUNK) for door, quads in groups.door_gunk.items()],
                                (f"{contents.name} door frames", groups.door_frames, DOOR_GUNK)]:
        if not len(quads):
            continue
        target = collection if hidden is None else _hidden_collection(collection, f"{contents.name} {hidden}")
        obj = bpy.data.objects.new(name, new_environment_mesh(name, environment, quads, shared, settings))
        obj.id_properties_ensure().update(properties)
        target.objects.link(obj)
        made.append(Made(path, contents, obj))
    if environment.room_floor_counts.any():
        obj = bpy.data.objects.new(f"{contents.name} rooms", _rooms_mesh(f"{contents.name} rooms", environment,
                                                                         settings))
        obj.id_properties_ensure().update({key: value for key, value in properties.items()
                                           if key not in (ENVIRONMENT, FINGERPRINT)} | {ROOMS: environment.name})
        _hidden_collection(collection, f"{contents.name} {ROOM_FLOORS}").objects.link(obj)
        made.append(Made(path, contents, obj))
    return made


def _rooms_mesh(name, environment: Environment, settings) -> "bpy.types.Mesh":
    """A face per room (AKVA order): its floor polygon, converted."""
    points = blender_points(environment.room_floors, settings.axes, settings.global_scale)
    mesh = bpy.data.meshes.new(name)
    corners = np.arange(len(points), dtype=np.int32)
    compat.set_polygons(mesh, points.astype(np.float32), corners, environment.room_floor_counts,
                        np.zeros((len(points), 2), np.float32), UV_MAP)
    mesh.update(calc_edges=True)
    return mesh


def new_environment_mesh(name, environment: Environment, quads, shared, settings) -> "bpy.types.Mesh":
    """A mesh of the environment's quads `quads` (indices, in the file's order): its points
    the ones they use, converted; a material per texture and way of drawing (materials.py)."""
    counts = environment.corner_counts(quads)
    used = np.arange(4)[None, :] < counts[:, None]                       # (n, 4) the corners each has
    corner_points = environment.quad_points[quads][used]
    kept, corners = _compacted(corner_points, len(environment.points))
    points = blender_points(environment.points[kept], settings.axes, settings.global_scale)
    uvs = environment.texture_coordinates[environment.quad_uvs[quads][used]].astype(np.float32)
    uvs[:, 1] = 1.0 - uvs[:, 1]                                          # Direct3D v -> Blender's
    mesh = bpy.data.meshes.new(name)
    compat.set_polygons(mesh, points.astype(np.float32), corners.astype(np.int32), counts, uvs, UV_MAP)
    flags = environment.flags[quads]
    for attribute, values in ((FLAGS_ATTRIBUTE, flags.view(np.int32)), (TAG_ATTRIBUTE, environment.object_tags[quads]),
                              (QUAD_ATTRIBUTE, quads.astype(np.int32))):
        mesh.attributes.new(attribute, "INT", "FACE").data.foreach_set("value", np.ascontiguousarray(values, np.int32))
    shades = environment.shade_bytes(quads)[used]
    compat.set_byte_colors(mesh, SHADE_ATTRIBUTE, shades)
    _materials(mesh, environment, quads, flags, shared)
    mesh.update(calc_edges=True)
    return mesh


def _materials(mesh, environment, quads, flags, shared):
    """A material slot per (texture, transparent, two-sided) the quads use, in first use order."""
    transparent = (flags & TRANSPARENT) != 0
    two_sided = (flags & TWO_SIDED) != 0
    key = environment.quad_textures[quads].astype(np.int64) * 4 + transparent * 2 + two_sided
    first = np.full(4 * len(environment.textures), len(key))
    first[key[::-1]] = np.arange(len(key))[::-1]            # each kind's first quad (the earliest write wins)
    kinds = np.flatnonzero(first < len(key))
    kinds = kinds[np.argsort(first[kinds])]
    slot = np.zeros(len(first), np.int32)
    slot[kinds] = np.arange(len(kinds))
    for kind in kinds.tolist():
        texture, name = environment.textures[kind // 4], environment.texture_names[kind // 4]
        mesh.materials.append(shared.environment_material(texture, name or UNTEXTURED, bool(kind & 2), bool(kind & 1)))
    if len(kinds) > 1:
        compat.set_material_indices(mesh, slot[key])


def _compacted(indices, count):
    """(the distinct values of `indices` (each < count), in order; each index's position among them)."""
    used = np.zeros(count, bool)
    used[indices] = True
    position = np.cumsum(used) - 1
    return np.flatnonzero(used), position[indices]


def _hidden_collection(parent, name):
    """The child collection `name` of `parent`, made hidden (viewport and render) when new."""
    found = parent.children.get(name)
    if found is None:
        found = bpy.data.collections.new(name)
        parent.children.link(found)
        found.hide_render = True
        compat.hide_in_view_layers(found)
    return found
