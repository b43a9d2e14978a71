"""A skinned character mesh split into the body's rigid parts (docs/characters.md, "Skinned
meshes"): the sample body's part meshes joined into one skinned mesh come back as the parts
it was made of; a generated skinned mesh, moved, rotated and scaled against a moved armature,
splits by the rules, checked against a plain per-vertex and per-face reference; what cannot
be split is refused by name."""

import os
from collections import Counter

import bpy
import numpy as np
import pytest
import skinned_generate as sgen
from mathutils import Euler, Matrix
from paths import DATA
from test_characters import SCALE

from oban_import.blender import compat
from oban_import.blender.vertex_weights import vertex_weights
from oban_import.core.errors import ObanError
from oban_import.oni.blender.characters.armature_body import armature_body
from oban_import.oni.blender.shared.meshes import converted_normals
from oban_import.oni.export.bodies.skinned import skinned_parts
from oban_import.oni.export.shared.parts import SceneMesh, faces_part
from oban_import.oni.io.characters.read import read_character
from oban_import.ui.options import CharacterExportSettings

pytestmark = pytest.mark.usefixtures("addon")
ONCC = os.path.join(DATA, "characters", "oni", "ONCCchar0.oni")


@pytest.fixture
def body():
    assert bpy.ops.import_anim.oban(filepath=ONCC, global_scale=SCALE, character_animations="NONE") == {"FINISHED"}
    return armature_body(bpy.data.objects["char0"], CharacterExportSettings().global_scale, CharacterExportSettings().axes)


def read(mesh, collection, attribute, width, dtype):
    values = np.empty(len(collection) * width, dtype)
    collection.foreach_get(attribute, values)
    return values.reshape(-1, width) if width > 1 else values


def joined_sample(body):
    """The sample body's part meshes as one mesh in the armature's space (each part's points
    moved by its bone's head, in float32 as Blender's Join does), each vertex in its part's
    group with weight 1 and, every third one, 0.4 in the next part's; the import's normals set
    per vertex as the import sets them. Parented to the armature with Armature Deform."""
    parts = read_character(ONCC).body.parts
    points, corners, sizes, uvs, normals, groups = [], [], [], [], [], []
    offset = 0
    for index, (part, name) in enumerate(zip(parts, body.names)):
        mesh = bpy.data.objects[f"char0 {name}"].data
        points.append(read(mesh, mesh.vertices, "co", 3, np.float32) + body.rest[index, :3, 3].astype(np.float32))
        corners.append(read(mesh, mesh.loops, "vertex_index", 1, np.int32) + offset)
        sizes.append(read(mesh, mesh.polygons, "loop_total", 1, np.int32))
        uvs.append(read(mesh, mesh.uv_layers["UVMap"].data, "uv", 2, np.float32))
        normals.append(converted_normals(part.mesh.normals, body.axes))
        groups.append(np.full(len(mesh.vertices), index))
        offset += len(mesh.vertices)
    mesh = bpy.data.meshes.new("skinned char0")
    compat.set_polygons(mesh, np.concatenate(points), np.concatenate(corners), np.concatenate(sizes),
                        np.concatenate(uvs), "UVMap")
    mesh.update(calc_edges=True)
    compat.set_smooth(mesh)
    compat.set_custom_normals(mesh, np.concatenate(normals))
    obj = bpy.data.objects.new("skinned char0", mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent, obj.parent_type = body.armature, "ARMATURE"
    groups = np.concatenate(groups)
    for index, name in enumerate(body.names):
        group = obj.vertex_groups.new(name=name)
        group.add(np.flatnonzero(groups == index).tolist(), 1.0, "REPLACE")
    spill = np.flatnonzero(np.arange(len(groups)) % 3 == 0)
    for index in range(len(body.names)):
        chosen = spill[(groups[spill] + 1) % len(body.names) == index]
        obj.vertex_groups[index].add(chosen.tolist(), 0.4, "REPLACE")
    return obj, np.concatenate(points)


def test_the_joined_sample_body_splits_back_into_its_imported_parts(body):
    """Each part as the mesh export makes it of the imported part object: the same
    triangles, UVs and normals, and points within float32 rounding. A joined point is its part
    point v plus the bone's head, rounded to float32 (at most half a float32 step of the
    joined point's size off); the split takes the head off in float64 and divides by s; so a
    point comes back within that half step over s, plus the rounding of each side's result to
    float32 (one step of the point's size)."""
    obj, joined = joined_sample(body)
    split = skinned_parts(obj, body, "test")
    reach = np.float32(np.abs(joined).max())
    for index, name in enumerate(body.names):
        part_obj = bpy.data.objects[f"char0 {name}"]
        scene = SceneMesh(part_obj.data, body.scale, body.axes, 1)
        wanted = faces_part(scene, np.ones(len(scene.sizes), bool), name, 0, "", name)
        got = split.parts[index]
        assert split.faces[index] == len(part_obj.data.polygons)
        np.testing.assert_array_equal(got.triangles, wanted.triangles)
        np.testing.assert_array_equal(got.uvs, wanted.uvs)
        assert np.abs(got.normals - wanted.normals).max() <= compat.CUSTOM_NORMAL_ERROR
        tolerance = np.spacing(reach) / 2 / body.scale + np.spacing(np.float32(np.abs(wanted.points).max()))
        assert got.points.dtype == np.float32
        assert np.abs(got.points - wanted.points).max() <= tolerance, name
    assert split.disagreeing == 0
    assert f"Pelvis {len(bpy.data.objects['char0 Pelvis'].data.polygons)}," in split.notes[0]


def reference_split(weights, group_parts, corners, sizes):
    """Each vertex's part (its heaviest group's, the lowest group index of equal ones; -1
    without weight) and each face's (the part most corners name, ties to the earliest corner),
    how many faces' corners name more than one part: plainly, vertex by vertex, face by face."""
    vertex_parts = []
    for column in weights.T.tolist():
        heaviest = max(column)
        vertex_parts.append(group_parts[column.index(heaviest)] if heaviest > 0 else -1)
    face_parts, disagreeing, at = [], 0, 0
    for size in sizes.tolist():
        named = [vertex_parts[v] for v in corners[at:at + size].tolist() if vertex_parts[v] >= 0]
        at += size
        votes = Counter(named)
        face_parts.append(next(p for p in named if votes[p] == max(votes.values())) if named else -1)
        disagreeing += len(votes) > 1
    return np.array(vertex_parts), np.array(face_parts), disagreeing


def placed_grid(body, how, rows=21, columns=38, names=None):
    """A generated skinned grid deformed by the (moved) armature: by an Armature modifier or as
    its Armature Deform child with a parent inverse; the object moved, turned and scaled."""
    obj, weights, _ = sgen.skinned_grid("skinned grid", names or body.names, rows, columns, seed=3)
    bpy.context.scene.collection.objects.link(obj)
    armature = body.armature
    armature.location, armature.rotation_euler = (0.5, -0.25, 0.125), (0.0, 0.0, 0.7)
    if how == "modifier":
        obj.modifiers.new("Armature", "ARMATURE").object = armature
    else:
        obj.parent, obj.parent_type = armature, "ARMATURE"
        obj.matrix_parent_inverse = Matrix.Translation((0.0, 0.1, -0.2)) @ Euler((0.0, 0.3, 0.0)).to_matrix().to_4x4()
    obj.location, obj.rotation_euler, obj.scale = (0.1, 0.2, 0.3), (0.2, -0.1, 0.3), (1.25, 1.25, 1.25)
    bpy.context.view_layer.update()
    return obj, weights


@pytest.mark.parametrize("how", ["modifier", "parent"])
def test_a_generated_skinned_mesh_splits_by_its_heaviest_groups(body, how):
    obj, weights = placed_grid(body, how)
    mesh = obj.data
    split = skinned_parts(obj, body, "test")

    names = [group.name for group in obj.vertex_groups]
    assert np.array_equal(vertex_weights(mesh, names, "test"), weights)
    group_parts = [body.names.index(name) if name in body.names else -1 for name in names]
    corners = read(mesh, mesh.loops, "vertex_index", 1, np.int32)
    sizes = read(mesh, mesh.polygons, "loop_total", 1, np.int32)
    _, face_parts, disagreeing = reference_split(weights, group_parts, corners, sizes)
    assert disagreeing > 0 and np.array_equal(split.face_parts, face_parts)
    assert split.disagreeing == disagreeing
    assert np.array_equal(split.faces, np.bincount(face_parts, minlength=len(body.names)))
    assert f"; {disagreeing} faces whose corners'" in split.notes[0]

    to_armature = body.armature.matrix_world.inverted() @ obj.matrix_world
    matrix = np.array(to_armature)
    co = read(mesh, mesh.vertices, "co", 3, np.float32).astype(np.float64)
    x = co @ matrix[:3, :3].T + matrix[:3, 3]
    turn = np.array(to_armature.to_quaternion().to_matrix())
    normals = compat.corner_normals(mesh).astype(np.float64) @ turn.T @ body.axes
    uvs = read(mesh, mesh.uv_layers["UVMap"].data, "uv", 2, np.float32).astype(np.float64)
    uvs[:, 1] = 1.0 - uvs[:, 1]
    slots = read(mesh, mesh.polygons, "material_index", 1, np.int32)
    mesh.calc_loop_triangles()
    triangle_loops = read(mesh, mesh.loop_triangles, "loops", 3, np.int32)
    triangle_faces = read(mesh, mesh.loop_triangles, "polygon_index", 1, np.int32)
    for index, name in enumerate(body.names):
        part = split.parts[index]
        loops = triangle_loops[face_parts[triangle_faces] == index]
        points = ((x - body.rest[index, :3, 3]) @ body.axes / body.scale).astype(np.float32)
        tolerance = 2 * np.spacing(np.float32(np.abs(x).max())) / body.scale + np.spacing(np.abs(points).max())
        assert part.name == f"skinned grid {name}" and len(part.triangles) == len(loops)
        assert np.abs(part.points[part.triangles] - points[corners[loops]]).max() <= tolerance
        assert np.abs(part.normals[part.triangles] - normals[loops]).max() <= 1e-6
        np.testing.assert_array_equal(part.uvs[part.triangles], uvs[loops].astype(np.float32))
        used = np.unique(corners[loops])      # smooth, a UV per point: a vertex per point, by point
        assert np.abs(part.points - points[used]).max() <= tolerance
        assert part.slot == np.bincount(slots[face_parts == index]).argmax()


@pytest.mark.parametrize("more, message", [
    (False, "vertex group 'Hair' holds weight but names no part of the body"),
    (True, "vertex groups 'Hair', 'Cape' hold weight but name no part of the body"),
])
def test_groups_with_weight_naming_no_part_are_refused(body, more, message):
    obj, _ = placed_grid(body, "modifier")
    obj.vertex_groups[sgen.EMPTY_GROUP].add([5], 0.2, "REPLACE")
    if more:
        obj.vertex_groups.new(name="Cape").add([7], 0.3, "REPLACE")
    with pytest.raises(ObanError, match=rf"^test object 'skinned grid': {message} \(its parts: 'Pelvis', "):
        skinned_parts(obj, body, "test")


def test_faces_without_weight_are_refused_naming_the_first(body):
    obj, weights = placed_grid(body, "modifier")
    corners, sizes = sgen.grid_polygons(21, 38)
    starts = np.cumsum(sizes) - sizes
    bare = np.unique(np.concatenate([corners[starts[f]:starts[f] + sizes[f]] for f in (200, 90, 91)]))
    for group in obj.vertex_groups:
        group.remove(bare.tolist())
    unweighted = [f for f in range(len(sizes)) if np.isin(corners[starts[f]:starts[f] + sizes[f]], bare).all()]
    with pytest.raises(ObanError, match=rf"'skinned grid': face {unweighted[0]} has no corner with weight in a "
                                        rf"vertex group \({len(unweighted)} such faces in all\)"):
        skinned_parts(obj, body, "test")


def test_a_part_larger_than_the_engine_draws_is_refused_by_name(body):
    obj, _ = placed_grid(body, "modifier", rows=50, columns=50, names=["Pelvis"])
    with pytest.raises(ObanError, match=r"'skinned grid' part 'Pelvis': 2601 points and 5000 triangles"):
        skinned_parts(obj, body, "test")


def test_a_mesh_the_armature_does_not_deform_is_refused(body):
    obj, _ = sgen.skinned_grid("loose grid", body.names, 4, 19)[:2]
    bpy.context.scene.collection.objects.link(obj)
    with pytest.raises(ObanError, match=r"'loose grid': is not deformed by armature 'char0'"):
        skinned_parts(obj, body, "test")


def test_modifiers_shape_keys_and_colours_are_named_as_not_applied(body):
    obj, _ = placed_grid(body, "modifier")
    plain = skinned_parts(obj, body, "test")
    obj.modifiers.new("Smooth", "SUBSURF")
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Smile").data[0].co = (5.0, 5.0, 5.0)
    obj.data.color_attributes.new("Paint", "BYTE_COLOR", "CORNER")
    split = skinned_parts(obj, body, "test")
    assert split.dropped == ["its modifiers 'Smooth' are not applied (an M3GM holds the mesh itself)",
                             "its shape keys 'Smile' are not written (an M3GM holds one shape, the basis)",
                             "its colour attributes 'Paint' are not written (an M3GM holds no colours)"]
    assert not plain.dropped
    for got, wanted in zip(split.parts, plain.parts):     # the rest shape, not the key's
        np.testing.assert_array_equal(got.points, wanted.points)


def test_a_mesh_in_edit_mode_is_split_as_it_shows(body):
    import bmesh

    obj, _ = placed_grid(body, "modifier")
    before = skinned_parts(obj, body, "test")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit = bmesh.from_edit_mesh(obj.data)
    edit.verts.ensure_lookup_table()
    edit.verts[0].co.z -= 1.0                    # vertex 0 is the Pelvis band's, and its point 0
    bmesh.update_edit_mesh(obj.data)
    shown = skinned_parts(obj, body, "test")
    bpy.ops.object.mode_set(mode="OBJECT")
    assert not np.array_equal(shown.parts[0].points, before.parts[0].points)
    np.testing.assert_array_equal(shown.parts[0].points, skinned_parts(obj, body, "test").parts[0].points)
