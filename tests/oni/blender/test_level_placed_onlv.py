"""Placed objects of a level with an environment back through OniSplit's -create:level (docs/level.md
13), through the operator and the command line, on OniSplit's level of the sample with level9's
objects placed (tests/data/environment/placed): unedited, the export writes what OniSplit rebuilt
that level from byte for byte (the rebuild's files and classes), and its placed/ files, put by the
place step into -create:level's level instance (placed/merge), give the level's ONLV; moved,
re-meshed, re-textured and re-animated objects give what OniSplit built edited/level of, which
holds each edit; beside doors moved, re-flagged or re-modelled, the step gives -create:level's own
level instance with the objects placed (placed/moved_door, placed/merge)."""

import lzma
import os
import shutil
from xml.etree import ElementTree

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from mathutils import Matrix
from onlv_bytes import names_zeroed
from paths import DATA
from placed_edits import (DOORS_MOVED, LIFT, MOVE, MOVED, RAISE, REANIMATED, REMESHED, RETEXTURED, TURN,
                          assert_particles_refused, door, edit_placed, move_doors, placed, placed_in_level)
from placed_step import leaves_out
from placed_step import unpacked as unpacked_merge
from test_level_placed import SCALE, oni_matrix, quaternion_matrix

from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.level_rebuild.class_files import class_files
from oban_import.oni.io.level_rebuild.onlv_file import onlv_file_bytes, stored_level
from oban_import.oni.io.level_rebuild.place import place
from oban_import.oni.io.objects.read import read_mesh_file, read_objects

pytestmark = pytest.mark.usefixtures("addon")

ENVIRONMENT = os.path.join(DATA, "environment")
PLACED = os.path.join(ENVIRONMENT, "placed")
REBUILD_FILES = ("level5.xml", "level5_env.dae", "level5_rooms.dae", "level5_objects.xml")
NORMALS = 1e-3   # Blender before 4.1 keeps a custom normal as two 16-bit numbers (this mesh: up to 6e-4 off 5.0's)
EDITED = ("M3GMobj03_part0.oni", "OBANobj01_anim.oni", "TXMPtex04_bgr.oni")


def unpacked(folder, source):
    """`source`'s level5_Final.dat and .raw (xz) into `folder`; the .dat's path."""
    folder.mkdir(parents=True)
    for name in ("level5_Final.dat", "level5_Final.raw"):
        with lzma.open(os.path.join(source, name + ".xz")) as f:
            (folder / name).write_bytes(f.read())
    return folder / "level5_Final.dat"


@pytest.fixture
def placed_level(tmp_path):
    """OniSplit's level with placed objects in tmp_path/in, imported with the defaults."""
    path = unpacked(tmp_path / "in", os.path.join(PLACED, "level"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.oban(filepath=str(path))
    return path


def export(out, despite=False):
    return bpy.ops.export_anim.oni_level(directory=str(out), use_selection=False, despite_edits=despite)


def stepped(folder, variant="unedited", out=None):
    """The ONLV the place step writes of the rebuild `folder` into `out` (default: OniSplit's
    -create:level build of placed/merge's `variant` without the placed objects), `folder`'s
    classes copied in first, as the README's commands do."""
    out = out or leaves_out(str(folder.parent / "step"), variant)
    for name in os.listdir(folder / "classes"):
        shutil.copy(folder / "classes" / name, out)
    place(out, str(folder))
    return os.path.join(out, "ONLVlevel5.oni")


def physics_build(variant, tmp_path):
    """placed/merge's `variant` as -create:level built it with the placed objects; its path."""
    return unpacked_merge(os.path.join(variant, "physics", "ONLVlevel5.oni.xz"), str(tmp_path / f"{variant}.oni"))


def assert_wrote(folder, level, edited=(), onlv=os.path.join(PLACED, "onisplit", "ONLVlevel5.oni.xz")):
    """`folder` holds the rebuild's files of tests/data/environment/rebuild, in classes/ the
    level's classes as the unedited export wrote them but `edited`, as in placed/edited/classes
    (an edited mesh's normals within NORMALS of Blender 5.0's), and placed/, which the step puts
    into -create:level's level instance: the ONLV `onlv` (.xz) but the 64 bytes after each name."""
    for name in REBUILD_FILES:
        assert (folder / name).read_bytes() == open(os.path.join(ENVIRONMENT, "rebuild", name), "rb").read(), name
    kept = class_files(str(level))
    assert set(os.listdir(folder / "classes")) == set(kept)
    assert sorted(os.listdir(folder / "placed")) == ["OBOAlevel5_placed.oni", "level5_order.txt"]
    with lzma.open(onlv) as f:
        (folder.parent / "expected.oni").write_bytes(f.read())
    assert names_zeroed(stepped(folder)) == names_zeroed(str(folder.parent / "expected.oni"))
    for name in set(kept) - set(edited):
        assert (folder / "classes" / name).read_bytes() == kept[name], name
    for name in edited:
        theirs = os.path.join(PLACED, "edited", "classes", name)
        if name.startswith("M3GM"):
            ours, theirs = read_mesh_file(str(folder / "classes" / name)), read_mesh_file(theirs)
            assert np.array_equal(ours.points, theirs.points) and np.array_equal(ours.uvs, theirs.uvs), name
            assert np.abs(ours.normals - theirs.normals).max() < NORMALS, name
        else:
            assert (folder / "classes" / name).read_bytes() == open(theirs, "rb").read(), name


def test_an_unedited_level_writes_what_onisplit_rebuilt_it_from(tmp_path, placed_level):
    assert export(tmp_path / "out") == {"FINISHED"}
    folder = tmp_path / "out" / "level5"
    assert_wrote(folder, placed_level)
    assert "Physics" not in (folder / "level5.xml").read_text(encoding="utf-8")


def test_edits_arrive_as_made(tmp_path, placed_level):
    from oban_import.oni.engine.frames import frame_matrices
    from oban_import.oni.io.oban.record import matrix_from_columns
    before = {obj.name: obj for obj in read_objects(str(placed_level)).objects}
    moved = Matrix.Rotation(TURN, 4, "Z") @ Matrix.Translation(MOVE) @ placed_in_level(MOVED).matrix_world
    edit_placed(placed_in_level)
    assert export(tmp_path / "out") == {"FINISHED"}
    assert_wrote(tmp_path / "out" / "level5", placed_level, EDITED,
                 os.path.join(PLACED, "edited", "classes", "ONLVlevel5.oni.xz"))
    level = unpacked(tmp_path / "onisplit", os.path.join(PLACED, "edited", "level"))
    after = {obj.name: obj for obj in read_objects(str(level)).objects}
    assert list(after) == list(before)
    names = {name: placed_in_level(name)["oni_object_name"] for name in (MOVED, REMESHED, RETEXTURED, REANIMATED)}
    origin = oni_matrix(moved)
    o, b = after[names[MOVED]], before[names[MOVED]]
    assert np.abs(matrix_from_columns(o.origin) - origin).max() < 1e-5 * np.abs(origin).max()
    assert np.abs(o.position - origin[:3, 3]).max() < 1e-4 and o.scale == b.scale
    assert np.abs(quaternion_matrix(o.rotation) * o.scale - origin[:3, :3]).max() < 1e-5
    lifted = before[names[REMESHED]].meshes[0].points + [0, LIFT / SCALE, 0]
    assert np.abs(after[names[REMESHED]].meshes[0].points - lifted).max() < 1e-4
    texture = before[names[RETEXTURED]].meshes[0].texture
    painted = texture.rgba8.copy()
    painted[texture.height // 2:] = 255   # Blender's first half of the rows: the bottom ones
    assert np.array_equal(after[names[RETEXTURED]].meshes[0].texture.rgba8, painted)
    raised = np.eye(4)
    raised[1, 3] = RAISE / SCALE
    expected = raised @ frame_matrices(before[names[REANIMATED]].animation)
    tolerance = 1e-4 * np.abs(expected).max()
    assert np.abs(frame_matrices(after[names[REANIMATED]].animation) - expected).max() < tolerance
    for name in set(before) - set(names.values()):   # the others, the door leaves among them, as they were
        b, a = before[name], after[name]
        assert np.array_equal(b.origin, a.origin) and np.array_equal(b.rotation, a.rotation), name
        assert all(np.array_equal(m.points, n.points) for m, n in zip(b.meshes, a.meshes)), name


def test_moved_doors_write_what_onisplit_makes_of_them(tmp_path, placed_level):
    """placed/moved_door: the step into -create:level's level instance of the moved doors (its
    leaves alone: that of placed/moved_door, made with the placed objects, without them) gives
    that ONLV but the 64 bytes after each name; OniSplit's level of the export holds the doors
    where moved and the placed objects as read."""
    from oban_import.oni.io.level.read import read_level
    move_doors()
    assert export(tmp_path / "out") == {"FINISHED"}
    onisplits = tmp_path / "ONLVlevel5.oni"
    with lzma.open(os.path.join(PLACED, "moved_door", "ONLVlevel5.oni.xz")) as f:
        onisplits.write_bytes(f.read())
    out = leaves_out(str(tmp_path / "step"), "unedited")
    with open_library(str(onisplits)) as library:
        stored = stored_level(library.main)
        leaves = [n for n, record in enumerate(stored.records) if record["name"].startswith(b"door_")]
        open(os.path.join(out, "ONLVlevel5.oni"), "wb").write(onlv_file_bytes(stored, leaves))
    assert names_zeroed(stepped(tmp_path / "out" / "level5", out=out)) == names_zeroed(str(onisplits))
    before = read_level(str(placed_level)).doors
    level = unpacked(tmp_path / "onisplit", os.path.join(PLACED, "moved_door", "level"))
    after = read_level(str(level)).doors
    for old, new in zip(before, after):
        obj = door(old.id)
        place_at = oni_matrix(obj.matrix_world)
        expected = place_at[:3, 3] if old.id in DOORS_MOVED else old.position
        assert np.abs(new.position - expected).max() < 1e-4, old.id
        assert (old.id in DOORS_MOVED) == (new.position.tobytes() + new.rotation.tobytes()
                                           != old.position.tobytes() + old.rotation.tobytes()), old.id
    objects = {obj.name: obj for obj in read_objects(str(placed_level)).objects}
    for obj in read_objects(str(level)).objects:
        if not obj.name.startswith("door_"):
            o = objects[obj.name]
            assert np.array_equal(obj.origin, o.origin) and np.array_equal(obj.rotation, o.rotation), obj.name
            assert all(np.array_equal(m.points, n.points) for m, n in zip(obj.meshes, o.meshes)), obj.name


def test_a_reflagged_door_carries_the_placed_objects(tmp_path, placed_level):
    """A door re-flagged: written, and the step into -create:level's build of the level with doors
    re-flagged, re-classed and re-textured (placed/merge/doors_changed, its object quad map
    renumbered) gives that build with the placed objects (its <Physics> one)."""
    door(1)["oni_door_mirror"] = True
    assert export(tmp_path / "out") == {"FINISHED"}
    objects = ElementTree.parse(tmp_path / "out" / "level5" / "level5_objects.xml").getroot().find("Objects")
    assert "Mirror" in (objects[0].find("OSD/Flags").text or "").split()
    merged = stepped(tmp_path / "out" / "level5", "doors_changed")
    assert names_zeroed(merged) == names_zeroed(physics_build("doors_changed", tmp_path))


def test_an_object_given_a_leafs_setup_is_refused(tmp_path, placed_level):
    leaf = next(obj for obj in bpy.data.objects if "oni_door_leaf" in obj and obj.type == "MESH")
    del leaf["oni_door_leaf"]
    said = f"object '{leaf.name}': its setup ({leaf['oni_setup']}) is a door's leaf"
    with pytest.raises(RuntimeError, match=said.replace("(", r"\(").replace(")", r"\)")):
        export(tmp_path / "refused")
    assert not (tmp_path / "refused" / "level5").exists()


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_the_levels_onlv(tmp_path, placed_level, command):
    blend = tmp_path / "placed.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "cli"
    done = run(command, "export", blend, "-o", out, "--format", "level")
    assert done.returncode == 0, done.stderr
    assert f"run 'python -m oban_import place OUT {out / 'level5'}' after -create:level" in done.stderr + done.stdout
    assert_wrote(out / "level5", placed_level)
    step = leaves_out(str(tmp_path / "cli_step"), "unedited")   # the step by the same command
    done = run(command, "place", step, out / "level5")
    assert done.returncode == 0 and f"{step}/ONLVlevel5.oni: 9 placed objects written" in done.stdout, done.stderr
    assert names_zeroed(os.path.join(step, "ONLVlevel5.oni")) == names_zeroed(str(out / "expected.oni"))
    shutil.rmtree(out)


def left_out_warning(path, which, named, them="them"):
    return (f"{path}: {which} ({named}): the rebuilt level leaves {them} out (imported without Placed Objects, or "
            "deleted); import the level with Placed Objects to keep them")


def test_a_level_imported_without_its_placed_objects_says_its_rebuild_has_none(tmp_path):
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    from oban_import.ui.options import LevelRebuildSettings
    path = unpacked(tmp_path / "in", os.path.join(PLACED, "level"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.oban(filepath=str(path), objects=False)
    assert not any("oni_object_name" in obj and "oni_door_leaf" not in obj for obj in bpy.data.objects)
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"),
                                   LevelRebuildSettings(use_selection=False, despite_edits=False))
    said = left_out_warning(path, "none of its 9 placed objects is in the scene",
                            "'obj00_part0', 'obj01_part0', 'obj02_part1', 'obj03_part0', 'obj04_part0' and 4 more")
    assert not report.errors and said in report.warnings, report.warnings
    assert not (tmp_path / "out" / "level5" / "placed").exists()   # -create:level's ONLV: the leaves alone
    assert export(tmp_path / "operator") == {"FINISHED"}
    blend = tmp_path / "without.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    command = python_module if IN_BPY_MODULE else blender_script
    done = run(command, "export", blend, "-o", tmp_path / "cli", "--format", "level")
    assert done.returncode == 0 and said in done.stderr + done.stdout, done.stderr


def test_placed_objects_deleted_are_named_and_left_out(tmp_path, placed_level):
    from oban_import.oni.export.level.rebuild import export_level_rebuilds
    from oban_import.ui.options import LevelRebuildSettings
    for name in ("obj02_part1", "obj07_part0"):
        bpy.data.objects.remove(placed(name))
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"),
                                   LevelRebuildSettings(use_selection=False, despite_edits=False))
    step = (f"{placed_level}: its 7 placed objects are written to level5/placed/, apart: run 'python -m oban_import "
            f"place OUT {tmp_path / 'out' / 'level5'}' after -create:level and before -import:nosep, else the level "
            "holds none (docs/level.md 13)")
    assert not report.errors and report.warnings == [step, left_out_warning(
        placed_level, "2 of its 9 placed objects are not in the scene", "'obj02_part1', 'obj07_part0'")]
    written = read_objects(stepped(tmp_path / "out" / "level5")).objects
    names = [obj.name for obj in written if not obj.name.startswith("door_")]
    assert names == [f"obj0{k}_part{int(k == 2)}" for k in range(9) if k not in (2, 7)]


def quad_lists(path):
    """The object quad map (ONOA) of the ONLV .oni at `path`: each gunk object's IDXA of quads."""
    from oban_import.oni.io.container.container import IDXA_TAG, ONOA_TAG
    from oban_import.oni.io.container.library import open_library
    from oban_import.oni.io.level.onlv import ONOA_DTYPE
    with open_library(str(path)) as library:
        c = library.main
        onoa = c.with_data(ONOA_TAG)[0]
        data = c.instance(onoa, ONOA_TAG)[0]
        entries = np.frombuffer(data, ONOA_DTYPE, offset=24, count=int.from_bytes(data[20:24], "little"))
        return [c.instance(c.link(int(value), IDXA_TAG, onoa, "quads"), IDXA_TAG)[0] for value in entries["quads"]]


def test_a_remodelled_door_carries_the_placed_objects(tmp_path, placed_level):
    """placed/remodelled: -create:level's ONLV of this export with the <Physics> file: door_8's
    added triangle is a gunk quad more, which renumbers the quad lists of every later gunk
    object. The export writes the re-modelled class and the placed objects apart, and the step
    into -create:level's build of a re-modelled door (placed/merge/remodelled) gives that build
    with the placed objects."""
    from test_level_remodel import remodel
    remodel()
    assert export(tmp_path / "out") == {"FINISHED"}
    assert (tmp_path / "out" / "level5" / "classes" / "M3GMdr_offc_panel.oni").is_file()
    merged = stepped(tmp_path / "out" / "level5", "remodelled")
    assert names_zeroed(merged) == names_zeroed(physics_build("remodelled", tmp_path))
    for name, folder in (("read", "onisplit"), ("remodelled", "remodelled")):
        with lzma.open(os.path.join(PLACED, folder, "ONLVlevel5.oni.xz")) as f:
            (tmp_path / name).write_bytes(f.read())
    read, remodelled = quad_lists(tmp_path / "read"), quad_lists(tmp_path / "remodelled")
    assert len(read) == len(remodelled) == 16 and read[:7] == remodelled[:7]
    assert all(len(a) < len(b) if k == 7 else a != b for k, (a, b) in enumerate(zip(read[7:], remodelled[7:]), 7))


def test_particles_of_a_setup_are_refused_by_name(tmp_path):
    """placed/particles: obj03_part0's setup links particles (ENVP), and so does setup 6, which
    holds nothing else (the import makes no object of it): the ONLV the rebuild writes carries
    no particles of the scene's objects, and leaves setups of no object out, so both are named
    and nothing is written."""
    path = unpacked(tmp_path / "in", os.path.join(PLACED, "particles", "level"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_anim.oban(filepath=str(path)) == {"FINISHED"}
    assert not any(obj.get("oni_setup") == 6 for obj in bpy.data.objects)
    assert_particles_refused(export, tmp_path / "out", "obj03_part0", 6, "obj06_part0", "level5")
