"""File Keys: the file's own keys, LINEAR, give the engine's matrix at every frame
(docs/engine.md 2 and 4), for Empties, cameras, selected and Localized objects, with
engine playback; a base the object cannot hold (a translation, shear) goes to the object
under a pivot the keys move; where they cannot be exact the animation is baked with a note."""

import math

import bpy
import numpy as np
import pytest
from oban_generate import BASES, random_animation
from oni_scene import DATA, expected_camera, expected_world, generated_files, import_files, world_error

from oban_import.blender import compat
from oban_import.oni.engine.playback import engine_frames
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import LOCALIZED, LOOP, PINGPONG, RANDOM_START
from oban_import.oni.io.oban.write import raw_file_bytes

pytestmark = pytest.mark.usefixtures("addon")


def without_base_translation(animation):
    animation.base_matrix[9:] = 0.0
    return animation


def keyed(obj):
    """What an import keyed for `obj`: its pivot (then obj holds the base), else obj."""
    parent = obj.parent
    return parent if parent is not None and parent.get("oban_pivot") == obj.get("oban_name") else obj


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
    with the base's translation removed (those are keyed on the object itself, the others on
    a pivot)."""
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
            expected = expected_camera(animation)
        else:
            expected = expected_world(animation)
        assert world_error(obj, expected) < 1e-5, animation.name
        moved = keyed(obj)
        assert key_counts(moved) == {len(animation.keys)}, animation.name
        assert keyed_paths(moved) == {"location", "rotation_quaternion"}   # the scale is the object's own
        q = quaternion_keys(moved)
        assert (np.einsum("ij,ij->i", q[1:], q[:-1]) >= 0).all(), animation.name   # the shorter arc
        if moved is obj:
            kept += 1
        else:   # named after the animation; its child keeps the animation's identity
            assert moved.name == f"{animation.name} pivot" and obj.animation_data is None
    assert kept == sum(not a.base_matrix[9:].any() for a in animations) >= len(animations) // 2
    assert len([o for o in bpy.data.objects if "oban_pivot" in o]) == len(animations) - kept


def test_the_samples_are_exact_with_their_own_keys():
    for path, count in ((f"{DATA}/level/level1_Final.dat", 5), (f"{DATA}/raw/00134-Blackvan_FB.OBAN", 1)):
        assert bpy.ops.import_anim.oban(filepath=path, keys="FILE") == {"FINISHED"}
        animations = read_file(path)
        assert len(animations) == count
        for animation in animations:
            obj = next(o for o in bpy.data.objects if o.get("oban_name") == animation.name)
            assert world_error(obj, expected_world(animation)) < 1e-5, animation.name
            assert key_counts(keyed(obj)) == {len(animation.keys)}


@pytest.mark.parametrize("flags", [LOOP, PINGPONG, 0, LOOP | RANDOM_START, PINGPONG | RANDOM_START])
def test_engine_playback_with_file_keys_matches_the_simulator_over_three_periods(tmp_path, flags):
    animation = without_base_translation(random_animation(np.random.default_rng(flags + 40), name="player",
                                                          flags=flags, frames=23, key_count=6))
    path = tmp_path / "00001-player.OBAN"
    path.write_bytes(raw_file_bytes(animation))
    assert bpy.ops.import_anim.oban(filepath=str(path), keys="FILE", playback="ENGINE", use_random_start=True,
                                    random_seed=3) == {"FINISHED"}
    obj = bpy.data.objects["player"]
    from oban_import.oni.blender.oban.actions import start_frame
    from oban_import.ui.options import OniImportSettings
    seeded = OniImportSettings(use_random_start=True, random_seed=3)
    sequence, period = engine_frames(animation.frames, flags, start_frame(animation, seeded))
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
    from oban_import.oni.blender.importer import import_files as import_into
    from oban_import.ui.options import OniImportSettings
    settings = OniImportSettings(**({"keys": "FILE"} | options))
    return path, import_into(bpy.context, [str(path)], settings)


SHEAR = (1, 0, 0, 0.5, 1, 0, 0, 0, 1)   # columns (1 0 0) (0.5 1 0) (0 0 1): no rotation and scale holds it


@pytest.mark.parametrize("case", ["euler", "animated parent"])
def test_where_file_keys_cannot_be_exact_it_bakes_and_says_why(tmp_path, case):
    animation = without_base_translation(random_animation(np.random.default_rng(8), name="mover", flags=0,
                                                          frames=30, key_count=4, base=BASES[2]))
    options = {}
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
    words = {"euler": "Euler XYZ", "animated parent": "parented to 'rig'"}[case]
    assert len(result.notes) == 1 and "'mover': baked on every frame" in result.notes[0], result.notes
    assert words in result.notes[0]
    obj = result.made[0].block
    assert key_counts(obj) == {animation.frames} and not [o for o in bpy.data.objects if "oban_pivot" in o]
    assert world_error(obj, expected_world(animation)) < 1e-5


@pytest.mark.parametrize("base", ["translated", "rotated and scaled, translated", "sheared"])
@pytest.mark.parametrize("target", ["EMPTY", "CAMERA", "SELECTED"])
@pytest.mark.parametrize("playback", ["FRAMES", "ENGINE"])
def test_a_base_the_object_cannot_hold_goes_to_it_under_a_pivot(tmp_path, base, target, playback):
    """The file's keys on the pivot, the base as the object's local matrix under it: the
    object's world matrix is the engine's W at every frame, with no note and no warning."""
    flags = LOCALIZED | LOOP if playback == "ENGINE" else LOCALIZED
    animation = random_animation(np.random.default_rng(9), name="mover", flags=flags, frames=30, key_count=5,
                                 base=BASES[3] if base.startswith("rotated") else BASES[0])
    animation.base_matrix[9:] = (3.0, -7.5, 12.0)
    if base == "sheared":
        animation.base_matrix[:9] = SHEAR
    options = {"target": target, "playback": playback}
    placement = np.eye(4)
    if target == "SELECTED":   # placed and parented to an object that stands still
        rig = bpy.data.objects.new("rig", None)
        obj = bpy.data.objects.new("mover", None)
        for o in (rig, obj):
            bpy.context.scene.collection.objects.link(o)
        rig.location, rig.rotation_euler = (5, 1, -2), (0.2, 0.0, 0.9)
        obj.parent, obj.location = rig, (1, 2, 3)
        bpy.context.view_layer.update()
        placement = np.array(obj.matrix_world)
        obj.select_set(True)
    _, result = fallback_reports(tmp_path, animation, **options)
    assert result.errors == result.notes == result.warnings == []
    obj = result.made[0].block
    pivot = obj.parent
    assert pivot.name == "mover pivot" and pivot["oban_pivot"] == "mover" and obj["oban_name"] == "mover"
    assert pivot.parent is (bpy.data.objects["rig"] if target == "SELECTED" else None)
    assert key_counts(pivot) == ({len(animation.keys)} if playback == "FRAMES" else {len(animation.keys) + 1})
    if target == "CAMERA":
        expected = expected_camera(animation)
    else:
        expected = placement @ expected_world(animation)
    assert world_error(obj, expected) < 1e-5


def test_an_edited_pivot_exports_the_motion_its_child_shows(tmp_path):
    """Keys moved on the pivot: the child's world matrices are what the export writes."""
    from oban_import.oni.export.oban import animated_objects, export_objects
    from oban_import.ui.options import OniExportSettings
    animation = random_animation(np.random.default_rng(10), name="mover", flags=0, frames=40, key_count=4,
                                 base=BASES[3])
    animation.base_matrix[9:] = (3.0, -7.5, 12.0)
    _, result = fallback_reports(tmp_path, animation)
    obj = result.made[0].block
    for curve in compat.action_fcurves(obj.parent.animation_data.action, obj.parent):
        if curve.data_path == "location":
            for key in curve.keyframe_points:
                key.co.y += 5.0 * curve.array_index + 1.0
    assert animated_objects(bpy.context.scene.objects) == [obj]   # the pivot is not exported on its own
    out = tmp_path / "out"
    out.mkdir()
    report = export_objects(bpy.context, [obj], str(out), OniExportSettings(global_scale=1.0))
    assert report.errors == [] and report.made[0].note == ""
    written = read_file(report.made[0].path)[0]
    assert written.base_matrix.tobytes() == animation.base_matrix.tobytes()
    assert world_error(obj, expected_world(written)) < 1e-4


def test_selecting_the_pivot_or_its_child_shows_the_panel_of_the_animation(tmp_path):
    animation = random_animation(np.random.default_rng(11), name="mover", flags=0, frames=20, key_count=3)
    animation.base_matrix[9:] = (0.0, 4.0, 0.0)
    _, result = fallback_reports(tmp_path, animation)
    obj = result.made[0].block
    pivot = obj.parent
    panel = bpy.types.OBJECT_PT_oban
    for selected in (obj, pivot):
        bpy.context.view_layer.objects.active = selected
        with bpy.context.temp_override(object=selected):
            assert panel.poll(bpy.context)
    pivot.oban.loop = True   # edited on the pivot: the child's description and the pivot's action
    assert obj["oban_loop"] and obj["oban_flags"] & LOOP and pivot.animation_data.action["oban_flags"] & LOOP
    assert obj.oban.loop and "oban_flags" not in pivot
