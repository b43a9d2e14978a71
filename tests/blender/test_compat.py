"""oban_import.blender.compat on every supported Blender (bpy 4.2/4.5/5.0, blender 3.4)."""

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Quaternion, Vector

from oban_import.blender import compat

GROUP = "Object Transforms"
CHANNELS = (
    [("location", i, GROUP) for i in range(3)]
    + [("rotation_quaternion", i, GROUP) for i in range(4)]
    + [("scale", i, GROUP) for i in range(3)]
)
KEYS = 50
FRAMES = [1 + 2 * k for k in range(KEYS)]  # every other frame: halfway points are whole frames


def channel_value(channel, key):
    """Distinct, float32-exact value of channel `channel` at key number `key`."""
    return (channel + 1) * 0.25 + key * (0.5 if channel % 2 else -0.125)


def expected_transform(frame):
    """(location, rotation_quaternion, scale) the keys give at `frame`, linear in between."""
    position = (frame - FRAMES[0]) / 2
    key = min(int(position), KEYS - 2)
    t = position - key
    values = [(1 - t) * channel_value(c, key) + t * channel_value(c, key + 1) for c in range(10)]
    return Vector(values[0:3]), Quaternion(values[3:7]), Vector(values[7:10])


@pytest.fixture
def empty(factory_scene):
    obj = bpy.data.objects.new("Empty", None)
    obj.rotation_mode = 'QUATERNION'  # else rotation_quaternion is ignored
    bpy.context.scene.collection.objects.link(obj)
    return obj


@pytest.fixture
def animated(empty):
    action, fcurves = compat.new_object_action(empty, "EmptyAction", CHANNELS)
    columns = [[channel_value(channel, k) for channel in range(len(fcurves))] for k in range(KEYS)]
    compat.fill_fcurves(fcurves, FRAMES, columns)
    return empty, action, fcurves


def test_fcurves_created_in_channel_order(animated):
    _, _, fcurves = animated
    assert [(fc.data_path, fc.array_index, fc.group.name) for fc in fcurves] == CHANNELS


def test_channels_share_one_group(animated):
    _, _, fcurves = animated
    assert len({fc.group.as_pointer() for fc in fcurves}) == 1


def test_slot_made_by_actionslots_new_where_fcurve_ensure_is_missing(empty, monkeypatch):
    """A 4.4 without Action.fcurve_ensure_for_datablock: the same action, slot and F-curves."""
    monkeypatch.setattr(compat, "ENSURE_FCURVE_IN_GROUP", False)
    monkeypatch.setattr(compat, "ENSURE_FCURVE", False)
    action, fcurves = compat.new_object_action(empty, "EmptyAction", CHANNELS)
    assert [(fc.data_path, fc.array_index, fc.group.name) for fc in fcurves] == CHANNELS
    assert set(compat.action_fcurves(action, empty)) == set(fcurves)
    if compat.SLOTTED_ACTIONS:
        assert empty.animation_data.action_slot.identifier == "OB" + empty.name
        assert len(action.slots) == 1


def test_action_fcurves_lists_all_ten(animated):
    obj, action, fcurves = animated
    for listed in (compat.action_fcurves(action), compat.action_fcurves(action, obj)):
        assert len(listed) == 10
        assert set(listed) == set(fcurves)


def test_action_and_slot_assigned(animated):
    obj, action, _ = animated
    assert obj.animation_data.action == action
    if compat.SLOTTED_ACTIONS:
        slot = obj.animation_data.action_slot
        assert slot is not None
        assert slot.identifier == "OB" + obj.name
        assert list(action.slots) == [slot]


def test_keys_written_linear_with_handles_on_keys(animated):
    _, _, fcurves = animated
    for channel, fcurve in enumerate(fcurves):
        points = fcurve.keyframe_points
        assert len(points) == KEYS
        for k, point in enumerate(points):
            key = (FRAMES[k], channel_value(channel, k))
            assert tuple(point.co) == key
            assert tuple(point.handle_left) == key
            assert tuple(point.handle_right) == key
            assert point.interpolation == 'LINEAR'


@pytest.mark.parametrize("frame", [FRAMES[0], FRAMES[1], FRAMES[25], FRAMES[-1],   # on keys
                                   FRAMES[0] + 1, FRAMES[24] + 1, FRAMES[-1] - 1])  # halfway
def test_evaluated_transform(animated, frame):
    obj = animated[0]
    bpy.context.scene.frame_set(frame)
    location, rotation, scale = expected_transform(frame)
    assert (obj.location - location).length < 1e-5
    assert (Vector(obj.rotation_quaternion) - Vector(rotation)).length < 1e-5
    assert (obj.scale - scale).length < 1e-5
    expected_matrix = Matrix.LocRotScale(location, rotation.normalized(), scale)
    assert all(abs(a - b) < 1e-5 * max(1.0, abs(b))
               for row, expected_row in zip(obj.matrix_world, expected_matrix)
               for a, b in zip(row, expected_row))


def test_subframe_halfway(animated):
    obj = animated[0]
    bpy.context.scene.frame_set(FRAMES[10], subframe=0.5)  # a quarter of the way to the next key
    assert (obj.location - expected_transform(FRAMES[10] + 0.5)[0]).length < 1e-5


def test_constant_interpolation(empty):
    _, (fcurve,) = compat.new_object_action(empty, "Steps", [("location", 2, "")])
    compat.fill_fcurves([fcurve], [1, 3], [[4.0], [8.0]], interpolation='CONSTANT')
    assert fcurve.group is None
    assert [point.interpolation for point in fcurve.keyframe_points] == ['CONSTANT'] * 2
    bpy.context.scene.frame_set(2)
    assert empty.location.z == 4.0
    bpy.context.scene.frame_set(3)
    assert empty.location.z == 8.0


def test_file_handler_flag_matches_version():
    assert compat.HAS_FILE_HANDLER == (bpy.app.version >= (4, 1, 0))


def test_cli_command_registration():
    handle = compat.register_cli_command("oban_import_compat_test", lambda argv: 0)
    try:
        assert (handle is None) == (bpy.app.version < (4, 2, 0))
    finally:
        compat.unregister_cli_command(handle)
    compat.unregister_cli_command(None)


@pytest.mark.parametrize("memoryview_keys", [False, True])
def test_runs_of_keys_each_on_its_curve(empty, monkeypatch, memoryview_keys):
    """fill_fcurve_runs: curve i takes the next counts[i] rows, as they are, LINEAR, handles on
    the keys (through array slices, and through memoryview slices where Blender takes them)."""
    if memoryview_keys and bpy.app.version < (4, 2, 0):
        memoryview_keys = False          # 3.4: only the array slices it runs
    monkeypatch.setattr(compat, "MEMORYVIEW_KEYS", memoryview_keys)
    _, fcurves = compat.new_object_action(empty, "Runs", CHANNELS[:4])
    counts = [1, 3, 2, 5]
    rows = np.array([(f, channel_value(c, f)) for c, n in enumerate(counts) for f in range(n)], np.float32)
    compat.fill_fcurve_runs(fcurves, rows, counts)
    got = [(fc.data_path, fc.array_index, [tuple(p.co) for p in fc.keyframe_points],
            {p.interpolation for p in fc.keyframe_points}) for fc in fcurves]
    assert got == [(path, i, [(f, channel_value(c, f)) for f in range(n)], {'LINEAR'})
                   for c, ((path, i, _), n) in enumerate(zip(CHANNELS, counts))]
    assert all(tuple(p.handle_left) == tuple(p.co) == tuple(p.handle_right)
               for fc in fcurves for p in fc.keyframe_points)


def test_a_copied_action_is_the_objects_with_its_own_curves(animated):
    """copy_object_action: a new action of the same F-curves and keys, assigned (with its
    slot), its F-curves its own, listed as stored_fcurves lists the template's."""
    obj, template, fcurves = animated
    copy, copied = compat.copy_object_action(obj, template, "Copy")
    assert copy.name == "Copy" and copy != template and obj.animation_data.action == copy
    if compat.SLOTTED_ACTIONS:
        assert obj.animation_data.action_slot == copy.slots[0]
    stored = compat.stored_fcurves(template)
    assert set(stored) == set(fcurves)
    assert [(fc.data_path, fc.array_index) for fc in copied] == [(fc.data_path, fc.array_index) for fc in stored]
    assert not {fc.as_pointer() for fc in copied} & {fc.as_pointer() for fc in stored}
    copied[0].keyframe_points[0].co[1] = 99.0
    assert fcurves[0].keyframe_points[0].co[1] == channel_value(0, 0)


def test_an_action_without_channels_is_still_the_objects(empty):
    """new_object_action with no channels: an action without F-curves, assigned (4.4+: with a
    slot for the object), copied and shared as any other; an action without a slot shared too."""
    action, fcurves = compat.new_object_action(empty, "Nothing", [])
    assert fcurves == [] and empty.animation_data.action == action and compat.action_fcurves(action) == []
    if compat.SLOTTED_ACTIONS:
        assert [slot.identifier for slot in action.slots] == ["OB" + empty.name]
        assert empty.animation_data.action_slot == action.slots[0]
    copy, copied = compat.copy_object_action(empty, action, "Copy")
    assert copied == [] and empty.animation_data.action == copy and compat.stored_fcurves(copy) == []
    other = bpy.data.objects.new("Other", None)
    compat.share_object_action(other, bpy.data.actions.new("Slotless"))
    assert other.animation_data.action.name == "Slotless"
