"""The TRAM export's sampling of an action (oni/export/trams/export.py: _sample): its bones' pose
matrices with the action assigned alone over a pose at rest, from its keys where they alone make
them (blender/pose_values.py), the scene not set; any other action (a bone that inherits no
rotation or only part of its parent's scale, an F-curve modifier, an ELASTIC key) sampled frame by
frame as before; both as setting the scene on each frame gives them (1e-6:
tests/blender/test_pose_values.py says why). The constraints and drivers the sampling mutes do
not send an action to the scene. The inverses of the parts' parents' matrices _local_motion
takes are numpy's, without its LAPACK call a matrix."""

from types import SimpleNamespace

import bpy
import numpy as np
import pytest
from random_keys import keyed_armature, relative_error, sampled_poses

from oban_import.blender import compat
from oban_import.oni.export.trams import export

pytestmark = pytest.mark.usefixtures("addon")
FIRST, COUNT = -10, 61


def at_rest(armature):
    """The scene's poses of the armature's action over a pose at rest, as the export takes them."""
    for bone in armature.pose.bones:
        bone.location, bone.rotation_quaternion, bone.scale = (0, 0, 0), (1, 0, 0, 0), (1, 1, 1)
        bone.rotation_euler, bone.rotation_axis_angle = (0, 0, 0), (0, 0, 1, 0)
    return sampled_poses(armature, range(FIRST, FIRST + COUNT))


def sample(armature, names):
    body = SimpleNamespace(armature=armature, names=names)
    return export._sample(bpy.context, body, armature.animation_data.action, FIRST, COUNT, "sampled")


def test_an_actions_poses_from_its_keys_are_the_scenes_and_leave_the_scene_alone(monkeypatch):
    """Over a pose at rest (a rotation of another mode too), with the armature's constraints and
    its bones' drivers muted while it is sampled, and back after."""
    armature = keyed_armature("from keys", np.random.default_rng(31), keyed=0.5)
    armature.matrix_world = np.eye(4).tolist()    # a constraint (muted) takes a bone through the world and back
    constraint = armature.pose.bones["bone 2"].constraints.new("COPY_LOCATION")
    constraint.target = bpy.data.objects.new("target", None)
    driver = armature.pose.bones["bone 4"].driver_add("location", 0)
    for bone in armature.pose.bones:
        bone.rotation_euler, bone.rotation_axis_angle = (0.5, 0.5, 0.5), (1, 1, 0, 0)
    names = [bone.name for bone in armature.pose.bones][::-1]
    constraint.mute = driver.mute = True
    want = at_rest(armature)[:, ::-1]
    constraint.mute = driver.mute = False
    monkeypatch.setattr(export, "sampled", lambda *_: pytest.fail("the scene was set"))
    assert relative_error(sample(armature, names), want) <= 1e-6
    assert not constraint.mute and not driver.mute


@pytest.mark.parametrize("what", ["rotation not inherited", "scale not inherited", "F-curve modifier", "ELASTIC key"])
def test_other_actions_are_sampled_as_before(monkeypatch, what):
    armature = keyed_armature("sampled", np.random.default_rng(32), keyed=1)
    fcurve = next(f for f in compat.played_fcurves(armature) if f.data_path.endswith(".location"))
    if what == "rotation not inherited":
        armature.data.bones["bone 2"].use_inherit_rotation = False
    elif what == "scale not inherited":
        armature.data.bones["bone 2"].inherit_scale = "NONE"
    elif what == "F-curve modifier":
        fcurve.modifiers.new("NOISE")
    elif what == "ELASTIC key":
        fcurve.keyframe_points[0].interpolation = "ELASTIC"
    names = [bone.name for bone in armature.pose.bones]
    want = at_rest(armature)
    keyed, keyed_poses = [], export.keyed_poses
    monkeypatch.setattr(export, "keyed_poses", lambda *given: keyed.append(keyed_poses(*given)) or keyed[-1])
    np.testing.assert_array_equal(sample(armature, names), want)
    assert keyed == [None]


def test_affine_inverses_are_numpys_and_a_singular_one_zeros():
    rng = np.random.default_rng(33)
    matrices = np.tile(np.eye(4), (200, 1, 1))
    matrices[:, :3, :3] = rng.normal(size=(200, 3, 3))
    matrices[:, :3, 3] = rng.normal(size=(200, 3)) * 10
    matrices[0, :3, :3] = np.diag([1.0, 0.0, 2.0])
    inverses = export._affine_inverses(matrices)
    np.testing.assert_allclose(inverses[1:] @ matrices[1:], np.tile(np.eye(4), (199, 1, 1)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(inverses[1:], np.linalg.inv(matrices[1:]), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(inverses[0], np.diag([0.0, 0, 0, 1]))
