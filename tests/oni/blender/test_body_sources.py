"""The body export (oni/export/bodies/, docs/characters.md, "Exporting a body") and the files it was
read from: the folder imported from is written into only with Replace Sources (then OniSplit's
files come back bit for bit); a body whose file changed or broke after the import is written from
the scene, each such part named; the textures a generated character's meshes link themselves and
the ones its TRMA links come back as the generator made them, a part retextured linking its new
texture; two armatures of one class or body, and two images of one texture, are refused naming
both, never one writing over the other's files."""

import io
import os
import shutil

import bpy
import characters_generate as cgen
import numpy as np
import pytest
from commands import IN_BPY_MODULE, blender_script, python_module, run
from exported import assert_sources_replaced_only_when_asked
from paths import EXAMPLES
from test_export_body import SAMPLE_FILES, export, on_bone, written

from oban_import.oni.io.characters.read import read_character, texture_names
from oban_import.oni.io.characters.stored import stored_levels
from oban_import.oni.io.container.container import M3GM_TAG, TRMA_TAG, Container
from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.objects.meshes import M3GM_LINKS_OFFSET, parse_links
from oban_import.oni.io.objects.read import main_instance
from oban_import.oni.io.trams.tram import PART_NAMES

pytestmark = pytest.mark.usefixtures("addon")
PNTA_COUNT = 0x34            # a PNTA's point count, from its data
MESH_ARRAYS = ("points", "normals", "uvs", "strips", "face_normals", "face_normal_indices")


def imported_char0(tmp_path):
    """The sample character's files copied into tmp_path/in and imported from there."""
    folder = tmp_path / "in"
    folder.mkdir(parents=True)
    for name in SAMPLE_FILES:
        shutil.copy(os.path.join(EXAMPLES, name), folder / name)
    assert bpy.ops.import_anim.oban(filepath=str(folder / "ONCCchar0.oni"), character_animations="NONE") == \
        {"FINISHED"}
    return folder, bpy.data.objects["char0"]


# --- the folder imported from ----------------------------------------------------------------------

def test_the_folder_imported_from_is_written_only_with_replace_sources(tmp_path):
    folder, armature = imported_char0(tmp_path)
    assert_sources_replaced_only_when_asked(export, folder, [armature], "TXMPchar0_cloth.oni", "armature 'char0'")


# the .blend is saved by the Blender running the tests: the command must be as new
@pytest.mark.parametrize("command", [python_module] if IN_BPY_MODULE else [blender_script])
def test_the_command_line_writes_into_the_folder_imported_from_only_with_replace_sources(tmp_path, command):
    folder, armature = imported_char0(tmp_path)
    on_bone(armature, "Head").data.vertices[0].co.z += 0.25
    blend = tmp_path / "char0.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    before = written(folder)
    refused = run(command, "export", blend, "-o", folder, "--format", "body")
    assert refused.returncode == 1 and "would replace the file it was read from" in refused.stderr
    assert written(folder) == before
    done = run(command, "export", blend, "-o", folder, "--format", "body", "--replace-sources")
    assert done.returncode == 0, done.stderr
    now = written(folder)
    assert sorted(now) == sorted(before) and [name for name in now if now[name] != before[name]] == ["TRBSchar0.oni"]
    head = read_character(str(folder / "ONCCchar0.oni")).body.parts[PART_NAMES.index("Head")].mesh
    sample = read_character(os.path.join(EXAMPLES, "ONCCchar0.oni")).body.parts[PART_NAMES.index("Head")].mesh
    raised = np.abs(head.points[:, None] - sample.points[None] - [0.0, 2.5, 0.0]).max(axis=2) < 1e-4   # 0.25 up: 2.5
    assert len(head.triangles) == len(sample.triangles) and raised.any() and not np.array_equal(head.points,
                                                                                                 sample.points)


# --- a file changed or broken after the import -------------------------------------------------------

def damaged_mesh_of(path, part):
    """The TRBS file's mesh of `part` (its last level's M3GM) with a PNTA claiming more points
    than it holds; the PNTA's descriptor index."""
    data = bytearray(open(path, "rb").read())
    container = Container(io.BytesIO(bytes(data)), str(path), len(data))
    m3gm = stored_levels(str(path), 0, "char0")[-1][part].instance
    points = parse_links(container.instance(m3gm, M3GM_TAG)[0], M3GM_LINKS_OFFSET, 1, str(path), "M3GM")[0] >> 8
    at = container.instance(points, b"ATNP")[1] + PNTA_COUNT
    data[at:at + 4] = (0xFFFFFF).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))
    return points


def another_body(path):
    """A generated body of the same name and tree over the file: other meshes, one part without."""
    rng = np.random.default_rng(3)
    scene = cgen.CharacterScene()
    meshes = [f"m{p}" if p != 10 else None for p in range(19)]
    for mesh in filter(None, meshes):
        scene.meshes[mesh] = cgen.gen.random_mesh(rng, mesh)
    scene.bodies["char0"] = cgen.GenBody("char0", cgen.BIPED_PARENTS, rng.normal(0, 3, (19, 3)).astype(np.float32),
                                        meshes)
    path.write_bytes(cgen.loose_file_bytes(scene, "TRBSchar0"))


def assert_the_imported_part(back, theirs):
    """A part written from the scene: OniSplit's triangles (each may start at another corner),
    their points within float32 rounding of the import's s.A.p and back, their texture
    coordinates exact."""
    ours, onisplit = (np.concatenate([m.points, m.uvs], axis=1)[m.triangles] for m in (back, theirs))
    assert ours.shape == onisplit.shape
    off = np.abs(np.stack([np.roll(onisplit, -r, axis=1) for r in range(3)]) - ours)
    assert ((off[..., :3] <= 2 * np.spacing(np.abs(theirs.points).max())).all(axis=(2, 3))
            & (off[..., 3:] == 0).all(axis=(2, 3))).any(axis=0).all()


@pytest.mark.parametrize("case", ["garbage", "another_body", "one_mesh_damaged"])
def test_a_body_whose_file_changed_after_the_import_is_written_from_the_scene_naming_each_part(tmp_path, case):
    """Every part with an object has its mesh at every level: the parts whose file no longer holds
    them made of Blender's faces, each named in a note and why; the others as stored, bit for bit."""
    folder, armature = imported_char0(tmp_path)
    path = folder / "TRBSchar0.oni"
    sample = stored_levels(os.path.join(EXAMPLES, "TRBSchar0.oni"), 0, "char0")[-1]
    if case == "garbage":
        path.write_bytes(b"not an Oni file at all" * 8)
        why = {p: f"its source cannot be read ({path}: not an Oni file (template checksum 0x{b'not an O'[::-1].hex()}))"
               for p in range(19)}
    elif case == "another_body":        # its instances other arrays, or fewer: not there
        another_body(path)
        why = {p: (f"{path} holds other arrays for it now",
                   f"its source cannot be read ({path}: no longer holds M3GM at instance {sample[p].instance})")
               for p in range(19)}
    else:
        pnta = damaged_mesh_of(path, PART_NAMES.index("Head"))
        why = {PART_NAMES.index("Head"): f"its source cannot be read ({path}: instance {pnta} (unnamed PNTA): count "
                                         f"says 16777215 but only {len(sample[10].points)} fit in the instance)"}
    report = export(tmp_path / "out", [armature])
    assert not report.errors, report.errors
    notes = [note for note in report.notes if "written as the scene holds it" in note]
    assert len(notes) == len(why)
    for note, (part, reasons) in zip(notes, sorted(why.items())):
        assert any(note == f"armature 'char0' object 'char0 {PART_NAMES[part]}' (part '{PART_NAMES[part]}'): written "
                           f"as the scene holds it: {reason}" for reason in np.atleast_1d(reasons)), note
    for level in stored_levels(str(tmp_path / "out" / "TRBSchar0.oni"), 0, "char0"):
        for part, (mesh, theirs) in enumerate(zip(level, sample)):
            if part in why:
                assert_the_imported_part(mesh, theirs)
            else:
                assert all(np.array_equal(getattr(mesh, f), getattr(theirs, f)) for f in MESH_ARRAYS), part


# --- textures: a mesh's own, TRMA's ----------------------------------------------------------------

def generated_characters(tmp_path, *names):
    """The generator's standard scene (hero and villain on one body: hero's TRMA, villain none; the
    Head's mesh links its own texture, 'cloth', where hero's TRMA says 'face'), loose, `names` imported."""
    scene = cgen.standard_scene(np.random.default_rng(3))
    folder = cgen.write_loose(scene, str(tmp_path / "in"))
    assert bpy.ops.import_anim.oban(directory=folder, files=[{"name": f"ONCC{name}.oni"} for name in names],
                                    character_animations="NONE") == {"FINISHED"}
    return scene, folder


def trma_names(path):
    with open_library(str(path)) as library:
        c = library.main
        index = main_instance(c, TRMA_TAG, "TRMA")
        return c.short_name(index), texture_names(c, index)


def own_links(path, body="biped"):
    """Each level's M3GM texture links (the mesh's own; '' none) of a TRBS file."""
    return [[mesh.texture_name if mesh else None for mesh in level] for level in stored_levels(str(path), 0, body)]


def generator_links(scene):
    return [scene.meshes[mesh].texture or "" for mesh in scene.bodies["biped"].meshes]


def test_an_unchanged_generated_character_keeps_its_textures_as_linked(tmp_path):
    """hero: its TRMA (as the class links it, TRMAhero) and ONCC byte for byte, every level's own
    links the generator's, the TRMA entry its Head's mesh overrides noted; villain (no TRMA): no
    TRMA written, its ONCC byte for byte; the body they share written once."""
    scene, folder = generated_characters(tmp_path, "hero", "villain")
    hero, villain = bpy.data.objects["hero"], bpy.data.objects["villain"]
    report = export(tmp_path / "out", [hero, villain])
    assert not report.errors, report.errors
    out = written(tmp_path / "out")
    assert sorted(out) == ["ONCChero.oni", "ONCCvillain.oni", "TRBSbiped.oni", "TRMAhero.oni", "TXMPcloth.oni",
                           "TXMPskin.oni"]
    for name in ("ONCChero.oni", "ONCCvillain.oni", "TRMAhero.oni"):
        assert out[name] == open(os.path.join(folder, name), "rb").read(), name
    assert trma_names(tmp_path / "out" / "TRMAhero.oni") == ("hero", scene.characters["hero"].textures)
    assert own_links(tmp_path / "out" / "TRBSbiped.oni") == [generator_links(scene)] * 5
    assert report.notes == ["armature 'hero' part 'Head': its texture 'face' is linked (TRMA's as read), not "
                            "written: the part shows its mesh's own"]


def retextured(armature, image, bone="Head"):
    """The part's mesh given a copy of its material (an import's is shared by the parts of a
    texture) showing `image` (an imported one: it is that texture)."""
    mesh = on_bone(armature, bone).data
    mesh.materials[0] = mesh.materials[0].copy()
    next(n for n in mesh.materials[0].node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image = image


def test_a_part_retextured_links_the_texture_it_shows(tmp_path):
    """hero's Head (its mesh linking its own 'cloth') made to show the skin image: its meshes keep
    their arrays and link no texture of their own, TRMA's entry the new 'skin'; the sample's Head
    (TRMA's 'char0_face') made to show the cloth: TRMA's entry 'char0_cloth'."""
    scene, folder = generated_characters(tmp_path, "hero")
    hero = bpy.data.objects["hero"]
    retextured(hero, bpy.data.images["skin"])
    report = export(tmp_path / "out", [hero])
    assert not report.errors
    assert {os.path.basename(m.path): m.note for m in report.made}["TRBSbiped.oni"] == (
        "parts 'Head' retextured: their meshes link no texture of their own, TRMA's the one they show")
    head = PART_NAMES.index("Head")
    expected = scene.characters["hero"].textures.copy()
    expected[head] = "skin"
    assert trma_names(tmp_path / "out" / "TRMAhero.oni") == ("hero", expected)
    links = generator_links(scene)
    links[head] = ""
    assert own_links(tmp_path / "out" / "TRBSbiped.oni") == [links] * 5
    ours, theirs = (stored_levels(p, 0, "biped")[-1][head] for p in (str(tmp_path / "out" / "TRBSbiped.oni"),
                                                                      os.path.join(folder, "TRBSbiped.oni")))
    assert all(np.array_equal(getattr(ours, f), getattr(theirs, f)) for f in MESH_ARRAYS)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _, armature = imported_char0(tmp_path / "char0")
    retextured(armature, bpy.data.images["char0_cloth"])
    report = export(tmp_path / "char0" / "out", [armature])
    _, names = trma_names(tmp_path / "char0" / "out" / "TRMAchar0.oni")
    assert names[head] == "char0_cloth" and names[:head] + names[head + 1:] == \
        trma_names(os.path.join(EXAMPLES, "TRMAchar0.oni"))[1][:head] + \
        trma_names(os.path.join(EXAMPLES, "TRMAchar0.oni"))[1][head + 1:]
    assert "TXMPchar0_face.oni" not in written(tmp_path / "char0" / "out")


# --- two armatures of one class or one body; two images of one texture -------------------------------

def test_a_character_imported_twice_writes_its_files_once_or_is_refused_naming_both(tmp_path):
    """Both unchanged: one set of files, OniSplit's bit for bit. One of them edited: both
    refused, each naming the other, nothing written."""
    for _ in range(2):
        assert bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "ONCCchar0.oni"),
                                        character_animations="NONE") == {"FINISHED"}
    first, second = sorted((o for o in bpy.data.objects if o.type == "ARMATURE"), key=lambda o: o.name)
    assert (first.name, second.name) == ("char0", "char0.001")
    report = export(tmp_path / "same", [first, second])
    assert not report.errors and {m.block for m in report.made} == {first}
    assert written(tmp_path / "same") == {name: open(os.path.join(EXAMPLES, name), "rb").read()
                                          for name in SAMPLE_FILES}
    on_bone(second, "Head").data.vertices[0].co.z += 0.25
    report = export(tmp_path / "edited", [first, second])
    assert not report.made and not os.listdir(tmp_path / "edited")
    assert report.errors == [f"armature '{a}': armature '{b}' would write TRBSchar0.oni too, otherwise; nothing "
                             f"written for them: give each body its own name ('oni_body', 'oni_character', the "
                             f"textures' 'oni_texture_name')" for a, b in (("char0", "char0.001"),
                                                                            ("char0.001", "char0"))]


def test_two_characters_of_one_body_one_edited_are_refused_naming_both(tmp_path):
    generated_characters(tmp_path, "hero", "villain")
    hero, villain = bpy.data.objects["hero"], bpy.data.objects["villain"]
    on_bone(hero, "Pelvis").data.vertices[0].co.z += 0.25
    report = export(tmp_path / "out", [hero, villain])
    assert not report.made and not os.listdir(tmp_path / "out")
    assert [error.split(" would write ")[0] for error in report.errors] == [
        "armature 'hero': armature 'villain'", "armature 'villain': armature 'hero'"]
    assert all("would write TRBSbiped.oni too, otherwise" in error for error in report.errors)


def image_of(armature, bone):
    material = on_bone(armature, bone).data.materials[0]
    return next(n for n in material.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage").image


def painted(image):
    """`image`, its first pixel painted."""
    pixels = np.empty(len(image.pixels), np.float32)
    image.pixels.foreach_get(pixels)
    pixels[:4] = 1.0 - pixels[:4]
    image.pixels.foreach_set(pixels)
    return image


def test_two_images_of_one_texture_are_refused_naming_both(tmp_path):
    """A painted copy of the skin image (it keeps its texture's name) on the Head: both images
    named; the skin image of a second import of the character painted instead: both armatures
    refused, each naming the other."""
    _, armature = imported_char0(tmp_path)
    copy = painted(bpy.data.images["char0_skin"].copy())
    retextured(armature, copy)
    report = export(tmp_path / "one", [armature])
    assert not report.made and report.errors == [
        f"armature 'char0': images 'char0_skin' and '{copy.name}' are both texture 'char0_skin'; give each its "
        f"own name (the image's or material's 'oni_texture_name')"]
    retextured(armature, bpy.data.images["char0_face"])
    assert bpy.ops.import_anim.oban(filepath=os.path.join(EXAMPLES, "ONCCchar0.oni"),
                                    character_animations="NONE") == {"FINISHED"}
    second = bpy.data.objects["char0.001"]
    assert image_of(second, "Neck") is not image_of(armature, "Neck")
    painted(image_of(second, "Neck"))
    report = export(tmp_path / "two", [armature, second])
    assert not report.made and not os.listdir(tmp_path / "two")
    assert [error.split(" would write ")[0] for error in report.errors] == [
        "armature 'char0': armature 'char0.001'", "armature 'char0.001': armature 'char0'"]
    assert all("would write TXMPchar0_skin.oni too, otherwise" in error for error in report.errors)
