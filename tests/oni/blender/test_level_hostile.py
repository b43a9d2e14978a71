"""A level's scene edited as a careless user would, through both level exports (the rebuild and
the in-place patch, docs/level.md 11 and docs/bad_input.md): every property a user can type
into made wrong is refused naming the object, the property and what is wrong, never a
traceback, and nothing is written; what is valid (a deleted shade attribute, a paint layer, a
new face) is carried as docs/level.md says."""

import os
import shutil

import bpy
import numpy as np
import pytest
from paths import DATA

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.oni.io.level.read import read_level
from oban_import.ui.options import LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")
REBUILD = os.path.join(DATA, "environment", "rebuild")


@pytest.fixture
def level(sample_level):
    return sample_level


def environment():
    return bpy.data.objects["level5 environment"]


def first(kind):
    return next(obj for obj in bpy.data.objects if obj.get("oni_type") == kind)


def both(tmp_path):
    """(the rebuild's report, the patch's report), each into a folder of its own."""
    return (export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rebuild")),
            export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch")))


def assert_refused(report, folder, *words):
    assert len(report.errors) == 1 and not report.made, report.errors
    assert all(word in report.errors[0] for word in words), report.errors[0]
    assert not os.path.exists(folder) or not os.listdir(folder)


@pytest.mark.parametrize("key, value, words", [
    ("oban_import_scale", "big", ("'oban_import_scale' is 'big', not a finite number",)),
    ("oban_import_scale", 0.0, ("'oban_import_scale' is 0.0: a scale is a positive finite number",)),
    ("oban_import_axes", [1.0, 0.0], ("'oban_import_axes' holds 2 numbers, not 9",)),
    ("oni_level_fingerprint", "x", ("'oni_level_fingerprint' is 'x', not a whole number",)),
])
def test_an_environments_property_of_the_wrong_kind_refuses_both_exports(tmp_path, level, key, value, words):
    environment()[key] = value
    rebuild, patch = both(tmp_path)
    for report, folder in ((rebuild, tmp_path / "rebuild"), (patch, tmp_path / "patch")):
        assert_refused(report, folder, "object 'level5 environment'", *words)


def test_a_level_file_that_is_not_a_path_is_named(tmp_path, level):
    environment()["oni_level_file"] = 7
    rebuild, patch = both(tmp_path)
    for report in (rebuild, patch):
        assert "object 'level5 environment': property 'oni_level_file' is 7, not text" in report.errors
        assert not report.made and any("nothing written" in error for error in report.errors)


@pytest.mark.parametrize("kind, key, value, words", [
    ("DOOR", "oni_door_id", 70000, "'oni_door_id' is 70000, not 0 to 65535"),
    ("DOOR", "oni_door_id", "seven", "'oni_door_id' is 'seven', not a whole number"),
    ("DOOR", "oni_door_flags", -1, "'oni_door_flags' is -1, not 0 to 65535"),
    ("DOOR", "oni_door_mirror", 2, "'oni_door_mirror' is 2, not on or off"),
    ("DOOR", "oni_key_id", 1.5, "'oni_key_id' is 1.5, not a whole number"),
    ("DOOR", "oni_object_id", "x", "'oni_object_id' is 'x', not a whole number"),
    ("DOOR", "oni_position", [1.0, 2.0], "'oni_position' holds 2 numbers, not 3"),
    ("DOOR", "oni_texture1", "T" * 64, "'oni_texture1' is 'TTTT"),
    ("DOOR", "oni_events", 5, "'oni_events' is not a list of texts"),
    ("DOOR", "oni_events", ["Explode: 3"], "'Explode: 3' is not an event"),
    ("DOOR", "oni_events", ["UnlockDoor: -1"], "a target is an id 0 to 32767"),
    ("DOOR", "oni_events", ["Script: " + "f" * 33], "a function name is at most 32 bytes"),
    ("DOOR", "oni_activation_radius_squared", -4.0, "a squared radius is not negative"),
    ("FURN", "oni_rotation", [1.0, 2.0], "'oni_rotation' holds 2 numbers, not 3"),
    ("FURN", "oni_particle", "p" * 49, "longer than the 48 bytes the game stores"),
    ("FURN", "oni_furniture_class", 3, "'oni_furniture_class' is 3, not text"),
])
def test_an_objects_property_oni_split_cannot_take_refuses_the_rebuild(tmp_path, level, kind, key, value, words):
    obj = first(kind)
    obj[key] = value
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert_refused(report, tmp_path / "out", f"object '{obj.name}'", words)


def test_a_point_that_is_not_finite_refuses_both(tmp_path, level):
    environment().data.vertices[3].co = (np.nan, 0, 0)
    rebuild, patch = both(tmp_path)
    for report, folder in ((rebuild, tmp_path / "rebuild"), (patch, tmp_path / "patch")):
        assert_refused(report, folder, "object 'level5 environment' face", "is not a finite number")


def test_an_object_scaled_to_nothing_refuses_the_rebuild(tmp_path, level):
    first("FURN").scale = (0, 0, 0)
    bpy.context.view_layer.update()
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert_refused(report, tmp_path / "out", "scaled to nothing")


def test_shades_are_read_by_name_and_kept_as_read_without_them(tmp_path, level):
    """A paint layer made active is not the shades; with the shade attribute deleted each quad's
    shades are as read: both exports then write what an unedited scene writes."""
    mesh = environment().data
    paint = mesh.color_attributes.new("paint", "BYTE_COLOR", "CORNER")
    paint.data.foreach_set("color_srgb", np.zeros(4 * len(mesh.loops), np.float32))
    mesh.color_attributes.active_color = paint
    for step in ("painted", "deleted"):
        if step == "deleted":
            mesh.color_attributes.remove(mesh.color_attributes["oni_shade"])
        rebuild, patch = both(tmp_path / step)
        assert not rebuild.errors and not patch.errors, rebuild.errors + patch.errors
        written = tmp_path / step / "rebuild" / "level5" / "level5_env.dae"
        assert written.read_bytes() == open(os.path.join(REBUILD, "level5_env.dae"), "rb").read()
        assert (tmp_path / step / "patch" / "level5_Final.dat").read_bytes() == open(level, "rb").read()


def test_a_moved_environment_is_carried_by_the_rebuild_and_refused_in_place(tmp_path, level):
    """The rebuild carries the environment's own quads moved; the furniture's gunk it holds,
    which OniSplit makes again where the furniture's Empties stand, it names (written with
    Despite Edits); the in-place patch refuses the move."""
    environment().location.z += 1.0
    bpy.context.view_layer.update()
    rebuild, patch = both(tmp_path)
    assert_refused(rebuild, tmp_path / "rebuild", "the gunk of furniture 13 was edited (object 'level5 environment' "
                                                  "faces", "moved or re-shaped")
    assert_refused(patch, tmp_path / "patch", "its corners moved")
    despite = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "despite"),
                                    LevelRebuildSettings(use_selection=False, despite_edits=True))
    assert not despite.errors and despite.made


def test_a_face_made_from_nothing_belongs_to_the_environment(tmp_path, level):
    """Blender gives a new face 0 in every face attribute: not an object's tag (type 0), so the
    face is the environment's own and the rebuild writes it, last."""
    import bmesh  # after bpy, which brings it
    obj = environment()
    mesh = obj.data
    before = read_level(level).environment
    own = int(((before.object_tags == -1) & (before.flags & 0x2 == 0)).sum())
    edit = bmesh.new()
    edit.from_mesh(mesh)
    corners = [edit.verts.new(point) for point in ((0, 0, 50), (1, 0, 50), (1, 1, 50))]
    edit.faces.new(corners)
    edit.to_mesh(mesh)
    edit.free()
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert not report.errors, report.errors
    assert report.made[0].item.quads == own + 1


def test_two_levels_of_one_name_are_both_refused_by_name(tmp_path, level):
    other = tmp_path / "other"
    other.mkdir()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        shutil.copy(os.path.join(os.path.dirname(level), name), other / name)
    assert bpy.ops.import_anim.oban(filepath=str(other / "level5_Final.dat")) == {"FINISHED"}
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert len(report.errors) == 2 and not report.made
    assert all("both would write" in error and "level5_Final.dat" in error for error in report.errors)
    assert not os.path.exists(tmp_path / "out" / "level5")


def test_the_rebuild_never_writes_over_the_level_it_read(tmp_path, level):
    """Exported into the folder that holds the level, under the level's own name: refused."""
    holder = tmp_path / "in" / "level5"
    holder.mkdir()
    shutil.move(level, holder / "level5_Final.dat")
    shutil.move(level.replace(".dat", ".raw"), holder / "level5_Final.raw")
    for obj in bpy.data.objects:
        if obj.get("oni_level_file") == level:
            obj["oni_level_file"] = str(holder / "level5_Final.dat")
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "in"))
    assert report.errors and "would replace the folder holding" in report.errors[0]
    assert sorted(os.listdir(holder)) == ["level5_Final.dat", "level5_Final.raw"]
