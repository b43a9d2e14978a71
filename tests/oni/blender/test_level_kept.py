"""What the in-place patch keeps as read (docs/level.md 11): it rewrites the environment's quads
and the textures' pixels alone, so an edit to the level's objects — an object list's Empty
moved, changed, added or deleted, a door's motion, a placed object moved, re-animated,
re-meshed, deleted or copied — is named and the level refused, unless Despite Edits: then the
file is written with every object as read (the level's bytes). A placed object's image
repainted in its own size and format is carried, where its pixels are stored."""

import os

import bpy
import numpy as np
import pytest
from paths import DATA
from placed_edits import LIFT, MOVE, RAISE, placed_in_level, raise_keys, shown_image
from test_level_placed_onlv import unpacked

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.objects.read import read_objects
from oban_import.ui.options import LevelPatchSettings

pytestmark = pytest.mark.usefixtures("addon")

PLACED = os.path.join(DATA, "environment", "placed", "level")


def patch(tmp_path, despite=False):
    return export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path),
                                LevelPatchSettings(use_selection=False, despite_edits=despite))


def empty(kind, object_id):
    return next(o for o in bpy.data.objects if o.get("oni_type") == kind and o.get("oni_object_id") == object_id)


def moved(obj, by=MOVE):
    obj.location = np.add(obj.location, by)
    bpy.context.view_layer.update()


def copied(obj, object_id=None):
    """A copy of `obj` (Shift+D keeps its properties), given `object_id`, one unit along x."""
    copy = obj.copy()
    if object_id is not None:
        copy["oni_object_id"] = object_id
    bpy.context.collection.objects.link(copy)
    copy.location.x += 1.0
    return copy


def deleted(obj):
    for child in obj.children:
        bpy.data.objects.remove(child)
    bpy.data.objects.remove(obj)


EMPTY_EDITS = {
    "moved": (lambda: moved(empty("FURN", 13)), "object 'FURN 13': moved"),
    "moved far": (lambda: moved(empty("FURN", 13), (1e30, 0, 0)), "object 'FURN 13': moved"),
    "re-flagged": (lambda: empty("DOOR", 1).__setitem__("oni_door_mirror", True),
                   "object 'DOOR 1': its properties 'oni_door_mirror' changed"),
    "added": (lambda: copied(empty("FURN", 13), 17), "object 'FURN 13.001': added, or its type or id changed"),
    "copied": (lambda: copied(empty("FURN", 13)), "object 'FURN 13.001': a copy of another"),
    "deleted": (lambda: deleted(empty("DOOR", 8)), "DOOR 8 of the level: deleted"),
    "re-animated": (lambda: raise_keys(bpy.data.objects["door_1"], RAISE),
                    "door class animation 'dr_swing_anim': its leaves' motion was edited"),
}


def assert_kept(tmp_path, level, said):
    """The patch refuses the level naming `said`; with Despite Edits it writes the level's bytes
    (nothing of the objects is written in place), `said` a warning."""
    report = patch(tmp_path / "refused")
    assert not report.made and len(report.errors) == 1 and said in report.errors[0], report.errors
    assert "the in-place patch keeps the level's objects as read" in report.errors[0]
    assert not (tmp_path / "refused").exists()
    report = patch(tmp_path / "despite", despite=True)
    assert report.made and not report.errors and any(said in warning for warning in report.warnings), report.warnings
    for name in ("level5_Final.dat", "level5_Final.raw"):
        assert (tmp_path / "despite" / name).read_bytes() == open(os.path.join(os.path.dirname(level), name),
                                                                  "rb").read()


@pytest.mark.parametrize("edit", EMPTY_EDITS)
def test_an_object_list_edit_is_named_by_the_patch(tmp_path, sample_level, edit):
    change, said = EMPTY_EDITS[edit]
    change()
    assert_kept(tmp_path, sample_level, said)


@pytest.fixture
def placed_level(tmp_path):
    """OniSplit's level with placed objects (tests/data/environment/placed/level) in
    tmp_path/in, imported with the defaults."""
    path = unpacked(tmp_path / "in", PLACED)
    assert bpy.ops.import_anim.oban(filepath=str(path)) == {"FINISHED"}
    return path


def lifted(obj):
    mesh = obj.data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    co[2::3] += LIFT
    mesh.vertices.foreach_set("co", co)
    mesh.update()


PLACED_EDITS = {
    "moved": (lambda: moved(placed_in_level("object00")), "object 'obj00_part0': moved"),
    "re-animated": (lambda: raise_keys(placed_in_level("object01"), RAISE), "object 'obj01_part0': re-animated"),
    "re-meshed": (lambda: lifted(placed_in_level("object03")), "object 'obj03_part0': re-meshed"),
    "deleted": (lambda: bpy.data.objects.remove(placed_in_level("object06")),
                "placed object 'obj06_part0' (setup 6): deleted"),
    "copied": (lambda: copied(placed_in_level("object06")),
               "objects 'obj06_part0', 'obj06_part0.001' are each setup 6"),
}


@pytest.mark.parametrize("edit", PLACED_EDITS)
def test_a_placed_object_edit_is_named_by_the_patch(tmp_path, placed_level, edit):
    change, said = PLACED_EDITS[edit]
    change()
    assert_kept(tmp_path, placed_level, said)


def test_a_placed_objects_image_repainted_in_its_format_is_carried_in_place(tmp_path, placed_level):
    """object04's image (tex04_bgr, BGR) half painted white: written where its pixels are stored
    in the level's .raw, every other byte as read; read back, the texture holds them."""
    obj = placed_in_level("object04")
    image = shown_image(obj)
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    pixels[: len(pixels) // 2] = 1.0
    image.pixels.foreach_set(pixels)
    report = patch(tmp_path / "out")
    assert report.made and not report.errors, report.errors
    assert (tmp_path / "out" / "level5_Final.dat").read_bytes() == placed_level.read_bytes()
    name = obj["oni_object_name"]
    before = next(o for o in read_objects(str(placed_level)).objects if o.name == name).meshes[0].texture
    after = next(o for o in read_objects(str(tmp_path / "out" / "level5_Final.dat")).objects
                 if o.name == name).meshes[0].texture
    expected = before.rgba8.copy()
    expected[before.height // 2:] = 255   # Blender's first half of the rows: the bottom ones
    np.testing.assert_array_equal(after.rgba8, expected)
    raw, written = (np.frombuffer(path.read_bytes(), np.uint8) for path in
                    (placed_level.with_suffix(".raw"), tmp_path / "out" / "level5_Final.raw"))
    changed = np.flatnonzero(raw != written)
    textures = [part.texture for o in read_objects(str(placed_level)).objects for part in o.meshes]
    textures += read_level(str(placed_level)).environment.textures
    starts = sorted({texture.pixels_at[1] for texture in textures if texture is not None} | {len(raw)})
    start = before.pixels_at[1]
    assert len(changed) and changed.min() >= start and changed.max() < starts[starts.index(start) + 1]
    assert read_level(str(tmp_path / "out" / "level5_Final.dat")).environment.quad_textures.tobytes() == \
        read_level(str(placed_level)).environment.quad_textures.tobytes()
