"""Targets (new Empty, new Camera, selected objects), engine playback, the door marker,
and the Object panel."""

import math
import os

import bpy
import numpy as np
import pytest
from oban_generate import random_animation
from oni_scene import DATA, engine_matrices, expected_camera, expected_world, world_error

from oban_import.oni.engine.playback import Player
from oban_import.oni.engine.to_blender import DEFAULT_AXES
from oban_import.oni.io.oban.record import LOCALIZED, LOOP, PINGPONG
from oban_import.oni.io.oban.write import raw_file_bytes
from oban_import.ui.options import SCALE

pytestmark = pytest.mark.usefixtures("addon")


def write(tmp_path, animation):
    path = tmp_path / f"00001-{animation.name}.OBAN"
    path.write_bytes(raw_file_bytes(animation))
    return str(path)


def animation(seed, name, flags=0, frames=40, **kwargs):
    return random_animation(np.random.default_rng(seed), name=name, flags=flags, frames=frames, **kwargs)


def test_camera_looks_where_the_oni_camera_looked(tmp_path):
    cam = animation(1, "cutscene", frames=60, base="identity")
    assert bpy.ops.import_anim.oban(filepath=write(tmp_path, cam), target="CAMERA") == {"FINISHED"}
    obj = bpy.data.objects["cutscene"]
    assert obj.type == "CAMERA" and obj.data.sensor_fit == "VERTICAL"
    assert math.isclose(obj.data.angle_y, math.radians(45), rel_tol=1e-6)
    m = engine_matrices(cam)
    for f in range(cam.frames):
        bpy.context.scene.frame_set(1 + f)
        world = np.array(obj.matrix_world)
        for local in ([0, 0, -1], [0, 1, 0]):  # view direction, up vector
            oni = DEFAULT_AXES @ (m[f, :3, :3] @ local)
            np.testing.assert_allclose(world[:3, :3] @ local, oni, atol=1e-5)
        np.testing.assert_allclose(world[:3, 3], SCALE.default * DEFAULT_AXES @ m[f, :3, 3], rtol=1e-5, atol=1e-5)
    assert world_error(obj, expected_camera(cam)) < 1e-5


def test_a_selected_object_gets_the_world_matrices(tmp_path):
    anim = animation(2, "lift")
    mesh = bpy.data.objects.new("platform", None)
    bpy.context.scene.collection.objects.link(mesh)
    mesh.location = (5, 6, 7)
    mesh.select_set(True)
    assert bpy.ops.import_anim.oban(filepath=write(tmp_path, anim), target="SELECTED") == {"FINISHED"}
    assert len(bpy.data.objects) == 1 and mesh.animation_data.action.name == "lift"
    assert world_error(mesh, expected_world(anim)) < 1e-5


def test_a_parented_object_gets_parent_space_keys(tmp_path):
    anim = animation(3, "van")
    parent = bpy.data.objects.new("rig", None)
    child = bpy.data.objects.new("van_mesh", None)
    for obj in (parent, child):
        bpy.context.scene.collection.objects.link(obj)
    parent.location, parent.rotation_euler, parent.scale = (10, -4, 2), (0.3, -0.2, 1.1), (2, 2, 2)
    parent.keyframe_insert("location", frame=1)
    parent.location = (30, 0, 0)
    parent.keyframe_insert("location", frame=41)   # the parent moves too
    child.parent = parent
    child.select_set(True)
    bpy.ops.import_anim.oban(filepath=write(tmp_path, anim), target="SELECTED")
    assert world_error(child, expected_world(anim)) < 1e-5


def test_a_localized_animation_plays_relative_to_the_placement(tmp_path):
    door = animation(4, "door", flags=LOCALIZED)
    obj = bpy.data.objects.new("door_mesh", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.location, obj.rotation_euler = (100, 50, -3), (0, 0, math.radians(30))
    bpy.context.view_layer.update()
    placement = np.array(obj.matrix_world)
    obj.select_set(True)
    path = write(tmp_path, door)
    for _ in range(2):  # importing again does not compound the placement
        bpy.ops.import_anim.oban(filepath=path, target="SELECTED")
        assert world_error(obj, placement @ expected_world(door)) < 1e-5


def test_several_animations_go_to_the_selected_objects_of_their_names():
    objects = {}
    for name in ("door_swing", "fan_loop", "bystander"):
        objects[name] = bpy.data.objects.new(name, None)
        bpy.context.scene.collection.objects.link(objects[name])
        objects[name].select_set(True)
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "level", "level1_Final.dat"), target="SELECTED")
    assert objects["door_swing"].animation_data.action.name == "door_swing"
    assert objects["fan_loop"].animation_data.action.name == "fan_loop"
    assert objects["bystander"].animation_data is None
    assert len(bpy.data.objects) == 3


def test_selected_target_without_selection_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="no object is selected"):
        bpy.ops.import_anim.oban(filepath=write(tmp_path, animation(5, "x")), target="SELECTED")
    assert len(bpy.data.objects) == 0 and len(bpy.data.actions) == 0


def engine_shown_frames(frames, flags, ticks):
    """The frame on screen at each tick, straight from the simulator."""
    player = Player(frames, flags)
    player.start()
    shown = [player.frame]
    for _ in range(ticks - 1):
        player.tick()
        shown.append(player.frame)
    return shown


@pytest.mark.parametrize("flags", [LOOP, PINGPONG, 0, LOOP | LOCALIZED])
def test_engine_playback_matches_the_simulator_over_three_periods(tmp_path, flags):
    anim = animation(6, "played", flags=flags, frames=17)
    bpy.ops.import_anim.oban(filepath=write(tmp_path, anim), playback="ENGINE", frame_start=3)
    obj = bpy.data.objects["played"]
    period = 2 * anim.frames if flags & PINGPONG else anim.frames
    shown = engine_shown_frames(anim.frames, flags, 3 * period)
    world = expected_world(anim)
    assert world_error(obj, world[shown], frame_start=3) < 1e-5
    if flags & (LOOP | PINGPONG):
        assert world_error(obj, world[shown[:1]], frame_start=3 + 3 * period) < 1e-5


def test_door_open_frame_is_a_marker_on_the_action():
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "raw", "00010-door_swing.OBAN"), frame_start=10)
    markers = bpy.data.objects["door_swing"].animation_data.action.pose_markers
    assert [(m.name, m.frame) for m in markers] == [("door open", 60)]


def test_the_panel_edits_the_properties_in_place():
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "raw", "00010-door_swing.OBAN"))
    obj = bpy.data.objects["door_swing"]
    action = obj.animation_data.action
    assert bpy.types.OBJECT_PT_oban.poll(bpy.context) in (True, False)  # registered, pollable
    settings = obj.oban
    assert settings.localized and not settings.loop and settings.door_open_frame == 50
    settings.loop = True
    settings.localized = False
    settings.door_open_frame = 40
    for owner in (obj, action):
        assert owner["oban_flags"] == 0x01 and owner["oban_loop"] and not owner["oban_localized"]
        assert owner["oban_door_open_frame"] == 40
    obj["oban_flags"] = -(1 << 31) | 0x10  # unknown bit 31 kept through edits
    settings.autostart = True
    assert obj["oban_flags"] & 0xFFFFFFFF == 0x80000018


def pose(obj):
    return [tuple(getattr(obj, p)) for p in ("location", "rotation_euler", "rotation_quaternion", "scale")]


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_a_failure_on_one_selected_object_leaves_every_one_as_it_was(tmp_path, monkeypatch, keys):
    from oban_import.oni.blender.oban import actions as oban_actions
    anim = animation(12, "lift", base="identity")
    targets, before = [], []
    for i, mode in enumerate(["XYZ", "QUATERNION", "ZXY"]):
        obj = bpy.data.objects.new(f"platform{i}", None)
        bpy.context.scene.collection.objects.link(obj)
        obj.rotation_mode = mode
        obj.location, obj.scale = (i, 2 * i, -3.5), (1, 2, 0.5 + i)
        obj.rotation_euler, obj.rotation_quaternion = (0.1 * i, 0.2, -0.3), (0.5, 0.5, -0.5, 0.5)
        if i == 2:   # one already animated
            obj.keyframe_insert("location", frame=1)
        obj.select_set(True)
        targets.append(obj)
        before.append((mode, obj.animation_data.action if obj.animation_data else None, pose(obj)))
    write_keys, calls = oban_actions.write_keys, []

    def failing(obj, *args, **kwargs):   # a bug on the last selected object, after the others are animated
        calls.append(obj)
        if len(calls) == 3:
            raise RuntimeError("boom")
        return write_keys(obj, *args, **kwargs)

    monkeypatch.setattr(oban_actions, "write_keys", failing)
    with pytest.raises(RuntimeError, match="could not be imported: RuntimeError"):
        bpy.ops.import_anim.oban(filepath=write(tmp_path, anim), target="SELECTED", keys=keys)
    assert len(calls) == 3 and "lift" not in bpy.data.actions
    for obj, (mode, action, placed) in zip(targets, before):
        assert obj.rotation_mode == mode
        assert (obj.animation_data.action if obj.animation_data else None) == action
        assert pose(obj) == placed
