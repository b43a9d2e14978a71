"""Placed objects of a level with an environment back through OniSplit's -create:level (docs/level.md
13), through the operator and the command line, on OniSplit's level of the sample with level9's
objects placed (tests/data/environment/placed): unedited, the export writes what OniSplit rebuilt
that level from byte for byte (the rebuild's files, and the level's ONLV with every setup in
classes/); moved, re-meshed, re-textured and re-animated objects write what OniSplit built
edited/level of, which holds each edit; doors moved and turned write -create:level's ONLV of them
(placed/moved_door); where -create:level would make the ONLV's other parts otherwise (a door
re-flagged, re-modelled), the objects are named, nothing written unless Despite Edits."""

import lzma
import os
import shutil
from dataclasses import replace
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
from test_level_placed import SCALE, oni_matrix, quaternion_matrix

from oban_import.oni.io.level_rebuild.class_files import class_files
from oban_import.oni.io.objects.read import read_mesh_file, read_objects

pytestmark = pytest.mark.usefixtures("addon")

ENVIRONMENT = os.path.join(DATA, "environment")
PLACED = os.path.join(ENVIRONMENT, "placed")
REBUILD_FILES = ("level5.xml", "level5_env.dae", "level5_rooms.dae", "level5_objects.xml")
NORMALS = 1e-3   # Blender before 4.1 keeps a custom normal as two 16-bit numbers (this mesh: up to 6e-4 off 5.0's)
EDITED = ("ONLVlevel5.oni", "M3GMobj03_part0.oni", "OBANobj01_anim.oni", "TXMPtex04_bgr.oni")


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


def assert_wrote(folder, level, edited=()):
    """`folder` holds the rebuild's files of tests/data/environment/rebuild and, in classes/, the
    level's classes and its ONLV: as the unedited export wrote them (the level's class files;
    the ONLV of its setups as OniSplit's but the 64 bytes after each name), `edited` as in
    placed/edited/classes (an edited mesh's normals within NORMALS of Blender 5.0's)."""
    for name in REBUILD_FILES:
        assert (folder / name).read_bytes() == open(os.path.join(ENVIRONMENT, "rebuild", name), "rb").read(), name
    kept = class_files(str(level))
    assert set(os.listdir(folder / "classes")) == set(kept) | {"ONLVlevel5.oni"}
    for name in set(kept) - set(edited):
        assert (folder / "classes" / name).read_bytes() == kept[name], name
    for name in edited:
        theirs = os.path.join(PLACED, "edited", "classes", name)
        if name.startswith("M3GM"):
            ours, theirs = read_mesh_file(str(folder / "classes" / name)), read_mesh_file(theirs)
            assert np.array_equal(ours.points, theirs.points) and np.array_equal(ours.uvs, theirs.uvs), name
            assert np.abs(ours.normals - theirs.normals).max() < NORMALS, name
        elif name.startswith("ONLV"):
            with lzma.open(theirs + ".xz") as f:
                assert (folder / "classes" / name).read_bytes() == f.read()
        else:
            assert (folder / "classes" / name).read_bytes() == open(theirs, "rb").read(), name


def test_an_unedited_level_writes_what_onisplit_rebuilt_it_from(tmp_path, placed_level):
    assert export(tmp_path / "out") == {"FINISHED"}
    folder = tmp_path / "out" / "level5"
    assert_wrote(folder, placed_level)
    onisplits = tmp_path / "ONLVlevel5.oni"
    with lzma.open(os.path.join(PLACED, "onisplit", "ONLVlevel5.oni.xz")) as f:
        onisplits.write_bytes(f.read())
    assert (folder / "classes" / "ONLVlevel5.oni").read_bytes() == names_zeroed(str(onisplits))
    assert "Physics" not in (folder / "level5.xml").read_text(encoding="utf-8")


def test_edits_arrive_as_made(tmp_path, placed_level):
    from oban_import.oni.engine.frames import frame_matrices
    from oban_import.oni.io.oban.record import matrix_from_columns
    before = {obj.name: obj for obj in read_objects(str(placed_level)).objects}
    moved = Matrix.Rotation(TURN, 4, "Z") @ Matrix.Translation(MOVE) @ placed_in_level(MOVED).matrix_world
    edit_placed(placed_in_level)
    assert export(tmp_path / "out") == {"FINISHED"}
    assert_wrote(tmp_path / "out" / "level5", placed_level, EDITED)
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
    """placed/moved_door: the ONLV is -create:level's of the moved doors (their leaves' setups
    made again) but the 64 bytes after each name; OniSplit's level of the export holds the
    doors where moved and the placed objects as read."""
    from oban_import.oni.io.level.read import read_level
    move_doors()
    assert export(tmp_path / "out") == {"FINISHED"}
    onisplits = tmp_path / "ONLVlevel5.oni"
    with lzma.open(os.path.join(PLACED, "moved_door", "ONLVlevel5.oni.xz")) as f:
        onisplits.write_bytes(f.read())
    ours = tmp_path / "out" / "level5" / "classes" / "ONLVlevel5.oni"
    before = read_level(str(placed_level)).doors
    turned = placements(tmp_path / "out" / "level5" / "level5_objects.xml")
    kept = placements(os.path.join(PLACED, "moved_door", "level5_objects.xml"))
    otherwise = [door for door in before if turned[door.id].tobytes() != kept[door.id].tobytes()]
    assert all(np.abs(turned[door.id] - kept[door.id]).max() < 1e-4 for door in otherwise)
    assert ours.read_bytes() == names_zeroed(str(onisplits), with_leaves(otherwise, turned))
    level = unpacked(tmp_path / "onisplit", os.path.join(PLACED, "moved_door", "level"))
    after = read_level(str(level)).doors
    for old, new in zip(before, after):
        obj = door(old.id)
        place = oni_matrix(obj.matrix_world)
        expected = place[:3, 3] if old.id in DOORS_MOVED else old.position
        assert np.abs(new.position - expected).max() < 1e-4, old.id
        assert (old.id in DOORS_MOVED) == (new.position.tobytes() + new.rotation.tobytes()
                                           != old.position.tobytes() + old.rotation.tobytes()), old.id
    objects = {obj.name: obj for obj in read_objects(str(placed_level)).objects}
    for obj in read_objects(str(level)).objects:
        if not obj.name.startswith("door_"):
            o = objects[obj.name]
            assert np.array_equal(obj.origin, o.origin) and np.array_equal(obj.rotation, o.rotation), obj.name
            assert all(np.array_equal(m.points, n.points) for m, n in zip(obj.meshes, o.meshes)), obj.name


def placements(path):
    """{object id: (position, rotation) float32} of the doors of the object list XML at `path`."""
    objects = ElementTree.parse(path).getroot().find("Objects")
    return {k: np.float32([obj.find(f"Header/{name}").text.split() for name in ("Position", "Rotation")])
            for k, obj in enumerate(objects, 1) if obj.tag == "DOOR"}


def with_leaves(doors, placed):
    """{setup index: record} of the leaves of `doors` placed as `placed` says ({id: placement}):
    where a Blender turns a door a float32 step from the one OniSplit's ONLV was made of (3.4
    tips door 2 otherwise), its leaves as -create:level makes them of that step (door_leaves,
    checked against OniSplit by tests/oni/io/test_level_door_leaves.py)."""
    from oban_import.oni.io.level_rebuild.door_leaves import leaf_records
    return {setup: record for door in doors for setup, record in zip(door.setups, leaf_records(
        replace(door, position=placed[door.id][0], rotation=placed[door.id][1])))}


def test_a_reflagged_door_names_each_placed_object_unless_asked(tmp_path, placed_level):
    door(1)["oni_door_mirror"] = True
    said = ("object 'obj00_part0': a placed object, which the level's ONLV carries; the object of id 1 with gunk "
            "(a door, furniture, console, turret or trigger) changed")
    with pytest.raises(RuntimeError, match=said.replace("(", r"\(").replace(")", r"\)")):
        export(tmp_path / "refused")
    assert not (tmp_path / "refused" / "level5").exists()
    assert export(tmp_path / "despite", despite=True) == {"FINISHED"}
    assert not (tmp_path / "despite" / "level5" / "classes" / "ONLVlevel5.oni").exists()


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
    assert_wrote(out / "level5", placed_level)
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
    assert not (tmp_path / "out" / "level5" / "classes" / "ONLVlevel5.oni").exists()   # -create:level's: leaves alone
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
    assert not report.errors and report.warnings == [
        left_out_warning(placed_level, "2 of its 9 placed objects are not in the scene", "'obj02_part1', 'obj07_part0'")]
    written = read_objects(str(tmp_path / "out" / "level5" / "classes" / "ONLVlevel5.oni")).objects
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


def test_a_remodelled_door_names_each_placed_object_unless_asked(tmp_path, placed_level):
    """placed/remodelled: -create:level's ONLV of this export with the <Physics> file: door_8's
    added triangle is a gunk quad more, which renumbers the quad lists of every later gunk
    object, so the level read's ONLV cannot carry its placed objects."""
    from test_level_remodel import remodel
    remodel()
    said = ("object 'obj00_part0': a placed object, which the level's ONLV carries; the rebuild writes "
            "M3GMdr_double_panel.oni from the scene (its door leaves re-modelled or re-animated")
    with pytest.raises(RuntimeError, match=said.replace("(", r"\(").replace(")", r"\)")):
        export(tmp_path / "refused")
    assert not (tmp_path / "refused" / "level5").exists()
    assert export(tmp_path / "despite", despite=True) == {"FINISHED"}
    classes = tmp_path / "despite" / "level5" / "classes"
    assert (classes / "M3GMdr_offc_panel.oni").is_file() and not (classes / "ONLVlevel5.oni").exists()
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
