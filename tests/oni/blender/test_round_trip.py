"""Everything an import makes goes back out as it came in (Empties, cameras, selected
objects, a level's placed objects moving and Localized; Every Frame and File Keys; Frames
and Engine playback with a random start), an edited placed object is written relative to
its placement, and what cannot be stored is refused with nothing written."""

import os

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from oban_generate import BASES, random_animation
from paths import DATA
from reference_engine import matrix_at

from oban_import.oni.export.oban import animated_objects, export_objects
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import LOCALIZED, PINGPONG, RANDOM_START, matrix_from_columns
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes, xml_bytes
from oban_import.oni.io.objects.read import read_objects
from oban_import.ui.options import OniExportSettings

pytestmark = pytest.mark.usefixtures("addon")
LEVEL = os.path.join(DATA, "objects", "level", "level9_Final.dat")
WRITERS = {"raw": raw_file_bytes, "oni": oni_file_bytes, "xml": xml_bytes}
PLAYBACKS = [dict(playback="FRAMES"), dict(playback="ENGINE", use_random_start=True, random_seed=5)]


def export_all(tmp_path, fmt, objects=None, **options):
    out = tmp_path / f"out_{fmt}"
    out.mkdir(exist_ok=True)
    objects = animated_objects(bpy.context.scene.objects) if objects is None else objects
    return export_objects(bpy.context, objects, str(out), OniExportSettings(file_format=fmt, **options))


def assert_written_as(made, original, fmt):
    """raw and .oni: the bytes of the original; XML: the same numbers as the original's."""
    data = open(made.path, "rb").read()
    if fmt == "xml":
        back = read_file(made.path)[0]
        for field in ("flags", "frames", "ticks_per_frame", "door_open_frame"):
            assert getattr(back, field) == getattr(original, field), field
        for field in ("keys", "start_matrix", "base_matrix"):
            assert getattr(back, field).tobytes() == getattr(original, field).tobytes(), field
    else:
        assert data == WRITERS[fmt](original), made.path


@pytest.mark.parametrize("fmt", ["raw", "oni", "xml"])
@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
@pytest.mark.parametrize("playback", PLAYBACKS, ids=["frames", "engine"])
def test_a_levels_placed_objects_go_back_out_as_they_came_in(tmp_path, fmt, keys, playback):
    """The sample level's objects: moving, Localized (doors), one whose base has a
    translation; each written back as the level holds it, unchanged."""
    assert bpy.ops.import_anim.oban(filepath=LEVEL, keys=keys, global_scale=0.1, **playback) == {"FINISHED"}
    report = export_all(tmp_path, fmt, global_scale=1.0)   # the scale each was imported with wins
    originals = {a.name: a for a in read_objects(LEVEL).animations}
    assert report.errors == [] and len(report.made) == 6 == len(originals)
    assert {m.item.name for m in report.made} == set(originals)
    localized = [m for m in report.made if originals[m.item.name].has(LOCALIZED)]
    assert localized and all(m.block.get("oni_origin") for m in localized)   # placed doors among them
    for made in report.made:
        assert made.note == "unchanged import" and made.error < 1e-5, made.block.name
        assert_written_as(made, originals[made.item.name], fmt)


@pytest.mark.parametrize("target", ["EMPTY", "CAMERA"])
@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
@pytest.mark.parametrize("playback", PLAYBACKS, ids=["frames", "engine"])
def test_new_empties_and_cameras_go_back_out_bit_for_bit(tmp_path, target, keys, playback):
    rng = np.random.default_rng(41)
    animations = []
    for i, flags in enumerate((0, LOCALIZED, RANDOM_START | 1, RANDOM_START | PINGPONG, LOCALIZED | 1, PINGPONG)):
        animation = random_animation(rng, name=f"rt{i}", flags=flags, base=BASES[i % len(BASES)],
                                     frames=int(rng.integers(3, 50)))
        animation.record_header = (300 + i, 0x06000001)
        path = tmp_path / f"{300 + i:05d}-{animation.name}.OBAN"
        path.write_bytes(raw_file_bytes(animation))
        animations.append(animation)
        assert bpy.ops.import_anim.oban(filepath=str(path), target=target, keys=keys, frame_start=7,
                                        **playback) == {"FINISHED"}
    report = export_all(tmp_path, "raw")
    assert report.errors == [] and len(report.made) == len(animations)
    for made, animation in zip(sorted(report.made, key=lambda m: m.item.name), animations):
        assert made.note == "unchanged import", made.block.name
        assert open(made.path, "rb").read() == raw_file_bytes(animation)


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_selected_objects_go_back_out_bit_for_bit(tmp_path, keys):
    """Moved, turned and parented (under a parent that stands still) before the import; a
    Localized animation plays behind the placement, which the export takes off again."""
    parent = bpy.data.objects.new("stand", None)
    parent.location, parent.rotation_euler = (4, -2, 1), (0, 0, 0.7)
    bpy.context.scene.collection.objects.link(parent)
    for i, flags in enumerate((0, LOCALIZED, LOCALIZED | 1)):
        animation = random_animation(np.random.default_rng(60 + i), name=f"sel{i}", flags=flags, frames=30)
        path = tmp_path / f"{i:05d}-{animation.name}.OBAN"
        path.write_bytes(raw_file_bytes(animation))
        obj = bpy.data.objects.new(animation.name, None)
        obj.location, obj.rotation_euler = (i, 2.0, -1.0), (0.3, 0.0, 1.1 * i)
        obj.parent = parent if i == 2 else None
        bpy.context.scene.collection.objects.link(obj)
        bpy.context.view_layer.update()
        for other in bpy.context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        assert bpy.ops.import_anim.oban(filepath=str(path), target="SELECTED", keys=keys) == {"FINISHED"}
        report = export_all(tmp_path, "raw", objects=[obj])
        assert report.errors == [] and report.made[0].note == "unchanged import"
        assert open(report.made[0].path, "rb").read() == raw_file_bytes(animation)


def engine_world_of_placed(placed_origin, animation, scale):
    """docs/objects.md 6, plainly: a Localized placed object stands at s.A . origin . M(f) . (s.A)^-1
    in Blender, M(f) from the reference engine; default axes (x, y, z) -> (x, -z, y)."""
    c = np.eye(4)
    c[:3, :3] = scale * np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    origin = matrix_from_columns(placed_origin)
    keys = [(k["rotation"].tolist(), k["position"].tolist(), int(k["frame"])) for k in animation.keys]
    engine = [np.array(matrix_at(keys, animation.base_matrix.tolist(), animation.has(LOCALIZED), f))
              for f in range(animation.frames)]
    return np.array([c @ origin @ m @ np.linalg.inv(c) for m in engine])


@pytest.mark.parametrize("keys", ["EVERY_FRAME", "FILE"])
def test_an_edited_door_is_written_relative_to_its_placement(tmp_path, keys):
    """A Localized placed object moved by the user: the file holds its motion behind its
    origin, so that the engine, composing origin and motion, puts it where Blender shows it."""
    assert bpy.ops.import_anim.oban(filepath=LEVEL, keys=keys, global_scale=0.1) == {"FINISHED"}
    level = read_objects(LEVEL)
    door = next(p for p in level.objects if p.animation is not None and p.animation.has(LOCALIZED))
    obj = bpy.data.objects[door.name]
    obj.animation_data_clear()   # the user's own motion: a turn and a slide, keyed by hand
    start = obj.matrix_world.copy()
    for frame, turn, slide in ((1, 0.0, 0.0), (20, 0.8, 0.5), (door.animation.frames, 1.6, 1.0)):
        obj.matrix_world = start
        obj.rotation_mode = "XYZ"
        obj.rotation_euler.z += turn
        obj.location.x += slide
        obj.keyframe_insert("rotation_euler", frame=frame)
        obj.keyframe_insert("location", frame=frame)
    report = export_all(tmp_path, "raw", objects=[obj])
    assert report.errors == [] and report.made[0].note == ""
    written = read_file(report.made[0].path)[0]
    assert written.has(LOCALIZED) and written.frames == door.animation.frames
    wanted = engine_world_of_placed(door.origin, written, 0.1)
    scene = bpy.context.scene
    for f, world in enumerate(wanted):
        scene.frame_set(1 + f)
        got = np.array(obj.matrix_world)
        assert np.abs(got[:3, :3] - world[:3, :3]).max() <= 1e-4 * np.abs(world[:3, :3]).max(), f
        assert np.abs(got[:3, 3] - world[:3, 3]).max() <= 1e-4 * max(1.0, np.abs(world[:3, 3]).max()), f


def turning_fast(name):
    """An Empty keyed on every frame far from the origin, turning: float32 keys hold it to
    about 1e-8, not to 1e-9."""
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    for frame in range(1, 31):
        obj.location = (1000.0 + 0.37 * frame, 3.1 * np.sin(frame), 0.0)
        obj.rotation_euler = (0.1 * frame, 0.0, 0.05 * frame * frame)
        obj.keyframe_insert("location", frame=frame)
        obj.keyframe_insert("rotation_euler", frame=frame)
    return obj


def test_motion_a_file_cannot_hold_within_the_tolerance_is_refused(tmp_path):
    """Below what float32 keys can hold: an error naming the object and the frame, no file."""
    obj = turning_fast("jitter")
    report = export_all(tmp_path, "raw", objects=[obj], tolerance=1e-9)
    assert report.made == [] and len(report.errors) == 1
    assert "object 'jitter': frame " in report.errors[0] and "more than the tolerance" in report.errors[0]
    assert os.listdir(tmp_path / "out_raw") == []


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_refuses_it_with_exit_1(tmp_path, command):
    turning_fast("jitter")
    blend = tmp_path / "jitter.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "out"
    done = run(command, "export", blend, "-o", out, "--tolerance", "1e-9", "--format", "raw")
    assert done.returncode == 1 and "error: object 'jitter': frame " in done.stderr, done.stderr
    assert os.listdir(out) == []
