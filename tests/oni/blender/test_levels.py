"""Level files with many OBANs among other instances, OniSplit XML beside .oni, the
command line's playback, target and filter options, and seeded random starts."""

import os

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from oban_generate import random_animation
from objects_generate import level_file_bytes
from oni_scene import DATA, expected_world, world_error

from oban_import.oni.engine.playback import engine_frames, random_start_frame
from oban_import.oni.io.oban.record import LOOP, RANDOM_START

pytestmark = pytest.mark.usefixtures("addon")
OTHERS = [(b"TBUS", "subtitles", b"hello\0" * 9), (b"CSBS", "shadows", bytes(1000)), (b"MCAB", "data", bytes(64))]


@pytest.fixture(scope="module")
def level(tmp_path_factory):
    rng = np.random.default_rng(40)
    animations = [random_animation(rng, name=f"door_{i}" if i % 10 == 0 else f"thing_{i}", flags=i % 32,
                                   frames=int(rng.integers(2, 40))) for i in range(150)]
    path = tmp_path_factory.mktemp("level") / "level9_Final.dat"
    path.write_bytes(level_file_bytes(animations, OTHERS))
    return str(path), animations


def test_a_level_file_imports_every_oban_and_skips_the_rest(level):
    path, animations = level
    progress = []
    from oban_import.oni.blender.importer import import_files
    from oban_import.ui.options import OniImportSettings
    result = import_files(bpy.context, [path], OniImportSettings(), progress=progress.append)
    assert not result.errors
    assert [a.name for a in result.blocks()] == [a.name for a in animations]
    assert len(bpy.data.objects) == 150
    assert progress == sorted(progress) and len(progress) > 5 and progress[-1] == 1.0
    for animation in animations[::15]:
        assert world_error(bpy.data.objects[animation.name], expected_world(animation)) < 1e-5


def test_the_name_filter_picks_instances(level):
    path, _ = level
    assert bpy.ops.import_anim.oban(filepath=path, name_filter="DOOR_*") == {"FINISHED"}
    assert sorted(o.name for o in bpy.data.objects) == sorted(f"door_{i}" for i in range(0, 150, 10))


@pytest.mark.parametrize("command", COMMANDS)
def test_command_line_list_and_filter_on_a_level(level, command, tmp_path):
    path, _ = level
    listed = run(command, path, "--list")
    assert listed.returncode == 0
    table = listed.stdout[listed.stdout.index("file "):].splitlines()
    assert len(table) == 151 and all(line.startswith("level9_Final.dat") for line in table[1:])
    out = tmp_path / "doors.blend"
    done = run(command, path, "--filter", "door_*", "--target", "CAMERA", "--playback", "ENGINE", "-o", out)
    assert done.returncode == 0, done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert len(bpy.data.objects) == 15 and {o.type for o in bpy.data.objects} == {"CAMERA"}


def test_xml_and_oni_give_the_same_matrices():
    for name in ("door_swing", "fan_loop", "camera_flyby", "lift_pingpong", "spec_example"):
        for folder, ext in (("xml", "xml"), ("oni", "oni")):
            bpy.ops.import_anim.oban(filepath=os.path.join(DATA, folder, f"OBAN{name}.{ext}"))
        xml_obj, oni_obj = bpy.data.objects[name], bpy.data.objects[f"{name}.001"]
        for f in range(1, oni_obj["oban_frames"] + 1):
            bpy.context.scene.frame_set(f)
            assert np.array_equal(np.array(xml_obj.matrix_world), np.array(oni_obj.matrix_world)), (name, f)


def test_a_seeded_random_start_begins_at_the_seeded_frame(tmp_path):
    anim = random_animation(np.random.default_rng(41), name="spinner", flags=LOOP | RANDOM_START, frames=23)
    path = tmp_path / "spinner.oban"
    from oban_import.oni.io.oban.write import raw_file_bytes
    path.write_bytes(raw_file_bytes(anim))
    bpy.ops.import_anim.oban(filepath=str(path), playback="ENGINE", use_random_start=True, random_seed=7)
    start = random_start_frame(23, "7:spinner")
    sequence, period = engine_frames(23, anim.flags, start)
    assert period == 23 and sequence[0] == start
    world = expected_world(anim)
    assert world_error(bpy.data.objects["spinner"], world[sequence * 2]) < 1e-5
