"""Both command lines: `python -m oban_import` (bpy module) and `blender -P
oban_import/__main__.py --` (a real binary), exit codes and atomic output."""

import os

import bpy
import numpy as np
import pytest
from commands import COMMANDS, run
from oni_scene import DATA, expected_world, generated_files, world_error

from oban_import.oni.io.oban.write import raw_file_bytes
from oban_import.ui import cli


@pytest.mark.parametrize("command", COMMANDS)
def test_generated_files_give_the_engine_matrices(tmp_path, command):
    animations, paths = generated_files(tmp_path, 8, seed=11)
    out = tmp_path / "out.blend"
    done = run(command, *paths, "-o", out, "--scale", "0.1", "--frame-start", "5")
    assert done.returncode == 0, done.stderr
    for animation in animations:
        assert animation.name in done.stdout
    assert "wrote" in done.stdout and out.exists()
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert bpy.context.scene.render.fps == 60
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        assert world_error(obj, expected_world(animation, scale=0.1), frame_start=5) < 1e-5
    assert [p for p in os.listdir(tmp_path) if p.startswith(".oban_import-")] == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_failed_file_gives_exit_1_and_the_rest_are_written(tmp_path, command):
    _, paths = generated_files(tmp_path, 2, seed=12)
    bad = tmp_path / "00077-bad.OBAN"
    bad.write_bytes(b"\1" * 64)
    out = tmp_path / "out.blend"
    done = run(command, paths[0], bad, paths[1], "-o", out)
    assert done.returncode == 1
    assert f"{bad}: 'bad': truncated at byte 64" in done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert len(bpy.data.objects) == 2


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("arguments, message", [
    (["IN"], "-o OUT.blend is required"),
    (["IN", "-o", "IN"], "is also an input"),
    (["IN", "-o", "OUT", "--up", "W"], "invalid choice"),
    (["IN", "-o", "OUT", "--forward=Y", "--up=-Y"], "use the same axis"),
    (["NOWHERE/*.oban", "-o", "OUT"], "no file matches"),
    ([], "the following arguments are required"),
])
def test_usage_errors_give_exit_2(tmp_path, command, arguments, message):
    source = os.path.join(DATA, "raw", "00011-fan_loop.OBAN")
    substitutions = {"IN": source, "OUT": str(tmp_path / "o.blend"), "NOWHERE/*.oban": str(tmp_path / "*.oban")}
    done = run(command, *[substitutions.get(a, a) for a in arguments])
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert not (tmp_path / "o.blend").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_nothing_imported_writes_nothing(tmp_path, command):
    out = tmp_path / "out.blend"
    done = run(command, tmp_path, "-o", out)  # a directory
    assert done.returncode == 1
    assert f"{tmp_path}: is a directory" in done.stderr and "not written" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_list_prints_the_obans_without_importing(tmp_path, command):
    done = run(command, os.path.join(DATA, "level", "level1_Final.dat"), "--list", "--filter", "*o*")
    assert done.returncode == 0, done.stderr
    lines = done.stdout[done.stdout.index("file "):].strip().splitlines()  # after Blender's banner
    assert lines[0].split() == ["file", "name", "frames", "keys", "flags"]
    rows = {line.split()[1]: line.split()[2:] for line in lines[1:]}
    assert rows["door_swing"] == ["100", "18", "Localized"]
    assert rows["fan_loop"] == ["48", "48", "Loop"]
    assert "spec_example" not in rows


def test_an_interrupted_save_leaves_the_old_output_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out.blend"
    out.write_bytes(b"previous contents")

    def interrupted(source, target):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.save_atomically(str(out))
    assert out.read_bytes() == b"previous contents"
    assert os.listdir(tmp_path) == ["out.blend"]


def test_the_handler_for_blender_command_line(tmp_path):
    """`blender -c oban_import ...` (4.2+) calls cli.main with the arguments after the id."""
    out = tmp_path / "out.blend"
    path = tmp_path / "00001-one.OBAN"
    path.write_bytes(raw_file_bytes(generated_files(tmp_path, 1, seed=13)[0][0]))
    assert cli.main([str(path), "-o", str(out)]) == 0
    assert out.exists()
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert np.array(bpy.data.objects["one"].matrix_world).shape == (4, 4)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_oban_and_reader_warnings_reach_the_user(tmp_path, command):
    from oban_generate import random_animation
    from objects_generate import level_file_bytes
    empty_level = tmp_path / "level5_Final.dat"
    empty_level.write_bytes(level_file_bytes([], [(b"TBUS", "subs", b"x" * 16)]))
    late = random_animation(np.random.default_rng(14), name="late", frames=20, key_count=4, flags=0)
    late.keys["frame"] = [3, 8, 12, 19]
    late_path = tmp_path / "00003-late.OBAN"
    late_path.write_bytes(raw_file_bytes(late))
    out = tmp_path / "out.blend"
    done = run(command, empty_level, late_path, "-o", out)
    assert done.returncode == 1
    assert f"error: {empty_level}: holds no OBAN instance" in done.stderr
    assert f"warning: {late_path}: 'late': first key is at frame 3, not 0" in done.stderr
    done = run(command, late_path, "--filter", "*door*", "-o", out)
    assert done.returncode == 1 and "holds no OBAN instance matching '*door*'" in done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_keys_file_writes_the_files_keys_and_a_pivot_for_a_translated_base(tmp_path, command):
    from oban_import.blender.compat import action_fcurves
    animations, paths = generated_files(tmp_path, 4, seed=13)
    for animation, path in zip(animations[1:], paths[1:]):   # the first keeps its base's translation
        animation.base_matrix[9:] = 0.0
        path.write_bytes(raw_file_bytes(animation))
    animations[0].base_matrix[9:] = (1.0, 2.0, 3.0)
    paths[0].write_bytes(raw_file_bytes(animations[0]))
    out = tmp_path / "out.blend"
    done = run(command, *paths, "-o", out, "--keys", "file")
    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stdout + done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    for i, animation in enumerate(animations):
        obj = bpy.data.objects[animation.name]
        keyed = obj.parent if i == 0 else obj   # the translated base: the keys on its pivot
        assert (keyed.name == f"{animation.name} pivot") == (i == 0)
        counts = {len(c.keyframe_points) for c in action_fcurves(keyed.animation_data.action, keyed)}
        assert counts == {len(animation.keys)}, animation.name
        assert world_error(obj, expected_world(animation)) < 1e-5
