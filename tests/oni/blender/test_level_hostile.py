"""A level's scene edited as a careless user would, through both level exports (the rebuild and
the in-place patch, docs/level.md 11 and docs/bad_input.md): every property a user can type
into made wrong is refused naming the object, the property and what is wrong, never a
traceback, and nothing is written; what is valid (a deleted shade attribute, a paint layer, a
new face) is carried as docs/level.md says."""

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import bpy
import numpy as np
import pytest
from level_reference import GUNK_FLAG_BITS, NS, collada_polygons, xml_akev
from paths import DATA

from oban_import.oni.export.level.patch import export_level_patches
from oban_import.oni.export.level.rebuild import export_level_rebuilds
from oban_import.oni.io.level.read import read_level
from oban_import.ui.options import LevelRebuildSettings

pytestmark = pytest.mark.usefixtures("addon")
REBUILD = os.path.join(DATA, "environment", "rebuild")
GHOSTS = GUNK_FLAG_BITS["Ghost"] | GUNK_FLAG_BITS["StairsUp"] | GUNK_FLAG_BITS["StairsDown"]   # in the rooms' Collada


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


@pytest.mark.parametrize("at", [1e30, 410.0])
def test_a_point_beyond_the_world_refuses_both(tmp_path, level, at):
    """A corner at 1e30 Blender units (OniSplit builds nothing of it), or at 410 (4,100 Oni units,
    past the world's 4,096 at the import's scale 0.1): both exports refuse the level naming the
    face, nothing written; a room's corner too."""
    environment().data.vertices[3].co = (at, 0, 0)
    rebuild, patch = both(tmp_path)
    assert_refused(rebuild, tmp_path / "rebuild", "object 'level5 environment' face", "beyond 4096 units")
    assert_refused(patch, tmp_path / "patch", "object 'level5 environment' face")
    environment().data.vertices[3].co = (0, 0, 0)
    rooms = next(obj for obj in bpy.data.objects if "oni_rooms" in obj)
    rooms.data.vertices[0].co = (0, 0, at)
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "rooms"))
    assert report.errors == [f"object '{rooms.name}': a room's corner lies beyond 4096 units from the origin on an "
                             "axis, where the game's world ends (docs/objects.md 9)"] and not report.made


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
    imported_again(tmp_path, level)
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


def environment_objects():
    return [obj for obj in bpy.data.objects if "oni_environment" in obj and obj.type == "MESH"]


def triangulated(obj):
    """Face > Triangulate of every face of `obj`'s mesh (each face keeps its attributes)."""
    import bmesh  # after bpy, which brings it
    edit = bmesh.new()
    edit.from_mesh(obj.data)
    bmesh.ops.triangulate(edit, faces=edit.faces[:])
    edit.to_mesh(obj.data)
    edit.free()


def corner_sets(akev):
    """The float32 corners of each of the environment's own quads but ghosts (OniSplit's XML of
    the AKEV: what the rebuild writes in the environment Collada), each a frozenset."""
    own = np.flatnonzero((akev["object_tags"] == -1) & (akev["flags"] & GHOSTS == 0))
    counts = np.where(akev["flags"][own] & GUNK_FLAG_BITS["Triangle"], 3, 4)
    points = akev["points"].astype(np.float32)[akev["quad_points"][own]]
    return [frozenset(map(tuple, corners[:count].tolist())) for corners, count in zip(points, counts)]


def test_an_environment_triangulated_whole_is_carried_by_the_rebuild(tmp_path, level):
    """Face > Triangulate of every environment object: each quad two triangles on its corners as
    read, furniture's and doors' gunk among them. The rebuild writes every own quad as
    triangles on its corners exactly (OniSplit's XML of the AKEV), names no gunk (its corners did
    not move); the patch refuses the triangles (a quad's corners are stored with it)."""
    for obj in environment_objects():
        triangulated(obj)
    rebuild, patch = both(tmp_path)
    assert rebuild.made and not rebuild.errors, rebuild.errors
    quads = corner_sets(xml_akev(os.path.join(DATA, "environment", "xml", "AKEVlevel5.xml")))
    written = collada_polygons(str(tmp_path / "rebuild" / "level5" / "level5_env.dae"))
    assert len(written) == sum(len(corners) - 2 for corners in quads)
    for polygon in written:
        corners = frozenset(map(tuple, polygon.points.astype(np.float32).tolist()))
        assert len(polygon.points) == 3 and any(corners <= quad for quad in quads), polygon.points
    assert_refused(patch, tmp_path / "patch", "3 corners, 4 imported")


@pytest.mark.parametrize("edit, words", [("moved", "moved or re-shaped"), ("half deleted", "moved or re-shaped"),
                                         ("copied", "copied")])
def test_a_triangulated_gunk_quad_moved_half_deleted_or_copied_is_named(tmp_path, level, edit, words):
    """After Face > Triangulate, crate 13's gunk: one of a quad's two triangles split off and its
    corner on the quad's diagonal moved (the other triangle still stands there), or deleted, or
    both copied where they stand (OniSplit makes the quad once), is still named."""
    import bmesh  # after bpy, which brings it
    obj = environment()
    triangulated(obj)
    tags, quads = (np.empty(len(obj.data.polygons), np.int32) for _ in range(2))
    obj.data.attributes["oni_object_tag"].data.foreach_get("value", tags)
    obj.data.attributes["oni_quad"].data.foreach_get("value", quads)
    face = int(np.flatnonzero(tags == (5 << 24 | 13))[0])
    other = int(np.flatnonzero((quads == quads[face]) & (np.arange(len(quads)) != face))[0])
    edit_mesh = bmesh.new()
    edit_mesh.from_mesh(obj.data)
    edit_mesh.faces.ensure_lookup_table()
    triangle = edit_mesh.faces[face]
    if edit == "moved":
        diagonal = {vert.index for vert in edit_mesh.faces[other].verts}
        corner = next(k for k, vert in enumerate(triangle.verts) if vert.index in diagonal)
        split = bmesh.ops.split(edit_mesh, geom=[triangle])["geom"]
        next(part for part in split if isinstance(part, bmesh.types.BMFace)).verts[corner].co.z += 0.5
    elif edit == "copied":
        bmesh.ops.duplicate(edit_mesh, geom=[triangle, edit_mesh.faces[other]])
    else:
        bmesh.ops.delete(edit_mesh, geom=[triangle], context="FACES_ONLY")
    edit_mesh.to_mesh(obj.data)
    edit_mesh.free()
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert_refused(report, tmp_path / "out", "the gunk of furniture 13 was edited (object 'level5 environment' faces",
                   words)


@pytest.mark.parametrize("change, words", [
    ({"scale": (-1.0, 1.0, 1.0)}, "its placement is mirrored (scaled negatively on an axis)"),
    ({"scale": (2.0, 2.0, 2.0)}, "its placement is scaled or sheared"),
    ({"location": (1e38, 0.0, 0.0)}, "its placement (world matrix) is not finite in float32"),
], ids=["mirrored", "scaled", "beyond float32"])
def test_an_empty_mirrored_scaled_or_beyond_float32_refuses_the_rebuild(tmp_path, level, change, words):
    """An object list holds a position and three angles: Euler angles of a reflection would turn
    the object otherwise, a scale would be dropped, a position past float32 written infinite."""
    obj = first("FURN")
    for key, value in change.items():
        setattr(obj, key, value)
    bpy.context.view_layer.update()
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert_refused(report, tmp_path / "out", f"object '{obj.name}': {words}")


def test_an_empty_moved_far_within_float32_is_carried(tmp_path, level):
    """1e30 Blender units along x: 1e31 Oni units (scale 0.1), which a float32 holds."""
    obj = first("FURN")
    obj.location = (1e30, 0.0, 0.0)
    bpy.context.view_layer.update()
    report = export_level_rebuilds(bpy.context, bpy.context.scene.objects, str(tmp_path / "out"))
    assert report.made and not report.errors, report.errors
    written = ET.parse(tmp_path / "out" / "level5" / "level5_objects.xml").getroot().find("Objects")
    position = np.float32(written[obj["oni_object_id"] - 1].findtext("Header/Position").split())   # ids 1... in order
    assert position[0] == np.float32(1e31) and np.isfinite(position).all()


def material_image(material):
    return next(node.image for node in material.node_tree.nodes if node.bl_idname == "ShaderNodeTexImage")


def shows(material, image):
    next(node for node in material.node_tree.nodes if node.bl_idname == "ShaderNodeTexImage").image = image


def painted(image, rgba):
    image.pixels.foreach_set(np.tile(np.float32(rgba), image.size[0] * image.size[1]))
    image.pack()


def test_two_images_painting_one_texture_otherwise_are_refused_by_both(tmp_path, level):
    """The wall's image copied (its properties with it: it is still texture env_wall) and shown by
    a copy of the wall's material on half the wall's faces; the two painted otherwise: both
    exports refuse the level naming the texture and both images (neither is the texture)."""
    mesh = environment().data
    slot = next(k for k, m in enumerate(mesh.materials) if m.get("oni_texture_name") == "env_wall")
    wall, image = mesh.materials[slot], material_image(mesh.materials[slot])
    other, copy = wall.copy(), image.copy()
    shows(other, copy)
    mesh.materials.append(other)
    slots = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("material_index", slots)
    walls = np.flatnonzero(slots == slot)
    slots[walls[: len(walls) // 2]] = len(mesh.materials) - 1
    mesh.polygons.foreach_set("material_index", slots)
    painted(image, (1, 0, 0, 1))
    painted(copy, (0, 0, 1, 1))
    said = f"texture 'env_wall': images '{image.name}', '{copy.name}' show it otherwise: make them one image"
    for report, folder in zip(both(tmp_path), ("rebuild", "patch")):
        assert_refused(report, tmp_path / folder, said)


def test_an_image_given_another_textures_name_is_refused_by_both(tmp_path, level):
    """The floor's image renamed env_wall (its oni_texture_name): its faces would be written as
    the level's env_wall, which the wall's image shows otherwise; both exports refuse it naming
    both images."""
    mesh = environment().data
    floor = material_image(next(m for m in mesh.materials if m.get("oni_texture_name") == "env_floor0"))
    wall = material_image(next(m for m in mesh.materials if m.get("oni_texture_name") == "env_wall"))
    floor["oni_texture_name"] = "env_wall"
    said = f"texture 'env_wall': images {', '.join(repr(n) for n in sorted((floor.name, wall.name)))} show it otherwise"
    for report, folder in zip(both(tmp_path), ("rebuild", "patch")):
        assert_refused(report, tmp_path / folder, said)


def material_names(path):
    """{material id: name} of a Collada."""
    return {m.get("id"): m.get("name") for m in ET.parse(path).getroot().iter(f"{{{NS['c']}}}material")}


def test_a_material_showing_another_imports_image_writes_that_texture(tmp_path, level):
    """The wall's material made to show the floor's image (the one rule: an imported image's own
    texture): the rebuild writes the wall's faces with env_floor0 (against what OniSplit rebuilt
    the level from, tests/data/environment/rebuild), the patch their AGQR entries as
    env_floor0's TXMA index (OniSplit's XML of the AKEV), every other byte as read."""
    mesh = environment().data
    floor = material_image(next(m for m in mesh.materials if m.get("oni_texture_name") == "env_floor0"))
    shows(next(m for m in mesh.materials if m.get("oni_texture_name") == "env_wall"), floor)
    rebuild, patch = both(tmp_path)
    assert rebuild.made and patch.made and not rebuild.errors + patch.errors, rebuild.errors + patch.errors
    ours, theirs = (str(folder / "level5_env.dae") for folder in (tmp_path / "rebuild" / "level5", Path(REBUILD)))
    names, reference = material_names(ours), material_names(theirs)
    polygons, expected = collada_polygons(ours), collada_polygons(theirs)
    assert len(polygons) == len(expected) and "env_wall" in {reference[p.material] for p in expected}
    for polygon, before in zip(polygons, expected):
        np.testing.assert_array_equal(polygon.points, before.points)
        assert names[polygon.material] == ("env_floor0" if reference[before.material] == "env_wall"
                                           else reference[before.material])
    akev = xml_akev(os.path.join(DATA, "environment", "xml", "AKEVlevel5.xml"))
    wall, floor_index = (akev["texture_names"].index(name) for name in ("env_wall", "env_floor0"))
    expected = np.where(akev["quad_textures"] == wall, floor_index, akev["quad_textures"])
    patched = str(tmp_path / "patch" / "level5_Final.dat")
    np.testing.assert_array_equal(read_level(patched).environment.quad_textures, expected)
    _, at = read_level(level).environment.quad_textures_at
    before, after = (np.frombuffer(open(path, "rb").read(), np.uint8) for path in (level, patched))
    changed = np.flatnonzero(before != after)
    assert len(changed) and changed.min() >= at and changed.max() < at + 2 * len(expected)


def imported_again(tmp_path, level):
    """The sample level's files copied into tmp_path/other and imported too; the copy's path."""
    other = tmp_path / "other"
    other.mkdir()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        shutil.copy(os.path.join(os.path.dirname(level), name), other / name)
    assert bpy.ops.import_anim.oban(filepath=str(other / "level5_Final.dat")) == {"FINISHED"}
    return str(other / "level5_Final.dat")


def test_two_copies_of_one_level_are_both_refused_in_place(tmp_path, level):
    """Two levels of one file name (the same .dat copied into two folders, both imported, both
    unedited: the same bytes) would write one OUT/level5_Final.dat: neither is written."""
    copy = imported_again(tmp_path, level)
    patch = export_level_patches(bpy.context, bpy.context.scene.objects, str(tmp_path / "patch"))
    assert not patch.made and len(patch.errors) == 2, patch.errors
    for path, other in ((level, copy), (copy, level)):
        assert any(error.startswith(f"{path}: {other} would write level5_Final.dat too; nothing written for them")
                   for error in patch.errors), "\n".join(patch.errors)
    assert not (tmp_path / "patch").exists()


def test_a_level_imported_twice_into_one_scene_is_refused_by_both(tmp_path, level):
    """The same file imported twice: every object list Empty twice (the rebuild names them by
    type and id), every quad made twice (the patch)."""
    bpy.ops.import_anim.oban(filepath=level)
    rebuild, patch = both(tmp_path)
    assert_refused(rebuild, tmp_path / "rebuild", "objects 'DOOR 1', 'DOOR 1.001' are each DOOR 1 (an Empty copied, or "
                                                  "the level imported twice)")
    assert_refused(patch, tmp_path / "patch", "(quad 0): made 2 times")


def test_environment_objects_joined_write_what_they_wrote_apart(tmp_path, level):
    """Ctrl+J of the environment, its markers and a door's gunk: each face keeps its quad, flags
    and tag; both exports write what they write of the unedited level (what OniSplit rebuilt it
    from; the level's bytes)."""
    parts = [environment(), bpy.data.objects["level5 markers"], bpy.data.objects["DOOR 1 gunk"]]
    with bpy.context.temp_override(active_object=parts[0], selected_editable_objects=parts, selected_objects=parts):
        assert bpy.ops.object.join() == {"FINISHED"}
    rebuild, patch = both(tmp_path)
    assert rebuild.made and patch.made and not rebuild.errors + patch.errors, rebuild.errors + patch.errors
    for name in ("level5_env.dae", "level5_rooms.dae", "level5.xml"):
        assert (tmp_path / "rebuild" / "level5" / name).read_bytes() == open(os.path.join(REBUILD, name), "rb").read()
    for name in ("level5_Final.dat", "level5_Final.raw"):
        assert (tmp_path / "patch" / name).read_bytes() == open(os.path.join(os.path.dirname(level), name), "rb").read()


def test_a_face_given_a_fifth_corner_is_refused_by_both(tmp_path, level):
    """An edge of face 3 subdivided: a polygon of five corners, which no quad holds."""
    import bmesh  # after bpy, which brings it
    edit = bmesh.new()
    edit.from_mesh(environment().data)
    edit.faces.ensure_lookup_table()
    bmesh.ops.subdivide_edges(edit, edges=[edit.faces[3].edges[0]], cuts=1)
    edit.to_mesh(environment().data)
    edit.free()
    for report, folder in zip(both(tmp_path), ("rebuild", "patch")):
        assert_refused(report, tmp_path / folder, "object 'level5 environment' face 3: 5 corners (a quad has at most 4")
