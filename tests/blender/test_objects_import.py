"""Placed objects through the operator and both command lines (docs/objects.md): the
sample level and its loose .oni files, every vertex where the engine draws it at every
frame, File Keys, the unused OBANs as Empties, loose meshes and textures, bad files."""

import os

import bpy
import numpy as np
import pytest

from oban_import.blender.compat import action_fcurves
from oban_import.oni.library import read_objects
from oban_import.oni.properties import NAME, OBJECT_NAME
from oban_import.options import Settings

from test_cli import COMMANDS, run
from test_placed import SAMPLES, vertex_error

pytestmark = pytest.mark.usefixtures("addon")
LEVEL = os.path.join(SAMPLES, "level", "level9_Final.dat")
LOOSE = os.path.join(SAMPLES, "oni")


def placed_objects():
    return [o for o in bpy.data.objects if OBJECT_NAME in o]


def check_level(level, settings):
    by_name = {o[OBJECT_NAME]: o for o in placed_objects()}
    assert sorted(by_name) == sorted(p.name for p in level.objects)
    for placed in level.objects:
        assert vertex_error(by_name[placed.name], placed, settings) < 1e-5, placed.name


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_the_sample_level_through_the_operator(keys):
    assert bpy.ops.import_anim.oban(filepath=LEVEL, keys=keys) == {"FINISHED"}
    check_level(read_objects(LEVEL), Settings(keys=keys))
    assert len(bpy.data.images) == 6 and all(image.packed_file for image in bpy.data.images)
    animated = [o for o in placed_objects() if NAME in o]
    assert len(animated) == 6
    if keys == "FILE":  # one key per OBAN key, but where the base has a translation (object02's)
        for obj in animated:
            action = obj.animation_data.action
            counts = {len(c.keyframe_points) for c in action_fcurves(action, obj)}
            translated = np.any(action["oban_base_matrix"][9:])
            assert counts == {action["oban_frames"] if translated else len(action["oban_keys"]) // 8}, obj.name
        assert sum(np.any(o.animation_data.action["oban_base_matrix"][9:]) for o in animated) == 1


def test_the_loose_oboa_file_gives_the_level_and_no_objects_gives_empties():
    assert bpy.ops.import_anim.oban(filepath=os.path.join(LOOSE, "OBOAlevel9_objects.oni")) == {"FINISHED"}
    check_level(read_objects(LEVEL), Settings())
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
    assert "object05" in done.stdout and "DXT1" in done.stdout and "9 placed object(s)" in done.stdout
    bpy.ops.wm.open_mainfile(filepath=str(out))
    check_level(read_objects(LEVEL), Settings(global_scale=0.1))
    listed = run(command, LEVEL, "--list")
    assert listed.returncode == 0 and "object08" in listed.stdout and "obj08_anim" in listed.stdout
    without = run(command, LEVEL, "--no-objects", "-o", tmp_path / "empties.blend")
    assert without.returncode == 0 and "0 placed object(s)" in without.stdout
