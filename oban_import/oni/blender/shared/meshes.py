"""Meshes of placed objects (docs/objects.md 4, 6): all of an object's M3GM parts in one Blender
mesh, one material slot per texture, points stored converted (s.A.p), everything in bulk.

A mesh is named after its parts (their M3GM names without 'M3GM', joined by '+'); the
object keeps the real names (oni_object_name), each slot's material its texture's. The mesh
keeps what the mesh export needs (docs/objects.md 10): each face's part (PART_ATTRIBUTE),
where each part came from and its fingerprints, the scale and axes it was made with."""

import bpy
import numpy as np

from ....blender import compat
from ...engine.to_blender import blender_points
from ...io.import_frame import IMPORT_AXES, IMPORT_SCALE
from ...io.objects.properties import PART_ATTRIBUTE, part_properties
from .fingerprints import record_mesh
from .mesh_data import UV_MAP


def new_mesh(name: str, parts: list, materials: list, axes, scale: float) -> "bpy.types.Mesh":
    """`parts` [oni/io/objects/model.py Mesh] and each part's material (the same material once a slot)."""
    axes = np.asarray(axes, np.float64)
    slots = list(dict.fromkeys(materials))                    # in first use order
    sizes = np.array([len(part.points) for part in parts], np.int64)
    offsets = np.cumsum(sizes) - sizes
    points = np.concatenate([np.asarray(p.points, np.float64) for p in parts] or [np.zeros((0, 3))])
    normals = np.concatenate([np.asarray(p.normals, np.float64) for p in parts] or [np.zeros((0, 3))])
    uvs = np.concatenate([np.asarray(p.uvs, np.float64) for p in parts] or [np.zeros((0, 2))])
    triangles, slot_of, part_of = [], [], []
    for index, (part, offset, material) in enumerate(zip(parts, offsets, materials)):
        t = np.asarray(part.triangles, np.int64).reshape(-1, 3)
        # a strip's repeated index makes a triangle Blender cannot hold: dropped
        t = t[(t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])]
        triangles.append(t + offset)
        slot_of.append(np.full(len(t), slots.index(material), np.int32))
        part_of.append(np.full(len(t), index, np.int32))
    triangles = np.concatenate(triangles or [np.zeros((0, 3), np.int64)])
    corners = triangles.ravel()

    uv = np.take(uvs, corners, axis=0)
    uv[:, 1] = 1.0 - uv[:, 1]                                 # Direct3D v -> Blender's (docs/objects.md 4)
    mesh = bpy.data.meshes.new(name)
    compat.set_polygons(mesh, blender_points(points, axes, scale).astype(np.float32), corners.astype(np.int32),
                        np.full(len(triangles), 3, np.int32), uv.astype(np.float32), UV_MAP)
    if len(slots) > 1:   # one slot: every face has index 0 already
        compat.set_material_indices(mesh, np.concatenate(slot_of))
    mesh.attributes.new(PART_ATTRIBUTE, "INT", "FACE").data.foreach_set(
        "value", np.concatenate(part_of or [np.zeros(0, np.int32)]))
    for material in slots:
        mesh.materials.append(material)
    mesh.update(calc_edges=True)
    compat.set_smooth(mesh)
    compat.set_custom_normals(mesh, converted_normals(normals, axes))
    mesh.id_properties_ensure().update(part_properties(parts) | {IMPORT_SCALE: float(scale),
                                                                 IMPORT_AXES: axes.ravel().tolist()})
    record_mesh(mesh, len(parts))
    return mesh


def converted_normals(normals, axes) -> np.ndarray:
    """Normals in Blender's axes, unit length, float32: by A^-T, which is A for the orientation
    helper's changes of basis (signed permutations)."""
    turned = np.asarray(normals, np.float32) @ np.asarray(axes, np.float32).T
    length = np.sqrt(np.einsum("ij,ij->i", turned, turned))[:, None]
    return turned / np.where(length == 0.0, np.float32(1), length)
