"""The operator in Blender: matrix_world at every frame against the engine, keys,
properties, scene settings, and files that fail."""

import math
import os
import shutil

import bpy
import numpy as np
import pytest
from oban_generate import random_animation
from oni_scene import DATA, expected_world, generated_files, import_files, world_error

from oban_import.blender import compat
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.write import oni_file_bytes, raw_file_bytes
from oban_import.ui.options import CHARACTER_EXPORT, ONI_EXPORT, ONI_IMPORT, SCALE

pytestmark = pytest.mark.usefixtures("addon")


@pytest.mark.parametrize("writer", [raw_file_bytes, oni_file_bytes])
def test_matrix_world_matches_the_engine_at_every_frame(tmp_path, writer):
    animations, paths = generated_files(tmp_path, 24, seed=1, writer=writer)
    assert import_files(paths) == {"FINISHED"}
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        assert world_error(obj, expected_world(animation)) < 1e-5, animation.name


@pytest.mark.parametrize("options", [
    dict(global_scale=0.1, frame_start=10),
    dict(axis_forward="Y", axis_up="Z", global_scale=2.5),
    dict(rotation_mode="XYZ", frame_start=-5),
    dict(rotation_mode="ZXY"),
])
def test_options_keep_matrix_world_exact(tmp_path, options):
    animations, paths = generated_files(tmp_path, 10, seed=2)
    assert import_files(paths, **options) == {"FINISHED"}
    from bpy_extras.io_utils import axis_conversion
    axes = np.array(axis_conversion(from_forward=options.get("axis_forward", "-Z"),
                                    from_up=options.get("axis_up", "Y")))
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        assert obj.rotation_mode == options.get("rotation_mode", "QUATERNION")
        expected = expected_world(animation, axes, options.get("global_scale", SCALE.default))
        assert world_error(obj, expected, options.get("frame_start", 1)) < 1e-5, animation.name


def test_keys_on_every_frame_linear_and_continuous(tmp_path):
    animations, paths = generated_files(tmp_path, 6, seed=3, max_angle=math.radians(150))
    import_files(paths)
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        action = obj.animation_data.action
        assert action.name == animation.name
        curves = compat.action_fcurves(action, obj)
        paths_found = sorted((c.data_path, c.array_index) for c in curves)
        assert paths_found == sorted([("location", i) for i in range(3)] + [("rotation_quaternion", i) for i in range(4)]
                                     + [("scale", i) for i in range(3)])
        quaternion = []
        for curve in curves:
            n = len(curve.keyframe_points)
            assert n == animation.frames
            co = np.empty(2 * n, np.float32)
            curve.keyframe_points.foreach_get("co", co)
            np.testing.assert_array_equal(co[0::2], np.arange(1, n + 1))
            assert {k.interpolation for k in curve.keyframe_points} == {"LINEAR"}
            if curve.data_path == "rotation_quaternion":
                quaternion.append(co[1::2])
        q = np.array(quaternion).T
        assert ((q[1:] * q[:-1]).sum(axis=1) > 0).all()


def test_every_key_is_the_reference_engine_transform_in_float32(tmp_path):
    """Each key is the reference engine's world matrix (tests/fixtures/reference_engine.py, one
    frame at a time in plain Python), split into location, rotation and scale here, to the
    float32 the F-curves hold: within 2 float32 steps of the curve's magnitude (the import
    splits the same matrices its own way, in float64, and rounds once; a float32 base is a
    rotation times a scale only to its own rounding)."""
    animations, paths = generated_files(tmp_path, 12, seed=13)
    import_files(paths)
    for animation in animations:
        obj = bpy.data.objects[animation.name]
        scale = obj["oban_import_scale"]   # the operator's float property: 0.1 as a float32 holds it
        assert scale == np.float32(SCALE.default)
        wanted = reference_channels(expected_world(animation, scale=scale))
        curves = list(compat.action_fcurves(obj.animation_data.action, obj))
        assert [(c.data_path, c.array_index) for c in curves] == CHANNELS
        got = np.empty((len(curves), animation.frames), np.float32)
        for values, curve in zip(got, curves):
            keys = np.empty(2 * animation.frames, np.float32)
            curve.keyframe_points.foreach_get("co", keys)
            values[:] = keys[1::2]
        got[3:7] *= np.sign((got[3:7] * wanted.T[3:7]).sum(axis=0))   # a quaternion's sign is free
        size = np.abs(wanted).max(axis=0)   # a curve's magnitude: its float32 steps bound the rounding
        size[3:7] = 1.0                      # a unit quaternion's
        assert (np.abs(got - wanted.T) <= 2 * np.spacing(size.astype(np.float32))[:, None]).all(), animation.name


CHANNELS = [("location", i) for i in range(3)] + [("rotation_quaternion", i) for i in range(4)] + \
    [("scale", i) for i in range(3)]


def reference_channels(world):
    """(F, 10) location, rotation quaternion (w x y z) and scale of (F, 4, 4) matrices that are a
    rotation times an axis-aligned scale: the scale the columns' lengths (negative for a mirror),
    the quaternion of the rotation left by Shepperd's rule (its largest component first)."""
    linear = world[:, :3, :3]
    scale = np.linalg.norm(linear, axis=1) * np.where(np.linalg.det(linear) < 0, -1.0, 1.0)[:, None]
    r = linear / scale[:, None, :]
    trace = np.trace(r, axis1=1, axis2=2)
    diagonal = np.diagonal(r, axis1=1, axis2=2)
    squares = np.stack([1 + trace, 1 + 2 * diagonal[:, 0] - trace, 1 + 2 * diagonal[:, 1] - trace,
                        1 + 2 * diagonal[:, 2] - trace], axis=1) / 4   # w², x², y², z²
    largest = squares.argmax(axis=1)
    big = np.sqrt(squares[np.arange(len(r)), largest])
    products = {  # 4 times the products of two components, from the off-diagonal sums and differences
        (0, 1): r[:, 2, 1] - r[:, 1, 2], (0, 2): r[:, 0, 2] - r[:, 2, 0], (0, 3): r[:, 1, 0] - r[:, 0, 1],
        (1, 2): r[:, 0, 1] + r[:, 1, 0], (1, 3): r[:, 0, 2] + r[:, 2, 0], (2, 3): r[:, 1, 2] + r[:, 2, 1]}
    quaternion = np.empty((len(r), 4))
    for k in range(4):
        chosen = largest == k
        quaternion[chosen, k] = big[chosen]
        for j in range(4):
            if j != k:
                quaternion[chosen, j] = products[min(j, k), max(j, k)][chosen] / (4 * big[chosen])
    return np.concatenate([world[:, :3, 3], quaternion, scale], axis=1)


def test_properties_on_object_and_action():
    path = os.path.join(DATA, "raw", "00010-door_swing.OBAN")
    assert bpy.ops.import_anim.oban(filepath=path) == {"FINISHED"}
    obj = bpy.data.objects["door_swing"]
    door = read_file(path)[0]
    for owner in (obj, obj.animation_data.action):
        assert owner["oban_name"] == "door_swing"
        assert owner["oban_flags"] == 0x10 and owner["oban_localized"] and not owner["oban_loop"]
        assert not owner["oban_pingpong"] and not owner["oban_random_start"] and not owner["oban_autostart"]
        assert owner["oban_frames"] == 100 and owner["oban_ticks_per_frame"] == 80
        assert owner["oban_door_open_frame"] == 50
        assert np.array(owner["oban_start_matrix"], np.float32).tobytes() == door.start_matrix.tobytes()
        assert np.array(owner["oban_base_matrix"], np.float32).tobytes() == door.base_matrix.tobytes()
    assert obj.type == "EMPTY" and obj.select_get() and bpy.context.view_layer.objects.active == obj


def test_only_the_imported_objects_are_selected(tmp_path):
    before = [bpy.data.objects.new(name, None) for name in ("picked", "left")]
    for obj in before:
        bpy.context.scene.collection.objects.link(obj)
    before[0].select_set(True)
    _, paths = generated_files(tmp_path, 3, seed=31)
    assert import_files(paths) == {"FINISHED"}
    selected = set(bpy.context.selected_objects)
    assert len(selected) == 3 and not selected & set(before)
    assert bpy.context.view_layer.objects.active in selected


def test_scene_runs_at_60_fps_and_the_range_only_grows():
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_end = 24, 1, 500
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "raw", "00011-fan_loop.OBAN"))
    assert (scene.render.fps, scene.render.fps_base) == (60, 1.0)
    assert (scene.frame_start, scene.frame_end) == (1, 500)
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "raw", "00011-fan_loop.OBAN"), frame_start=480)
    assert (scene.frame_start, scene.frame_end) == (1, 480 + 47)
    scene.render.fps = 30
    bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "raw", "00011-fan_loop.OBAN"), frame_start=-10,
                             update_scene_fps=False, update_scene_duration=False)
    assert (scene.render.fps, scene.frame_start, scene.frame_end) == (30, 1, 527)


def test_a_level_file_imports_every_oban():
    assert bpy.ops.import_anim.oban(filepath=os.path.join(DATA, "level", "level1_Final.dat")) == {"FINISHED"}
    assert sorted(o.name for o in bpy.data.objects) == ["camera_flyby", "door_swing", "fan_loop",
                                                         "lift_pingpong", "spec_example"]


def datablock_counts():
    return (len(bpy.data.objects), len(bpy.data.actions), len(bpy.data.cameras))


def test_bad_files_add_nothing_and_the_good_ones_still_import(tmp_path):
    animations, paths = generated_files(tmp_path, 3, seed=4)
    bad = tmp_path / "00099-broken.OBAN"
    bad.write_bytes(raw_file_bytes(animations[0])[:-5])
    empty = tmp_path / "00098-empty.OBAN"
    empty.write_bytes(b"")
    # called from Python, an operator that reported errors raises them once it has finished
    with pytest.raises(RuntimeError) as caught:
        import_files([paths[0], bad, paths[1], empty, paths[2]])
    assert f"{bad}: 'broken': key count says" in str(caught.value)
    assert f"{empty}: empty file" in str(caught.value)
    assert sorted(o.name for o in bpy.data.objects) == sorted(a.name for a in animations)
    assert datablock_counts() == (3, 3, 0)


def test_progress_rises_through_reading_and_building_many_files(tmp_path):
    from oban_import.oni.blender.importer import READING_SHARE
    from oban_import.oni.blender.importer import import_files as import_paths
    from oban_import.ui.options import OniImportSettings
    _, paths = generated_files(tmp_path, 80, seed=8)
    progress = []
    result = import_paths(bpy.context, [str(p) for p in paths], OniImportSettings(), progress=progress.append)
    assert not result.errors and len(result.made) == 80
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert sum(0 < p <= READING_SHARE for p in progress) >= 4          # while the files are read
    assert sum(READING_SHARE < p < 1.0 for p in progress) >= 4         # while their objects are built


def test_a_batch_of_only_bad_files_is_cancelled_and_adds_nothing(tmp_path):
    bad = tmp_path / "00001-x.OBAN"
    bad.write_bytes(b"\0" * 50)
    before = datablock_counts()
    with pytest.raises(RuntimeError, match="00001-x.OBAN: 'x': truncated at byte 50"):
        import_files([bad])
    assert datablock_counts() == before


def test_importing_twice_makes_new_objects(tmp_path):
    path = os.path.join(DATA, "raw", "00011-fan_loop.OBAN")
    bpy.ops.import_anim.oban(filepath=path)
    first = bpy.data.objects["fan_loop"]
    first_keys = len(compat.action_fcurves(first.animation_data.action, first)[0].keyframe_points)
    bpy.ops.import_anim.oban(filepath=path)
    assert len(bpy.data.objects) == 2 and len(bpy.data.actions) == 2
    assert first.name == "fan_loop" and first.animation_data.action.name == "fan_loop"
    assert len(compat.action_fcurves(first.animation_data.action, first)[0].keyframe_points) == first_keys


def test_a_base_that_loc_rot_scale_cannot_hold_is_reported_with_its_error(tmp_path):
    from oban_import.oni.blender.importer import import_files as import_into
    from oban_import.ui.options import OniImportSettings
    animation = random_animation(np.random.default_rng(5), name="sheared", frames=20, flags=0)
    animation.base_matrix[:9] = np.array([[1, 0, 0], [0.5, 1, 0], [0, 0, 1]], np.float32).ravel()  # shear
    path = tmp_path / "sheared.oban"
    path.write_bytes(raw_file_bytes(animation))
    result = import_into(bpy.context, [str(path)], OniImportSettings())
    assert len(result.made) == 1
    assert any("shear" in w and "sheared" in w for w in result.warnings), result.warnings


def test_menu_entries_and_drag_and_drop_handler():
    import_draw = [getattr(f, "dialog", None) for f in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()]
    export_draw = [getattr(f, "dialog", None) for f in bpy.types.TOPBAR_MT_file_export._dyn_ui_initialize()]
    assert ONI_IMPORT in import_draw and ONI_EXPORT in export_draw and CHARACTER_EXPORT in export_draw
    assert "UNDO" in bpy.types.IMPORT_ANIM_OT_oban.bl_options
    if bpy.app.version >= (4, 1, 0):  # FileHandler exists from 4.1
        handler = bpy.types.OBAN_FH_import
        assert handler.bl_import_operator == "import_anim.oban"
        assert set(handler.bl_file_extensions.split(";")) == {".oban", ".oni", ".dat", ".xml"}
    else:
        assert not compat.HAS_FILE_HANDLER


def test_a_file_without_a_matching_oban_is_reported_and_adds_nothing():
    path = os.path.join(DATA, "raw", "00011-fan_loop.OBAN")
    with pytest.raises(RuntimeError, match=r"00011-fan_loop.OBAN: holds no OBAN instance matching '\*door\*'"):
        bpy.ops.import_anim.oban(filepath=path, name_filter="*door*")
    assert datablock_counts() == (0, 0, 0)


def test_an_unexpected_failure_takes_back_only_its_own_file(tmp_path, monkeypatch):
    from oban_import.oni.blender.oban import actions as oban_actions
    animations, paths = generated_files(tmp_path, 2, seed=9)
    level = os.path.join(DATA, "level", "level1_Final.dat")
    animate = oban_actions.animate

    def failing(obj, name, *args):  # a bug on the third of the level's five animations
        if name == "fan_loop":
            raise RuntimeError("boom")
        return animate(obj, name, *args)

    monkeypatch.setattr(oban_actions, "animate", failing)
    with pytest.raises(RuntimeError) as caught:
        bpy.ops.import_anim.oban(directory=str(tmp_path), files=[{"name": paths[0].name}, {"name": level},
                                                                 {"name": paths[1].name}])
    assert f"{level}: could not be imported: RuntimeError('boom')" in str(caught.value)
    assert sorted(o.name for o in bpy.data.objects) == sorted(a.name for a in animations)
    assert datablock_counts() == (2, 2, 0)


@pytest.mark.parametrize("failing_after", [1, 3])
def test_a_failure_in_the_math_refuses_each_file_it_reaches_and_leaves_none_half_built(tmp_path, monkeypatch,
                                                                                        failing_after):
    """The transforms are computed as the build takes them: the math failing after the
    first animation (a raw file) or the third (inside the level's five) refuses every file
    from the one it fails in, naming the cause, and leaves nothing of them; the files
    built before it stay."""
    from oban_import.oni.engine import to_blender
    animations, paths = generated_files(tmp_path, 3, seed=10)
    shutil.copy(os.path.join(DATA, "level", "level1_Final.dat"), tmp_path / "level1_Final.dat")
    paths.insert(1, tmp_path / "level1_Final.dat")
    many = to_blender.transforms_many

    def failing(*args, **kwargs):
        transforms = many(*args, **kwargs)
        for _ in range(failing_after):
            yield next(transforms)
        raise MemoryError("out of memory")

    monkeypatch.setattr(to_blender, "transforms_many", failing)
    before = datablock_counts()
    with pytest.raises(RuntimeError) as caught:
        import_files(paths)
    assert all(f"{path}: could not be imported: MemoryError('out of memory')" in str(caught.value)
               for path in paths[1:])
    assert f"{paths[0]}:" not in str(caught.value)
    assert datablock_counts() == (before[0] + 1, before[1] + 1, before[2])
    assert animations[0].name in bpy.data.objects


# Names that interact when Blender makes them unique: the same, a '.001' of another, case,
# long ones it shortens to fit a suffix (ASCII and not), a dotted one that is no suffix.
CLASHING_NAMES = ["Door", "Door", "Door.001", "door", "Door.2", "Lift", "Lift.001", "A.B.003", "Zed",
                  "L" * 70 + "a", "L" * 70 + "b", "Ü" * 40, "Ü" * 40 + "x"]


def test_blocks_made_in_the_fast_order_get_the_names_the_given_order_gives():
    from oban_import.blender.datablocks import FAST_ORDER_LIMIT, fast_order
    assert list(fast_order(0, ["a", "c", "B"])) == [1, 2, 0]          # from the last name down
    assert list(fast_order(FAST_ORDER_LIMIT - 1, ["a", "b"])) == [0, 1]   # past the limit: as given
    rng = np.random.default_rng(12)
    for _ in range(40):
        present = rng.choice(CLASHING_NAMES, size=int(rng.integers(0, 4))).tolist()
        names = rng.choice(CLASHING_NAMES, size=int(rng.integers(1, 25))).tolist()
        made = []
        for order in (range(len(names)), fast_order(len(present), names)):
            for name in present:
                bpy.data.actions.new(name)
            blocks = [None] * len(names)
            for i in order:
                blocks[i] = bpy.data.actions.new(names[i])
            made.append([block.name for block in blocks])
            for action in list(bpy.data.actions):
                bpy.data.actions.remove(action)
        assert made[0] == made[1], (present, names)


@pytest.mark.parametrize("target", ["EMPTY", "CAMERA"])
def test_new_objects_are_named_and_linked_in_file_order(tmp_path, target):
    from oban_import.oni.blender.importer import import_files as import_into
    from oban_import.ui.options import OniImportSettings
    taken = bpy.data.objects.new("Door", None)   # a name taken before, by an object in no collection
    names = ["Door", "Lift", "Door", "Door.001", "door", "Door"]
    paths = []
    for i, name in enumerate(names):
        paths.append(tmp_path / f"{i:05d}-{name}.OBAN")
        paths[-1].write_bytes(raw_file_bytes(random_animation(np.random.default_rng(i), name=name, frames=5)))
    result = import_into(bpy.context, [str(p) for p in paths], OniImportSettings(target=target))
    got = [(obj.name, obj.animation_data.action.name) for obj in result.blocks()]
    collection = bpy.data.collections[tmp_path.name]   # the import's own, named after the batch's folder
    assert [obj.name for obj in collection.objects] == [name for name, _ in got]
    assert collection.name in bpy.context.scene.collection.children
    for obj in result.blocks():
        bpy.data.actions.remove(obj.animation_data.action)
        bpy.data.objects.remove(obj)
    expected = [(bpy.data.objects.new(name, None).name, bpy.data.actions.new(name).name) for name in names]
    assert got == expected and taken.name == "Door"


def test_each_kind_the_plan_reads_is_built_by_the_builder_of_its_name():
    """plan.KINDS and the importer's BUILDERS name the same kinds in the same order: a kind
    read but never built, or a builder of no kind, fails here."""
    from oban_import.oni import plan
    from oban_import.oni.blender import importer
    assert list(importer.BUILDERS) == [kind.name for kind in plan.KINDS]
    assert all(importer.BUILDERS[kind.name] for kind in plan.KINDS if kind.read is not None)


def test_a_failure_between_two_files_leaves_nothing_made_for_the_others(tmp_path, monkeypatch):
    from oban_import.oni.blender import importer
    from oban_import.ui.options import OniImportSettings
    animations, paths = generated_files(tmp_path, 4, seed=13)
    add = importer.Report.add

    def failing(*args):   # a bug after the first file is built
        add(*args)
        raise RuntimeError("boom")

    monkeypatch.setattr(importer.Report, "add", failing)
    with pytest.raises(RuntimeError, match="boom"):
        importer.import_files(bpy.context, [str(p) for p in paths], OniImportSettings())
    assert [obj.name for obj in bpy.data.collections[tmp_path.name].objects] == [animations[0].name]
    assert datablock_counts() == (1, 1, 0)


@pytest.mark.parametrize("target", ["EMPTY", "CAMERA"])
def test_a_failure_making_the_new_objects_adds_nothing_and_names_every_file(tmp_path, monkeypatch, target):
    from oban_import.oni.blender.oban import new_objects
    animations, paths = generated_files(tmp_path, 4, seed=14)
    name = "new_camera" if target == "CAMERA" else "new_empty"
    make, made = getattr(new_objects, name), []

    def failing(*args):   # no memory for the third object
        if len(made) == 2:
            raise MemoryError("out of memory")
        made.append(make(*args))
        return made[-1]

    monkeypatch.setattr(new_objects, name, failing)
    with pytest.raises(RuntimeError) as caught:
        import_files(paths, target=target)
    assert all(f"{path}: could not be imported: MemoryError('out of memory')" in str(caught.value) for path in paths)
    assert len(made) == 2 and datablock_counts() == (0, 0, 0)
