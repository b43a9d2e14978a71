"""The mesh export (oni/export/meshes.py, docs/objects.md 10) and the files it was read from:
the folder imported from is written into only with Replace Sources (then OniSplit's files come
back bit for bit); a source replaced or damaged after the import is named and the part or
texture written as Blender holds it; two images painting one texture refused naming both; a
material showing another import's image writes that image's own texture, as OniSplit wrote it."""

import os
import shutil

import bpy
import numpy as np
import pytest
from exported import assert_sources_replaced_only_when_asked
from paths import DATA, EXAMPLES
from test_mesh_export import LEVEL, SAMPLES, assert_as_blender_holds, export, image_bytes, import_files, paint, written

from oban_import.oni.io.container.container import Container
from oban_import.oni.io.objects.read import read_mesh_file, read_texture_file

pytestmark = pytest.mark.usefixtures("addon")
OBJ03 = ("M3GMobj03_part0.oni", "TXMPtex03_rgba.oni")          # in examples/, as OniSplit wrote them
KEPT = os.path.join(DATA, "mesh_export", "ours")                # obj03 edited, as the export wrote it
PNTA_COUNT = 0x34                                               # a PNTA's point count, from its data


def copied(folder, names, source=EXAMPLES):
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(os.path.join(source, name), folder / name)
    return folder


def imported_obj03(tmp_path):
    folder = copied(tmp_path / "in", OBJ03)
    return folder, import_files(str(folder / OBJ03[0]))[0]


def test_the_folder_imported_from_is_written_only_with_replace_sources(tmp_path):
    folder, obj = imported_obj03(tmp_path)
    assert_sources_replaced_only_when_asked(export, folder, [obj], OBJ03[1], "object 'obj03_part0'")
    before = written(folder)
    obj.data.vertices[0].co.x += 0.5
    report = export(folder, [obj], replace_sources=True)
    assert {os.path.basename(m.path): m.note for m in report.made} == {"TXMPtex03_rgba.oni": "unchanged import",
                                                                        "M3GMobj03_part0.oni": "edited"}
    assert_as_blender_holds(obj, str(folder / OBJ03[0]))
    assert written(folder)[OBJ03[1]] == before[OBJ03[1]]


def pnta_damaged(path):
    """The mesh file's PNTA (its first) claiming more points than it holds."""
    data = bytearray(open(path, "rb").read())
    import io

    container = Container(io.BytesIO(bytes(data)), str(path), len(data))
    pnta = next(i for i in range(len(container.descriptors)) if container.tag_of(i) == b"ATNP")
    at = container.instance(pnta, b"ATNP")[1] + PNTA_COUNT
    data[at:at + 4] = (0xFFFFFF).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))


SOURCE_CHANGES = {   # how the mesh's file changed after the import -> how the note says it
    "replaced_by_other_arrays": (lambda folder: shutil.copy(os.path.join(KEPT, OBJ03[0]), folder / OBJ03[0]),
                                 "as the scene holds it: {path} holds other arrays for it now"),
    "replaced_by_another_mesh": (lambda folder: shutil.copy(os.path.join(SAMPLES, "M3GMobj05_part0.oni"),
                                                            folder / OBJ03[0]),
                                 "as the scene holds it: its source cannot be read ({path}: no longer holds "
                                 "M3GMobj03_part0 at instance 0)"),
    "damaged": (lambda folder: pnta_damaged(folder / OBJ03[0]),
                "as the scene holds it: its source cannot be read ({path}: instance 1 (unnamed PNTA): count says "
                "16777215 but only 138 fit in the instance)"),
}


@pytest.mark.parametrize("case", sorted(SOURCE_CHANGES))
def test_a_mesh_whose_file_changed_after_the_import_is_written_as_the_scene_holds_it(tmp_path, case):
    """Named in the note; the part made of Blender's faces: OniSplit's triangles, their points
    within float32 rounding of the import's s.A.p and back, their texture coordinates exact."""
    folder, obj = imported_obj03(tmp_path)
    change, said = SOURCE_CHANGES[case]
    change(folder)
    report = export(tmp_path / "out", [obj])
    assert not report.errors
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes == {OBJ03[0]: said.format(path=folder / OBJ03[0]), OBJ03[1]: "unchanged import"}
    path = str(tmp_path / "out" / OBJ03[0])
    assert_as_blender_holds(obj, path)
    back, theirs = read_mesh_file(path), read_mesh_file(os.path.join(EXAMPLES, OBJ03[0]))
    ours, onisplit = (np.concatenate([mesh.points, mesh.uvs], axis=1)[mesh.triangles] for mesh in (back, theirs))
    assert ours.shape == onisplit.shape
    turns = np.stack([np.roll(onisplit, -r, axis=1) for r in range(3)])   # a triangle may start at another corner
    off = np.abs(turns - ours)
    assert ((off[..., :3] <= 2 * np.spacing(np.abs(theirs.points).max())).all(axis=(2, 3))
            & (off[..., 3:] == 0).all(axis=(2, 3))).any(axis=0).all()


def test_a_texture_whose_file_holds_other_pixels_now_is_written_as_blender_shows_it(tmp_path):
    """Its file replaced by one of other pixels (the kept painted case): the note names it; the
    pixels written are the ones imported, OniSplit's."""
    folder, obj = imported_obj03(tmp_path)
    shutil.copy(os.path.join(KEPT, OBJ03[1]), folder / OBJ03[1])
    report = export(tmp_path / "out", [obj])
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes[OBJ03[1]] == \
        f"as the scene shows it ({folder / OBJ03[1]} holds other pixels for it now): RGBA as it was"
    back = read_texture_file(str(tmp_path / "out" / OBJ03[1]))
    assert np.array_equal(back.rgba8, read_texture_file(os.path.join(EXAMPLES, OBJ03[1])).rgba8)


def painted_copy(image):
    """A copy of an imported image (it keeps its texture's name), one pixel painted."""
    painted = image.copy()
    pixels = image_bytes(painted)
    pixels[0, 0] = (1, 2, 3, 4)
    paint(painted, pixels)
    return painted


def showing(material, image):
    """A copy of `material` whose image node shows `image`."""
    material = material.copy()
    next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image = image
    return material


def test_two_images_painting_one_texture_are_refused_naming_both(tmp_path):
    """A painted copy of an imported image: on a copy of the object, both objects are refused,
    each naming the other; on another part of the object (the level's object02, two parts),
    refused naming both images; nothing written."""
    _, obj = imported_obj03(tmp_path)
    painted = painted_copy(bpy.data.images["tex03_rgba"])
    material = showing(obj.data.materials[0], painted)
    twin = obj.copy()
    twin.data = obj.data.copy()
    twin.data.materials[0] = material
    twin.name = "twin"
    bpy.context.scene.collection.objects.link(twin)
    report = export(tmp_path / "both", [obj, twin])
    assert not report.made and not os.listdir(tmp_path / "both")
    assert report.errors == [f"object '{a}': object '{b}' would write TXMPtex03_rgba.oni too, otherwise; nothing "
                             f"written for them: give each its own name (the mesh's 'oni_mesh_parts', the material's "
                             f"or image's 'oni_texture_name')"
                             for a, b in (("obj03_part0", "twin"), ("twin", "obj03_part0"))]
    bpy.ops.import_anim.oban(filepath=LEVEL)
    object02 = bpy.data.objects["object02"]                     # obj02_part0 (tex02_bgra5551) + obj02_part1
    painted = painted_copy(bpy.data.images["tex02_bgra5551"])
    object02.data.materials[1] = showing(object02.data.materials[1], painted)
    report = export(tmp_path / "one", [object02])
    assert not report.made and not os.listdir(tmp_path / "one") and report.errors == [
        f"object 'object02': images 'tex02_bgra5551' and '{painted.name}' are both texture 'tex02_bgra5551'; give "
        f"each its own name (the image's or material's 'oni_texture_name')"]


def test_a_material_showing_another_imports_image_writes_that_images_texture(tmp_path):
    """obj03's material shows obj05's imported image: its M3GM (its arrays as stored) links
    tex05_dxt1, written as OniSplit wrote it; tex03_rgba is not written."""
    folder = copied(tmp_path / "in", OBJ03)
    copied(folder, ("M3GMobj05_part0.oni", "TXMPtex05_dxt1.oni"), SAMPLES)
    objects = import_files(str(folder / OBJ03[0]), str(folder / "M3GMobj05_part0.oni"))
    obj = next(o for o in objects if o.name == "obj03_part0")
    node = next(n for n in obj.data.materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage")
    node.image = bpy.data.images["tex05_dxt1"]
    report = export(tmp_path / "out", [obj])
    assert not report.errors and sorted(written(tmp_path / "out")) == ["M3GMobj03_part0.oni", "TXMPtex05_dxt1.oni"]
    assert written(tmp_path / "out")["TXMPtex05_dxt1.oni"] == open(os.path.join(SAMPLES, "TXMPtex05_dxt1.oni"),
                                                                   "rb").read()
    back, theirs = read_mesh_file(str(tmp_path / "out" / OBJ03[0])), read_mesh_file(os.path.join(EXAMPLES, OBJ03[0]))
    assert back.texture_name == "tex05_dxt1" and theirs.texture_name == "tex03_rgba"
    for field in ("points", "normals", "uvs", "strips", "face_normals", "face_normal_indices"):
        assert np.array_equal(getattr(back, field), getattr(theirs, field)), field
