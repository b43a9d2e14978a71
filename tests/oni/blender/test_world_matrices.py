"""world_matrices (oni/export/shared/motion.py), the world matrices every export that writes OBANs
takes: an object whose matrix its keys alone make is taken from them (blender/fcurve_values.py),
the scene not set; any other (a parent, a constraint, a driver, an NLA strip moving it, an F-curve
modifier, an ELASTIC key) is sampled frame by frame as before, on its own frames; both as setting
the scene on each frame gives them (1e-6: tests/blender/test_fcurve_values.py says why). A key
that overflows or is not a number gives what sampling gives; an object hidden on some frames (not
evaluated there: its matrix_world holds) has its keys' transform there."""

import bpy
import numpy as np
import pytest
from random_keys import ROTATION_MODES, key_randomly, keyed_object, relative_error, sampled

from oban_import.blender import compat
from oban_import.oni.export.shared import motion

pytestmark = pytest.mark.usefixtures("addon")


def not_from_keys(rng):
    """Keyed objects whose matrix depends on more than their keys, each a way."""
    made = {what: keyed_object(what, rng, "XYZ", keyed=1) for what in
            ("parent", "constraint", "driver", "NLA strip", "modifier", "ELASTIC")}
    made["parent"].parent = keyed_object("the parent", rng, "ZYX")
    made["constraint"].constraints.new("COPY_ROTATION").target = keyed_object("the target", rng, "QUATERNION")
    made["driver"].driver_add("location", 1).driver.expression = "frame / 7"
    strip_owner = keyed_object("strip action", rng, "XYZ", keyed=1)
    made["NLA strip"].animation_data.nla_tracks.new().strips.new("moving", 1, strip_owner.animation_data.action)
    curves = {f.data_path: f for f in compat.played_fcurves(made["modifier"])}
    curves["scale"].modifiers.new("NOISE")
    compat.played_fcurves(made["ELASTIC"])[0].keyframe_points[0].interpolation = "ELASTIC"
    return list(made.values())


def test_objects_from_their_keys_and_objects_sampled_are_as_the_scene_gives_them(monkeypatch):
    rng = np.random.default_rng(21)
    from_keys = [keyed_object(f"keyed {mode}", rng, mode) for mode in ROTATION_MODES]
    others = not_from_keys(rng)
    objects = from_keys + others
    frames = [np.sort(rng.choice(np.arange(-10, 60), int(rng.integers(1, 40)), replace=False)) for _ in objects]
    through_the_scene = []
    sample = motion._sampled_matrices
    monkeypatch.setattr(motion, "_sampled_matrices",
                        lambda context, chosen, own: through_the_scene.extend(chosen) or sample(context, chosen, own))
    got = motion.world_matrices(bpy.context, objects, frames)
    assert through_the_scene == others
    want = sampled(objects, range(-10, 60))
    for obj, own, world in zip(objects, frames, got):
        assert relative_error(world, want[obj][own + 10]) <= 1e-6, obj.name


def test_objects_all_from_their_keys_leave_the_scene_alone(monkeypatch):
    rng = np.random.default_rng(22)
    objects = [keyed_object(f"keyed {mode}", rng, mode) for mode in ROTATION_MODES]
    monkeypatch.setattr(motion, "sampled", lambda *_: pytest.fail("the scene was set"))
    got = motion.world_matrices(bpy.context, objects, [np.arange(-10, 60)] * len(objects))
    assert all(world.shape == (70, 4, 4) for world in got)


@pytest.mark.parametrize("value", [3e38, float("nan")])
def test_a_key_that_overflows_or_is_not_a_number_gives_what_sampling_gives(monkeypatch, value):
    """Extrapolated, 3e38 overflows float32 (Blender clamps it to the largest float); NaN runs
    on to every frame before the first key, named at the first."""
    obj = bpy.data.objects.new("runaway", None)
    bpy.context.scene.collection.objects.link(obj)
    fcurve = compat.new_object_action(obj, "runaway", [("location", 0, "")])[1][0]
    compat.fill_fcurves([fcurve], [1, 2, 3], [[0.0], [value], [1.0]])
    fcurve.extrapolation = "LINEAR"
    frames = [np.arange(-3, 6)]
    from_keys = motion.world_matrices(bpy.context, [obj], frames)[0]
    monkeypatch.setattr(motion, "keyed_matrices", lambda *_: None)
    through_the_scene = motion.world_matrices(bpy.context, [obj], frames)[0]
    if np.isnan(value):
        assert str(from_keys) == str(through_the_scene) == "object 'runaway': non-finite world matrix at frame -3"
    else:
        np.testing.assert_array_equal(from_keys, through_the_scene)


def test_an_object_hidden_on_some_frames_has_its_keys_transform_there():
    obj = bpy.data.objects.new("hidden", None)
    bpy.context.scene.collection.objects.link(obj)
    fcurve = compat.new_object_action(obj, "hidden", [("location", 2, "")])[1][0]
    key_randomly(fcurve, np.random.default_rng(3), keys=4)
    for frame, hidden in ((1, False), (5, True), (9, False)):
        obj.hide_viewport = hidden
        obj.keyframe_insert("hide_viewport", frame=frame)
    frames = np.arange(0, 12)
    world = motion.world_matrices(bpy.context, [obj], [frames])[0]
    np.testing.assert_allclose(world[:, 2, 3], [fcurve.evaluate(frame) for frame in frames.tolist()], rtol=1e-6)
