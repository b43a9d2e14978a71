"""Edits a level export cannot carry yet are named, never dropped without a word (docs/level.md
11, "Edits"): an environment texture painted, a door leaf re-modelled or re-textured refuse the
level in both exports, naming the object, the texture or image and why; with Despite Dropped
Edits (--despite-edits) the level is written and each is a warning."""

import os

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run

from oban_import.oni.blender.level.patch import export_level_patches
from oban_import.oni.blender.level.rebuild import export_level_rebuilds
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
    return next(obj for obj in bpy.data.objects if "oni_door_leaf" in obj and obj.type == "MESH")


def exports(tmp_path, despite):
    """(the rebuild's report, the patch's report)."""
    return (export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild"),
                                  LevelRebuildSettings(use_selection=False, despite_edits=despite)),
            export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch"),
                                 LevelPatchSettings(use_selection=False, despite_edits=despite)))


@pytest.mark.parametrize("edit, words", [
    ("painted", "texture '{texture}' (image '{image}'): its pixels were edited (painted, replaced or resized)"),
    ("leaf mesh", "object '{leaf}': its mesh was edited (a leaf of door '{door}')"),
])
def test_an_edit_no_export_carries_yet_refuses_both_unless_asked(tmp_path, level, edit, words):
    image, door_leaf = environment_image(), leaf()
    if edit == "painted":
        paint(image)
    else:
        door_leaf.data.vertices[0].co.z += 3.0
    said = words.format(texture=image.get("oni_texture_name", image.name), image=image.name, leaf=door_leaf.name,
                        door=door_leaf.parent.name if door_leaf.parent else "")
    for report, folder in zip(exports(tmp_path / "refused", False), ("rebuild", "patch")):
        assert len(report.errors) == 1 and not report.made and said in report.errors[0], report.errors
        assert "--despite-edits" in report.errors[0]
        assert not os.path.exists(tmp_path / "refused" / folder) or not os.listdir(tmp_path / "refused" / folder)
    for report in exports(tmp_path / "despite", True):
        assert not report.errors and report.made
        assert any(said in warning and "left out" in warning for warning in report.warnings), report.warnings


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_refuses_a_painted_texture_or_writes_it_despite_it(tmp_path, level, command):
    image = environment_image()
    paint(image)
    image.pack()   # as a user keeps a painted image in the .blend (else saving keeps the packed file as read)
    blend = tmp_path / "painted.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    refused = run(command, "export", blend, "-o", tmp_path / "out", "--format", "level")
    assert refused.returncode == 1 and "its pixels were edited" in refused.stderr
    written = run(command, "export", blend, "-o", tmp_path / "out", "--format", "level", "--despite-edits")
    assert written.returncode == 0, written.stderr
    assert "left out" in written.stderr + written.stdout and (tmp_path / "out" / "level5" / "level5.xml").is_file()
