"""Placed objects in Blender (docs/objects.md 3-6): every vertex where the engine draws it at
every frame, UVs, normals, images, materials, and a level that fails leaving nothing."""

import json
import os

import bpy
import numpy as np
import objects_fixtures
import pytest
from blender_materials import image_node, is_alpha_blended
from oni_scene import engine_matrices
from paths import DATA

from oban_import.blender import compat
from oban_import.oni.blender.level.placed import import_level
from oban_import.oni.blender.shared.materials import CLAMPED
from oban_import.oni.blender.shared.meshes import converted_normals
from oban_import.oni.engine.to_blender import DEFAULT_AXES
from oban_import.oni.io.oban.properties import NAME
from oban_import.oni.io.oban.record import LOCALIZED, matrix_from_columns
from oban_import.oni.io.objects.properties import (OBJECT_NAME, OBJECT_ORIGIN, OBJECT_SCRIPT_ID, TEXTURE_ADDITIVE,
                                                   TEXTURE_ENVMAP)
from oban_import.oni.io.objects.read import read_objects
from oban_import.ui.options import OniImportSettings

SAMPLES = os.path.join(DATA, "objects")
SETTINGS = {
    "default": OniImportSettings(),
    "scaled": OniImportSettings(global_scale=0.1, axis_forward="Y", axis_up="Z", frame_start=5, rotation_mode="XYZ"),
}


def run(level, settings, path="level.dat"):
    return import_level(bpy.context, level, path, settings)


def engine_worlds(placed):
    """W(f) of docs/objects.md 6, engine axes: (F, 4, 4)."""
    origin = matrix_from_columns(placed.origin)
    if placed.animation is None:
        return origin[None]
    m = engine_matrices(placed.animation)   # the plain reference engine
    return origin @ m if placed.animation.has(LOCALIZED) else m


def all_points(placed):
    return np.concatenate([np.asarray(m.points, np.float64) for m in placed.meshes])


def vertex_error(obj, placed, settings):
    """Largest |matrix_world . stored point - s.A.W(f).p| over all frames, against the object's
    own size (its points' extent at that frame), so that a turn is held as tightly far from
    the origin as near it."""
    mesh = obj.data
    stored = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", stored)
    stored = np.append(stored.reshape(-1, 3).astype(np.float64), np.ones((len(mesh.vertices), 1)), axis=1)
    sa = settings.global_scale * np.asarray(settings.axes)
    points = all_points(placed)
    worst = 0.0
    for f, w in enumerate(engine_worlds(placed)):
        bpy.context.scene.frame_set(settings.frame_start + f)
        got = (stored @ np.array(obj.matrix_world).T)[:, :3]
        wanted = (points @ w[:3, :3].T + w[:3, 3]) @ sa.T
        size = max(np.ptp(wanted, axis=0).max(), 1e-6 * settings.global_scale)
        worst = max(worst, np.abs(got - wanted).max() / size)
    return worst


@pytest.mark.parametrize("name", SETTINGS)
def test_every_vertex_where_the_engine_draws_it(name):
    settings = SETTINGS[name]
    level = objects_fixtures.level()
    result = run(level, settings)
    assert [m.item.name for m in result.made] == [p.name for p in level.objects]
    for placed, obj in ((m.item, m.block) for m in result.made):
        assert obj.name == placed.name and obj[OBJECT_NAME] == placed.name
        assert vertex_error(obj, placed, settings) < 1e-5, placed.name
        if placed.animation is not None:
            assert obj[NAME] == placed.animation.name
            assert obj.rotation_mode == settings.rotation_mode
    assert [a.name for a in level.unused()] == ["unused"]
    assert result.last_frame == settings.frame_start + 39
    assert any("tex_missing" in w for w in result.warnings)


def test_engine_playback():
    settings = OniImportSettings(playback="ENGINE")
    result = run(objects_fixtures.level(), settings)
    for placed, obj in ((m.item, m.block) for m in result.made):
        if placed.animation is not None:
            assert vertex_error(obj, placed, settings) < 1e-5, placed.name


def test_properties():
    level = objects_fixtures.level()
    obj = run(level, OniImportSettings()).made[4].block
    assert obj[OBJECT_SCRIPT_ID] == -1 and obj["oni_door_id"] == -3 and obj["oni_physics"] == 3
    assert np.allclose(obj[OBJECT_ORIGIN], level.objects[4].origin)


def loops_of(mesh):
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    return corners


def test_one_mesh_per_part_set_uvs_normals_slots():
    settings = SETTINGS["scaled"]
    level = objects_fixtures.level()
    result = run(level, settings)
    objs = {obj.name: obj for obj in result.blocks()}
    assert objs["static_one"].data is objs["static_shared"].data
    assert len(bpy.data.meshes) == 5
    for placed, obj in ((m.item, m.block) for m in result.made):
        mesh = obj.data
        assert mesh.name == "+".join(part.name for part in placed.meshes)
        assert not mesh.validate(), "the mesh as written needed mending"
        corners = loops_of(mesh)
        uvs = np.concatenate([m.uvs for m in placed.meshes])[corners]
        got = np.empty(len(mesh.loops) * 2, np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", got)
        assert np.allclose(got.reshape(-1, 2), np.column_stack([uvs[:, 0], 1.0 - uvs[:, 1]]), atol=1e-6)
        normals = converted_normals(np.concatenate([m.normals for m in placed.meshes]), settings.axes)[corners]
        assert np.abs(compat.corner_normals(mesh) - normals).max() < (1e-6 if compat.HAS_FREE_NORMALS else 1e-3)
        smooth = np.empty(len(mesh.polygons), bool)
        mesh.polygons.foreach_get("use_smooth", smooth)
        assert smooth.all()
        assert len(mesh.polygons) == sum(len(m.triangles) for m in placed.meshes)
        # each triangle's slot holds its part's texture
        slots = np.empty(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("material_index", slots)
        names = [m.texture_name for m in placed.meshes for _ in m.triangles]
        assert [mesh.materials[s].name for s in slots] == names
        assert len(mesh.materials) == len(set(names))


def check_texture(texture):
    """Its one image (packed, sRGB, pixels bottom row first) and its material."""
    image = bpy.data.images[texture.name]
    assert image.packed_file is not None and image.colorspace_settings.name == "sRGB"
    assert tuple(image.size) == (texture.width, texture.height)
    pixels = np.empty(texture.width * texture.height * 4, np.float32)
    image.pixels.foreach_get(pixels)
    assert np.abs(pixels.reshape(texture.height, texture.width, 4)[::-1] - texture.pixels).max() < 0.6 / 255
    material = bpy.data.materials[texture.name]
    node = image_node(material)
    assert node.image is image
    assert node.extension == (CLAMPED if texture.flags & 0x0C else "REPEAT")
    assert is_alpha_blended(material) == texture.has_alpha
    assert material[TEXTURE_ADDITIVE] == bool(texture.flags & 0x400)
    assert material[TEXTURE_ENVMAP] == bool(texture.flags & 0x200)


def test_images_and_materials():
    level = objects_fixtures.level()
    run(level, OniImportSettings())
    textures = {m.texture.name: m.texture for p in level.objects for m in p.meshes if m.texture}
    assert sorted(i.name for i in bpy.data.images) == sorted(textures)
    for texture in textures.values():
        check_texture(texture)
    missing = bpy.data.materials["tex_missing"]
    assert image_node(missing) is None
    assert len(bpy.data.materials) == len(textures) + 1


def counts():
    return [len(c) for c in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.images,
                             bpy.data.actions)]


@pytest.mark.parametrize("place, failing", [("level.placed", "_stand"), ("shared.blocks", "new_mesh"),
                                            ("shared.blocks", "new_image")])
def test_a_failure_mid_level_leaves_nothing(monkeypatch, place, failing):
    import importlib
    module = importlib.import_module(f"oban_import.oni.blender.{place}")

    run(objects_fixtures.level(1), OniImportSettings())      # what was there before stays
    before = counts()
    original, calls = getattr(module, failing), []

    def fail_late(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("boom")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, failing, fail_late)
    with pytest.raises(RuntimeError, match="boom"):
        run(objects_fixtures.level(), OniImportSettings())
    assert counts() == before


def test_a_png_that_fails_on_its_thread_leaves_nothing(monkeypatch):
    """The PNGs are made on encoder threads while the meshes are built: a failure there
    reaches the import when the images are packed, and everything of the level goes."""
    from oban_import.oni.blender.shared import images

    run(objects_fixtures.level(1), OniImportSettings())
    before = counts()
    original = images.texture_png

    def fail_on_alpha(texture):
        if texture.name == "tex_alpha":
            raise MemoryError("no room for the PNG")
        return original(texture)

    monkeypatch.setattr(images, "texture_png", fail_on_alpha)
    with pytest.raises(MemoryError, match="no room"):
        run(objects_fixtures.level(), OniImportSettings())
    assert counts() == before


def test_packed_pngs_hold_the_textures_pixels():
    """Each image is the PNG its encoder thread made: its pixels, read back through
    Blender, are round(255 x) of the texture's."""
    level = objects_fixtures.level(2)
    run(level, OniImportSettings())
    textures = {m.texture.name: m.texture for o in level.objects for m in o.meshes if m.texture is not None}
    for name, texture in textures.items():
        image = bpy.data.images[name]
        assert image.packed_file is not None and image.size[:] == (texture.width, texture.height)
        got = np.empty(texture.width * texture.height * 4, np.float32)
        image.pixels.foreach_get(got)
        got = np.rint(got.reshape(texture.height, texture.width, 4)[::-1] * 255)   # Blender: bottom row first
        assert np.array_equal(got, texture.rgba8), name


def read_sample():
    return read_objects(os.path.join(SAMPLES, "level", "level9_Final.dat"))


@pytest.mark.parametrize("name", SETTINGS)
def test_sample_level(name):
    level = read_sample()
    settings = SETTINGS[name]
    expected = json.load(open(os.path.join(SAMPLES, "expected.json")))["objects"]
    assert len(expected) == 9
    result = run(level, settings, "level9_Final.dat")
    assert [o[OBJECT_NAME] for o in result.blocks()] == [e["name"] for e in expected]
    for (placed, obj), e in zip(((m.item, m.block) for m in result.made), expected):
        assert [m.name for m in placed.meshes] == [g["name"] for g in e["geometries"]]
        assert vertex_error(obj, placed, settings) < 1e-5, placed.name
    textures = {m.texture.name: m.texture for p in level.objects for m in p.meshes if m.texture}
    assert len(bpy.data.images) == len(textures) == 6
    for texture in textures.values():
        check_texture(texture)


def test_in_front_matches_the_matrices():
    from oban_generate import random_animation

    from oban_import.oni.engine.to_blender import in_front as placed_in_front
    from oban_import.oni.engine.to_blender import transforms_many

    rng = np.random.default_rng(3)
    animation = random_animation(rng, frames=20, flags=LOCALIZED, base="rotated_diagonal")
    transforms = next(transforms_many([animation]))
    for left3 in (2.5 * np.linalg.qr(rng.normal(size=(3, 3)))[0], np.diag([1.0, 2.0, 3.0])):
        if np.linalg.det(left3) < 0:
            left3 = -left3
        left = np.eye(4)
        left[:3, :3], left[:3, 3] = left3, rng.normal(0, 10, 3)
        got = placed_in_front(left, transforms)
        wanted = left @ transforms.matrices()
        error = np.abs(got.matrices() - wanted).max() / np.abs(wanted).max()
        assert error < 1e-9 or error <= got.error * 2, error
        assert np.all(np.einsum("ij,ij->i", got.quaternion[1:], got.quaternion[:-1]) >= 0)


def test_degenerate_triangles_and_no_geometry():
    level = objects_fixtures.level()
    part = level.objects[0].meshes[0]
    part.triangles = np.vstack([part.triangles, [[1, 1, 2]]]).astype(np.int32)
    level.objects[1].meshes = []
    result = run(level, OniImportSettings())
    assert len(result.made[0].block.data.polygons) == len(part.triangles) - 1
    assert result.made[1].block.type == "EMPTY" and result.made[1].block[OBJECT_NAME] == "static_two"


def obj_faces(paths):
    """OniSplit's OBJs of an object's parts: the (point, uv) corners (k, 5) and each face
    as a list of corner indices, in its winding."""
    corners, faces = [], []
    for path in paths:
        v, vt = [], []
        for line in open(path):
            kind, *rest = line.split() or [""]
            if kind == "v":
                v.append(list(map(float, rest[:3])))
            elif kind == "vt":
                vt.append(list(map(float, rest[:2])))
            elif kind == "f":
                face = []
                for corner in rest:
                    a, b = (int(i) - 1 for i in corner.split("/")[:2])
                    face.append(len(corners))
                    corners.append(v[a] + vt[b])
                faces.append(face)
    return np.array(corners), faces


def test_sample_meshes_match_onisplit_obj():
    """Points (in the mesh's frame) and UVs per triangle corner as OniSplit's OBJ export has them."""
    level = read_sample()
    result = run(level, OniImportSettings(global_scale=1.0))   # the unit of OniSplit's OBJ export
    assert len(result.made) == 9
    a_inv = np.linalg.inv(DEFAULT_AXES)
    for placed, obj in ((m.item, m.block) for m in result.made):
        mesh = obj.data
        co = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", co)
        uv = np.empty(len(mesh.loops) * 2, np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", uv)
        got = np.column_stack([(co.reshape(-1, 3).astype(np.float64) @ a_inv.T)[loops_of(mesh)], uv.reshape(-1, 2)])
        corners, faces = obj_faces([os.path.join(SAMPLES, "reference", "obj", m.name + ".obj") for m in placed.meshes])
        distance = np.abs(got[:, None, :] - corners[None, :, :]).max(axis=2)
        assert distance.min(axis=1).max() < 1e-3, placed.name
        # corners OniSplit repeats are the same corner: compare faces by their nearest-corner classes
        same = np.abs(corners[:, None, :] - corners[None, :, :]).max(axis=2) < 1e-3
        first = same.argmax(axis=1)
        nearest = first[distance.argmin(axis=1)]
        got_faces = sorted(cyclic(nearest[3 * t:3 * t + 3]) for t in range(len(mesh.polygons)))
        assert got_faces == sorted(cyclic(first[f]) for f in faces), placed.name   # winding included


def cyclic(face):
    """A face's corners from its smallest, keeping the winding."""
    face = list(face)
    k = face.index(min(face))
    return tuple(face[k:] + face[:k])
