"""File Keys: the file's own keys, LINEAR, give the engine's matrix at every frame
(docs/engine.md 2 and 4), for Empties, cameras, selected and Localized objects, with
engine playback; where they cannot be exact the animation is baked with a note."""

import math

import bpy
import numpy as np
import pytest

from oban_import.blender import compat
from oban_import.engine.frames import frame_matrices
from oban_import.engine.playback import engine_frames
from oban_import.oni.oban import LOCALIZED, LOOP, PINGPONG, RANDOM_START
from oban_import.oni.reader import read_file
from oban_import.oni.writer import raw_file_bytes

from generate import BASES, random_animation
from test_import import DATA, expected_world, generated_files, import_files, world_error

pytestmark = pytest.mark.usefixtures("addon")


def without_base_translation(animation):
    animation.base_matrix[9:] = 0.0
    return animation


def key_counts(obj):
    return {len(c.keyframe_points) for c in compat.action_fcurves(obj.animation_data.action, obj)}


def keyed_paths(obj):
    return {c.data_path for c in compat.action_fcurves(obj.animation_data.action, obj)}


def quaternion_keys(obj):
    """(keys, 4) values of the rotation_quaternion F-curves, in w x y z order."""
    curves = sorted((c for c in compat.action_fcurves(obj.animation_data.action, obj)
                     if c.data_path == "rotation_quaternion"), key=lambda c: c.array_index)
    values = []
    for curve in curves:
        co = np.empty(2 * len(curve.keyframe_points), np.float32)
        curve.keyframe_points.foreach_get("co", co)
        values.append(co[1::2])
    return np.array(values).T


def batch(tmp_path, count=200, seed=21):
    """`count` generated animations of every flag and base, frames 2 to 90, every other one
    with the base's translation removed (those, and the identity bases, keep their keys)."""
    animations, paths = generated_files(tmp_path, count, seed)
    for i, (animation, path) in enumerate(zip(animations, paths)):
        if i % 2:
            path.write_bytes(raw_file_bytes(without_base_translation(animation)))
    return animations, paths


@pytest.mark.parametrize("target", ["EMPTY", "CAMERA"])
def test_a_batch_of_200_is_exact_at_every_frame_with_one_key_per_file_key(tmp_path, target):
    animations, paths = batch(tmp_path)
    assert import_files(paths, keys="FILE", target=target) == {"FINISHED"}
    kept = 0
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        if target == "CAMERA":
            expected = frame_matrices(animation)
            c = np.eye(4)
            c[:3, :3] = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
            expected = c @ expected
        else:
            expected = expected_world(animation)
        assert world_error(obj, expected) < 1e-5, animation.name
        if not animation.base_matrix[9:].any():
            assert key_counts(obj) == {len(animation.keys)}, animation.name
            assert keyed_paths(obj) == {"location", "rotation_quaternion"}   # the scale is the object's own
            q = quaternion_keys(obj)
            assert (np.einsum("ij,ij->i", q[1:], q[:-1]) >= 0).all(), animation.name   # the shorter arc
            kept += 1
        else:
            assert key_counts(obj) == {animation.frames}, animation.name
            assert keyed_paths(obj) == {"location", "rotation_quaternion", "scale"}
    assert kept == sum(not a.base_matrix[9:].any() for a in animations) >= len(animations) // 2


def test_the_samples_are_exact_with_their_own_keys():
    for path in (f"{DATA}/level/level1_Final.dat", f"{DATA}/raw/00134-Blackvan_FB.OBAN"):
        assert bpy.ops.import_anim.oban(filepath=path, keys="FILE") == {"FINISHED"}
        for animation in read_file(path):
            obj = next(o for o in bpy.data.objects if o.get("oban_name") == animation.name)
            assert world_error(obj, expected_world(animation)) < 1e-5, animation.name
            if not animation.base_matrix[9:].any():
                assert key_counts(obj) == {len(animation.keys)}


@pytest.mark.parametrize("flags", [LOOP, PINGPONG, 0, LOOP | RANDOM_START, PINGPONG | RANDOM_START])
def test_engine_playback_with_file_keys_matches_the_simulator_over_three_periods(tmp_path, flags):
    animation = without_base_translation(random_animation(np.random.default_rng(flags + 40), name="player",
                                                          flags=flags, frames=23, key_count=6))
    path = tmp_path / "00001-player.OBAN"
    path.write_bytes(raw_file_bytes(animation))
    assert bpy.ops.import_anim.oban(filepath=str(path), keys="FILE", playback="ENGINE", use_random_start=True,
                                    random_seed=3) == {"FINISHED"}
    obj = bpy.data.objects["player"]
    from oban_import.blender.actions import start_frame
    from oban_import.options import Settings
    sequence, period = engine_frames(animation.frames, flags, start_frame(animation, Settings(random_start_seed=3)))
    world = expected_world(animation)
    shown = [sequence[i % len(sequence)] if period else sequence[min(i, len(sequence) - 1)]
             for i in range(3 * len(sequence))]
    assert world_error(obj, world[shown]) < 1e-5
    assert max(key_counts(obj)) < 3 * len(animation.keys) + 4


def test_selected_and_localized_objects_keep_their_keys(tmp_path):
    door = without_base_translation(random_animation(np.random.default_rng(7), name="door", flags=LOCALIZED,
                                                     frames=60, key_count=5))
    path = tmp_path / "00001-door.OBAN"
    path.write_bytes(raw_file_bytes(door))
    parent = bpy.data.objects.new("rig", None)
    obj = bpy.data.objects.new("door_mesh", None)
    for o in (parent, obj):
        bpy.context.scene.collection.objects.link(o)
    parent.location, parent.rotation_euler, parent.scale = (10, -4, 2), (0.3, -0.2, 1.1), (2, 2, 2)
    obj.parent = parent
    obj.location, obj.rotation_euler = (100, 50, -3), (0, 0, math.radians(30))
    bpy.context.view_layer.update()
    placement = np.array(obj.matrix_world)
    obj.select_set(True)
    assert bpy.ops.import_anim.oban(filepath=str(path), target="SELECTED", keys="FILE") == {"FINISHED"}
    assert key_counts(obj) == {5}
    assert world_error(obj, placement @ expected_world(door)) < 1e-5


def fallback_reports(tmp_path, animation, **options):
    path = tmp_path / f"00001-{animation.name}.OBAN"
    path.write_bytes(raw_file_bytes(animation))
    from oban_import.blender.importer import import_files as import_into
    from oban_import.options import Settings
    settings = Settings(**({"keys": "FILE"} | options))
    return path, import_into(bpy.context, [str(path)], settings)


@pytest.mark.parametrize("case", ["euler", "base translation", "animated parent", "sheared base"])
def test_where_file_keys_cannot_be_exact_it_bakes_and_says_why(tmp_path, case):
    animation = random_animation(np.random.default_rng(8), name="mover", flags=0, frames=30, key_count=4,
                                 base=BASES[2])
    options = {}
    if case != "base translation":
        without_base_translation(animation)
    if case == "sheared base":   # columns (1 0 0) (0.5 1 0) (0 0 1): no rotation and scale holds it
        animation.base_matrix[:9] = (1, 0, 0, 0.5, 1, 0, 0, 0, 1)
    if case == "euler":
        options["rotation_mode"] = "XYZ"
    if case == "animated parent":
        parent = bpy.data.objects.new("rig", None)
        child = bpy.data.objects.new("mover", None)
        for o in (parent, child):
            bpy.context.scene.collection.objects.link(o)
        parent.keyframe_insert("location", frame=1)
        parent.location = (30, 0, 0)
        parent.keyframe_insert("location", frame=31)
        child.parent = parent
        child.select_set(True)
        options["target"] = "SELECTED"
    _, result = fallback_reports(tmp_path, animation, **options)
    words = {"euler": "Euler XYZ", "base translation": "translation", "animated parent": "parented to 'rig'",
             "sheared base": "hold its base matrix only to"}[case]
    assert len(result.notes) == 1 and "'mover': baked on every frame" in result.notes[0], result.notes
    assert words in result.notes[0]
    obj = result.objects[0]
    assert key_counts(obj) == {animation.frames}
    if case == "sheared base":   # as near as Every Frame gets, and said so in a warning
        assert len(result.warnings) == 1 and "shear" in result.warnings[0], result.warnings
        every_frame = world_error(obj, expected_world(animation))
        bpy.data.objects.remove(obj)   # and import again at once: the view layer still lists it, as None
        _, baked = fallback_reports(tmp_path, animation, keys="EVERY_FRAME")
        assert abs(world_error(baked.objects[0], expected_world(animation)) - every_frame) < 1e-6
    else:
        assert world_error(obj, expected_world(animation)) < 1e-5
