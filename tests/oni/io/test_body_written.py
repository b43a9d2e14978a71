"""The body set writer against OniSplit itself (tests/data/characters_written, its README says
how each file was made): what OniSplit v0.9.99.2 read back from the TRBS, TRMA and ONCC files the
writer wrote (its XML and Collada exports) equals what the writer was given, and its `-create`
of its own XML of them lays a body out as the writer does. No Mono needed: OniSplit's outputs
are stored; the inputs are made again here (no random generator: integer hashing only)."""

import lzma
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from characters_generate import BIPED_PARENTS
from collada import ColladaPart, collada_parts
from hashed import hashed
from paths import DATA
from test_body_write import opened, sample, stored_levels, texture_names

from oban_import.oni.io.characters.body_write import (PartMesh, body_file_bytes, character_file_bytes, class_as_read,
                                                      textures_file_bytes)
from oban_import.oni.io.characters.read import read_character
from oban_import.oni.io.objects import meshes
from oban_import.oni.io.trams.tram import PART_NAMES

HERE = os.path.join(DATA, "characters_written")
SAMPLES = os.path.join(DATA, "characters", "oni")
NODE_NAMES = ("pelvis", "left_thigh", "left_calf", "left_foot", "right_thigh", "right_calf", "right_foot", "mid",
              "chest", "neck", "head", "left_shoulder", "left_biceps", "left_wrist", "left_handfist",
              "right_shoulder", "right_biceps", "right_wrist", "right_handfist")   # OniSplit's BodyNode.Names
F32 = np.float32


# --- the inputs --------------------------------------------------------------------------------

def unit(vectors):
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(F32)


def made_mesh(part: int, corners: int, texture=None) -> PartMesh:
    """A closed mesh of hashed points (a ring of `corners` around a spine, capped at both ends:
    2 * corners + 2 points), hashed unit normals and texture coordinates, from triangles."""
    angle = np.arange(corners) * 2 * np.pi / corners
    ring = np.stack([np.cos(angle), np.zeros(corners), np.sin(angle)], axis=1)
    points = np.concatenate([ring, ring + [0, -3, 0], [[0, 0.5, 0], [0, -3.5, 0]]])
    points = (points * (1 + hashed(points.shape, 100 + part) / 512)).astype(F32)
    top, bottom = 2 * corners, 2 * corners + 1
    k, n = np.arange(corners), (np.arange(corners) + 1) % corners
    triangles = np.concatenate([np.stack([k, n + corners, n], 1), np.stack([k, k + corners, n + corners], 1),
                                np.stack([np.full(corners, top), k, n], 1),
                                np.stack([np.full(corners, bottom), n + corners, k + corners], 1)])
    normals = unit(hashed(points.shape, 200 + part) - 127.5)
    uvs = (hashed((len(points), 2), 300 + part) / 97 - 0.5).astype(F32)
    return PartMesh(points, normals, uvs, triangles=triangles, texture_name=texture)


def made_case():
    """A body from nothing: the biped's tree, translations on a 1/64 grid (which OniSplit's Collada
    text holds exactly) but RightFist's, thirds and sevenths (which it rounds); levels 0 and 1 a
    ring of 3 per part, 2 to 4 one of 4, the head's linking its own texture."""
    translations = ((hashed((19, 3), 1).astype(np.int64) - 128) / 64).astype(F32)
    translations[18] = F32([1 / 3, -2 / 7, 5 / 21])
    low = [made_mesh(part, 3) for part in range(19)]
    high = [made_mesh(part + 19, 4, "char0_face" if part == 10 else None) for part in range(19)]
    textures = ["char0_cloth"] * 9 + ["char0_skin"] * 10
    return list(PART_NAMES), np.array(BIPED_PARENTS), translations, [low, low, high, high, high], textures


def edited_case():
    """The sample body as read: LeftCalf's points moved (written from its triangles, as an edited
    mesh comes), RightCalf's translation changed; LeftFist showing the face texture."""
    body = read_character(os.path.join(SAMPLES, "TRBSchar0.oni")).body
    levels = stored_levels(opened(sample("TRBSchar0")))
    calf = body.parts[2].mesh
    moved = (calf.points + F32([0.5, -0.25, 1.0]) + hashed(calf.points.shape, 5) / F32(256)).astype(F32)
    level = list(levels[4])
    level[2] = PartMesh(moved, calf.normals, calf.uvs, triangles=calf.triangles)
    translations = np.array([part.translation for part in body.parts], F32)
    translations[5] = [0.75, -7.125, 0.5]
    textures = texture_names(opened(sample("TRMAchar0")), 0)
    textures[14] = "char0_face"
    return [part.name for part in body.parts], body.parents, translations, [level] * 5, textures


CASES = {"char0_edited": edited_case, "made": made_case}


def case_files(name):
    """{file name: bytes} of a case: its TRBS, TRMA and ONCC (the sample's class, linking them)."""
    part_names, parents, translations, levels, textures = CASES[name]()
    data, links = class_as_read(opened(sample("ONCCchar0")), 0)
    return {f"TRBS{name}.oni": body_file_bytes(name, part_names, parents, translations, levels),
            f"TRMA{name}.oni": textures_file_bytes(name, textures),
            f"ONCC{name}.oni": character_file_bytes(name, data, links, name, name)}


def write_inputs(folder):
    """The files OniSplit was given: ours/*.oni."""
    os.makedirs(os.path.join(folder, "ours"), exist_ok=True)
    for name in CASES:
        for file_name, data in case_files(name).items():
            with open(os.path.join(folder, "ours", file_name), "wb") as f:
                f.write(data)


def stored(*parts) -> bytes:
    """A file of this folder (its .xz where it is stored compressed)."""
    path = os.path.join(HERE, *parts)
    with open(path, "rb") if os.path.exists(path) else lzma.open(path + ".xz") as f:
        return f.read()


# --- OniSplit's Collada (read by tests/fixtures/collada.py, independently of the add-on) -----------

def f6(value) -> str:
    """A float as OniSplit's Collada writes a node's translation ("{0:f6}")."""
    return f"{float(value):.6f}"


def assert_read_as_given(part: ColladaPart, mesh: PartMesh):
    """Every point, vertex normal and texture coordinate of `mesh` as OniSplit read it (float32,
    bit for bit): the normals one per vertex; the texture coordinates (u, 1 - v), 1 - v in
    float32; the points welded (each distinct point once, in order), every triangle corner's
    point the given one; the triangles the reader's, in order, each wound as the reader winds it."""
    points, normals, uvs = (np.asarray(a, F32) for a in (mesh.points, mesh.normals, mesh.uvs))
    assert np.array_equal(part.normals, normals)
    assert np.array_equal(part.texcoords, np.stack([uvs[:, 0], F32(1) - uvs[:, 1]], axis=1))
    welded = np.unique(points.view("V12").ravel(), return_index=True)[1]
    assert np.array_equal(part.positions, points[np.sort(welded)])
    assert np.array_equal(part.corners[..., 1], part.corners[..., 2])
    assert np.array_equal(part.positions[part.corners[..., 0]], points[part.corners[..., 1]])
    triangles = meshes.triangles(np.asarray(mesh.strips), np.asarray(mesh.face_normal_indices),
                                 np.asarray(mesh.face_normals, F32), points, "", "")
    assert np.array_equal(part.corners[..., 1], triangles)


def written_levels(name: str) -> list:
    """The levels of our TRBS`name` as stored (strips and all)."""
    return stored_levels(opened(stored("ours", f"TRBS{name}.oni")))


def assert_body_as_given(parts: list, name: str, level: list, materials: list):
    """A body Collada of OniSplit's: the biped's nodes and tree, each translation the text of the
    given float32 (which reads back to it but for RightFist's thirds and sevenths), each part's
    mesh read as given, each part's material."""
    _, parents, translations, _, _ = CASES[name]()
    assert [p.name for p in parts] == list(NODE_NAMES) and [p.parent for p in parts] == list(parents)
    for p, (part, mesh, material) in enumerate(zip(parts, level, materials)):
        assert part.translation == " ".join(f6(v) for v in translations[p])
        back = np.array(part.translation.split(), F32)
        if name == "made" and p == 18:
            assert not np.array_equal(back, translations[p]) and np.abs(back - translations[p]).max() <= 5e-7
        else:
            assert np.array_equal(back, translations[p]), p
        assert_read_as_given(part, mesh)
        assert part.material == material, p


# --- the files OniSplit was given are what the writer writes -----------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_our_files_are_the_writers_bytes(name):
    for file_name, data in case_files(name).items():
        assert data == stored("ours", file_name), file_name


# --- what OniSplit read back ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_xml_of_our_body(name):
    """-extract:xml of TRBS`name`: a Collada file per TRCM (named after its descriptor), linked
    from the five levels as written; each level's parts, tree, translations and meshes as given."""
    _, _, _, levels, _ = CASES[name]()
    elements = [e.text for e in ET.fromstring(stored("xml", f"TRBS{name}.xml")).findall("TRBS/Elements/Link")]
    written = written_levels(name)
    first = {id(level): k for k, level in reversed(list(enumerate(levels)))}
    assert [first[id(level)] for level in levels] == ([0, 0, 2, 2, 2] if name == "made" else [0] * 5)
    trcm = [int(re.fullmatch(rf"TRBS{name}_TRCM(\d+)\.dae", e).group(1)) for e in elements]
    assert trcm == ([1, 1, 138, 138, 138] if name == "made" else [1] * 5)
    for k in sorted(set(first.values())):
        parts = collada_parts(stored("xml", elements[k]))
        assert_body_as_given(parts, name, written[k], [None if m.texture_name is None else m.texture_name
                                                       for m in written[k]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_collada_of_our_character(name):
    """-extract:dae -noanim of ONCC`name`: the body its new links name, the last level, each part
    showing TRMA`name`'s texture. OniSplit puts TRMA's over a mesh's own (the made head's
    char0_face); the engine and the reader keep the mesh's own."""
    _, _, _, _, textures = CASES[name]()
    level = written_levels(name)[4]
    parts = collada_parts(stored("chardae", f"{name}.dae"))
    assert_body_as_given(parts, name, level, textures)
    if name == "made":
        assert level[10].texture_name == "char0_face" and parts[10].material == "char0_skin"


@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_xml_of_our_textures_and_class(name):
    """-extract:xml of TRMA`name` links each part's texture by name; of ONCC`name` is its XML of
    the sample ONCCchar0 but for the body set and textures, which name the new files."""
    links = [e.text for e in ET.fromstring(stored("xml", f"TRMA{name}.xml")).findall("TRMA/Textures/Link")]
    assert links == ["TXMP" + t for t in CASES[name]()[4]]
    ours, sample = (stored("xml", f"ONCC{n}.xml").decode("utf-8-sig").splitlines() for n in (name, "char0"))
    changed = [(a, b) for a, b in zip(ours, sample) if a != b]
    assert len(ours) == len(sample) and changed == [
        (f"        <BodySet>TRBS{name}</BodySet>", "        <BodySet>TRBSchar0</BodySet>"),
        (f"        <BodyTextures>TRMA{name}</BodyTextures>", "        <BodyTextures>TRMAchar0</BodyTextures>")]


# --- what OniSplit's -create makes of its own XML of our files -----------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_creates_our_textures_and_class(name):
    for tag in ("TRMA", "ONCC"):
        assert stored("created", f"{tag}{name}.oni") == stored("ours", f"{tag}{name}.oni")


@pytest.mark.parametrize("name", sorted(CASES))
def test_onisplit_lays_a_body_out_as_we_do(name):
    """-create of -extract:xml of TRBS`name` (its Collada files): the same instances in the same
    order (but the M3GM's own texture placeholder, which its Collada import drops), the same
    TRBS, TRCM, TRGA and TRIA; TRTA as its Collada text gives it, the root's 0 (its BodyDaeReader
    sets it so). The edited sample comes back byte for byte but the face normals of the part
    written from triangles (ours in float64, OniSplit's in float32: 1 ulp apart); the made body's
    meshes OniSplit renumbers (its Collada import orders vertices as the triangles meet them)."""
    ours, theirs = opened(stored("ours", f"TRBS{name}.oni")), opened(stored("created", f"TRBS{name}.oni"))
    kept = np.flatnonzero(~ours.descriptors["flags"] & 2).tolist()
    renumber = {k: j for j, k in enumerate(kept)}
    assert len(kept) == len(theirs.descriptors)
    assert (ours.descriptors[["tag", "flags"]][kept] == theirs.descriptors[["tag", "flags"]]).all()
    translations = CASES[name]()[2]
    for k, j in renumber.items():
        tag = ours.tag_of(k)
        mine, created = ours.instance(k, tag)[0], theirs.instance(j, tag)[0]
        if tag in (b"SBRT", b"MCRT", b"AGRT"):   # links only past the counts
            at = 0 if tag == b"SBRT" else (0x54 if tag == b"MCRT" else 0x18)
            values = np.frombuffer(mine, "<u4", offset=at)
            moved = [renumber[v >> 8] << 8 | 1 if v else 0 for v in values.tolist()]
            assert mine[:at] + np.array(moved, "<u4").tobytes() == created
        elif tag == b"ATRT":
            expected = np.array([[f6(v) for v in row] for row in translations], F32)
            expected[0] = 0
            assert np.array_equal(np.frombuffer(created, "<f4", offset=0x18).reshape(-1, 3), expected)
        elif tag == b"AIRT" or name == "char0_edited" and k != 22:
            assert mine == created, k
    if name == "char0_edited":
        ulps = np.frombuffer(ours.instance(22, b"ARCV")[0], "<i4")[6:] - np.frombuffer(
            theirs.instance(22, b"ARCV")[0], "<i4")[6:]
        assert 0 < np.abs(ulps).max() <= 1


def test_the_folder_holds_what_its_readme_says():
    found = sorted(os.path.relpath(os.path.join(folder, name), HERE)
                   for folder, _, names in os.walk(HERE) for name in names
                   if not os.path.relpath(folder, HERE).startswith("from_blender"))   # the Blender export's (its README)
    bodies = [f"TRBS{n}.oni.xz" for n in ("char0_edited", "made")]
    small = [f"{tag}{n}.oni" for tag in ("ONCC", "TRMA") for n in ("char0_edited", "made")]
    assert found == sorted(["README.md"] + [f"{folder}/{f}" for folder in ("ours", "created") for f in bodies + small]
                           + [f"chardae/{n}.dae.xz" for n in ("char0_edited", "made")]
                           + ["xml/ONCCchar0.xml", "xml/TRBSchar0_edited_TRCM1.dae.xz", "xml/TRBSmade_TRCM1.dae.xz",
                              "xml/TRBSmade_TRCM138.dae.xz"]
                           + [f"xml/{tag}{n}.xml" for tag in ("ONCC", "TRBS", "TRMA") for n in ("char0_edited", "made")])
