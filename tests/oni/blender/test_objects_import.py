"""Placed objects through the operator and both command lines (docs/objects.md): the
sample level and its loose .oni files, every vertex where the engine draws it at every
frame, File Keys, the unused OBANs as Empties, loose meshes and textures, bad files."""

import os

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from test_placed import SAMPLES, vertex_error

from oban_import.blender.compat import action_fcurves
from oban_import.oni.io.oban.properties import NAME
from oban_import.oni.io.objects.properties import OBJECT_NAME
from oban_import.oni.io.objects.read import read_objects
from oban_import.ui.options import OniImportSettings

pytestmark = pytest.mark.usefixtures("addon")
LEVEL = os.path.join(SAMPLES, "level", "level9_Final.dat")
LOOSE = os.path.join(SAMPLES, "oni")


def placed_objects():
    return [o for o in bpy.data.objects if OBJECT_NAME in o]


def check_level(level, settings):
    by_name = {o[OBJECT_NAME]: o for o in placed_objects()}
    assert len(level.objects) == 9
    assert sorted(by_name) == sorted(p.name for p in level.objects)
    for placed in level.objects:
        assert vertex_error(by_name[placed.name], placed, settings) < 1e-5, placed.name


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_the_sample_level_through_the_operator(keys):
    assert bpy.ops.import_anim.oban(filepath=LEVEL, keys=keys) == {"FINISHED"}
    check_level(read_objects(LEVEL), OniImportSettings(keys=keys))
    assert len(bpy.data.images) == 6 and all(image.packed_file for image in bpy.data.images)
    animated = [o for o in placed_objects() if NAME in o]
    assert len(animated) == 6
    if keys == "FILE":  # one key per OBAN key, on a pivot where the base has a translation (object02's)
        for obj in animated:
            translated = np.any(obj["oban_base_matrix"][9:])
            moved = obj.parent if translated else obj
            assert (obj.parent is not None and "oban_pivot" in obj.parent) == translated, obj.name
            action = moved.animation_data.action
            counts = {len(c.keyframe_points) for c in action_fcurves(action, moved)}
            assert counts == {len(action["oban_keys"]) // 8}, obj.name
        assert sum(np.any(o["oban_base_matrix"][9:]) for o in animated) == 1


def test_the_loose_oboa_file_gives_the_level_and_no_objects_gives_empties():
    assert bpy.ops.import_anim.oban(filepath=os.path.join(LOOSE, "OBOAlevel9_objects.oni")) == {"FINISHED"}
    check_level(read_objects(LEVEL), OniImportSettings())
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_anim.oban(filepath=LEVEL, objects=False) == {"FINISHED"}
    assert not placed_objects() and len(bpy.data.objects) == 6
    assert {o.type for o in bpy.data.objects} == {"EMPTY"}


def test_loose_meshes_and_textures_through_the_operator():
    files = [{"name": "M3GMobj02_part1.oni"}, {"name": "TXMPtex05_dxt1.oni"}]
    assert bpy.ops.import_anim.oban(directory=LOOSE, files=files) == {"FINISHED"}
    (mesh,) = placed_objects()
    assert mesh.type == "MESH" and mesh.name == "obj02_part1" and len(mesh.data.polygons) == 12
    np.testing.assert_allclose(np.array(mesh.matrix_world), np.eye(4))
    assert "tex05_dxt1" in bpy.data.images and bpy.data.images["tex05_dxt1"].packed_file


def test_a_bad_level_adds_nothing(tmp_path):
    data = bytearray(open(LEVEL, "rb").read())
    bad = tmp_path / "level9_Final.dat"
    bad.write_bytes(bytes(data))
    # no .raw beside it: the textures' pixels are missing
    with pytest.raises(RuntimeError, match=r"level9_Final.dat: .*raw"):
        bpy.ops.import_anim.oban(filepath=str(bad))
    assert len(bpy.data.objects) == len(bpy.data.meshes) == len(bpy.data.images) == 0


@pytest.mark.parametrize("command", COMMANDS)
def test_the_sample_level_through_the_command_lines(tmp_path, command):
    out = tmp_path / "level.blend"
    done = run(command, LEVEL, os.path.join(LOOSE, "TXMPtex00_bgra4444.oni"), "-o", out, "--scale", "0.1")
    assert done.returncode == 0, done.stderr
    assert "object05" in done.stdout and "DXT1" in done.stdout
    assert "imported 9 objects, 9 meshes, 6 materials, 6 images, 6 actions from 2 of 2 files" in done.stdout
    bpy.ops.wm.open_mainfile(filepath=str(out))
    check_level(read_objects(LEVEL), OniImportSettings(global_scale=0.1))
    listed = run(command, LEVEL, "--list")
    assert listed.returncode == 0 and "object08" in listed.stdout and "obj08_anim" in listed.stdout
    without = run(command, LEVEL, "--no-objects", "-o", tmp_path / "empties.blend")
    assert without.returncode == 0 and "imported 6 objects, 6 actions from 1 of 1 file\n" in without.stdout


def test_a_level_with_its_loose_files_makes_each_mesh_and_texture_once(tmp_path):
    """The level and every loose .oni beside it, in one batch: the loose textures, meshes and
    animations are the level's own, so nothing gets a '.001' twin; all of it lands in one new
    collection named after the batch's folder, not in the scene's default one."""
    loose = sorted(os.listdir(LOOSE))
    assert len(loose) == 25
    files = [{"name": os.path.relpath(LEVEL, SAMPLES)}] + [{"name": os.path.join("oni", n)} for n in loose]
    bpy.ops.import_anim.oban(directory=SAMPLES, files=files)
    textures = {name[4:-4] for name in loose if name.startswith("TXMP")}
    parts = {name[4:-4] for name in loose if name.startswith("M3GM")}
    assert sorted(image.name for image in bpy.data.images) == sorted(textures)
    assert {part for mesh in bpy.data.meshes for part in mesh.name.split("+")} == parts
    assert not [block.name for block in (*bpy.data.images, *bpy.data.meshes, *bpy.data.materials) if "." in block.name]
    collection = bpy.data.collections["objects"]
    assert set(collection.objects) == set(bpy.data.objects) and collection.name in bpy.context.scene.collection.children
    assert not bpy.context.scene.collection.objects
