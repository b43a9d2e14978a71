"""What an import keeps to tell an edit (docs/objects.md, "Edits"): each mesh and image it made
carries a fingerprint that the same reading of an unedited scene gives again (also after the
.blend is saved and opened), and that a moved point, a changed UV or a painted pixel changes."""

import os

import bpy
import numpy as np
import pytest
from paths import ROOT

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
