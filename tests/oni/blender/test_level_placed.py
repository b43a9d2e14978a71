"""A level of placed objects alone back through OniSplit (docs/level.md 13), through the operator
and the command line: the unedited sample writes exactly the OBOA XML and classes of which
OniSplit rebuilt it byte for byte (tests/data/objects_rebuilt/unedited); an object moved,
re-meshed, re-textured, re-animated writes what OniSplit built tests/data/objects_rebuilt/edited
of, and that level, read back by the add-on's reader, holds each edit as made; what an object
setup cannot hold is refused, naming the object, nothing written."""

import lzma
import math
import os
import shutil
import xml.etree.ElementTree as ET

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from mathutils import Matrix
from paths import DATA
from placed_edits import (LIFT, MOVE, MOVED, RAISE, REANIMATED, REMESHED, RETEXTURED, TURN, assert_particles_refused,
                          edit_placed, placed)

from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.oni.io.objects.read import read_mesh_file, read_objects
from oban_import.ui.options import LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")

OBJECTS = os.path.join(DATA, "objects")
REBUILT = os.path.join(DATA, "objects_rebuilt")
XML = "OBOAlevel9_objects.xml"
SCALE = 0.1
A = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])   # Oni axes -> Blender's (the defaults: forward -Z, up Y)


@pytest.fixture
def level9(tmp_path):
    """The sample level of placed objects copied to tmp_path/in and imported with the defaults."""
    folder = tmp_path / "in"
    shutil.copytree(os.path.join(OBJECTS, "level"), folder)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.oban(filepath=str(folder / "level9_Final.dat"))
    return folder / "level9_Final.dat"


def export(out, despite=False):
    return bpy.ops.export_anim.oni_level(directory=str(out), use_selection=False, despite_edits=despite)


def classes_as_read():
    return {name for name in os.listdir(os.path.join(OBJECTS, "oni")) if not name.startswith("OBOA")}


def assert_wrote(folder, source, edited=()):
    """`folder` holds the XML of `source` and every class as in tests/data/objects/oni but
    `edited`, which are `source`'s: byte for byte, but an edited mesh's normals (each Blender
    keeps custom normals in its own encoding: within 1e-4 of the kept ones, written by Blender 5.0)."""
    assert (folder / XML).read_text(encoding="utf-8") == open(os.path.join(source, XML), encoding="utf-8").read()
    assert set(os.listdir(folder / "classes")) == classes_as_read()
    for name in classes_as_read():
        kept = os.path.join(source, "classes", name) if name in edited else os.path.join(OBJECTS, "oni", name)
        if name in edited and name.startswith("M3GM"):
            ours, theirs = read_mesh_file(str(folder / "classes" / name)), read_mesh_file(kept)
            assert np.array_equal(ours.points, theirs.points) and np.array_equal(ours.uvs, theirs.uvs), name
            assert np.array_equal(ours.triangles, theirs.triangles), name
            assert np.abs(ours.normals - theirs.normals).max() < 1e-4, name
        else:
            assert (folder / "classes" / name).read_bytes() == open(kept, "rb").read(), name


def test_an_unedited_level_writes_what_onisplit_rebuilt_it_from(tmp_path, level9):
    assert export(tmp_path / "out") == {"FINISHED"}
    assert_wrote(tmp_path / "out" / "level9_Final", os.path.join(REBUILT, "unedited"))


def onisplits_edited_level(tmp_path):
    folder = tmp_path / "onisplit"
    folder.mkdir()
    with lzma.open(os.path.join(REBUILT, "edited", "level", "level9_Final.dat.xz")) as f:
        (folder / "level9_Final.dat").write_bytes(f.read())
    shutil.copy(os.path.join(REBUILT, "edited", "level", "level9_Final.raw"), folder)
    return read_objects(str(folder / "level9_Final.dat")).objects


def oni_matrix(blender):
    """A Blender world matrix in Oni's axes and units."""
    m = np.asarray(blender, np.float64)
    change = np.eye(4)
    change[:3, :3] = SCALE * A
    return np.linalg.inv(change) @ m @ change


def quaternion_matrix(stored):
    """The rotation of a stored quaternion (x y z w; OniSplit's is x y z -w, its matrix the
    transpose of Matrix.CreateFromQuaternion's row-vector one)."""
    x, y, z, w = np.asarray(stored, np.float64) * [1, 1, 1, -1]
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (z * x - y * w)],
                     [2 * (x * y - z * w), 1 - 2 * (z * z + x * x), 2 * (y * z + x * w)],
                     [2 * (z * x + y * w), 2 * (y * z - x * w), 1 - 2 * (y * y + x * x)]]).T


def test_edits_arrive_as_made(tmp_path, level9):
    from oban_import.oni.engine.frames import frame_matrices
    from oban_import.oni.io.oban.record import matrix_from_columns
    before = {obj.name: obj for obj in read_objects(str(level9)).objects}
    moved = Matrix.Rotation(TURN, 4, "Z") @ Matrix.Translation(MOVE) @ placed(MOVED).matrix_world
    edit_placed()
    assert export(tmp_path / "out") == {"FINISHED"}
    assert_wrote(tmp_path / "out" / "level9_Final", os.path.join(REBUILT, "edited", "source"),
                 edited={"M3GMobj03_part0.oni", "TXMPtex04_bgr.oni", "OBANobj01_anim.oni"})
    after = {obj.name: obj for obj in onisplits_edited_level(tmp_path)}
    assert list(after) == list(before)
    origin = oni_matrix(moved)
    o = after[MOVED]
    assert np.abs(matrix_from_columns(o.origin) - origin).max() < 1e-5 * np.abs(origin).max()
    assert np.abs(o.position - origin[:3, 3]).max() < 1e-4 and math.isclose(o.scale, before[MOVED].scale, rel_tol=1e-6)
    assert np.abs(quaternion_matrix(o.rotation) * o.scale - origin[:3, :3]).max() < 1e-5
    lifted = before[REMESHED].meshes[0].points + [0, LIFT / SCALE, 0]
    assert np.abs(after[REMESHED].meshes[0].points - lifted).max() < 1e-4
    texture = before[RETEXTURED].meshes[0].texture
    painted = texture.rgba8.copy()
    painted[texture.height // 2:] = 255   # Blender's first half of the rows: the bottom ones
    assert np.array_equal(after[RETEXTURED].meshes[0].texture.rgba8, painted)
    raised = np.eye(4)
    raised[1, 3] = RAISE / SCALE
    expected = raised @ frame_matrices(before[REANIMATED].animation)
    tolerance = 1e-4 * np.abs(expected).max()   # the OBAN export's, relative to the motion's largest value
    assert np.abs(frame_matrices(after[REANIMATED].animation) - expected).max() < tolerance
    for name in set(before) - {MOVED, REMESHED, RETEXTURED, REANIMATED}:
        b, a = before[name], after[name]
        assert np.array_equal(b.origin, a.origin) and np.array_equal(b.rotation, a.rotation), name
        assert all(np.array_equal(m.points, n.points) for m, n in zip(b.meshes, a.meshes)), name


@pytest.mark.parametrize("scale", [(1.0, 2.0, 1.0), (-1.0, 1.0, 1.0)], ids=["uneven", "mirrored"])
def test_what_an_object_setup_cannot_hold_is_refused_and_nothing_is_written(tmp_path, level9, scale):
    """A setup holds a rotation and one scale: scaled unevenly, or mirrored (one axis -1: a
    rotation and one scale otherwise, but a reflection), refused."""
    placed(MOVED).scale = scale
    said = f"object '{MOVED}': its placement is sheared, mirrored or scaled unevenly"
    with pytest.raises(RuntimeError, match=said):
        export(tmp_path / "out")
    assert not (tmp_path / "out" / "level9_Final").exists()


def test_an_edit_an_m3gm_cannot_hold_refuses_it_unless_asked(tmp_path, level9):
    placed(REMESHED).modifiers.new("bend", "SIMPLE_DEFORM")
    said = f"object '{REMESHED}': its modifiers 'bend' are not applied"
    with pytest.raises(RuntimeError, match=said):
        export(tmp_path / "refused")
    assert not (tmp_path / "refused" / "level9_Final").exists()
    assert export(tmp_path / "despite", despite=True) == {"FINISHED"}
    assert (tmp_path / "despite" / "level9_Final" / XML).exists()


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_a_level_of_placed_objects(tmp_path, level9, command):
    blend = tmp_path / "level9.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "cli"
    done = run(command, "export", blend, "-o", out, "--format", "level")
    assert done.returncode == 0, done.stderr
    assert XML in done.stdout and "-import:nosep" in done.stdout + done.stderr
    assert_wrote(out / "level9_Final", os.path.join(REBUILT, "unedited"))


def level_of(tmp_path, folder):
    """tests/data/objects_rebuilt/`folder`'s level9_Final.dat (its .raw the sample's) in
    tmp_path/in, imported with the defaults."""
    into = tmp_path / "in"
    into.mkdir()
    with lzma.open(os.path.join(REBUILT, folder, "level9_Final.dat.xz")) as f:
        (into / "level9_Final.dat").write_bytes(f.read())
    shutil.copy(os.path.join(OBJECTS, "level", "level9_Final.raw"), into)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.import_anim.oban(filepath=str(into / "level9_Final.dat")) == {"FINISHED"}
    return into / "level9_Final.dat"


def source_names(folder):
    """The setups' names in the OBOA XML OniSplit made tests/data/objects_rebuilt/`folder` of."""
    objects = ET.parse(os.path.join(REBUILT, folder, XML)).getroot().find("OBOA/Objects")
    return [obj.findtext("Name") for obj in objects]


def test_particles_of_a_setup_are_refused_by_name(tmp_path):
    """objects_rebuilt/particles: object02's setup links particles (ENVP), and so does setup 9,
    which holds nothing else (the import makes no object of it): the OBOA XML carries no
    particles, so both are named and nothing is written."""
    level_of(tmp_path, "particles")
    names = source_names("particles")
    assert names[9] == "emitter" and not any(o.get("oni_setup") == 9 for o in bpy.data.objects)
    assert_particles_refused(export, tmp_path / "out", "object02", 9, "emitter", "level9_Final")


def test_a_setup_of_an_animation_alone_is_written_once(tmp_path):
    """objects_rebuilt/animation_only: setup 9 'mover' holds an animation, no flags or geometry:
    the import makes an animated Empty of it, and the export writes every setup of the level
    OniSplit made once, in order."""
    level_of(tmp_path, "animation_only")
    assert export(tmp_path / "out") == {"FINISHED"}
    written = ET.parse(tmp_path / "out" / "level9_Final" / XML).getroot().find("OBOA/Objects")
    assert [obj.findtext("Name") for obj in written] == source_names("animation_only")
    assert written[9].findtext("Animation") == "OBANobj01_anim"


def test_two_copies_of_one_level_of_placed_objects_are_both_refused(tmp_path, level9):
    """The sample copied into a second folder and imported too: both would write
    OUT/level9_Final, so neither is written (the second wrote over the first)."""
    other = tmp_path / "other"
    shutil.copytree(os.path.join(OBJECTS, "level"), other)
    assert bpy.ops.import_anim.oban(filepath=str(other / "level9_Final.dat")) == {"FINISHED"}
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"),
                                   LevelRebuildSettings(use_selection=False, despite_edits=False))
    assert not report.made and len(report.errors) == 2, report.errors
    for path, copy in ((level9, other / "level9_Final.dat"), (other / "level9_Final.dat", level9)):
        assert f"{path}: level 'level9_Final', as {copy} is: both would write {tmp_path / 'out' / 'level9_Final'}" in \
            "\n".join(report.errors)
    assert not (tmp_path / "out").exists()
