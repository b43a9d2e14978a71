"""The body set writer (oni/io/characters/body_write.py; docs/characters.md 10): OniSplit's own
TRBS, TRMA and ONCC files read and written back byte for byte, the generated characters'
instances too; every level of detail written and read back; the tree as OniSplit lays it out;
what cannot be written refused with an ObanError naming the instance."""

import io
import os
import shutil

import numpy as np
import pytest
from characters_generate import BIPED_PARENTS, loose_file_bytes, standard_scene, tria_items
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.characters.body_write import (ONCC_LINKS, PartMesh, body_file_bytes, character_file_bytes,
                                                      class_as_read, textures_file_bytes)
from oban_import.oni.io.characters.read import (TRBS_LEVELS, TRCM_LINKS_AT, counted_items, read_character,
                                                texture_names, tree_parents)
from oban_import.oni.io.container.container import (M3GM_TAG, ONCC_TAG, PNTA_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG,
                                                    TRIA_TAG, TXCA_TAG, TXMP_TAG, Container)
from oban_import.oni.io.container.instance_file import instance_file_bytes
from oban_import.oni.io.objects import meshes
from oban_import.oni.io.objects.mesh_write import PNTA_HEAD, TXCA_PADDING
from oban_import.oni.io.trams.tram import PART_NAMES

SAMPLES = os.path.join(DATA, "characters", "oni")


def opened(data: bytes, path="written") -> Container:
    return Container(io.BytesIO(data), path, len(data))


def sample(name) -> bytes:
    with open(os.path.join(SAMPLES, name + ".oni"), "rb") as f:
        return f.read()


# --- a body set as stored (what the readers do not keep: every level, the strips) --------------

def stored_mesh(c: Container, index: int) -> PartMesh:
    """The M3GM at `index`: its arrays as stored and its own texture's name."""
    links = meshes.parse_links(c.instance(index, M3GM_TAG)[0], meshes.M3GM_LINKS_OFFSET, 7, c.path, "")
    arrays = {field: meshes.parse_array(c.instance(c.link(value, tag, index, field), tag)[0], tag, c.path, "")
              for (field, tag), value in zip(meshes.M3GM_LINKS[:6], links)}
    texture = c.link(links[6], TXMP_TAG, index, "texture")
    return PartMesh(arrays["points"], arrays["vertex normals"], arrays["texture coordinates"],
                    strips=arrays["triangle strips"], face_normals=arrays["face normals"],
                    face_normal_indices=arrays["face normal indices"],
                    texture_name=None if texture is None else c.short_name(texture))


def stored_levels(c: Container, index: int = 0) -> list:
    """The TRBS's five levels, each a PartMesh (or None) per part; one list per TRCM."""
    trcms = meshes.parse_links(c.instance(index, TRBS_TAG)[0], 0, TRBS_LEVELS, c.path, "")
    found = {}
    for value in trcms:
        trcm = c.link(value, TRCM_TAG, index, "level")
        if trcm not in found:
            geometry = c.link(meshes.parse_links(c.instance(trcm, TRCM_TAG)[0], TRCM_LINKS_AT, 1, c.path, "")[0],
                              TRGA_TAG, trcm, "geometry")
            found[trcm] = [None if not link else stored_mesh(c, c.link(link, M3GM_TAG, geometry, "mesh"))
                           for link in counted_items(c, geometry, TRGA_TAG).tolist()]
    return [found[c.link(value, TRCM_TAG, index, "level")] for value in trcms]


def body_bytes_as_read(path: str, name: str | None = None) -> bytes:
    """A TRBS .oni read (the reader's body, the levels as stored) and written again (as TRBS`name`)."""
    body = read_character(path).body
    with open(path, "rb") as f:
        levels = stored_levels(Container(f, path, os.path.getsize(path)))
    return body_file_bytes(name or body.name, [part.name for part in body.parts], body.parents,
                           [part.translation for part in body.parts], levels)


# --- OniSplit's files back -----------------------------------------------------------------------

def test_sample_body_written_back_is_onisplit_bytes():
    path = os.path.join(SAMPLES, "TRBSchar0.oni")
    assert body_bytes_as_read(path) == sample("TRBSchar0")


def test_sample_textures_written_back_are_onisplit_bytes():
    names = texture_names(opened(sample("TRMAchar0")), 0)
    assert names == ["char0_cloth"] * 9 + ["char0_skin", "char0_face"] + ["char0_skin"] * 8
    assert textures_file_bytes("char0", names) == sample("TRMAchar0")


def test_sample_character_written_back_is_onisplit_bytes():
    data, links = class_as_read(opened(sample("ONCCchar0")), 0)
    assert links == {0xC34: "TRBSchar0", 0xC38: "TRMAchar0", 0xC80: "TRACchar0"}
    assert character_file_bytes("char0", data, links, "char0", "char0") == sample("ONCCchar0")


def test_generated_characters_written_back():
    """standard_scene's classes and textures are OniSplit's layout: the same bytes. Its bodies'
    instances are the same but where the generator leaves out what OniSplit writes: PNTA's bounds
    (the generator's are zeros) and TXCA's 480 zero bytes."""
    scene = standard_scene(np.random.default_rng(5))
    for name, character in scene.characters.items():
        theirs = loose_file_bytes(scene, "ONCC" + name)
        data, links = class_as_read(opened(theirs), 0)
        textures = name if character.textures else None
        assert character_file_bytes(name, data, links, character.body, textures) == theirs
        if textures:
            assert textures_file_bytes(name, character.textures) == loose_file_bytes(scene, "TRMA" + name)
    for name, body in scene.bodies.items():
        parts = [None if m is None else scene.meshes[m] for m in body.meshes]
        level = [None if m is None else PartMesh(m.points, m.normals, m.uvs, strips=m.strips,
                                                  face_normals=m.face_normals, face_normal_indices=m.face_indices,
                                                  texture_name=m.texture) for m in parts]
        ours = opened(body_file_bytes(name, PART_NAMES[:len(body.parents)], body.parents, body.translations,
                                      [level] * TRBS_LEVELS))
        theirs = opened(loose_file_bytes(scene, "TRBS" + name))
        for field in ("tag", "flags"):
            assert np.array_equal(ours.descriptors[field], theirs.descriptors[field])
        for k in range(len(ours.descriptors)):
            assert ours.full_name(k) == theirs.full_name(k)
            if ours.is_placeholder(k):
                continue
            mine, generated = ours.instance(k, ours.tag_of(k))[0], theirs.instance(k, ours.tag_of(k))[0]
            if ours.tag_of(k) == PNTA_TAG:
                mine = mine[:PNTA_HEAD] + bytes(40) + mine[PNTA_HEAD + 40:]
            elif ours.tag_of(k) == TXCA_TAG:
                assert mine[-TXCA_PADDING:] == bytes(TXCA_PADDING)
                mine = mine[:-TXCA_PADDING]
            assert mine == generated, (name, k)


# --- levels of detail, triangles, the tree -------------------------------------------------------

def prism(shift: float, texture=None) -> PartMesh:
    """A three-sided prism of 6 points and 8 triangles (two ends, three quads)."""
    ring = np.array([[1, 0, 0], [-0.5, 0.75, 0], [-0.5, -0.75, 0]], np.float32)
    points = np.concatenate([ring, ring + [0, 0, 2]]).astype(np.float32) + np.float32(shift)
    triangles = np.array([[0, 2, 1], [3, 4, 5], [0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4], [2, 0, 3], [2, 3, 5]])
    normals = points / np.linalg.norm(points, axis=1, keepdims=True)
    uvs = (points[:, :2] * np.float32(0.25)).astype(np.float32)
    return PartMesh(points, normals, uvs, triangles=triangles, texture_name=texture)


def test_levels_of_detail_each_written(tmp_path):
    """Distinct lists get a TRCM each, in order (each with its TRGA, TRTA, TRIA and meshes);
    the same list again links the same TRCM. The reader takes the last one."""
    parents = np.array([-1, 0, 1])
    low, high = [prism(0.0), None, prism(1.0)], [prism(2.0, "skin"), prism(3.0), prism(4.0)]
    data = body_file_bytes("lod", PART_NAMES[:3], parents, np.ones((3, 3)), [low, low, high, high, high])
    c = opened(data)
    links = meshes.parse_links(c.instance(0, TRBS_TAG)[0], 0, TRBS_LEVELS, c.path, "")
    second = 1 + 4 + 2 * 7                  # the TRBS, the low level's four and its two meshes' seven each
    assert [link >> 8 for link in links] == [1, 1, second, second, second]
    assert [c.tag_of(k) for k in (1, 2, 3, 4, second, second + 1)] == [TRCM_TAG, TRGA_TAG, b"ATRT", TRIA_TAG,
                                                                       TRCM_TAG, TRGA_TAG]
    assert c.full_name(second + 4 + 7) == "TXMPskin" and c.is_placeholder(second + 4 + 7)
    assert len(c.descriptors) == second + 4 + 8 + 7 + 7
    levels = stored_levels(c)
    assert levels[0] is levels[1] and levels[2] is levels[4] and levels[1] is not levels[2]
    for written, read_back in zip(low + high, levels[0] + levels[2]):
        if written is None:
            assert read_back is None
            continue
        for field in ("points", "normals", "uvs"):
            assert np.array_equal(getattr(written, field), getattr(read_back, field))
        assert read_back.texture_name == written.texture_name
    (tmp_path / "TRBSlod.oni").write_bytes(data)
    body = read_character(str(tmp_path / "TRBSlod.oni")).body
    assert [np.array_equal(part.mesh.points, mesh.points) for part, mesh in zip(body.parts, high)] == [True] * 3


def test_triangles_come_back(tmp_path):
    """A body written from triangles reads back (read_character) to the same parts, tree,
    translations, points, normals, texture coordinates and triangles (the first of a pair rotated)."""
    parents = np.array([-1, 0, 0, 2])
    translations = np.array([[0, 0, 0], [1.5, -2, 0.25], [0, 3, 0], [0.1, 0.2, 0.3]], np.float32)
    level = [prism(k + 0.5) for k in range(4)]
    path = tmp_path / "TRBSfour.oni"
    path.write_bytes(body_file_bytes("four", PART_NAMES[:4], parents, translations, [level] * 5))
    body = read_character(str(path)).body
    assert body.name == "four" and np.array_equal(body.parents, parents)
    assert np.array_equal(np.array([p.translation for p in body.parts]), translations)
    for written, part in zip(level, body.parts):
        for field in ("points", "normals", "uvs"):
            assert np.array_equal(getattr(written, field), getattr(part.mesh, field))
        assert len(part.mesh.triangles) == len(written.triangles)
        for given, read_back in zip(written.triangles, part.mesh.triangles):
            assert any((np.roll(given, -r) == read_back).all() for r in range(3))


@pytest.mark.parametrize("parents", [BIPED_PARENTS, (-1, 0, 0, 0, 1, 1, 3), (-1,), (-1, 0, 1, 2, 3),
                                     (-1, 0, 0, 1, 2, 1, 0, 6, 6, 8)])
def test_the_tree_as_onisplit_lays_it_out(parents):
    """TRIA: parent (0 for the root), first child and next sibling in part order, as OniSplit
    writes a tree it numbered depth first (the sample's, the generator's tria_items); the reader
    walks it back to the same parents."""
    count = len(parents)
    level = [prism(k) for k in range(count)]
    c = opened(body_file_bytes("tree", PART_NAMES[:count], parents, np.zeros((count, 3)), [level] * 5))
    items = counted_items(c, 4, TRIA_TAG)
    assert [tuple(item) for item in items.tolist()] == [tuple(t) for t in tria_items(parents)]
    assert tree_parents(items, "tree", "TRIA").tolist() == list(parents)


def test_the_sample_tree_is_the_biped():
    c = opened(sample("TRBSchar0"))
    assert tree_parents(counted_items(c, 4, TRIA_TAG), "", "").tolist() == list(BIPED_PARENTS)


def test_written_character_reads_back(tmp_path):
    """ONCC, TRBS and TRMA written under new names beside the sample's textures and animations:
    the reader finds the new body and textures through the new ONCC."""
    for name in os.listdir(SAMPLES):
        if name.startswith(("TXMP", "TRAC", "TRAM")):
            shutil.copy(os.path.join(SAMPLES, name), tmp_path)
    (tmp_path / "TRBSnew00.oni").write_bytes(body_bytes_as_read(os.path.join(SAMPLES, "TRBSchar0.oni"), "new00"))
    names = texture_names(opened(sample("TRMAchar0")), 0)[::-1]
    (tmp_path / "TRMAnew.oni").write_bytes(textures_file_bytes("new", names))
    data, links = class_as_read(opened(sample("ONCCchar0")), 0)
    (tmp_path / "ONCCnew.oni").write_bytes(character_file_bytes("new", data, links, "new00", "new"))
    character = read_character(str(tmp_path / "ONCCnew.oni"))
    original = read_character(os.path.join(SAMPLES, "ONCCchar0.oni"))
    assert character.name == "new" and character.body.name == "new00" and not character.warnings
    assert [p.mesh.texture_name for p in character.body.parts] == names
    assert [t.name for t in character.animations] == [t.name for t in original.animations]
    assert np.array_equal(character.body.translations, original.body.translations)


def without_links(data: bytes) -> bytes:
    out = bytearray(data)
    for at, _ in ONCC_LINKS:
        out[at:at + 4] = bytes(4)
    return bytes(out)


def test_every_link_of_a_class_is_kept():
    """Every ONCC link field (ONCC_LINKS, OniSplit's metadata), each to its tag: placeholders in
    field order, every other byte as given."""
    data = bytes(range(256)) * 13
    links = {at: f"{tag}x{at:x}" for at, tag in ONCC_LINKS}
    c = opened(character_file_bytes("every", data[:0xC90], links, "body", None))
    data_back, links_back = class_as_read(c, 0)
    expected = {**links, 0xC34: "TRBSbody"}
    del expected[0xC38]
    assert links_back == expected
    assert [c.full_name(k) for k in range(1, len(c.descriptors))] == list(expected.values())
    assert without_links(data_back) == without_links(data[:0xC90])


# --- what cannot be written ----------------------------------------------------------------------

def body_error(name="b", part_names=PART_NAMES[:3], parents=(-1, 0, 1), translations=((0, 0, 0),) * 3,
               levels=None, **mesh):
    level = [prism(0.0)._replace(**mesh), prism(1.0), None]
    with pytest.raises(ObanError) as error:
        body_file_bytes(name, part_names, parents, translations, [level] * 5 if levels is None else levels)
    return str(error.value)


def test_bodies_that_cannot_be_written():
    many = [f"Part{p}" if p >= 19 else PART_NAMES[p] for p in range(33)]
    assert "33 parts (a body has 1 to 32" in body_error(part_names=many, parents=[-1] + list(range(32)),
                                                        translations=np.zeros((33, 3)))
    assert "part 1 is named 'Thigh': the engine knows part 1 as LeftThigh" in body_error(
        part_names=["Pelvis", "Thigh", "LeftCalf"])
    assert "part 0 (Pelvis) has parent 0" in body_error(parents=(0, 0, 1))
    assert "part 2 (LeftCalf) has parent 2" in body_error(parents=(-1, 0, 2))
    assert "parents of shape (2,)" in body_error(parents=(-1, 0))
    assert "translations of shape (3, 2)" in body_error(translations=np.zeros((3, 2)))
    assert "part 1 (LeftThigh): its translations" in body_error(translations=[[0, 0, 0], [np.nan, 0, 0], [0, 0, 0]])
    assert "part 1 (LeftThigh): its translations" in body_error(translations=[[0, 0, 0], [1e39, 0, 0], [0, 0, 0]])
    assert "part 2 (LeftCalf): its translations from the root (as float32) add up to 1.9e+19" in body_error(
        translations=[[0, 0, 0], [1e19, 0, 0], [0, 9e18, 0]])
    assert "TRBSb: 4 levels of detail" in body_error(levels=[[prism(0)] * 3] * 4)
    assert "level of detail 0: 2 meshes for 3 parts" in body_error(levels=[[prism(0)] * 2] * 5)
    assert body_error(name="").startswith("TRBS: an empty name")
    assert "outside Latin-1" in body_error(name="Ω")
    assert "65 characters with its tag" in body_error(name="x" * 61)


def test_meshes_that_cannot_be_written():
    where = "TRBSb: level of detail 0, part 0 (Pelvis): "
    assert body_error(normals=np.zeros((5, 3))) == where + "5 vertex normals for 6 points"
    assert body_error(uvs=np.full((6, 2), np.inf)) == where + "non-finite value in its texture coordinates (as float32)"
    assert body_error(points=np.zeros((6, 2))) == where + "its points have shape (6, 2), not (n, 3)"
    assert body_error(triangles=None) == where + "neither triangle strips nor triangles"
    assert "a triangle's vertex index outside the 6 points" in body_error(triangles=[[0, 1, 6]])
    strips = {"strips": np.array([-0x80000000, 1, 9], np.int32), "face_normals": np.ones((1, 3)),
              "face_normal_indices": [0]}
    assert "strip index 2 is vertex 9, beyond the 6 points" in body_error(**strips)
    assert "non-finite value in its face normals" in body_error(**{**strips, "face_normals": [[np.nan, 0, 1]]})
    assert "strips without their face normals" in body_error(**{**strips, "face_normal_indices": None})
    assert "outside Latin-1" in body_error(texture_name="Ω")


def test_a_part_point_beyond_the_world_is_refused():
    """A part's point of 4096 units (float32) on an axis is written, the next float32 refused,
    naming the body, the level, the part and the point."""
    edge = np.float32(4096)
    points = prism(0).points.copy()
    points[3] = [-edge, edge, edge]
    assert body_file_bytes("b", PART_NAMES[:3], (-1, 0, 1), np.zeros((3, 3)), [[prism(0)._replace(points=points)] * 3] * 5)
    points[3, 1] = np.nextafter(edge, np.float32(np.inf))
    assert body_error(points=points) == ("TRBSb: level of detail 0, part 0 (Pelvis): point 3 lies at (-4096, "
                                         "4096.00049, 4096), beyond 4096 units from the origin on an axis, where the "
                                         "game's world ends (1 such)")


def test_textures_that_cannot_be_written():
    for names, message in (([], "0 textures: a TRMA has one per part"), (["a"] * 33, "33 textures"),
                           (["a", "Ω"], "TXMPΩ: the name holds a character outside Latin-1")):
        with pytest.raises(ObanError, match=message):
            textures_file_bytes("t", names)
    with pytest.raises(ObanError, match="^TRMA: an empty name"):
        textures_file_bytes("", ["a"])


def test_classes_that_cannot_be_written():
    data, links = class_as_read(opened(sample("ONCCchar0")), 0)
    for args, message in (((data[:0xC84], links, "b", "t"), "ONCCc: 3204 bytes, too short for an ONCC"),
                          ((data, {**links, 0xC88: "TRSCx"}, "b", "t"), "no ONCC link at offset 0xc88"),
                          ((data, {**links, 0xC80: "TRBSchar0"}, "b", "t"), "0xc80 names 'TRBSchar0', not a TRAC"),
                          ((data, {**links, 0xC80: "TRAC"}, "b", "t"), "0xc80 names 'TRAC', not a TRAC"),
                          ((data, links, "", "t"), "^TRBS: an empty name")):
        with pytest.raises(ObanError, match=message):
            character_file_bytes("c", *args)


def test_a_class_linking_an_unnamed_instance():
    data = bytearray(0xC90)
    data[0xC34:0xC38] = (1 << 8 | 1).to_bytes(4, "little")
    c = opened(instance_file_bytes([(ONCC_TAG, "ONCCc", bytes(data)), (TRBS_TAG, "", bytes(20))]), "c.oni")
    with pytest.raises(ObanError, match="TRBS link .0xc34. reaches an unnamed instance"):
        class_as_read(c, 0)
