"""The mesh export (oni/export/meshes.py, docs/objects.md 10) writes what Blender shows: the UV
map it renders with (the others named in a note), and a float image (made so, or an EXR: scene
linear, alpha premultiplied) as its display shows it, sRGB-encoded, against the pixel values
sRGB's definition gives and Blender's own rendering of the image; an 8-bit image Blender shows
converted (another colour space) is refused by name."""

import os

import bpy
import numpy as np
import pytest
from exr import exr_bytes
from paths import EXAMPLES
from pngs import read_png
from test_mesh_export import assert_as_blender_holds, export, import_files, made_wedge, written

from oban_import.oni.io.objects.read import read_mesh_file, read_texture_file

pytestmark = pytest.mark.usefixtures("addon")
OBJ03 = os.path.join(EXAMPLES, "M3GMobj03_part0.oni")
LEVELS = np.arange(256)                                    # every 8-bit level


def srgb_decoded(levels):
    """The linear value of each 8-bit sRGB level (IEC 61966-2-1's decoding)."""
    c = np.asarray(levels, np.float64) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def second_uv_map(mesh, render=True):
    """A second UV map (each corner's UVs moved by a step), made the one Blender renders with."""
    layer = mesh.uv_layers.new(name="Second")
    uvs = np.empty(2 * len(mesh.loops), np.float32)
    layer.data.foreach_get("uv", uvs)
    layer.data.foreach_set("uv", uvs + np.float32(0.125))
    layer.active_render = render


def test_the_uv_map_blender_renders_with_is_written_and_the_others_named(tmp_path):
    obj = import_files(OBJ03)[0]
    stored = read_mesh_file(OBJ03)
    second_uv_map(obj.data)
    report = export(tmp_path, [obj])
    assert report.notes == ["object 'obj03_part0': its UV maps 'UVMap' are not written (an M3GM holds one UV map: "
                            "'Second', the one Blender renders with)"]
    assert {os.path.basename(m.path): m.note for m in report.made}["M3GMobj03_part0.oni"] == "edited"
    assert_as_blender_holds(obj, str(tmp_path / "M3GMobj03_part0.oni"))
    back = read_mesh_file(str(tmp_path / "M3GMobj03_part0.oni"))
    moved = stored.uvs[stored.triangles] + [0.125, -0.125]               # OniSplit's, the map's step in (u, 1 - v)
    turns = np.stack([np.roll(moved, -r, axis=1) for r in range(3)])   # a triangle may start at another corner
    assert (np.abs(turns - back.uvs[back.triangles]) <= 1e-6).all(axis=(2, 3)).any(axis=0).all()


def test_a_second_uv_map_blender_does_not_render_with_leaves_the_part_as_read(tmp_path):
    """Its fingerprint reads the map rendered with, as the import's did: unchanged, bit for bit;
    a copy of the map rendered with instead is unchanged too (the same UVs shown)."""
    obj = import_files(OBJ03)[0]
    second_uv_map(obj.data, render=False)
    report = export(tmp_path / "a", [obj])
    assert {m.note for m in report.made} == {"unchanged import"}
    assert report.notes == ["object 'obj03_part0': its UV maps 'Second' are not written (an M3GM holds one UV map: "
                            "'UVMap', the one Blender renders with)"]
    assert written(tmp_path / "a")["M3GMobj03_part0.oni"] == open(OBJ03, "rb").read()
    obj.data.uv_layers.new(name="Copy").active_render = True
    report = export(tmp_path / "b", [obj])
    assert {m.note for m in report.made} == {"unchanged import"}
    assert written(tmp_path / "b")["M3GMobj03_part0.oni"] == open(OBJ03, "rb").read()


def float_pixels():
    """(2, 256, 4) float32, top row first: every level's linear value, opaque; below, three
    orders of them at alpha 0.5, premultiplied, as Blender holds a float image."""
    linear = srgb_decoded(LEVELS)
    rgba = np.ones((2, 256, 4), np.float32)
    rgba[0, :, :3] = linear[:, None]
    rgba[1, :, :3] = np.stack([linear, linear[::-1], linear[(7 * LEVELS) % 256]], axis=1) * 0.5
    rgba[1, :, 3] = 0.5
    return rgba


EXPECTED = np.stack([np.stack([LEVELS] * 3 + [np.full(256, 255)], axis=1),
                     np.stack([LEVELS, LEVELS[::-1], (7 * LEVELS) % 256, np.full(256, 128)], axis=1)])


def float_image(how, tmp_path):
    rgba = float_pixels()
    if how == "exr":
        path = tmp_path / "levels.exr"
        path.write_bytes(exr_bytes(rgba))
        return bpy.data.images.load(str(path))
    image = bpy.data.images.new("levels", 256, 2, alpha=True, float_buffer=True)
    image.pixels.foreach_set(rgba[::-1].ravel())
    return image


@pytest.mark.parametrize("how", ["new", "exr"])
def test_a_float_image_is_written_as_blender_shows_it(tmp_path, how):
    """Every 8-bit level's linear value comes back as that level; a premultiplied pixel as its
    colour at its alpha; the same as Blender's own rendering of the image (Standard view)."""
    image = float_image(how, tmp_path)
    assert image.is_float
    obj = made_wedge()
    node = next(n for n in obj.data.materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage")
    node.image = image
    report = export(tmp_path / "out", [obj])
    assert not report.errors, report.errors
    texture = read_texture_file(str(tmp_path / "out" / "TXMPlevels.oni"))
    assert np.array_equal(texture.rgba8, EXPECTED)
    scene = bpy.context.scene
    scene.view_settings.view_transform = "Standard"
    scene.render.image_settings.file_format, scene.render.image_settings.color_mode = "PNG", "RGBA"
    image.save_render(str(tmp_path / "shown.png"), scene=scene)
    assert np.array_equal(read_png(str(tmp_path / "shown.png")), texture.rgba8)


def test_an_8_bit_image_in_another_colour_space_is_refused_by_name(tmp_path):
    """Blender shows a byte image in a linear colour space brighter than its bytes: refused,
    naming it; as Non-Color (data), its bytes are what it holds: written."""
    obj = import_files(OBJ03)[0]
    image = bpy.data.images.new("linear", 4, 4)
    image.colorspace_settings.name = next(name for name in ("Linear Rec.709", "Linear")
                                          if name in image.colorspace_settings.bl_rna.properties["name"].enum_items)
    next(n for n in obj.data.materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image = image
    report = export(tmp_path / "linear", [obj])
    assert not report.made and report.errors == [
        f"object 'obj03_part0' texture 'tex03_rgba' (image 'linear'): its colour space is "
        f"'{image.colorspace_settings.name}': Blender shows its 8-bit pixels converted from it, which a texture does "
        f"not hold; make it sRGB (or Non-Color, its pixels as held); nothing written for the object"]
    image.colorspace_settings.is_data = True
    report = export(tmp_path / "data", [obj])
    assert not report.errors and {os.path.basename(m.path) for m in report.made} == {"M3GMobj03_part0.oni",
                                                                                     "TXMPtex03_rgba.oni"}
