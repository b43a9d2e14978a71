"""What an import keeps to tell an edit (docs/objects.md, "Edits"): each mesh and image it made
carries a fingerprint that the same reading of an unedited scene gives again (also after the
.blend is saved and opened), and that a moved point, a changed UV or a painted pixel changes."""

import os

import bpy
import numpy as np
import pytest
from paths import ROOT
from test_mesh_shown import EXPECTED, float_image, float_pixels

from oban_import.oni.blender.shared.fingerprints import image_edited, image_pixels, mesh_edited
from oban_import.oni.io.objects.read import read_objects

pytestmark = pytest.mark.usefixtures("addon")
LEVEL = os.path.join(ROOT, "examples", "level9_Final.dat")


def imported():
    assert bpy.ops.import_anim.oban(filepath=LEVEL) == {"FINISHED"}
    meshes = [mesh for mesh in bpy.data.meshes if mesh.users]
    assert len(meshes) >= 9 and len(bpy.data.images) == 6
    return meshes, list(bpy.data.images)


def test_an_unedited_import_is_not_edited_and_its_images_hold_the_files_pixels(tmp_path):
    meshes, images = imported()
    assert not any(map(mesh_edited, meshes)) and not any(map(image_edited, images))
    textures = {t.name: t for o in read_objects(LEVEL).objects for m in o.meshes
                for t in [m.texture] if t is not None}
    for image in images:   # the pixels read back are the texture's, byte for byte
        np.testing.assert_array_equal(image_pixels(image), textures[image.name].rgba8)
    blend = tmp_path / "level9.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    assert not any(mesh_edited(m) for m in bpy.data.meshes if m.users)
    assert not any(map(image_edited, bpy.data.images))


def test_a_moved_point_a_changed_uv_and_a_painted_pixel_are_edits():
    meshes, images = imported()
    first, second = meshes[0], meshes[1]
    first.vertices[0].co.x += 1e-3
    second.uv_layers["UVMap"].data[0].uv = (0.25, 0.75)
    assert mesh_edited(first) and mesh_edited(second) and not any(map(mesh_edited, meshes[2:]))
    image = images[0]
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    pixels[:4] = 1.0 - pixels[:4]
    image.pixels.foreach_set(pixels)
    assert image_edited(image) and not any(map(image_edited, images[1:]))
    image.scale(image.size[0] * 2, image.size[1] * 2)
    assert image_edited(image)


def test_a_float_image_reads_as_blender_shows_it(tmp_path):
    """A float image holds scene-linear colours, alpha premultiplied: each 8-bit level's linear
    value (sRGB's definition) reads as that level, a premultiplied pixel as its colour; colour
    data (Non-Color) as held. A byte image's pixels read as held."""
    for how in ("new", "exr"):
        np.testing.assert_array_equal(image_pixels(float_image(how, tmp_path)), EXPECTED)
    data = bpy.data.images.new("data", 256, 2, alpha=True, float_buffer=True)
    data.colorspace_settings.is_data = True
    held = float_pixels()
    data.pixels.foreach_set(held[::-1].ravel())
    held[1, :, :3] /= 0.5
    np.testing.assert_array_equal(image_pixels(data), np.floor(held * 255 + 0.5).astype(np.uint8))
    plain = bpy.data.images.new("bytes", 256, 1, alpha=True)
    levels = np.stack([np.arange(256)] * 3 + [np.arange(256)[::-1]], axis=1).astype(np.uint8)
    plain.pixels.foreach_set((levels / 255).astype(np.float32).ravel())
    np.testing.assert_array_equal(image_pixels(plain), levels[None])


def test_a_mesh_fingerprint_reads_the_uv_map_blender_renders_with():
    """A second UV map of other UVs: an edit once Blender renders with it, not before; a copy of
    the map it renders with, rendered with instead, is none."""
    meshes, _ = imported()
    mesh = meshes[0]
    other = mesh.uv_layers.new(name="Other")
    uvs = np.empty(2 * len(mesh.loops), np.float32)
    other.data.foreach_get("uv", uvs)
    other.data.foreach_set("uv", uvs + np.float32(0.5))
    assert not mesh_edited(mesh)
    other.active_render = True
    assert mesh_edited(mesh)
    mesh.uv_layers.new(name="Copy", do_init=False)
    copy = mesh.uv_layers["Copy"]
    copy.data.foreach_set("uv", uvs)
    copy.active_render = True
    assert not mesh_edited(mesh)


@pytest.mark.parametrize("turn", [0.06, 0.005])
def test_a_part_whose_normals_were_edited_is_told_from_one_left_alone(tmp_path, turn):
    """A part's normals are told by the stored part's (within NORMAL_AS_READ = 0.02, whatever the
    Blender), not by a fingerprint of what one Blender drew: every corner's normal tipped by
    `turn` along x is an edit at 0.06, and at 0.005 (within what Blender before 4.5 keeps of a
    normal) the part as stored."""
    from oban_import.blender import compat
    from oban_import.oni.export.meshes import export_meshes
    from oban_import.ui.options import MeshExportSettings
    imported()
    mesh = bpy.data.objects["object03"].data
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    normals = np.zeros((len(mesh.vertices), 3))
    normals[vertex] = compat.corner_normals(mesh)          # the import set one normal a vertex
    normals[:, 0] += turn
    if "custom_normal" in mesh.attributes:   # 4.5 and later: the free attribute the import set, set anew
        mesh.attributes.remove(mesh.attributes["custom_normal"])
    compat.set_custom_normals(mesh, (normals / np.linalg.norm(normals, axis=1)[:, None]).astype(np.float32))
    report = export_meshes(bpy.context, [bpy.data.objects["object03"]], str(tmp_path), MeshExportSettings())
    mesh = next(m for m in report.made if m.path.endswith(".oni") and "M3GM" in m.path)
    assert not report.errors and mesh.note == ("edited" if turn > 0.02 else "unchanged import"), report.made
