"""Edits to a level go back, or are named, never dropped without a word (docs/level.md 11,
"Edits"): a painted texture is written as its TXMP by the rebuild (OniSplit's level of it holds
the new pixels: tests/data/environment/painted); what an export cannot carry (a door leaf
re-modelled, in place; a painted texture in place) refuses the level, naming the object, the texture or
image and why; with Despite Edits (--despite-edits) the level is written and each is a warning."""

import os

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from paths import DATA, ROOT

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.objects.read import read_texture_file
from oban_import.oni.io.objects.textures import pixel_bytes
from oban_import.ui.options import LevelPatchSettings, LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")


@pytest.fixture
def level(sample_level):
    return sample_level


def environment_image():
    material = bpy.data.objects["level5 environment"].data.materials[0]
    return next(node.image for node in material.node_tree.nodes if node.bl_idname == "ShaderNodeTexImage")


def paint(image):
    """Half the image's pixels white."""
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    pixels[: len(pixels) // 2] = 1.0
    image.pixels.foreach_set(pixels)


def leaf():
    """Door 8's leaf, the one leaf of its class: re-modelled, the rebuild carries it
    (test_level_remodel.py), the in-place patch cannot."""
    return bpy.data.objects["door_8"]


def exports(tmp_path, despite):
    """(the rebuild's report, the patch's report)."""
    return (export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild"),
                                  LevelRebuildSettings(use_selection=False, despite_edits=despite)),
            export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch"),
                                 LevelPatchSettings(use_selection=False, despite_edits=despite)))


@pytest.mark.parametrize("edit, words, exports_refusing", [
    ("resized", "texture '{texture}' (image '{image}') is 32 x 32, the level's 16 x 16: a texture's size cannot "
                "change in place (rebuild the level to carry it)", ("patch",)),
    ("leaf mesh", "object '{leaf}': its mesh was edited (a leaf of door '{door}')", ("patch",)),
])
def test_an_edit_an_export_cannot_carry_refuses_it_unless_asked(tmp_path, level, edit, words, exports_refusing):
    image, door_leaf = environment_image(), leaf()
    if edit == "resized":
        assert tuple(image.size) == (16, 16)
        image.scale(32, 32)
    else:
        door_leaf.data.vertices[0].co.z += 3.0
    said = words.format(texture=image.get("oni_texture_name", image.name), image=image.name, leaf=door_leaf.name,
                        door=door_leaf.parent.name if door_leaf.parent else "")
    for report, folder in zip(exports(tmp_path / "refused", False), ("rebuild", "patch")):
        if folder not in exports_refusing:
            assert not report.errors and report.made
            continue
        assert len(report.errors) == 1 and not report.made and said in report.errors[0], report.errors
        assert "--despite-edits" in report.errors[0]
        assert not os.path.exists(tmp_path / "refused" / folder) or not os.listdir(tmp_path / "refused" / folder)
    for report, folder in zip(exports(tmp_path / "despite", True), ("rebuild", "patch")):
        assert not report.errors and report.made
        assert any(said in warning and "left out" in warning for warning in report.warnings) == \
            (folder in exports_refusing), report.warnings


def test_a_painted_texture_is_written_as_its_txmp_from_the_image(tmp_path, level):
    """The rebuild writes classes/TXMP<name>.oni from the painted image: decoded by the reader,
    every pixel as the image holds it (its own format where that holds them, else a lossless
    one, said); the other TXMPs as read."""
    image = environment_image()
    paint(image)
    values = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(values)
    painted = np.rint(values.reshape(image.size[1], image.size[0], 4)[::-1] * 255).astype(np.uint8)
    name = image["oni_texture_name"]
    report = exports(tmp_path, False)[0]
    assert not report.errors and any(f"texture '{name}'" in warning for warning in report.warnings)
    classes = tmp_path / "rebuild" / "level5" / "classes"
    written = read_texture_file(str(classes / f"TXMP{name}.oni"))
    np.testing.assert_array_equal(written.rgba8, painted)
    original = os.path.join(DATA, "environment", "oni")
    for other in os.listdir(classes):
        if other.startswith("TXMP") and other != f"TXMP{name}.oni":
            assert (classes / other).read_bytes() == open(os.path.join(original, other), "rb").read(), other


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_lines_carry_a_resized_texture_or_refuse_it_in_place(tmp_path, level, command):
    image = environment_image()
    image.scale(32, 32)
    image.pack()   # as a user keeps an edited image in the .blend (else saving keeps the packed file as read)
    blend = tmp_path / "painted.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    refused = run(command, "export", blend, "-o", tmp_path / "out", "--format", "level-patch")
    assert refused.returncode == 1 and "a texture's size cannot change in place" in refused.stderr
    written = run(command, "export", blend, "-o", tmp_path / "out", "--format", "level-patch", "--despite-edits")
    assert written.returncode == 0, written.stderr
    assert "left out" in written.stderr + written.stdout and (tmp_path / "out" / "level5_Final.dat").is_file()
    rebuilt = run(command, "export", blend, "-o", tmp_path / "rebuilt", "--format", "level")
    assert rebuilt.returncode == 0 and "written from image" in rebuilt.stderr + rebuilt.stdout, rebuilt.stderr


def test_onisplits_level_of_a_painted_texture_holds_its_pixels(tmp_path, level):
    """tests/data/environment/painted: OniSplit's rebuild of the export of the sample level with
    env_floor0 painted as here holds the painted pixels, every other texture as read."""
    image = environment_image()
    paint(image)
    values = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(values)
    painted = np.rint(values.reshape(image.size[1], image.size[0], 4)[::-1] * 255).astype(np.uint8)
    built = read_level(os.path.join(DATA, "environment", "painted", "level5_Final.dat")).environment
    before = read_level(level).environment
    assert image["oni_texture_name"] in built.texture_names
    for name, texture in zip(built.texture_names, built.textures):
        read = before.textures[before.texture_names.index(name)]
        assert (texture is None) == (read is None), name   # OniSplit's own marker textures, not in the file
        if texture is not None:
            wanted = painted if name == image["oni_texture_name"] else read.rgba8
            np.testing.assert_array_equal(texture.rgba8, wanted, err_msg=name)


def test_a_texture_painted_in_its_own_format_is_rewritten_in_place(tmp_path, level):
    """The in-place patch writes the painted pixels where the texture's are stored (its .raw),
    every other byte as read: read back, the texture holds the image's pixels."""
    image = environment_image()
    paint(image)
    report = exports(tmp_path, False)[1]
    assert not report.errors and not report.warnings, report.errors + report.warnings
    patched = read_level(str(tmp_path / "patch" / "level5_Final.dat")).environment
    texture = patched.textures[patched.texture_names.index(image["oni_texture_name"])]
    values = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(values)
    np.testing.assert_array_equal(texture.rgba8, np.rint(values.reshape(16, 16, 4)[::-1] * 255).astype(np.uint8))
    before, after = (open(path, "rb").read() for path in (level.replace(".dat", ".raw"),
                                                           tmp_path / "patch" / "level5_Final.raw"))
    path, offset = texture.pixels_at
    sides = [16 >> k for k in range(5)] if texture.flags & 1 else [16]   # HasMipMaps: every level down to 1 x 1
    size = sum(pixel_bytes(side, side, texture.format) for side in sides)
    assert after[:offset] == before[:offset] and after[offset + size:] == before[offset + size:]
    assert after[offset:offset + size] != before[offset:offset + size]


def test_onisplits_level_of_a_repainted_door_holds_its_stripes():
    """tests/data/environment/painted_door: door 1's leaf in OniSplit's level of the export with
    its texture repainted (stripes, as its README says) shows the stripes over the texture as
    the sample level has it, every other pixel as read."""
    import oban_import.oni.io.objects.read as objects
    sample = os.path.join(ROOT, "examples", "level5_Final.dat")
    before = {o.name: o for o in objects.read_objects(sample).objects}["door_1"].meshes[0].texture
    after = {o.name: o for o in objects.read_objects(
        os.path.join(DATA, "environment", "painted_door", "level5_Final.dat")).objects}["door_1"].meshes[0].texture
    y, x = np.mgrid[0:16, 0:16]
    stripes = (((x + y) // 2) % 2 == 0)[::-1]             # Blender's rows bottom first, the file's top first
    wanted = before.rgba8.copy()
    wanted[stripes] = np.rint(np.array([1.0, 0.55, 0.1, 1.0]) * 255)
    np.testing.assert_array_equal(after.rgba8, wanted)


def test_a_door_texture_repainted_in_its_own_format_is_rewritten_in_place(tmp_path, level):
    """A door leaf's texture (a TXMP of the level file too) repainted: the in-place patch writes
    its pixels where they are stored; the patched level's leaf shows them."""
    door_leaf = bpy.data.objects["door_1"]
    material = door_leaf.data.materials[0]
    image = next(node.image for node in material.node_tree.nodes if node.bl_idname == "ShaderNodeTexImage")
    paint(image)
    report = exports(tmp_path, False)[1]
    assert not report.errors and not report.warnings, report.errors + report.warnings
    import oban_import.oni.io.objects.read as objects
    after = {o.name: o for o in objects.read_objects(str(tmp_path / "patch" / "level5_Final.dat")).objects}
    values = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(values)
    width, height = image.size
    np.testing.assert_array_equal(after["door_1"].meshes[0].texture.rgba8,
                                  np.rint(values.reshape(height, width, 4)[::-1] * 255).astype(np.uint8))
