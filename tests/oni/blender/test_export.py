"""Export: lossless round trips of imported files, Blender-authored motion checked
frame by frame against the evaluated scene, and what an OBAN cannot hold."""

import math
import os

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from oban_generate import BASES, random_animation
from objects_generate import level_file_bytes

from oban_import.blender.compat import action_fcurves
from oban_import.oni.engine.frames import frame_matrices
from oban_import.oni.engine.to_blender import DEFAULT_AXES
from oban_import.oni.export.oban import export_objects
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import LOCALIZED, LOOP
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes
from oban_import.ui.options import OniExportSettings

pytestmark = pytest.mark.usefixtures("addon")
WRITERS = {"raw": raw_file_bytes, "oni": oni_file_bytes, "xml": xml_bytes}
NAMES = {"raw": "{i:05d}-{name}.OBAN", "oni": "OBAN{name}.oni", "xml": "OBAN{name}.xml"}


def generated(count, seed, flags=None):
    rng = np.random.default_rng(seed)
    return [random_animation(rng, name=f"rt{seed}_{i}", flags=i % 32 if flags is None else flags,
                             base=BASES[i % len(BASES)], frames=int(rng.integers(2, 60))) for i in range(count)]


def export(tmp_path, objects, fmt="oni", **options):
    out = tmp_path / f"out_{fmt}"
    out.mkdir(exist_ok=True)
    options = {"global_scale": 1.0} | options   # motion authored here, in Oni units
    report = export_objects(bpy.context, objects, str(out), OniExportSettings(file_format=fmt, **options))
    return report.made, report.errors


@pytest.mark.parametrize("fmt", ["raw", "oni", "xml"])
@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_import_then_export_unchanged_gives_the_same_file(tmp_path, fmt, keys):
    animations = generated(12, seed=hash(fmt) % 1000)
    sources = []
    for i, animation in enumerate(animations):
        animation.record_header = (1000 + i, 0x06000001)
        path = tmp_path / NAMES[fmt].format(i=1000 + i, name=animation.name)
        path.write_bytes(WRITERS[fmt](animation))
        sources.append(path)
        bpy.ops.import_anim.oban(filepath=str(path), keys=keys)
    objects = [bpy.data.objects[a.name] for a in animations]
    written, errors = export(tmp_path, objects, fmt)
    assert errors == [] and len(written) == len(animations)
    for w, source in zip(written, sources):
        assert w.note == "unchanged import" and w.error < 1e-6
        if fmt == "xml":  # the same numbers
            a, b = read_file(w.path)[0], read_file(str(source))[0]
            assert a.keys.tobytes() == b.keys.tobytes() and a.flags == b.flags
            assert a.base_matrix.tobytes() == b.base_matrix.tobytes()
            assert a.start_matrix.tobytes() == b.start_matrix.tobytes()
        else:
            assert open(w.path, "rb").read() == source.read_bytes(), w.path


def test_an_export_into_the_folder_it_was_read_from_is_refused_unless_asked(tmp_path):
    """An OBAN imported from OBANname.oni and exported into its own folder would replace that file:
    refused, naming it, the file as it was (also edited: its motion moved); with Replace Sources,
    written."""
    animation = generated(1, seed=5)[0]
    source = tmp_path / f"OBAN{animation.name}.oni"
    source.write_bytes(oni_file_bytes(animation))
    bpy.ops.import_anim.oban(filepath=str(source))
    obj = bpy.data.objects[animation.name]
    obj.animation_data.action = None             # edited: it stands still now
    before = source.read_bytes()
    report = export_objects(bpy.context, [obj], str(tmp_path), OniExportSettings(global_scale=1.0))
    assert not report.made and len(report.errors) == 1, report.errors
    assert report.errors[0].startswith(f"{source}: would replace the file it was read from"), report.errors
    assert source.read_bytes() == before and sorted(os.listdir(tmp_path)) == [source.name]
    report = export_objects(bpy.context, [obj], str(tmp_path), OniExportSettings(global_scale=1.0,
                                                                                 replace_sources=True))
    assert not report.errors and report.made[0].path == str(source) and source.read_bytes() != before
    assert read_file(str(source))[0].frames == animation.frames


def test_two_objects_of_one_animation_name_are_both_refused(tmp_path):
    """A copy of an imported object (it keeps the animation's name) moved otherwise would write
    the same OBAN file with other keys: both refused, each naming the other, nothing written; the
    same bytes (a plain copy) are written once."""
    animation = generated(1, seed=9)[0]
    source = tmp_path / "in" / f"OBAN{animation.name}.oni"
    source.parent.mkdir()
    source.write_bytes(oni_file_bytes(animation))
    bpy.ops.import_anim.oban(filepath=str(source))
    obj = bpy.data.objects[animation.name]
    copy = obj.copy()
    bpy.context.scene.collection.objects.link(copy)
    written, errors = export(tmp_path, [obj, copy])
    assert errors == [] and len(written) == 1 and written[0].path.endswith(f"OBAN{animation.name}.oni")
    copy.animation_data.action = None
    copy.location = (5.0, 0.0, 0.0)
    written, errors = export(tmp_path, [obj, copy])
    assert not written and sorted(errors) == sorted(
        f"object '{a.name}': object '{b.name}' would write OBAN{animation.name}.oni too, otherwise; nothing written "
        f"for them: give each animation its own name (its 'oban_name'); a level's door leaves, which share their "
        f"class's, go back with the level (Export Level)" for a, b in ((obj, copy), (copy, obj)))


def test_a_level_file_exports_each_animation_as_its_oni(tmp_path):
    animations = generated(6, seed=8)
    level = tmp_path / "level2_Final.dat"
    level.write_bytes(level_file_bytes(animations, [(b"TBUS", "subs", b"x" * 40)]))
    bpy.ops.import_anim.oban(filepath=str(level))
    written, errors = export(tmp_path, list(bpy.data.objects), "oni")
    assert not errors
    for w in written:
        animation = next(a for a in animations if a.name == w.item.name)
        expected = read_file(str(level), animation.name)[0]
        assert open(w.path, "rb").read() == oni_file_bytes(expected)


def test_panel_edits_are_written(tmp_path):
    animation = generated(1, seed=9, flags=LOCALIZED)[0]
    path = tmp_path / f"{animation.name}.oban"
    path.write_bytes(raw_file_bytes(animation))
    bpy.ops.import_anim.oban(filepath=str(path))
    obj = bpy.data.objects[animation.name]
    obj.oban.loop = True
    obj.oban.door_open_frame = 7
    written, _ = export(tmp_path, [obj], "oni")
    back = read_file(written[0].path)[0]
    assert back.flags == LOCALIZED | LOOP and back.door_open_frame == 7
    assert back.keys.tobytes() == animation.keys.tobytes()


def blender_to_oni(world, camera=False):
    """docs/engine.md 4 in reverse, written out plainly for the checks."""
    a = DEFAULT_AXES
    m = np.zeros_like(world)
    m[:, 3, 3] = 1
    m[:, :3, 3] = world[:, :3, 3] @ a  # A is orthogonal: A^-1 = A^T
    m[:, :3, :3] = a.T @ world[:, :3, :3] if camera else a.T @ world[:, :3, :3] @ a
    return m


def sampled(obj, frames):
    scene = bpy.context.scene
    result = []
    for f in frames:
        scene.frame_set(f)
        result.append(np.array(obj.matrix_world))
    return np.array(result)


def check_against_scene(written, obj, first, camera=False, tolerance=1e-4):
    back = read_file(written.path)[0]
    frames = range(first, first + back.frames)
    want = blender_to_oni(sampled(obj, frames), camera)
    got = frame_matrices(back)
    error = np.abs(got - want).max(axis=(1, 2)) / np.maximum(1, np.abs(want).max(axis=(1, 2)))
    assert error.max() <= tolerance * 1.01, (obj.name, error.max())
    return back


def test_keyed_euler_rotations(tmp_path):
    obj = bpy.data.objects.new("spinner", None)
    bpy.context.scene.collection.objects.link(obj)
    for frame, angles, location in ((1, (0, 0, 0), (0, 0, 0)), (40, (1.0, 0.3, 2.0), (10, -5, 3)),
                                    (100, (2.5, -1.0, 4.0), (20, 0, 8))):
        obj.rotation_euler, obj.location = angles, location
        obj.keyframe_insert("rotation_euler", frame=frame)
        obj.keyframe_insert("location", frame=frame)
    written, errors = export(tmp_path, [obj])
    assert not errors and written[0].item.frames == 100
    check_against_scene(written[0], obj, 1)
    # Bezier easing is not what the engine's lerp does: a looser tolerance needs fewer keys
    loose, _ = export(tmp_path, [obj], "raw", tolerance=1e-2)
    check_against_scene(loose[0], obj, 1, tolerance=1e-2)
    assert len(loose[0].item.keys) < len(written[0].item.keys)


def test_a_follow_path_camera_needs_few_keys(tmp_path):
    curve = bpy.data.curves.new("path", "CURVE")
    spline = curve.splines.new("BEZIER")
    spline.bezier_points.add(3)
    for point, co in zip(spline.bezier_points, [(0, 0, 0), (50, 20, 10), (100, -10, 30), (150, 40, 0)]):
        point.co = co
        point.handle_left_type = point.handle_right_type = "AUTO"
    curve.path_duration = 240
    path = bpy.data.objects.new("path", curve)
    camera = bpy.data.objects.new("flyby", bpy.data.cameras.new("flyby"))
    for obj in (path, camera):
        bpy.context.scene.collection.objects.link(obj)
    follow = camera.constraints.new("FOLLOW_PATH")
    follow.target, follow.use_curve_follow, follow.forward_axis = path, True, "TRACK_NEGATIVE_Z"
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 240
    bpy.context.view_layer.update()
    written, errors = export(tmp_path, [camera])
    assert not errors
    back = check_against_scene(written[0], camera, 1, camera=True)
    assert back.frames == 240 and len(back.keys) * 4 <= back.frames, len(back.keys)


def test_a_parented_child_exports_its_world_motion(tmp_path):
    parent = bpy.data.objects.new("carrier", None)
    child = bpy.data.objects.new("cargo", None)
    for obj in (parent, child):
        bpy.context.scene.collection.objects.link(obj)
    child.parent = parent
    child.location = (2, 0, 1)
    parent.rotation_euler = (0, 0, 0)
    parent.keyframe_insert("rotation_euler", frame=1)
    parent.rotation_euler = (0, 0, math.pi)
    parent.keyframe_insert("rotation_euler", frame=60)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 60
    written, errors = export(tmp_path, [child])
    assert not errors
    check_against_scene(written[0], child, 1)


def test_a_changing_scale_is_refused_naming_object_and_frame(tmp_path):
    obj = bpy.data.objects.new("balloon", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.keyframe_insert("scale", frame=1)
    obj.scale = (2, 2, 2)
    obj.keyframe_insert("scale", frame=20)
    written, errors = export(tmp_path, [obj])
    assert written == [] and len(errors) == 1
    assert "object 'balloon'" in errors[0] and "scale changes over time (frame" in errors[0]
    assert os.listdir(tmp_path / "out_oni") == []


def test_shear_is_refused(tmp_path):
    parent = bpy.data.objects.new("squashed", None)
    bpy.context.scene.collection.objects.link(parent)
    parent.scale = (1, 3, 1)
    child = moving_empty("tilted", 10, (5, 0, 0), parent=parent)
    child.rotation_euler = (0, 0, 0.7)
    written, errors = export(tmp_path, [child])
    assert written == [] and "object 'tilted'" in errors[0] and "shear" in errors[0]


def moving_empty(name, last_frame, to, parent=None):
    """An Empty keyed at frame 1 where it stands and at `last_frame` at `to`."""
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = parent
    obj.keyframe_insert("location", frame=1)
    obj.location = to
    obj.keyframe_insert("location", frame=last_frame)
    return obj


def test_too_many_frames_is_refused(tmp_path):
    obj = moving_empty("endless", 70000, (1, 0, 0))
    written, errors = export(tmp_path, [obj])
    assert written == [] and "object 'endless'" in errors[0] and "65535" in errors[0]


def test_export_operator_and_menu(tmp_path):
    obj = moving_empty("mover", 30, (10, 0, 0))
    for curve in action_fcurves(obj.animation_data.action, obj):
        for key in curve.keyframe_points:
            key.interpolation = "LINEAR"
    obj.select_set(True)
    assert bpy.ops.export_anim.oban(directory=str(tmp_path), file_format="xml") == {"FINISHED"}
    back = read_file(str(tmp_path / "OBANmover.xml"))[0]
    assert back.frames == 30 and len(back.keys) == 2  # a straight line needs its two ends
    np.testing.assert_allclose(frame_matrices(back)[-1][:3, 3], [100, 0, 0], atol=1e-4)   # 10 m: 100 Oni units


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_export_command(tmp_path, command):
    animations = generated(3, seed=10)
    for animation in animations:
        path = tmp_path / f"{animation.name}.oban"
        path.write_bytes(raw_file_bytes(animation))
        bpy.ops.import_anim.oban(filepath=str(path))
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "exported"
    done = run(command, "export", blend, "-o", out, "--format", "raw", "--objects", animations[1].name, "nobody")
    assert done.returncode == 1 and "no object named 'nobody'" in done.stderr
    assert os.listdir(out) == [f"00001-{animations[1].name}.OBAN"]
    assert (out / f"00001-{animations[1].name}.OBAN").read_bytes() == raw_file_bytes(animations[1])
    done = run(command, "export", blend, "-o", out, "--format", "xml")
    assert done.returncode == 0, done.stderr
    assert sorted(p for p in os.listdir(out) if p.endswith(".xml")) == sorted(f"OBAN{a.name}.xml" for a in animations)
    assert run(command, "export", tmp_path / "missing.blend", "-o", out).returncode == 2
    (tmp_path / "junk.blend").write_bytes(b"not a blend file")
    done = run(command, "export", tmp_path / "junk.blend", "-o", out)
    assert done.returncode == 1 and f"{tmp_path / 'junk.blend'}: cannot be opened" in done.stderr


def test_a_cycling_action_is_written_as_a_loop_and_a_driven_object_counts(tmp_path):
    spinner = moving_empty("spinner", 24, (0, 0, 0))
    spinner.rotation_euler = (0, 0, 1.0)
    spinner.keyframe_insert("rotation_euler", frame=12)
    for curve in action_fcurves(spinner.animation_data.action, spinner):
        curve.modifiers.new("CYCLES")
    follower = bpy.data.objects.new("follower", None)
    bpy.context.scene.collection.objects.link(follower)
    driver = follower.driver_add("location", 0).driver
    driver.type, driver.expression = "SCRIPTED", "frame * 0.5"
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 20
    from oban_import.oni.export.oban import animated_objects
    assert animated_objects([spinner, follower]) == [spinner, follower]
    written, errors = export(tmp_path, [spinner, follower])
    assert not errors
    assert read_file(written[0].path)[0].flags == LOOP
    follower_back = check_against_scene(written[1], follower, 1)
    assert follower_back.flags == 0 and follower_back.frames == 20


def test_linear_non_unit_quaternion_keys_export_to_as_many_keys(tmp_path):
    """Keyed the engine's way (LINEAR location and quaternion channels, non-unit values):
    Blender's normalised blend is the engine's, so 5 keys over 240 frames stay 5."""
    rng = np.random.default_rng(12)
    obj = bpy.data.objects.new("swinging", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.rotation_mode = "QUATERNION"
    q = rng.normal(size=4)
    for frame in (1, 41, 101, 171, 240):
        q = q + rng.normal(size=4) * 0.5
        obj.rotation_quaternion = q / np.linalg.norm(q) * rng.uniform(0.4, 2.5)
        obj.location = rng.normal(0, 20, 3)
        obj.keyframe_insert("rotation_quaternion", frame=frame)
        obj.keyframe_insert("location", frame=frame)
    for fcurve in action_fcurves(obj.animation_data.action, obj):
        for key in fcurve.keyframe_points:
            key.interpolation = "LINEAR"
    written, errors = export(tmp_path, [obj], "raw")
    assert not errors and written[0].item.frames == 240 and len(written[0].item.keys) == 5
    check_against_scene(written[0], obj, 1)
