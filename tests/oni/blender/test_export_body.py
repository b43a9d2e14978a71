"""The body export (oni/export/bodies/export.py; docs/characters.md, "Exporting a body"):
the sample character imported and left as it is written back as OniSplit wrote it (TRBS with its
five levels, TRMA, TXMPs, ONCC), through the dialog and the command line; an edited part, a moved
bone and a body made in Blender read back by the add-on's readers as Blender holds them (points,
normals and texture coordinates float32-equal, translations as the bones' heads give them) and
imported again the same; the cases kept in tests/data/characters_written/from_blender made again and
read as OniSplit read them; what a body cannot hold refused, naming the armature and the object."""

import glob
import lzma
import os

import bpy
import characters_generate as cgen
import numpy as np
import pytest
from characters_generate import BIPED_PARENTS
from collada import collada_parts
from commands import IN_BPY_MODULE, blender_script, python_module, run
from exported import written
from hashed import hashed
from mathutils import Matrix
from paths import DATA, EXAMPLES
from test_skinned import joined_sample

from oban_import.blender import compat
from oban_import.oni.blender.characters.armature_body import armature_body
from oban_import.oni.engine import bones
from oban_import.oni.engine.to_blender import axes_matrix
from oban_import.oni.export.bodies.export import export_bodies
from oban_import.oni.io.characters.read import read_character
from oban_import.oni.io.characters.stored import stored_levels
from oban_import.oni.io.trams.tram import PART_NAMES
from oban_import.ui.options import BodyExportSettings

pytestmark = pytest.mark.usefixtures("addon")
KEPT = os.path.join(DATA, "characters_written", "from_blender")
SAMPLE_FILES = ("ONCCchar0.oni", "TRBSchar0.oni", "TRMAchar0.oni", "TXMPchar0_cloth.oni", "TXMPchar0_face.oni",
                "TXMPchar0_skin.oni")
AXES = axes_matrix("-Z", "Y")
F32 = np.float32


def import_char0():
    assert bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "ONCCchar0.oni"),
                                    character_animations="NONE") == {"FINISHED"}
    return bpy.data.objects["char0"]


def export(folder, armatures, **options):
    os.makedirs(folder, exist_ok=True)
    return export_bodies(bpy.context, armatures, str(folder), BodyExportSettings(**options))


def on_bone(armature, bone):
    return next(obj for obj in armature.children if obj.parent_bone == bone)


def blender_corners(armature, bone):
    """(t, 3, 8) float32 of the mesh on `bone` as Blender holds it, in Oni's terms: each triangle
    corner's point (s.A undone with the armature's scale and axes), normal as drawn, u, 1 - v of
    the UV map it renders with."""
    mesh = on_bone(armature, bone).data
    scale, axes = armature.get("oban_import_scale", 0.1), np.reshape(armature.get("oban_import_axes", AXES), (3, 3))
    mesh.calc_loop_triangles()
    corners = np.empty(3 * len(mesh.loop_triangles), np.int32)
    mesh.loop_triangles.foreach_get("loops", corners)
    vertex = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", vertex)
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    uv = np.empty(2 * len(mesh.loops), np.float32)
    next(layer for layer in mesh.uv_layers if layer.active_render).data.foreach_get("uv", uv)
    points = ((co.reshape(-1, 3).astype(np.float64) @ axes) / scale).astype(F32)[vertex]
    normals = (compat.corner_normals(mesh).astype(np.float64) @ axes).astype(F32)
    uvs = (uv.reshape(-1, 2).astype(np.float64) * [1, -1] + [0, 1]).astype(F32)
    return np.concatenate([points, normals, uvs], axis=1)[corners].reshape(-1, 3, 8)


def mesh_corners(mesh):
    return np.concatenate([mesh.points, mesh.normals, mesh.uvs], axis=1)[mesh.triangles]


def assert_same_triangles(ours, theirs, normal_tolerance=0.0):
    """The same triangles in order (each may start at another corner), every value bit for bit
    (the normals within `normal_tolerance` where it is not 0)."""
    assert ours.shape == theirs.shape
    turns = np.stack([np.roll(theirs, -r, axis=1) for r in range(3)])
    if not normal_tolerance:
        assert (turns.view(np.uint32) == ours.view(np.uint32)).all(axis=(2, 3)).any(axis=0).all()
        return
    exact = [0, 1, 2, 6, 7]
    same = (turns[..., exact].view(np.uint32) == ours[..., exact].view(np.uint32)).all(axis=(2, 3))
    close = (np.abs(turns[..., 3:6] - ours[..., 3:6]) <= normal_tolerance).all(axis=(2, 3))
    assert (same & close).any(axis=0).all()


def assert_close_corners(ours, theirs):
    """Imported again: points and texture coordinates within 1e-5, normals within 1e-5 from 4.5
    (before, Blender encodes each custom normal in its corner's space: 6.6e-3 off measured on
    4.2's smooth normals of the made body, set again as custom normals)."""
    assert ours.shape == theirs.shape
    assert np.abs(ours[..., [0, 1, 2, 6, 7]] - theirs[..., [0, 1, 2, 6, 7]]).max() <= 1e-5
    assert np.abs(ours[..., 3:6] - theirs[..., 3:6]).max() <= (1e-5 if compat.HAS_FREE_NORMALS else 1e-2)


def heads(armature):
    return np.array([armature.data.bones[name].head_local for name in PART_NAMES], np.float64)


def translations_from_heads(armature):
    """Each part's translation as its bones' heads give it: A^T (head - parent's head) / s, float32."""
    h = heads(armature)
    parents = np.array(BIPED_PARENTS)
    offsets = h - np.where(parents[:, None] >= 0, h[parents], 0.0)
    axes = np.reshape(armature.get("oban_import_axes", AXES), (3, 3))
    return (offsets @ axes / armature.get("oban_import_scale", 0.1)).astype(F32)


# --- the cases (also what tests/data/characters_written/from_blender/ours holds) ------------------------

def char0_remodelled():
    """The sample character: LeftCalf's points moved by hashed steps, the LeftCalf bone (head and
    tail) moved by (0.0625, 0, -0.125) Blender units (its mesh moves with it)."""
    armature = import_char0()
    mesh = on_bone(armature, "LeftCalf").data
    co = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", co)
    co += (hashed(co.shape, 7).astype(F32) - 128) / F32(2048)
    mesh.vertices.foreach_set("co", co)
    mesh.update()
    move_bone(armature, "LeftCalf", (0.0625, 0.0, -0.125))
    return armature


def move_bone(armature, name, by):
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    bone = armature.data.edit_bones[name]
    bone.head, bone.tail = bone.head + type(bone.head)(by), bone.tail + type(bone.tail)(by)
    bpy.ops.object.mode_set(mode="OBJECT")


def made_in_blender(name="made"):
    """A body built in Blender from nothing, as an import would lay it out: an armature whose
    bones are the 19 parts (the biped's tree, heads from translations on a 1/64 grid), a mesh per
    part on its bone (a ring of 3 + part % 3 points around a spine, capped, smooth), two new images."""
    scale = 0.1
    translations = ((hashed((19, 3), 1).astype(np.int64) - 128) / 64).astype(F32)
    rest = bones.rest_heads(BIPED_PARENTS, translations, AXES, scale)
    tails = bones.rest_tails(BIPED_PARENTS, rest, (0.0, 0.0, scale))
    armature = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(armature)
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    made = []
    for part, parent in enumerate(BIPED_PARENTS):
        bone = armature.data.edit_bones.new(PART_NAMES[part])
        bone.head, bone.tail = rest[part].tolist(), tails[part].tolist()
        bone.parent = made[parent] if parent >= 0 else None
        made.append(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    materials = [textured_material(f"{name}_skin", 3), textured_material(f"{name}_face", 4)]
    for part in range(19):
        mesh = ring_mesh(f"{name} {PART_NAMES[part]}", part, 3 + part % 3, scale)
        mesh.materials.append(materials[part == 10])
        obj = bpy.data.objects.new(mesh.name, mesh)
        bpy.context.scene.collection.objects.link(obj)
        bone = armature.data.bones[PART_NAMES[part]]
        obj.parent, obj.parent_type, obj.parent_bone = armature, "BONE", bone.name
        inverse = np.eye(4)
        inverse[:3, :3] = np.array(bone.matrix_local)[:3, :3].T
        inverse[1, 3] = -bone.length
        obj.matrix_parent_inverse = Matrix(inverse.tolist())
    return armature


def ring_mesh(name, part, corners, scale):
    angle = np.arange(corners) * 2 * np.pi / corners
    ring = np.stack([np.cos(angle), np.zeros(corners), np.sin(angle)], axis=1)
    points = np.concatenate([ring, ring + [0, -3, 0], [[0, 0.5, 0], [0, -3.5, 0]]])
    points = points * (1 + hashed(points.shape, 100 + part) / 512)
    top, bottom = 2 * corners, 2 * corners + 1
    k, n = np.arange(corners), (np.arange(corners) + 1) % corners
    faces = np.concatenate([np.stack([k, n + corners, n], 1), np.stack([k, k + corners, n + corners], 1),
                            np.stack([np.full(corners, top), k, n], 1),
                            np.stack([np.full(corners, bottom), n + corners, k + corners], 1)])
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata((scale * points @ AXES.T).tolist(), [], faces.tolist())
    mesh.uv_layers.new(name="UVMap").data.foreach_set("uv", (hashed(2 * len(mesh.loops), 300 + part) / 255)
                                                      .astype(F32))
    compat.set_smooth(mesh)
    return mesh


def textured_material(name, salt):
    image = bpy.data.images.new(name, 8, 4, alpha=True)
    image.pixels.foreach_set((hashed(8 * 4 * 4, salt) / 255).astype(F32))
    image.pack()
    material = bpy.data.materials.new(name)
    compat.material_nodes(material).nodes.new("ShaderNodeTexImage").image = image
    return material


CASES = {"char0_remodelled": char0_remodelled, "made": made_in_blender}


def write_cases(folder):
    """Export every case into `folder` (what tests/data/characters_written/from_blender/ours holds)."""
    for make in CASES.values():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        report = export(folder, [make()])
        assert not report.errors, report.errors


# --- an unchanged import: OniSplit's files back -----------------------------------------------------

def test_an_unchanged_character_is_written_as_onisplit_wrote_it(tmp_path):
    """Every level of detail, the textures and the class, bit for bit, through the dialog; where the
    armature stands and how it is posed are not its body's."""
    armature = import_char0()
    armature.location, armature.rotation_euler = (3, -2, 1), (0.5, 0, 0.25)
    armature.pose.bones["Head"].rotation_quaternion = (0.8, 0.6, 0, 0)
    bpy.ops.object.select_all(action="DESELECT")
    armature.select_set(True)
    assert bpy.ops.export_anim.oni_body(directory=str(tmp_path)) == {"FINISHED"}
    files = written(tmp_path)
    assert sorted(files) == sorted(SAMPLE_FILES)
    for name, data in files.items():
        assert data == open(os.path.join(EXAMPLES, name), "rb").read(), name
    armature.select_set(False)
    with pytest.raises(RuntimeError, match="No character armature to export"):
        bpy.ops.export_anim.oni_body(directory=str(tmp_path / "none"))


def test_a_bare_body_is_written_as_onisplit_wrote_it_without_a_class(tmp_path):
    assert bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "TRBSchar0.oni")) == {"FINISHED"}
    report = export(tmp_path, [bpy.data.objects["char0"]])
    assert not report.errors and [m.note for m in report.made] == ["unchanged import"]
    assert written(tmp_path) == {"TRBSchar0.oni": open(os.path.join(EXAMPLES, "TRBSchar0.oni"), "rb").read()}
    assert report.notes == ["armature 'char0': no ONCC written: it was not imported from a character class (ONCC); "
                            "link TRBSchar0 from one (OniSplit's XML of an ONCC: BodySet, BodyTextures)"]


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_every_character_or_those_named(tmp_path, command):
    import_char0()
    blend = tmp_path / "char0.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = run(command, "export", blend, "-o", tmp_path / "all", "--format", "body")
    assert done.returncode == 0, done.stderr
    for name in SAMPLE_FILES:
        assert open(tmp_path / "all" / name, "rb").read() == open(os.path.join(EXAMPLES, name), "rb").read()
    assert ["TRBSchar0.oni", "char0", "19", "parts,", "19", "meshes,", "76", "triangles", "unchanged", "import"] in \
        [line.split() for line in done.stdout.splitlines()]
    named = run(command, "export", blend, "-o", tmp_path / "one", "--format", "body", "--objects", "char0", "nobody")
    assert named.returncode == 1 and "no object named 'nobody'" in named.stderr
    assert sorted(os.listdir(tmp_path / "one")) == sorted(SAMPLE_FILES)


# --- edits: written as Blender holds them ------------------------------------------------------------

def test_an_edited_part_and_a_moved_bone_read_back_as_blender_holds_them(tmp_path):
    armature = char0_remodelled()
    report = export(tmp_path, [armature])
    assert not report.errors and not report.warnings, report.errors + report.warnings
    notes = {os.path.basename(m.path): m.note for m in report.made}
    assert notes["TRBSchar0.oni"] == ("parts 'LeftCalf' from the scene at every level of detail (lower levels "
                                      "replaced); translations of 'LeftCalf', 'LeftFoot' from the bones' heads")
    assert notes["ONCCchar0.oni"] == notes["TRMAchar0.oni"] == "unchanged import"
    path = str(tmp_path / "TRBSchar0.oni")
    sample = stored_levels(os.path.join(EXAMPLES, "TRBSchar0.oni"), 0, "char0")
    levels = stored_levels(path, 0, "char0")
    for level in levels:
        for part, mesh in enumerate(level):
            if PART_NAMES[part] == "LeftCalf":
                assert_same_triangles(mesh_corners(mesh), blender_corners(armature, "LeftCalf"))
            else:
                assert mesh_corners(mesh).tobytes() == mesh_corners(sample[4][part]).tobytes()
    stored = np.array(armature["oni_part_translations"], F32).reshape(-1, 3)
    body = read_character(path).body
    expected = translations_from_heads(armature)
    got = np.array([part.translation for part in body.parts])
    moved = [PART_NAMES.index("LeftCalf"), PART_NAMES.index("LeftFoot")]
    assert np.array_equal(got[moved], expected[moved])
    assert np.allclose(got[moved[0]] - stored[moved[0]], AXES.T @ [0.625, 0, -1.25], atol=1e-5)
    kept = [p for p in range(19) if p not in moved]
    assert got[kept].tobytes() == stored[kept].tobytes()
    assert np.allclose(bones.rest_heads(BIPED_PARENTS, got, AXES, 0.1), heads(armature), atol=1e-6)


def test_an_edited_body_imported_again_is_the_same(tmp_path):
    armature = char0_remodelled()
    assert not export(tmp_path, [armature]).errors
    bpy.ops.import_anim.oban(filepath=str(tmp_path / "ONCCchar0.oni"), character_animations="NONE")
    again = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj is not armature)
    assert np.allclose(heads(again), heads(armature), atol=1e-6)
    for name in PART_NAMES:
        assert_close_corners(blender_corners(again, name), blender_corners(armature, name))


def test_a_body_made_in_blender_reads_back_as_blender_holds_it(tmp_path):
    armature = made_in_blender()
    report = export(tmp_path, [armature])
    assert not report.errors and not report.warnings, report.errors + report.warnings
    assert sorted(written(tmp_path)) == ["TRBSmade.oni", "TRMAmade.oni", "TXMPmade_face.oni", "TXMPmade_skin.oni"]
    assert {os.path.basename(m.path): m.note for m in report.made}["TRBSmade.oni"] == "new"
    assert any("no ONCC written" in note for note in report.notes), report.notes
    path = str(tmp_path / "TRBSmade.oni")
    levels = stored_levels(path, 0, "made")
    assert all(level is levels[0] for level in levels)
    for part, mesh in enumerate(levels[0]):
        assert_same_triangles(mesh_corners(mesh), blender_corners(armature, PART_NAMES[part]))
    body = read_character(path).body
    assert np.array_equal(body.parents, BIPED_PARENTS)
    assert np.array_equal(np.array([part.translation for part in body.parts]), translations_from_heads(armature))
    bpy.ops.import_anim.oban(filepath=path)
    again = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj is not armature)
    assert np.allclose(heads(again), heads(armature), atol=1e-6)
    for name in PART_NAMES:
        assert_close_corners(blender_corners(again, name), blender_corners(armature, name))


def test_a_part_turned_and_scaled_on_its_bone_is_baked_and_said(tmp_path):
    armature = made_in_blender()
    obj = on_bone(armature, "Head")
    obj.rotation_euler, obj.scale, obj.location = (0.25, 0, 0.5), (1.5, 1, 1), (0.01, 0.02, 0)
    bpy.context.view_layer.update()
    report = export(tmp_path, [armature])
    assert not report.errors
    assert f"armature 'made' object '{obj.name}' (part 'Head'): its rotation and scale relative to bone 'Head' " \
           f"baked into its points" in report.notes
    mesh = read_character(str(tmp_path / "TRBSmade.oni")).body.parts[10].mesh
    co = np.array([v.co for v in obj.data.vertices], np.float64)
    to_armature = np.array(armature.matrix_world.inverted() @ obj.matrix_world)
    world = co @ to_armature[:3, :3].T + to_armature[:3, 3]
    expected = (world - heads(armature)[10]) @ AXES / 0.1
    nearest = np.linalg.norm(mesh.points[:, None] - expected[None], axis=2).min(axis=1)
    assert len(mesh.points) >= len(co) and nearest.max() < 1e-5


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_kept_cases_are_made_again(tmp_path, case):
    """What each Blender writes of a kept case holds the points, texture coordinates, triangles and
    translations OniSplit read (tests/data/characters_written/from_blender/ours), and the normals within
    1e-6 from 4.5 (before, Blender turns the custom normals around a moved point, as the mesh
    export's tests note, and computes smooth normals otherwise: not compared)."""
    write = tmp_path / "ours"
    export(write, [CASES[case]()])
    name = "char0" if case == "char0_remodelled" else "made"
    mine_path, kept_path = str(write / f"TRBS{name}.oni"), kept_file(case, f"TRBS{name}.oni", tmp_path)
    ours, kept = stored_levels(mine_path, 0, name), stored_levels(kept_path, 0, name)
    tolerance = 1e-6 if compat.HAS_FREE_NORMALS else 2.0   # before 4.5 moved points turn the normals near them
    for mine, theirs in zip(ours, kept):
        for a, b in zip(mine, theirs):
            assert_same_triangles(mesh_corners(a), mesh_corners(b), normal_tolerance=tolerance)
    assert np.array_equal(read_character(mine_path).body.translations, read_character(kept_path).body.translations)


def kept_file(case, name, tmp_path) -> str:
    """A file of blender/ours (its .xz unpacked into tmp_path)."""
    path = os.path.join(KEPT, "ours", case, name)
    if os.path.exists(path):
        return path
    target = tmp_path / "kept" / case / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(lzma.open(path + ".xz").read())
    return str(target)


# --- OniSplit's readings of the kept files (no Mono needed) ----------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_onisplit_reads_the_kept_bodies_as_written(tmp_path, case):
    """-extract:dae of each kept TRBS: the tree, each translation (6 decimals of the float32), and
    each part's mesh: every point (welded), vertex normal and texture coordinate (u, 1 - v) as
    written, bit for bit, each triangle corner the file's."""
    name = "char0" if case == "char0_remodelled" else "made"
    path = kept_file(case, f"TRBS{name}.oni", tmp_path)
    body = read_character(path).body
    with lzma.open(os.path.join(KEPT, "dae", case, f"TRBS{name}.dae.xz")) as f:   # OniSplit named it {name}.dae
        parts = collada_parts(f.read())
    assert [part.parent for part in parts] == list(BIPED_PARENTS)
    for part, ours in zip(parts, body.parts):
        assert part.translation == " ".join(f"{float(v):.6f}" for v in ours.translation)
        mesh = ours.mesh
        assert np.array_equal(part.normals, mesh.normals)
        assert np.array_equal(part.texcoords, np.stack([mesh.uvs[:, 0], F32(1) - mesh.uvs[:, 1]], axis=1))
        welded = np.unique(mesh.points.view("V12").ravel(), return_index=True)[1]
        assert np.array_equal(part.positions, mesh.points[np.sort(welded)])
        assert np.array_equal(part.positions[part.corners[..., 0]], mesh.points[part.corners[..., 1]])
        assert np.array_equal(part.corners[..., 1], mesh.triangles)


def test_the_kept_folder_holds_what_its_readme_says():
    found = sorted(os.path.relpath(path, KEPT) for path in glob.glob(os.path.join(KEPT, "**", "*"), recursive=True)
                   if os.path.isfile(path))
    made = ["TRBSmade.oni.xz", "TRMAmade.oni", "TXMPmade_face.oni", "TXMPmade_skin.oni"]
    char0 = ["ONCCchar0.oni", "TRBSchar0.oni.xz", "TRMAchar0.oni", "TXMPchar0_cloth.oni", "TXMPchar0_face.oni",
             "TXMPchar0_skin.oni"]
    assert found == sorted(["README.md", "dae/char0_remodelled/TRBSchar0.dae.xz", "dae/made/TRBSmade.dae.xz"]
                           + [f"ours/char0_remodelled/{f}" for f in char0] + [f"ours/made/{f}" for f in made])


# --- two characters in one scene ------------------------------------------------------------------

def test_two_characters_each_write_their_own_body(tmp_path):
    """Two generated characters (bodies apart) imported together, char1's head re-modelled:
    each armature writes its own files; char2's as imported (its ONCC byte for byte, its body
    as the generator's reads), char1's with its new head and every other part as read."""
    scene = cgen.two_characters(np.random.default_rng(5), 1)
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    assert bpy.ops.import_anim.oban(directory=folder, files=[{"name": "ONCCchar1.oni"}, {"name": "ONCCchar2.oni"}],
                                    character_animations="NONE") == {"FINISHED"}
    char1, char2 = bpy.data.objects["char1"], bpy.data.objects["char2"]
    on_bone(char1, "Head").data.vertices[0].co.z += 0.5
    report = export(tmp_path / "out", [char1, char2])
    assert not report.errors, report.errors
    assert sorted(os.listdir(tmp_path / "out")) == ["ONCCchar1.oni", "ONCCchar2.oni", "TRBSchar1.oni", "TRBSchar2.oni"]
    assert {(os.path.basename(m.path), m.block.name) for m in report.made} == {
        ("ONCCchar1.oni", "char1"), ("TRBSchar1.oni", "char1"), ("ONCCchar2.oni", "char2"), ("TRBSchar2.oni", "char2")}
    assert written(tmp_path / "out")["ONCCchar2.oni"] == written(folder)["ONCCchar2.oni"]
    for name, edited in (("char1", {"Head"}), ("char2", set())):
        theirs = read_character(os.path.join(folder, f"ONCC{name}.oni")).body
        ours = read_character(tmp_path / "out" / f"ONCC{name}.oni").body
        assert np.array_equal(ours.translations, theirs.translations) and np.array_equal(ours.parents, theirs.parents)
        for mine, read in zip(ours.parts, theirs.parts):
            same = np.array_equal(mine.mesh.points, read.mesh.points)
            assert same != (mine.name in edited), (name, mine.name)


# --- a skinned body: split into its parts ------------------------------------------------------------

def skinned_char0(keep_rigid=()):
    """(the sample's armature, its parts joined into one skinned mesh (test_skinned), the joined
    points): the part objects removed but those of `keep_rigid`."""
    armature = import_char0()
    obj, joined = joined_sample(armature_body(armature, BodyExportSettings().global_scale, BodyExportSettings().axes))
    for bone in PART_NAMES:
        if bone not in keep_rigid:
            bpy.data.objects.remove(on_bone(armature, bone))
    return armature, obj, joined


def test_a_skinned_body_is_written_as_the_parts_it_splits_into(tmp_path):
    """The sample's parts joined into one mesh the armature deforms (their rigid objects
    removed): each part written at every level as the split gives it, its points those of the
    imported part within float32 rounding of the join (test_skinned), the rest as imported."""
    armature, obj, joined = skinned_char0()
    body = armature_body(armature, BodyExportSettings().global_scale, BodyExportSettings().axes)
    report = export(tmp_path, [armature])
    assert not report.errors and len(report.made) == 2, (report.errors, report.made)   # TRBS, ONCC: no texture shown
    pelvis = len(read_character(os.path.join(EXAMPLES, "ONCCchar0.oni")).body.parts[0].mesh.triangles)
    assert any(f"object 'skinned char0': split into the body's parts, faces per part: Pelvis {pelvis}," in note
               for note in report.notes), report.notes
    back = read_character(tmp_path / "ONCCchar0.oni").body
    assert np.array_equal(back.translations, read_character(os.path.join(EXAMPLES, "ONCCchar0.oni")).body.translations)
    reach = np.float32(np.abs(joined).max())
    levels = stored_levels(str(tmp_path / "TRBSchar0.oni"), 0, "char0")
    for index, name in enumerate(body.names):
        mesh = back.parts[index].mesh
        original = read_character(os.path.join(EXAMPLES, "ONCCchar0.oni")).body.parts[index].mesh
        corners = mesh.points[mesh.triangles]
        tolerance = np.spacing(reach) / 2 / body.scale + np.spacing(np.float32(np.abs(original.points).max()))
        assert np.abs(corners - original.points[original.triangles]).max() <= tolerance, name
        assert all(level[index] is not None and np.array_equal(level[index].points, mesh.points) for level in levels)


# --- what a body cannot hold: refused, naming it ----------------------------------------------------

def extra_bone():
    armature = import_char0()
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    gun = armature.data.edit_bones.new("Gun")
    gun.head, gun.tail, gun.parent = (0, 0, 0), (0, 0, 0.1), armature.data.edit_bones["RightFist"]
    bpy.ops.object.mode_set(mode="OBJECT")
    obj = bpy.data.objects.new("gun", bpy.data.meshes.new("gun"))
    bpy.context.scene.collection.objects.link(obj)
    obj.parent, obj.parent_type, obj.parent_bone = armature, "BONE", "Gun"
    return armature, "armature 'char0': object 'gun': is parented to bone 'Gun', which is not one of the body's parts"


def nan_point():
    armature = import_char0()
    on_bone(armature, "Head").data.vertices[2].co.x = float("nan")
    return armature, "armature 'char0' object 'char0 Head' part 'char0 Head': the point of vertex 2 is not a finite"


def too_many_points():
    armature = import_char0()
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=50, y_subdivisions=50)
    old = on_bone(armature, "Chest")
    bpy.data.objects.remove(old)
    grid = bpy.context.object
    grid.parent, grid.parent_type, grid.parent_bone = armature, "BONE", "Chest"
    return armature, "triangles: the engine draws at most 2047 and 4095 of one mesh"


def two_on_one_part():
    armature = import_char0()
    first = on_bone(armature, "Neck")
    second = first.copy()
    bpy.context.scene.collection.objects.link(second)
    return armature, "are both on bone 'Neck': a part has one mesh"


def skinned_with_a_stray_group():
    armature, obj, _ = skinned_char0()
    obj.vertex_groups.new(name="Hat").add([0], 0.5, "REPLACE")
    return armature, "armature 'char0' object 'skinned char0': vertex group 'Hat' holds weight but names no part"


def skinned_beside_a_rigid_part():
    armature, _, _ = skinned_char0(keep_rigid=["Pelvis"])
    return armature, ("armature 'char0': object 'skinned char0': gives faces to part 'Pelvis', which object "
                      "'char0 Pelvis' is too")


def a_modifier():
    armature = import_char0()
    on_bone(armature, "Head").modifiers.new("Smoother", "SUBSURF")
    return armature, "armature 'char0': object 'char0 Head': its modifiers 'Smoother' are not applied"


REFUSALS = {"extra_bone": extra_bone, "nan_point": nan_point, "too_many_points": too_many_points,
            "two_on_one_part": two_on_one_part, "skinned_with_a_stray_group": skinned_with_a_stray_group,
            "skinned_beside_a_rigid_part": skinned_beside_a_rigid_part, "a_modifier": a_modifier}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_what_a_body_cannot_hold_is_refused_and_nothing_is_written(tmp_path, case):
    armature, said = REFUSALS[case]()
    report = export(tmp_path, [armature])
    assert not report.made and not os.listdir(tmp_path), report.made
    assert len(report.errors) == 1 and said in report.errors[0], report.errors
    assert "nothing from 0 of 1 armature" in report.summary("Exported")


def test_despite_edits_writes_a_body_with_a_modifier_with_a_warning(tmp_path):
    armature, said = a_modifier()
    report = export(tmp_path, [armature], despite_edits=True)
    assert not report.errors and len(report.made) == 6
    assert report.warnings == ["armature 'char0': object 'char0 Head': its modifiers 'Smoother' are not applied (an "
                               "M3GM holds the mesh itself); written without it"]


def test_an_output_folder_that_cannot_be_written_is_refused_and_a_missing_one_made(tmp_path):
    """The output is a file: refused, nothing written; a folder that is not there yet: made, as every
    export makes it (core/output_files.py)."""
    armature = import_char0()
    target = tmp_path / "out"
    target.write_bytes(b"")
    report = export_bodies(bpy.context, [armature], str(target), BodyExportSettings())
    assert not report.made and len(report.errors) == 1 and "cannot be written" in report.errors[0], report.errors
    assert os.listdir(tmp_path) == ["out"] and target.read_bytes() == b""
    report = export_bodies(bpy.context, [armature], str(tmp_path / "new" / "folder"), BodyExportSettings())
    assert not report.errors and sorted(os.listdir(tmp_path / "new" / "folder")) == sorted(SAMPLE_FILES)
