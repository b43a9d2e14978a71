"""Checks the test harness itself in every Blender environment of the matrix."""

import bpy
import pytest


def test_blender_version(record_testsuite_property):
    version = bpy.app.version
    assert isinstance(version, tuple) and len(version) == 3
    assert all(isinstance(part, int) for part in version)
    # tools/test.sh shows this in its summary table
    record_testsuite_property("blender_version", "%d.%d.%d" % version)


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_starts_from_an_empty_scene(run):
    # whichever run comes second would see the first run's Empty without the reset
    assert len(bpy.data.objects) == 0
    assert len(bpy.context.scene.objects) == 0
    empty = bpy.data.objects.new("smoke_empty", None)
    bpy.context.scene.collection.objects.link(empty)
    assert bpy.context.scene.objects[:] == [empty]


class OBAN_OT_smoke_noop(bpy.types.Operator):
    bl_idname = "oban_smoke.noop"
    bl_label = "Smoke no-op"

    def execute(self, context):
        return {"FINISHED"}


def test_registration_survives_factory_reset():
    # conftest registers the add-on once per session, then resets per test
    bpy.utils.register_class(OBAN_OT_smoke_noop)
    try:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        assert bpy.ops.oban_smoke.noop() == {"FINISHED"}
    finally:
        bpy.utils.unregister_class(OBAN_OT_smoke_noop)
