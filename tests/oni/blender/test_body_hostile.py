"""What a new user might do to a character before the body export (oni/export/bodies/,
docs/characters.md, "Exporting a body"): each edit refused naming the armature and the object or
bone, with nothing written, or written as Blender shows it and said, never a traceback, never
silently other than shown; a bone moved just within and just past what is still "as read"; the
UV map Blender renders with; a float image as Blender shows it."""

import os
import re

import bpy
import numpy as np
import pytest
from mesh_edits import removed
from paths import EXAMPLES
from test_export_body import (AXES, SAMPLE_FILES, assert_same_triangles, blender_corners, export, import_char0,
                              mesh_corners, move_bone, on_bone, skinned_char0, written)
from test_mesh_shown import EXPECTED, float_image, second_uv_map

from oban_import.oni.engine import bones
from oban_import.oni.export.shared.as_read import AS_READ
from oban_import.oni.io.characters.read import read_character
from oban_import.oni.io.characters.stored import stored_levels
from oban_import.oni.io.objects.read import read_texture_file
from oban_import.oni.io.trams.tram import PART_NAMES

pytestmark = pytest.mark.usefixtures("addon")
SAMPLE = os.path.join(EXAMPLES, "ONCCchar0.oni")
HEAD, NECK = PART_NAMES.index("Head"), PART_NAMES.index("Neck")


def sample_body():
    return read_character(SAMPLE).body


def image_node(obj):
    return next(n for n in obj.data.materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage")


def select_only(obj):
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def emptied(armature, what="VERTS"):
    removed(on_bone(armature, "Head").data, what)


def bone_renamed(armature):
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    armature.data.edit_bones["Head"].name = "Skull"
    bpy.ops.object.mode_set(mode="OBJECT")


def ten_thousand_faces(armature):
    bpy.data.objects.remove(on_bone(armature, "Chest"))
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=101, y_subdivisions=101)
    grid = bpy.context.object
    grid.parent, grid.parent_type, grid.parent_bone = armature, "BONE", "Chest"


def an_image_of_no_pixels(armature):
    image = bpy.data.images.new("nothing", 4, 4)
    image.source, image.filepath = "FILE", "//no such file.png"
    image_node(on_bone(armature, "Head")).image = image


def a_curve_on_a_bone(armature):
    hat = bpy.data.objects.new("hat", bpy.data.curves.new("hat", "CURVE"))
    bpy.context.scene.collection.objects.link(hat)
    hat.parent, hat.parent_type, hat.parent_bone = armature, "BONE", "Head"


def a_constraint(armature):
    constraint = on_bone(armature, "Head").constraints.new("COPY_LOCATION")
    constraint.name, constraint.target = "Follow", bpy.data.objects["char0 Pelvis"]


def a_part_scaled_to_nothing(armature):
    on_bone(armature, "Head").scale = (1, 0, 1)


def skinned_scaled_to_nothing(armature):
    next(obj for obj in bpy.data.objects if obj.name == "skinned char0").scale = (1, 0, 1)


def armature_scaled_to_nothing(armature):
    skinned = next(obj for obj in bpy.data.objects if obj.name == "skinned char0")
    skinned.parent = None
    skinned.modifiers.new("Armature", "ARMATURE").object = armature
    armature.scale = (1, 0, 1)


UNLESS_DESPITE = "; nothing written for it (or export with Despite Edits (--despite-edits) to write it without them)"
REFUSED = {   # edit -> (edit, whether on the skinned sample, the error)
    "emptied": (emptied, False, "armature 'char0' object 'char0 Head' part 'char0 Head': has no faces (an M3GM needs "
                                "a triangle); nothing written for the object"),
    "loose_edges_only": (lambda armature: emptied(armature, "FACES_ONLY"), False,
                         "armature 'char0' object 'char0 Head' part 'char0 Head': has no faces (an M3GM needs a "
                         "triangle); nothing written for the object"),
    "bone_renamed": (bone_renamed, False, "armature 'char0': its bones are not the body's parts: no bone 'Head'"),
    "ten_thousand_faces": (ten_thousand_faces, False,   # <N>: a vertex per point, UV and normal drawn (by version)
                           "armature 'char0' object 'Grid' part 'Grid': <N> points and 20402 triangles: the engine "
                           "draws at most 2047 and 4095 of one mesh (BFW_Motoko.h); split it into more objects; "
                           "nothing written for the object"),
    "an_image_of_no_pixels": (an_image_of_no_pixels, False,
                              "armature 'char0' texture 'char0_face' (image 'nothing'): has no pixels (its file is "
                              "missing); nothing written for the object"),
    "a_curve_on_a_bone": (a_curve_on_a_bone, False, "armature 'char0': object 'hat': is a curve on bone 'Head', not "
                                                    "a mesh: a body part is a mesh (Object > Convert > Mesh)"
                          + UNLESS_DESPITE),
    "a_constraint": (a_constraint, False, "armature 'char0': object 'char0 Head': its constraints 'Follow' are not "
                                          "applied (a part stands on its bone as its parent inverse and transform "
                                          "place it)" + UNLESS_DESPITE),
    "a_part_scaled_to_nothing": (a_part_scaled_to_nothing, False,
                                 "armature 'char0' object 'char0 Head': its placement on bone 'Head' is not finite or "
                                 "flattens it (a zero scale)"),
    "skinned_scaled_to_nothing": (skinned_scaled_to_nothing, True,
                                  "armature 'char0' object 'skinned char0': its placement on the armature is not "
                                  "finite or flattens it (a zero scale); nothing written for the object"),
    "armature_scaled_to_nothing": (armature_scaled_to_nothing, True,
                                   "armature 'char0' object 'skinned char0': armature 'char0' is scaled to nothing on "
                                   "an axis (a zero scale): where the mesh stands on it at rest is not known; nothing "
                                   "written for the object"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_a_body_cannot_hold_is_refused_by_name(tmp_path, case):
    edit, skinned, said = REFUSED[case]
    armature = skinned_char0()[0] if skinned else import_char0()
    edit(armature)
    bpy.context.view_layer.update()
    report = export(tmp_path, [armature])
    assert len(report.errors) == 1 and re.fullmatch(re.escape(said).replace("<N>", r"\d+"), report.errors[0]), \
        report.errors
    assert not report.made and not os.listdir(tmp_path)


@pytest.mark.parametrize("case", ["a_curve_on_a_bone", "a_constraint"])
def test_despite_edits_writes_without_them_with_a_warning(tmp_path, case):
    edit, _, said = REFUSED[case]
    armature = import_char0()
    edit(armature)
    report = export(tmp_path, [armature], despite_edits=True)
    assert not report.errors and report.warnings == [said.replace(UNLESS_DESPITE, "; written without it")]
    assert written(tmp_path) == {name: open(os.path.join(EXAMPLES, name), "rb").read() for name in SAMPLE_FILES}


# --- carried: written as Blender shows it ------------------------------------------------------------

def test_a_texture_node_without_an_image_or_an_empty_slot_links_what_the_part_shows(tmp_path):
    """No image in the Head's node: TRMA keeps its texture, linked, not written, said; no material
    at all: the Head shows no texture, TRMA's entry none. The meshes as OniSplit wrote them."""
    armature = import_char0()
    head = on_bone(armature, "Head")
    image_node(head).image = None
    report = export(tmp_path / "node", [armature])
    assert not report.errors and report.notes == ["armature 'char0' part 'Head': its texture 'char0_face' is linked, "
                                                  "not written (its material shows no image)"]
    files = written(tmp_path / "node")
    assert sorted(files) == sorted(set(SAMPLE_FILES) - {"TXMPchar0_face.oni"})
    assert all(data == open(os.path.join(EXAMPLES, name), "rb").read() for name, data in files.items())
    head.data.materials[0] = None
    report = export(tmp_path / "slot", [armature])
    assert not report.errors and not report.notes
    textures = [part.mesh.texture_name for part in read_character(str(tmp_path / "slot" / "ONCCchar0.oni")).body.parts]
    expected = [part.mesh.texture_name for part in sample_body().parts]
    expected[HEAD] = ""
    assert textures == expected
    assert written(tmp_path / "slot")["TRBSchar0.oni"] == open(os.path.join(EXAMPLES, "TRBSchar0.oni"), "rb").read()


def test_a_part_on_another_bone_is_baked_there_and_its_own_part_written_without_a_mesh(tmp_path):
    """The Head's object put on the Neck's bone where it stood (the Neck's object deleted): the
    Neck's mesh is the Head's points moved by the Head's translation (OniSplit's TRTA), the Head
    has none; both said."""
    armature = import_char0()
    head = on_bone(armature, "Head")
    bpy.data.objects.remove(on_bone(armature, "Neck"))
    world = head.matrix_world.copy()
    head.parent_bone = "Neck"
    head.matrix_world = world
    report = export(tmp_path, [armature])
    assert not report.errors
    assert report.notes == ["armature 'char0' object 'char0 Head' (part 'Neck'): its offset relative to bone 'Neck' "
                            "baked into its points"]
    assert {os.path.basename(m.path): m.note for m in report.made}["TRBSchar0.oni"] == (
        "parts 'Neck', 'Head' from the scene at every level of detail (lower levels replaced); parts 'Head' without a "
        "mesh (no mesh object on their bones)")
    body, sample = read_character(str(tmp_path / "ONCCchar0.oni")).body, sample_body()
    assert body.parts[HEAD].mesh is None
    neck, theirs = body.parts[NECK].mesh, sample.parts[HEAD].mesh
    moved = theirs.points + sample.parts[HEAD].translation
    ours, expected = neck.points[neck.triangles], moved[theirs.triangles]
    turns = np.stack([np.roll(expected, -r, axis=1) for r in range(3)])
    assert (np.abs(turns - ours) <= 1e-5 * np.abs(moved).max()).all(axis=(2, 3)).any(axis=0).all()


def test_an_armature_moved_turned_and_scaled_is_the_same_body(tmp_path):
    armature = import_char0()
    armature.location, armature.rotation_euler, armature.scale = (1, 2, 3), (0.5, 0.25, 1.0), (2, 3, 4)
    report = export(tmp_path, [armature])
    assert not report.errors and {m.note for m in report.made} == {"unchanged import"}
    assert written(tmp_path) == {name: open(os.path.join(EXAMPLES, name), "rb").read() for name in SAMPLE_FILES}


def test_an_armature_whose_scale_is_applied_is_a_body_twice_the_size(tmp_path):
    """Object > Apply > Scale on an armature scaled 2: its bones twice as far apart (OniSplit's
    translations doubled), its parts' objects twice the size on them, where Blender then shows
    them (each part's points at its object's world matrix, about its bone's head)."""
    armature = import_char0()
    armature.scale = (2, 2, 2)
    bpy.context.view_layer.update()
    select_only(armature)
    assert bpy.ops.object.transform_apply(location=False, rotation=False, scale=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    report = export(tmp_path, [armature])
    assert not report.errors
    assert len([note for note in report.notes if "its scale and offset relative to bone" in note]) == 19
    body, sample = read_character(str(tmp_path / "ONCCchar0.oni")).body, sample_body()
    assert np.allclose(body.translations, 2 * sample.translations, rtol=1e-6, atol=1e-6)
    for index, (ours, theirs) in enumerate(zip(body.parts, sample.parts)):
        obj = on_bone(armature, ours.name)
        co = np.array([v.co for v in obj.data.vertices], np.float64)
        world = co @ np.array(obj.matrix_world)[:3, :3].T + np.array(obj.matrix_world)[:3, 3]
        shown = (world - np.array(armature.data.bones[ours.name].head_local)) @ AXES / 0.1
        apart = np.linalg.norm(ours.mesh.points[:, None] - shown[None], axis=2)
        assert len(ours.mesh.triangles) == len(theirs.mesh.triangles), ours.name
        assert apart.min(axis=1).max() < 1e-5 and apart.min(axis=0).max() < 1e-5, ours.name


def test_a_rotation_applied_to_a_part_is_written_as_its_mesh_holds_it(tmp_path):
    armature = import_char0()
    head = on_bone(armature, "Head")
    head.rotation_euler = (0.3, 0.0, 0.0)
    bpy.context.view_layer.update()
    select_only(head)
    assert bpy.ops.object.transform_apply(location=False, rotation=True, scale=False) == {"FINISHED"}
    report = export(tmp_path, [armature])
    assert not report.errors and not report.notes
    mesh = read_character(str(tmp_path / "ONCCchar0.oni")).body.parts[HEAD].mesh
    assert_same_triangles(mesh_corners(mesh), blender_corners(armature, "Head"))


def test_a_part_in_no_scene_is_no_mesh_and_said(tmp_path):
    armature = import_char0()
    head = on_bone(armature, "Head")
    for collection in list(head.users_collection):
        collection.objects.unlink(head)
    report = export(tmp_path, [armature])
    assert not report.errors
    assert "parts 'Head' without a mesh (no mesh object on their bones)" in \
        {os.path.basename(m.path): m.note for m in report.made}["TRBSchar0.oni"]
    assert read_character(str(tmp_path / "ONCCchar0.oni")).body.parts[HEAD].mesh is None


def test_an_armature_and_a_part_in_edit_mode_are_written_as_they_show(tmp_path):
    """A bone moved in Edit Mode, not left: its translation from its head; a part's vertex moved
    in Edit Mode: its mesh as shown (was a traceback: an edit-mode mesh gives no UVs)."""
    import bmesh  # once bpy is

    armature = import_char0()
    head = on_bone(armature, "Head")
    select_only(head)
    bpy.ops.object.mode_set(mode="EDIT")
    edited = bmesh.from_edit_mesh(head.data)
    edited.verts.ensure_lookup_table()
    edited.verts[0].co.z += 0.25
    bmesh.update_edit_mesh(head.data)
    report = export(tmp_path / "part", [armature])
    assert not report.errors
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh = read_character(str(tmp_path / "part" / "ONCCchar0.oni")).body.parts[HEAD].mesh
    assert_same_triangles(mesh_corners(mesh), blender_corners(armature, "Head"))
    select_only(armature)
    bpy.ops.object.mode_set(mode="EDIT")
    bone = armature.data.edit_bones["Head"]
    bone.head.x += 0.5
    bone.tail.x += 0.5
    report = export(tmp_path / "bone", [armature])
    assert not report.errors
    assert {os.path.basename(m.path): m.note for m in report.made}["TRBSchar0.oni"].endswith(
        "translations of 'Head' from the bones' heads")
    translation = read_character(str(tmp_path / "bone" / "ONCCchar0.oni")).body.parts[HEAD].translation
    assert np.allclose(translation - sample_body().parts[HEAD].translation, AXES.T @ [5.0, 0, 0], atol=1e-5)
    bpy.ops.object.mode_set(mode="OBJECT")


# --- a bone moved just within and just past "as read" ---------------------------------------------------

@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_a_bone_moved_within_as_read_keeps_its_translation_and_past_it_gets_its_heads(tmp_path, factor):
    """The Head's bone moved along x by `factor` times AS_READ of the body's reach (its heads'
    largest coordinate as the import put them): within it, the TRBS is OniSplit's, bit for bit;
    past it, the Head's translation is the one its head gives, the others as stored."""
    armature = import_char0()
    sample = sample_body()
    heads = bones.rest_heads(sample.parents, sample.translations, AXES, 0.1)
    step = factor * AS_READ * max(np.abs(heads).max(), 0.1)
    move_bone(armature, "Head", (step, 0.0, 0.0))
    moved = armature.data.bones["Head"].head_local.x - heads[HEAD, 0]
    assert abs(moved / step - 1) < 0.01                                    # float32 holds the step
    report = export(tmp_path, [armature])
    note = {os.path.basename(m.path): m.note for m in report.made}["TRBSchar0.oni"]
    ours = read_character(str(tmp_path / "ONCCchar0.oni")).body
    if factor < 1:
        assert note == "unchanged import"
        assert written(tmp_path)["TRBSchar0.oni"] == open(os.path.join(EXAMPLES, "TRBSchar0.oni"), "rb").read()
        return
    assert note == "translations of 'Head' from the bones' heads"
    others = [p for p in range(19) if p != HEAD]
    assert ours.translations[others].tobytes() == sample.translations[others].tobytes()
    head = np.array(armature.data.bones["Head"].head_local, np.float64)
    neck = np.array(armature.data.bones["Neck"].head_local, np.float64)
    expected = (head - neck) @ AXES / 0.1
    assert (np.abs(ours.translations[HEAD] - expected) <= np.spacing(np.abs(expected).astype(np.float32))).all()


# --- what Blender shows: the UV map it renders with, a float image --------------------------------------

def test_a_part_shows_the_uv_map_blender_renders_with(tmp_path):
    armature = import_char0()
    head = on_bone(armature, "Head")
    second_uv_map(head.data)
    report = export(tmp_path, [armature])
    assert report.notes == ["armature 'char0' object 'char0 Head': its UV maps 'UVMap' are not written (an M3GM holds "
                            "one UV map: 'Second', the one Blender renders with)"]
    mesh = stored_levels(str(tmp_path / "TRBSchar0.oni"), 0, "char0")[0][HEAD]
    assert_same_triangles(mesh_corners(mesh), blender_corners(armature, "Head"))
    theirs = sample_body().parts[HEAD].mesh
    moved = theirs.uvs[theirs.triangles] + [0.125, -0.125]
    turns = np.stack([np.roll(moved, -r, axis=1) for r in range(3)])
    assert (np.abs(turns - mesh.uvs[mesh.triangles]) <= 1e-6).all(axis=(2, 3)).any(axis=0).all()


def test_a_float_image_on_a_part_is_written_as_blender_shows_it(tmp_path):
    """An EXR replacing the Head's image: TXMPchar0_face (the material's texture) holds every
    8-bit level its linear values are."""
    armature = import_char0()
    image_node(on_bone(armature, "Head")).image = float_image("exr", tmp_path)
    report = export(tmp_path / "out", [armature])
    assert not report.errors
    assert np.array_equal(read_texture_file(str(tmp_path / "out" / "TXMPchar0_face.oni")).rgba8, EXPECTED)
