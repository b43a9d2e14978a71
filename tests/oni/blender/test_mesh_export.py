"""The mesh export (oni/blender/objects/, docs/objects.md 10): OniSplit's sample meshes and
textures, imported loose and from a level and left as they are, written back as OniSplit wrote
them; an edited part, a painted texture and a mesh made in Blender written as Blender holds them
(read back by the add-on's readers: every point, normal and texture coordinate Blender's, as
float32, every pixel); the cases kept in tests/data/mesh_export made again and read as OniSplit
read them; what an M3GM cannot hold refused, naming the object; the dialog and the command line."""

import glob
import os
import xml.etree.ElementTree as ET

import bpy
import characters_generate as cgen
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from exported import written
from onisplit_readings import assert_same_faces, mesh_corners, onisplit_bytes, read_obj, xml_numbers
from paths import DATA, EXAMPLES
from pngs import read_png

from oban_import.blender import compat
from oban_import.oni.engine.to_blender import axes_matrix
from oban_import.oni.export.meshes import export_meshes, mesh_objects
from oban_import.oni.io.container.container import TXMP_TAG, Container
from oban_import.oni.io.objects.mesh_write import bounds
from oban_import.oni.io.objects.read import read_mesh_file, read_texture_file
from oban_import.oni.io.objects.textures import BGR, DXT1, FORMAT_NAMES, RGBA
from oban_import.ui.options import MeshExportSettings

pytestmark = pytest.mark.usefixtures("addon")
SAMPLES = os.path.join(DATA, "objects", "oni")
LEVEL = os.path.join(EXAMPLES, "level9_Final.dat")
KEPT = os.path.join(DATA, "mesh_export")
MESHES = sorted(glob.glob(os.path.join(SAMPLES, "M3GM*.oni")))
TXMP_FLAGS = 0x80          # a TXMP's flags, from the start of its data


def import_files(*paths):
    folder = os.path.dirname(paths[0])
    assert bpy.ops.import_anim.oban(directory=folder, files=[{"name": os.path.basename(p)} for p in paths]) \
        == {"FINISHED"}
    return sorted(mesh_objects(bpy.context.scene.objects), key=lambda obj: obj.name)


def export(folder, objects=None, **options):
    objects = mesh_objects(bpy.context.scene.objects) if objects is None else objects
    os.makedirs(folder, exist_ok=True)
    return export_meshes(bpy.context, objects, str(folder), MeshExportSettings(**options))


def paint(image, rgba):
    """Blender's pixels of `image` set to (h, w, 4) uint8, top row first."""
    if tuple(image.size) != (rgba.shape[1], rgba.shape[0]):
        image.scale(rgba.shape[1], rgba.shape[0])
    image.pixels.foreach_set((rgba[::-1].astype(np.float32) / 255).ravel())


def hashed(shape, salt):
    """Integer hashing (no random generator): the same bytes on every machine."""
    x = (np.arange(int(np.prod(shape)), dtype=np.uint64) + np.uint64(salt)) * np.uint64(2654435761)
    return ((x >> np.uint64(13)) % np.uint64(256)).astype(np.uint8).reshape(shape)


# --- the cases kept in tests/data/mesh_export (its README) ------------------------------------------

def edited_obj03():
    """examples/M3GMobj03_part0.oni with its RGBA texture: five points moved, a triangle added
    between three of its points, a face's UVs changed, a 4 x 4 block painted (alpha too)."""
    obj = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    mesh = obj.data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[:5] += np.array([[0.01, -0.02, 0.03]], np.float32) * np.arange(1, 6, dtype=np.float32)[:, None]
    mesh.vertices.foreach_set("co", co.ravel())
    import bmesh  # once bpy is

    layer = mesh.uv_layers["UVMap"]
    for corner, uv in zip(range(mesh.polygons[5].loop_start, mesh.polygons[5].loop_start + 3),
                          ((0.125, 0.25), (0.5, 0.75), (0.875, 0.0625))):
        layer.data[corner].uv = uv
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.verts.ensure_lookup_table()
    face = bm.faces.new([bm.verts[i] for i in (0, 40, 80)])
    uv = bm.loops.layers.uv["UVMap"]
    for loop, value in zip(face.loops, ((0.25, 0.25), (0.75, 0.25), (0.5, 0.875))):
        loop[uv].uv = value
    bm.to_mesh(mesh)
    bm.free()
    image = bpy.data.images["tex03_rgba"]
    pixels = image_bytes(image)
    pixels[4:8, 8:12] = hashed((4, 4, 4), 3)
    paint(image, pixels)
    return obj


def painted_dxt1():
    """tests/data/objects/oni/M3GMobj05_part0.oni with its DXT1 texture: three points moved, the
    texture painted with a gradient DXT1 cannot hold (opaque: written as BGR)."""
    obj = import_files(os.path.join(SAMPLES, "M3GMobj05_part0.oni"))[0]
    for index in (1, 2, 3):
        obj.data.vertices[index].co.z += 0.0625 * index
    height, width = bpy.data.images["tex05_dxt1"].size[1], bpy.data.images["tex05_dxt1"].size[0]
    gradient = np.zeros((height, width, 4), np.uint8)
    gradient[..., 0] = np.arange(width, dtype=np.uint8)[None, :] * 4
    gradient[..., 1] = np.arange(height, dtype=np.uint8)[:, None] * 32
    gradient[..., 2], gradient[..., 3] = 77, 255
    paint(bpy.data.images["tex05_dxt1"], gradient)
    return obj


def made_wedge():
    """A mesh made in Blender: a wedge of two triangles and three quads, flat, its own UVs, and
    a material showing a new 8 x 4 image with transparent pixels (written as RGBA)."""
    points = [(0, 0, 0), (2, 0, 0), (0, 1, 0), (0, 0, 3), (2, 0, 3), (0, 1, 3)]
    faces = [(0, 2, 1), (3, 4, 5), (0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)]
    mesh = bpy.data.meshes.new("wedge")
    mesh.from_pydata(points, [], faces)
    mesh.polygons.foreach_set("use_smooth", np.zeros(len(faces), bool))
    layer = mesh.uv_layers.new(name="UVMap")
    layer.data.foreach_set("uv", (np.arange(2 * len(mesh.loops)) % 7 / 8.0).astype(np.float32))
    image = bpy.data.images.new("checker", 8, 4, alpha=True)
    pixels = hashed((4, 8, 4), 11)
    pixels[::2, ::2, 3] = 0
    paint(image, pixels)
    material = bpy.data.materials.new("checker material")
    tree = compat.material_nodes(material)
    tree.nodes.new("ShaderNodeTexImage").image = image
    mesh.materials.append(material)
    obj = bpy.data.objects.new("wedge", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


CASES = {"edited_obj03": edited_obj03, "painted_dxt1": painted_dxt1, "made_wedge": made_wedge}
KEPT_FILES = {"edited_obj03": ("M3GMobj03_part0.oni", "TXMPtex03_rgba.oni"),
              "painted_dxt1": ("M3GMobj05_part0.oni", "TXMPtex05_dxt1.oni"),
              "made_wedge": ("M3GMwedge.oni", "TXMPchecker.oni")}


def image_bytes(image):
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    return np.rint(pixels * 255).astype(np.uint8).reshape(image.size[1], image.size[0], 4)[::-1].copy()


def write_cases(folder):
    """Export every case into `folder` (what tests/data/mesh_export/ours holds)."""
    for make in CASES.values():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        report = export(folder, [make()])
        assert not report.errors, report.errors


def blender_corners(obj, part=None):
    """(t, 3, 8) float32: each triangle corner of the object's mesh (of one part) as Blender
    holds it, in Oni's terms (point with the scale and axes it was imported with, else 0.1,
    -Z forward and Y up, undone, normal as drawn, u, 1 - v of the UV map it renders with)."""
    mesh = obj.data
    axes = np.reshape(mesh["oban_import_axes"], (3, 3)) if "oban_import_axes" in mesh else axes_matrix("-Z", "Y")
    mesh.calc_loop_triangles()
    corners = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("loops", corners)
    if part is not None:
        face = np.empty(len(mesh.loop_triangles), np.int32)
        mesh.loop_triangles.foreach_get("polygon_index", face)
        parts = np.empty(len(mesh.polygons), np.int32)
        mesh.attributes["oni_part"].data.foreach_get("value", parts)
        corners = corners.reshape(-1, 3)[parts[face] == part].ravel()
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    uv = np.zeros(2 * len(mesh.loops), np.float32)
    next(layer for layer in mesh.uv_layers if layer.active_render).data.foreach_get("uv", uv)
    scale = mesh.get("oban_import_scale", 0.1)
    points = ((co.reshape(-1, 3).astype(np.float64) @ axes) / scale).astype(np.float32)[vertex]
    normals = (compat.corner_normals(mesh).astype(np.float64) @ axes).astype(np.float32)
    uvs = uv.reshape(-1, 2).astype(np.float64) * [1, -1] + [0, 1]
    every = np.concatenate([points, normals, uvs.astype(np.float32)], axis=1)
    return every[corners].reshape(-1, 3, 8)


def file_corners(path):
    """(t, 3, 8) float32 of an M3GM file as the reader gives it back."""
    back = read_mesh_file(path)
    every = np.concatenate([back.points, back.normals, back.uvs], axis=1)
    return every[back.triangles]


def assert_as_blender_holds(obj, path, part=None):
    """The file's triangles, in order, are Blender's (each may start at another corner), every
    value as float32, bit for bit."""
    ours, theirs = file_corners(path), blender_corners(obj, part)
    assert ours.shape == theirs.shape
    turns = np.stack([np.roll(theirs, -r, axis=1) for r in range(3)])
    assert (turns.view(np.uint32) == ours.view(np.uint32)).all(axis=(2, 3)).any(axis=0).all()


# --- unchanged imports: OniSplit's files -----------------------------------------------------------

def test_the_sample_meshes_and_textures_come_back_as_onisplit_wrote_them(tmp_path):
    """Where the objects stand is their placement, not their meshes'."""
    objects = import_files(*MESHES)
    for k, obj in enumerate(objects):
        obj.location, obj.rotation_euler, obj.scale = (k, -k, 2 * k), (0.5 * k, 0, -k), (1, 2, 1)
    report = export(tmp_path, objects)
    assert not report.errors and not report.warnings
    assert {m.note for m in report.made} == {"unchanged import"} and report.counts == {"files": 18}
    files = written(tmp_path)
    assert len(files) == 18
    assert all(data == open(os.path.join(SAMPLES, name), "rb").read() for name, data in files.items())


def test_a_level_s_meshes_and_textures_come_back_as_onisplit_wrote_them(tmp_path):
    """Its TXMPs as the level stores them: OniSplit's level sets SwapBytes (0x1000) on the RGBA
    texture that its loose file does not have; every other byte is the loose file's."""
    bpy.ops.import_anim.oban(filepath=LEVEL)
    blend = tmp_path / "level9.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    report = export(tmp_path / "out")
    assert not report.errors and {m.note for m in report.made} == {"unchanged import"}
    files = written(tmp_path / "out")
    assert len(files) == 18
    for name, data in files.items():
        expected = bytearray(open(os.path.join(SAMPLES, name), "rb").read())
        if name == "TXMPtex03_rgba.oni":
            at = texture_data_offset(bytes(expected)) + TXMP_FLAGS
            assert expected[at:at + 4] == bytes(4)
            expected[at:at + 4] = (0x1000).to_bytes(4, "little")
        assert data == expected, name


def texture_data_offset(data: bytes) -> int:
    import io

    return Container(io.BytesIO(data), "TXMP", len(data)).instance(0, TXMP_TAG)[1]


def test_an_edited_part_is_written_as_blender_holds_it_and_the_other_as_read(tmp_path):
    bpy.ops.import_anim.oban(filepath=LEVEL)
    obj = bpy.data.objects["object02"]                  # obj02_part0 (BGRA5551) + obj02_part1 (RGBA)
    part = np.empty(len(obj.data.polygons), np.int32)
    obj.data.attributes["oni_part"].data.foreach_get("value", part)
    second = obj.data.polygons[int(np.argmax(part == 1))].vertices[0]
    obj.data.vertices[second].co.y += 0.25
    report = export(tmp_path, [obj])
    assert not report.errors
    assert {os.path.basename(m.path): m.note for m in report.made} == {
        "TXMPtex02_bgra5551.oni": "unchanged import", "TXMPtex03_rgba.oni": "unchanged import",
        "M3GMobj02_part0.oni": "unchanged import", "M3GMobj02_part1.oni": "edited"}
    assert open(tmp_path / "M3GMobj02_part0.oni", "rb").read() == \
        open(os.path.join(SAMPLES, "M3GMobj02_part0.oni"), "rb").read()
    assert_as_blender_holds(obj, str(tmp_path / "M3GMobj02_part1.oni"), part=1)
    back = read_mesh_file(str(tmp_path / "M3GMobj02_part1.oni"))
    stored = read_mesh_file(os.path.join(SAMPLES, "M3GMobj02_part1.oni"))
    if compat.HAS_FREE_NORMALS:   # before 4.5, a moved point turns the custom normals drawn around it
        moved = (np.abs(back.points - stored.points) > 1e-6 * np.maximum(np.abs(stored.points), 1)).any(axis=1)
        assert len(back.points) == len(stored.points) and np.count_nonzero(moved) == 1   # the others within a bit


def test_an_edit_keeps_the_scale_and_axes_it_was_imported_with(tmp_path):
    assert bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "M3GMobj03_part0.oni"), global_scale=1.0,
                                    axis_forward="X", axis_up="Z") == {"FINISHED"}
    obj = mesh_objects(bpy.context.scene.objects)[0]
    obj.data.vertices[3].co.x += 2.0
    report = export(tmp_path, [obj], global_scale=0.25)
    assert {m.note for m in report.made} == {"edited", "unchanged import"}
    assert_as_blender_holds(obj, str(tmp_path / "M3GMobj03_part0.oni"))
    back, stored = (read_mesh_file(path) for path in (str(tmp_path / "M3GMobj03_part0.oni"),
                                                     os.path.join(EXAMPLES, "M3GMobj03_part0.oni")))
    kept = (back.points[:, None] == stored.points[None]).all(axis=2).any(axis=1)   # at scale 1, exactly
    moved = back.points[~kept]
    assert len(moved) and np.allclose(np.linalg.norm(moved - stored.points[3], axis=1), 2.0, atol=1e-5)


# --- edits, written as Blender holds them --------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_an_edited_or_new_mesh_reads_back_as_blender_holds_it(tmp_path, case):
    obj = CASES[case]()
    report = export(tmp_path, [obj])
    assert not report.errors and not report.warnings, report.errors + report.warnings
    mesh_file, texture_file = KEPT_FILES[case]
    assert sorted(written(tmp_path)) == sorted(KEPT_FILES[case])
    assert_as_blender_holds(obj, str(tmp_path / mesh_file))
    image = next(image for image in bpy.data.images if image.users)
    texture = read_texture_file(str(tmp_path / texture_file))
    assert np.array_equal(texture.rgba8, image_bytes(image))
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes[texture_file] == {"edited_obj03": "painted: RGBA as it was",
                                   "painted_dxt1": "painted: written as BGR: DXT1 cannot hold its pixels",
                                   "made_wedge": "new: written as RGBA"}[case]
    assert notes[mesh_file] == {"edited_obj03": "edited", "painted_dxt1": "edited", "made_wedge": "new"}[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_kept_cases_are_made_again(tmp_path, case):
    """What each Blender writes of a kept case holds the points, texture coordinates and
    triangles OniSplit read (tests/data/mesh_export/ours, checked against OniSplit's readings
    below); its normals too from 4.5 (before, Blender draws a custom normal near the one set);
    its texture byte for byte."""
    export(tmp_path, [CASES[case]()])
    mesh_file, texture_file = KEPT_FILES[case]
    ours, kept = read_mesh_file(str(tmp_path / mesh_file)), read_mesh_file(os.path.join(KEPT, "ours", mesh_file))
    for field in ("points", "uvs", "triangles") + (("normals",) if compat.HAS_FREE_NORMALS else ()):
        assert np.array_equal(getattr(ours, field), getattr(kept, field)), field
    assert open(tmp_path / texture_file, "rb").read() == open(os.path.join(KEPT, "ours", texture_file), "rb").read()


def test_a_painted_dxt1_texture_dxt1_holds_stays_dxt1(tmp_path):
    obj = import_files(os.path.join(SAMPLES, "M3GMobj05_part0.oni"))[0]
    image = bpy.data.images["tex05_dxt1"]
    pixels = image_bytes(image)
    pixels[:4, :4] = (255, 0, 0, 255)            # a 4 x 4 block of one RGB565 colour
    paint(image, pixels)
    report = export(tmp_path, [obj])
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes == {"TXMPtex05_dxt1.oni": "painted: DXT1 re-encoded, every pixel kept",
                     "M3GMobj05_part0.oni": "unchanged import"}
    texture = read_texture_file(str(tmp_path / "TXMPtex05_dxt1.oni"))
    assert texture.format == DXT1 and np.array_equal(texture.rgba8, pixels)


# --- OniSplit's readings of the kept files (no Mono needed) ---------------------------------------

@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in glob.glob(os.path.join(KEPT, "ours", "M3GM*"))))
def test_onisplit_reads_the_kept_meshes_as_the_reader_does(name):
    """-extract:xml: every point, vertex normal and texture coordinate, bit for bit, and the
    strips, face normals, box and sphere as written; -extract:obj: the triangles, each wound as
    the reader gives them."""
    path = os.path.join(KEPT, "ours", name)
    mesh = read_mesh_file(path)
    root = ET.parse(os.path.join(KEPT, "xml", name[:-4] + ".xml")).getroot()
    pnta, vcra, txca = root.find("PNTA"), root.findall("VCRA"), root.find("TXCA")
    assert np.array_equal(xml_numbers(pnta, "Positions/Vector3", np.float32), mesh.points)
    assert np.array_equal(xml_numbers(vcra[0], "Normals/Vector3", np.float32), mesh.normals)
    assert np.array_equal(xml_numbers(txca, "TexCoords/Vector2", np.float32), mesh.uvs)
    assert np.array_equal(xml_numbers(vcra[1], "Normals/Vector3", np.float32), mesh.face_normals)
    assert np.array_equal(xml_numbers(root.findall("IDXA")[0], "Indices/Int32", np.int32)[:, 0], mesh.strips)
    box = [pnta.find(f"BoundingBox/{k}").text for k in ("Min", "Max")] + [pnta.find("BoundingSphere/Center").text,
                                                                          pnta.find("BoundingSphere/Radius").text]
    assert np.array_equal(np.float32(" ".join(box).split()), bounds(mesh.points))
    assert root.find("M3GM/Texture").text == "TXMP" + mesh.texture_name
    assert_same_faces(mesh_corners(mesh), read_obj(os.path.join(KEPT, "obj", name[4:-4] + ".obj")), tol=1e-6)


@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in glob.glob(os.path.join(KEPT, "ours", "TXMP*"))))
def test_onisplit_reads_the_kept_textures_as_the_reader_does(name):
    """-extract:png: every pixel (lossless formats: exactly, as OniSplit widens n bits);
    -extract:xml: the format."""
    texture = read_texture_file(os.path.join(KEPT, "ours", name))
    assert texture.format in (RGBA, BGR)
    png = read_png(os.path.join(KEPT, "png", name[:-4] + ".png")).astype(np.int64)
    assert np.array_equal(png, onisplit_bytes(texture.rgba8 / 255, texture.format))
    xml = ET.parse(os.path.join(KEPT, "xml", name[:-4] + ".xml")).getroot().find("Texture")
    assert xml.find("Format").text == FORMAT_NAMES[texture.format]


# --- what an M3GM cannot hold: refused, naming the object ----------------------------------------

def level_object(name):
    bpy.ops.import_anim.oban(filepath=LEVEL)
    return bpy.data.objects[name]


def face_parts(mesh):
    parts = np.empty(len(mesh.polygons), np.int32)
    mesh.attributes["oni_part"].data.foreach_get("value", parts)
    return parts


def delete_faces(mesh, faces):
    import bmesh  # once bpy is

    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[int(i)] for i in faces], context="FACES")
    bm.to_mesh(mesh)
    bm.free()


def nan_point():
    obj = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    obj.data.vertices[7].co.x = float("nan")
    return [obj], "object 'obj03_part0' part 'obj03_part0': the point of vertex 7 is not a finite number"


def no_faces():
    obj = level_object("object02")
    delete_faces(obj.data, np.flatnonzero(face_parts(obj.data) == 1))
    return [obj], "object 'object02' part 'obj02_part1': has no faces (an M3GM needs a triangle)"


def too_many_points():
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=50, y_subdivisions=50)
    return [bpy.context.object], "triangles: the engine draws at most 2047 and 4095 of one mesh"


def two_objects_one_file():
    first = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    second = first.copy()
    second.data = first.data.copy()
    second.name = "copy"
    bpy.context.scene.collection.objects.link(second)
    second.data.vertices[0].co.x += 1.0
    return [first, second], "object 'copy' would write M3GMobj03_part0.oni too, otherwise; nothing written for them"


def a_part_of_two_textures():
    obj = level_object("object02")
    slots = np.zeros(len(obj.data.polygons), np.int32)
    slots[1] = 1                                       # a face of part 0 shows part 1's texture
    obj.data.attributes["material_index"].data.foreach_set("value", slots)
    return [obj], ("object 'object02': part 'obj02_part0': its faces show 2 textures ('tex02_bgra5551', "
                   "'tex03_rgba'); an M3GM shows one (written with 'tex02_bgra5551', its most faces'); nothing "
                   "written for it (or export with Despite Edits (--despite-edits) to write it without them)")


def a_modifier():
    obj = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    obj.modifiers.new("Smoother", "SUBSURF")
    return [obj], ("object 'obj03_part0': its modifiers 'Smoother' are not applied (an M3GM holds the mesh itself); "
                   "nothing written for it")


def a_property_of_the_wrong_kind():
    obj = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    obj.data["oni_part_instances"] = "first"
    return [obj], ("object 'obj03_part0' mesh 'obj03_part0': property 'oni_part_instances' is not a list of finite "
                   "numbers")


def a_name_outside_latin1():
    obj = made_wedge()
    obj.name = "wedge€"
    return [obj], "object 'wedge€' part 'wedge€': M3GMwedge€: the name holds a character outside Latin-1"


def an_image_without_pixels(tmp_path):
    obj = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    image = bpy.data.images["tex03_rgba"]
    image.source, image.filepath = "FILE", str(tmp_path / "gone.png")
    image.unpack(method="REMOVE") if image.packed_file else None
    image.reload()
    return [obj], "object 'obj03_part0' texture 'tex03_rgba' (image 'tex03_rgba'): has no pixels (its file is missing)"


REFUSALS = {"nan_point": nan_point, "no_faces": no_faces, "too_many_points": too_many_points,
            "two_objects_one_file": two_objects_one_file, "a_part_of_two_textures": a_part_of_two_textures,
            "a_modifier": a_modifier, "a_property_of_the_wrong_kind": a_property_of_the_wrong_kind,
            "a_name_outside_latin1": a_name_outside_latin1}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_what_an_m3gm_cannot_hold_is_refused_and_nothing_is_written(tmp_path, case):
    objects, said = REFUSALS[case]()
    report = export(tmp_path, objects)
    assert not report.made and not os.listdir(tmp_path), report.made
    assert any(said in error for error in report.errors), report.errors
    assert len(report.errors) == len(objects) and "nothing from 0 of" in report.summary("Exported")


def test_an_image_without_pixels_is_refused(tmp_path):
    objects, said = an_image_without_pixels(tmp_path)
    report = export(tmp_path / "out", objects)
    assert not report.made and report.errors and said in report.errors[0], report.errors


@pytest.mark.parametrize("case", ["a_modifier", "a_part_of_two_textures"])
def test_despite_edits_writes_them_with_a_warning(tmp_path, case):
    objects, said = REFUSALS[case]()
    report = export(tmp_path, objects, despite_edits=True)
    assert not report.errors and report.made
    assert any(said.split("; nothing written")[0] in warning and warning.endswith("written without it")
               for warning in report.warnings), report.warnings


def test_a_mesh_two_objects_share_is_written_once(tmp_path):
    first = import_files(os.path.join(EXAMPLES, "M3GMobj03_part0.oni"))[0]
    second = first.copy()
    bpy.context.scene.collection.objects.link(second)
    report = export(tmp_path, [first, second])
    assert not report.errors and sorted(written(tmp_path)) == ["M3GMobj03_part0.oni", "TXMPtex03_rgba.oni"]
    assert len(report.made) == 2 and {m.block for m in report.made} == {first}


def test_a_part_whose_file_is_gone_is_written_as_the_scene_holds_it(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("M3GMobj05_part0.oni", "TXMPtex05_dxt1.oni"):
        (folder / name).write_bytes(open(os.path.join(SAMPLES, name), "rb").read())
    obj = import_files(str(folder / "M3GMobj05_part0.oni"))[0]
    for name in ("M3GMobj05_part0.oni", "TXMPtex05_dxt1.oni"):
        os.remove(folder / name)
    report = export(tmp_path / "out", [obj])
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes["M3GMobj05_part0.oni"].startswith("as the scene holds it: its source cannot be read")
    assert notes["TXMPtex05_dxt1.oni"].startswith("as the scene shows it (its source cannot be read")
    assert notes["TXMPtex05_dxt1.oni"].endswith("DXT1 re-encoded, every pixel kept")
    assert_as_blender_holds(obj, str(tmp_path / "out" / "M3GMobj05_part0.oni"))
    texture = read_texture_file(str(tmp_path / "out" / "TXMPtex05_dxt1.oni"))
    assert np.array_equal(texture.rgba8, read_texture_file(os.path.join(SAMPLES, "TXMPtex05_dxt1.oni")).rgba8)


def test_a_part_that_links_no_texture_is_written_linking_none(tmp_path):
    """A generated character's part meshes link no texture (the import shows them with its
    untextured material): each is written linking none, its arrays as stored, and no TXMP."""
    scene = cgen.two_characters(np.random.default_rng(5), 1)
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    assert bpy.ops.import_anim.oban(directory=folder, files=[{"name": "ONCCchar1.oni"}],
                                    character_animations="NONE") == {"FINISHED"}
    head = bpy.data.objects["char1 Head"]
    report = export(tmp_path / "out", [head])
    assert not report.errors and not report.notes, (report.errors, report.notes)
    assert os.listdir(tmp_path / "out") == ["M3GMchar1 Head.oni"]
    back, read = read_mesh_file(str(tmp_path / "out" / "M3GMchar1 Head.oni")), scene.meshes["char1_part10"]
    assert back.texture_name == "" and report.made[0].note == "unchanged import"
    assert np.array_equal(back.points, read.points) and np.array_equal(back.uvs, read.uvs)


def test_an_edited_normal_is_an_edit(tmp_path):
    """Custom normals cleared: the points, faces and UVs as imported, the normals drawn others."""
    obj = import_files(os.path.join(SAMPLES, "M3GMobj00_part0.oni"))[0]
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.mesh.customdata_custom_splitnormals_clear() == {"FINISHED"}
    report = export(tmp_path, [obj])
    assert {os.path.basename(m.path): m.note for m in report.made}["M3GMobj00_part0.oni"] == "edited"
    assert_as_blender_holds(obj, str(tmp_path / "M3GMobj00_part0.oni"))


# --- the dialog and the command line ---------------------------------------------------------------

def test_the_dialog_writes_the_selected_mesh_objects(tmp_path):
    objects = import_files(os.path.join(SAMPLES, "M3GMobj00_part0.oni"), os.path.join(SAMPLES, "M3GMobj01_part0.oni"))
    for obj in objects:
        obj.select_set(obj.name == "obj01_part0")
    assert bpy.ops.export_anim.oni_mesh(directory=str(tmp_path)) == {"FINISHED"}
    assert sorted(written(tmp_path)) == ["M3GMobj01_part0.oni", "TXMPtex01_bgr555.oni"]
    for obj in objects:
        obj.select_set(False)
    with pytest.raises(RuntimeError, match="No mesh object to export"):
        bpy.ops.export_anim.oni_mesh(directory=str(tmp_path / "none"))


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_every_mesh_object_or_those_named(tmp_path, command):
    bpy.ops.import_anim.oban(filepath=LEVEL)
    blend = tmp_path / "level9.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = run(command, "export", blend, "-o", tmp_path / "all", "--format", "mesh")
    assert done.returncode == 0, done.stderr
    assert len(os.listdir(tmp_path / "all")) == 18
    assert ["M3GMobj03_part0.oni", "object03", "138", "points,", "230", "triangles", "unchanged", "import"] in \
        [line.split() for line in done.stdout.splitlines()]
    named = run(command, "export", blend, "-o", tmp_path / "one", "--format", "mesh", "--objects", "object03", "nobody")
    assert named.returncode == 1 and "no object named 'nobody'" in named.stderr
    assert sorted(os.listdir(tmp_path / "one")) == ["M3GMobj03_part0.oni", "TXMPtex03_rgba.oni"]
    assert "138 points, 230 triangles" in named.stdout and "unchanged import" in named.stdout
