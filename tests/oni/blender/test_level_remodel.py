"""Re-modelled door leaves go back in the level rebuild (docs/level.md 11, "Re-modelled door
leaves"): OniSplit makes every leaf of a door class of the M3GMs of the class's first geometry,
so a leaf whose mesh was edited writes those M3GMs' class files from the scene (the points the
user moved as Blender holds them in float32, what was not moved as read); leaves of one class
edited otherwise, and the in-place patch, refuse it by name. tests/data/environment/
remodelled_door: OniSplit's rebuild of `remodel()`'s export, whose leaves have the new points."""

import lzma
import os
import re

import bpy
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from paths import DATA

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.objects.read import read_mesh_file, read_objects
from oban_import.ui.options import LevelPatchSettings, LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")

ENV = os.path.join(DATA, "environment")
KEPT = os.path.join(ENV, "remodelled_door")
OFFICE = "door_8"                                          # the one leaf of door class dr_offc
DOUBLE = ("door_3", "door_4099", "door_4", "door_4100")    # dr_double's: doors 3 (DoubleDoor), 4 (also Mirror)
UP = 3.0                                                   # Blender units: 30 Oni units at the import's 0.1
NEW_FACE = ((0.0, 0.0, 0.5), (0.2, 0.0, 0.5), (0.0, 0.2, 0.5))


@pytest.fixture
def level(sample_level):
    return sample_level


def raise_mesh(name, height=UP):
    """Every vertex of the leaf's mesh `height` up its own z."""
    mesh = bpy.data.objects[name].data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[:, 2] += np.float32(height)
    mesh.vertices.foreach_set("co", co.ravel())
    mesh.update()


def add_face(name):
    """A triangle of three new vertices (NEW_FACE) added to the leaf's mesh, as the mesh's
    first part (Blender gives a new face 0 in every attribute)."""
    import bmesh  # after bpy, which brings it
    mesh = bpy.data.objects[name].data
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.faces.new([bm.verts.new(co) for co in NEW_FACE])
    bm.to_mesh(mesh)
    bm.free()
    mesh.update()


def remodel():
    """What tests/data/environment/remodelled_door was exported from: door 8's leaf raised and
    given a face, the four leaves of dr_double raised alike."""
    raise_mesh(OFFICE)
    add_face(OFFICE)
    for name in DOUBLE:
        raise_mesh(name)


def oni_points(name):
    """(n, 3) float32: the leaf mesh's vertices in Oni axes and units, as Blender holds them
    (x, y, z = 10 x, 10 z, -10 y, the import's frame undone in float64, rounded once)."""
    mesh = bpy.data.objects[name].data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    x, y, z = co.reshape(-1, 3).astype(np.float64).T
    return (np.stack([x, z, -y], axis=1) / np.float32(0.1).astype(np.float64)).astype(np.float32)


def class_meshes(path, class_name):
    """The meshes of door class `class_name`'s first geometry in the level at `path`."""
    return read_level(path).door_classes[class_name].geometries[0].meshes


def rebuild(tmp_path):
    return export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild"),
                                 LevelRebuildSettings(use_selection=False, despite_edits=False))


def assert_has_points(mesh, wanted, read):
    """`mesh` (read back) holds, in order, every point of `wanted` (the scene's, float32) that
    moved, every other as `read` (the class's as read, by vertex) bit for bit."""
    moved = np.any(wanted[:len(read)] != read, axis=1)
    expected = np.concatenate([np.where(moved[:, None], wanted[:len(read)], read), wanted[len(read):]])
    np.testing.assert_array_equal(mesh.points, expected)
    assert np.abs(expected - wanted).max() <= 1e-5 * np.abs(wanted).max()


def test_a_remodelled_leaf_writes_its_class_geometry(tmp_path, level):
    """Through the operator: door 8's leaf raised 3 units (30 Oni) and given a face; dr_double's
    four leaves (a DoubleDoor's second leaf, a Mirror door's) raised alike. Their classes' M3GMs
    read back with the scene's points (float32), their normals and texture coordinates as read
    but the new face's; every other class file as read, byte for byte."""
    before = {name: class_meshes(level, name) for name in ("dr_offc", "dr_double")}
    remodel()
    out = tmp_path / "out"
    assert bpy.ops.export_anim.oni_level(directory=str(out), use_selection=False) == {"FINISHED"}
    classes = out / "level5" / "classes"
    written = {"M3GMdr_offc_panel.oni", "M3GMdr_double_panel.oni", "M3GMdr_double_trim.oni"}
    for name in os.listdir(classes):
        same = (classes / name).read_bytes() == open(os.path.join(ENV, "oni", name), "rb").read()
        assert same == (name not in written), name
    office = read_mesh_file(str(classes / "M3GMdr_offc_panel.oni"))
    read = before["dr_offc"][0]
    assert office.texture_name == read.texture_name == "dr_offc_tex"
    assert_has_points(office, oni_points(OFFICE), read.points)
    assert len(office.points) == len(read.points) + 3 and len(office.triangles) == len(read.triangles) + 1
    np.testing.assert_array_equal(office.normals[:len(read.normals)], read.normals)
    np.testing.assert_array_equal(office.uvs[:len(read.uvs)], read.uvs)
    offsets = np.cumsum([0] + [len(m.points) for m in before["dr_double"]])
    for k, (file, read) in enumerate(zip(("M3GMdr_double_panel.oni", "M3GMdr_double_trim.oni"),
                                         before["dr_double"])):
        mesh = read_mesh_file(str(classes / file))
        for name in DOUBLE:
            np.testing.assert_array_equal(mesh.points, oni_points(name)[offsets[k]:offsets[k + 1]])
        assert np.abs(mesh.points - read.points - [0, 30, 0]).max() < 1e-5
        np.testing.assert_array_equal(mesh.normals, read.normals)
        np.testing.assert_array_equal(mesh.uvs, read.uvs)
        assert mesh.texture_name == read.texture_name


def test_leaves_of_one_class_remodelled_otherwise_are_refused_naming_both(tmp_path, level):
    """Door 1's leaf raised, the other leaves of dr_swing left; then door 2's raised otherwise:
    each time refused, naming both leaves, nothing written."""
    raise_mesh("door_1")
    report = rebuild(tmp_path)
    assert not report.made and len(report.errors) == 1, report.errors
    assert "object 'door_1' and object 'door_2' show M3GM 'dr_swing_panel' of door class 'dr_swing'" in \
        report.errors[0] and "as read" in report.errors[0]
    for name in ("door_2", "door_7", "door_4103", "door_12"):
        raise_mesh(name, 2 * UP if name == "door_2" else UP)
    report = rebuild(tmp_path)
    assert not report.made and "object 'door_1' and object 'door_2'" in report.errors[0], report.errors
    assert "both re-modelled" in report.errors[0]
    assert not os.path.exists(tmp_path / "rebuild" / "level5")


def test_the_in_place_patch_refuses_a_remodelled_leaf(tmp_path, level):
    raise_mesh(OFFICE)
    report = export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch"),
                                  LevelPatchSettings(use_selection=False, despite_edits=False))
    assert not report.made and len(report.errors) == 1
    assert f"object '{OFFICE}': its mesh was edited (a leaf of door 'DOOR 8')" in report.errors[0]
    assert "rebuild the level to carry it" in report.errors[0]


def test_a_modifier_on_a_leaf_is_named(tmp_path, level):
    """What no M3GM holds (here a modifier) is named, the level refused unless Despite Edits."""
    bpy.data.objects[OFFICE].modifiers.new("Bevel", "BEVEL")
    report = rebuild(tmp_path)
    assert not report.made and "object 'door_8': its modifiers 'Bevel' are not applied" in report.errors[0]


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_a_remodelled_leaf(tmp_path, level, command):
    remodel()
    blend = tmp_path / "remodelled.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = run(command, "export", blend, "-o", tmp_path / "out", "--format", "level")
    assert done.returncode == 0, done.stderr
    assert "M3GM 'dr_offc_panel' of door class 'dr_offc' written from object 'door_8'" in done.stderr + done.stdout
    office = read_mesh_file(str(tmp_path / "out" / "level5" / "classes" / "M3GMdr_offc_panel.oni"))
    assert_has_points(office, oni_points(OFFICE), class_meshes(level, "dr_offc")[0].points)
    refused = run(command, "export", blend, "-o", tmp_path / "patched", "--format", "level-patch")
    assert refused.returncode == 1 and "rebuild the level to carry it" in refused.stderr


def test_onisplits_level_of_remodelled_leaves_holds_their_points(tmp_path, level):
    """tests/data/environment/remodelled_door: OniSplit's level of remodel()'s export. Its leaves
    (its OBOA setups, which -create:level makes of the class geometry) and its classes hold the
    scene's points; the leaves of the other classes as in the sample."""
    remodel()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        with lzma.open(os.path.join(KEPT, name + ".xz")) as f:
            (tmp_path / name).write_bytes(f.read())
    built = str(tmp_path / "level5_Final.dat")
    leaves = {o.name: o for o in read_objects(built).objects}
    sample = {o.name: o for o in read_objects(level).objects}
    office = leaves[OFFICE].meshes
    assert len(office) == 1
    assert_has_points(office[0], oni_points(OFFICE), sample[OFFICE].meshes[0].points)
    for name in DOUBLE:
        np.testing.assert_array_equal(np.concatenate([m.points for m in leaves[name].meshes]), oni_points(name))
    for name in set(sample) - {OFFICE, *DOUBLE}:
        for ours, theirs in zip(leaves[name].meshes, sample[name].meshes, strict=True):
            np.testing.assert_array_equal(ours.points, theirs.points)
    np.testing.assert_array_equal(class_meshes(built, "dr_offc")[0].points, office[0].points)


def test_furnitures_gunk_edited_is_named(tmp_path, level):
    """Furniture has no mesh of its own where the level has an environment: its gunk is faces of
    the environment, which the rebuild does not write (OniSplit makes them again of the class,
    shaded 207 grey). Crate 13's first gunk face moved up and another's deleted: both named,
    the level refused; with Despite Edits written, each a warning."""
    import bmesh  # after bpy, which brings it
    mesh = bpy.data.objects["level5 environment"].data
    tags = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_object_tag"].data.foreach_get("value", tags)
    crate = np.flatnonzero(tags == (5 << 24 | 13))
    assert len(crate) > 2
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.faces.ensure_lookup_table()
    bmesh.ops.translate(bm, vec=(0, 0, 0.5), verts=list(bm.faces[int(crate[0])].verts))
    bmesh.ops.delete(bm, geom=[bm.faces[int(crate[-1])]], context="FACES_ONLY")
    bm.to_mesh(mesh)
    bm.free()
    report = rebuild(tmp_path)
    assert not report.made and len(report.errors) == 1, report.errors
    said = report.errors[0]
    assert f"the gunk of furniture 13 was edited (object 'level5 environment' faces {crate[0]}, " in said, said
    assert re.search(r" and \d+ more moved or re-shaped; quads \d+ deleted\): the rebuild makes", said), said
    assert "furniture's re-modelling is not carried" in said and "furniture 14" not in said, said
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "despite"),
                                   LevelRebuildSettings(use_selection=False, despite_edits=True))
    assert not report.errors and report.made
    assert sum("left out" in w and "the gunk of furniture 13" in w for w in report.warnings) == 1, report.warnings


def test_a_leaf_given_another_texture_is_named(tmp_path, level):
    """A leaf shows its door's Texture1 or Texture2 (the object list's), else its class M3GM's:
    a re-modelled leaf's faces given another material are named, refused unless Despite Edits
    (then the class M3GM is written with the class's texture)."""
    mesh = bpy.data.objects[OFFICE].data
    material = bpy.data.materials.new("other")
    material["oni_texture_name"] = "DOORTEX_A"
    mesh.materials.append(material)
    mesh.polygons.foreach_set("material_index", np.full(len(mesh.polygons), 1, np.int32))
    mesh.update()
    report = rebuild(tmp_path)
    assert not report.made and "object 'door_8': part 0 shows texture 'DOORTEX_A', not 'dr_offc_tex' as imported" \
        in report.errors[0], report.errors
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "despite"),
                                   LevelRebuildSettings(use_selection=False, despite_edits=True))
    assert not report.errors and any("left out" in w and "DOORTEX_A" in w for w in report.warnings)
    office = read_mesh_file(str(tmp_path / "despite" / "level5" / "classes" / "M3GMdr_offc_panel.oni"))
    assert office.texture_name == "dr_offc_tex"
