"""Meshes (oni/blender/shared/meshes.py): the stored vertex normals turned into Blender's axes as the
points are, against a literal axes matrix and against the triangles' own geometric normals as
Blender works them out from the converted points."""

import bpy
import numpy as np
import pytest

from oban_import.blender import compat
from oban_import.oni.blender.shared.meshes import converted_normals, new_mesh
from oban_import.oni.engine.to_blender import axes_matrix
from oban_import.oni.io.objects.model import Mesh


def test_normals_turn_as_the_default_axes_say():
    """Forward -Z, up Y: Oni's x, y, z are Blender's x, z, -y; unit length, a zero normal kept zero."""
    normals = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 2], [0, 0, 0], [3, 4, 0]], np.float32)
    axes = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], np.float64)
    expected = [[0, 0, 1], [1, 0, 0], [0, -1, 0], [0, 0, 0], [0.6, 0, 0.8]]
    assert np.abs(converted_normals(normals, axes) - expected).max() < 1e-7


@pytest.mark.parametrize("forward, up", [("-Z", "Y"), ("X", "-Y"), ("Z", "X")])
def test_custom_normals_are_the_converted_triangles_own(forward, up):
    """Triangles of their own vertices, each vertex's stored normal its triangle's geometric one
    (in Oni's axes): Blender's face normals of the converted points are the custom normals."""
    rng = np.random.default_rng(4)
    corners = rng.normal(size=(30, 3, 3)).astype(np.float32)
    geometric = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    geometric /= np.linalg.norm(geometric, axis=1, keepdims=True)
    part = Mesh("faces", points=corners.reshape(-1, 3), normals=np.repeat(geometric, 3, axis=0).astype(np.float32),
                uvs=np.zeros((90, 2), np.float32), triangles=np.arange(90).reshape(-1, 3), texture=None)
    mesh = new_mesh("faces", [part], [bpy.data.materials.new("m")], axes_matrix(forward, up), 0.1)
    faces = np.empty(len(mesh.polygons) * 3, np.float32)
    mesh.polygons.foreach_get("normal", faces)
    assert np.abs(compat.corner_normals(mesh) - np.repeat(faces.reshape(-1, 3), 3, axis=0)).max() < 1e-5
