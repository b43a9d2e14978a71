"""The character readers (docs/characters.md 1, 5, 8): ONCC -> TRBS -> TRCM (TRGA, TRTA, TRIA),
TRMA and the TRAC chain, from loose .oni files and from a level .dat + .raw.

Against OniSplit's own files (tests/data/characters): the body's parts, parents and
translations equal the manifest's, TRAC gives the six animations, the level gives what the
loose files give; the generator's ONCC, TRMA, TRAC files and body instances equal OniSplit's
byte for byte. Against generated characters of every case, and one test per bad input.
"""

import json
import os
import shutil
import struct

import characters_generate as cg
import numpy as np
import pytest
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.core.files import open_regular
from oban_import.oni.io.characters.read import counted_items, read_character, read_characters
from oban_import.oni.io.container.container import TRAC_TAG, TRMA_TAG, Container
from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.tram import PART_NAMES

DATA = os.path.join(TEST_DATA, "characters")
ONI = os.path.join(DATA, "oni")
LEVEL = os.path.join(DATA, "level", "level3_Final.dat")
MANIFEST = json.load(open(os.path.join(DATA, "manifest.json")))
BODY = MANIFEST["bodies"][0]


def open_container(path):
    f, size = open_regular(path)
    return Container(f, path, size)


def sample_instances(name):
    """{full name or tag#n: instance data} of a sample .oni."""
    c = open_container(os.path.join(ONI, name))
    found = {}
    for i in range(len(c.descriptors)):
        if not c.is_placeholder(i):
            tag = bytes(c.descriptors[i]["tag"])
            found[c.full_name(i) or f"{tag[::-1].decode()}#{i}"] = c.instance(i, tag)[0]
    c.f.close()
    return found


@pytest.fixture(scope="module")
def sample():
    return read_character(os.path.join(ONI, "ONCCchar0.oni"))


# --- OniSplit's files ---------------------------------------------------------------------------

def test_sample_body_equals_the_manifest(sample):
    body = sample.body
    assert (sample.name, body.name, sample.warnings) == ("char0", "char0", [])
    assert [part.name for part in body.parts] == list(PART_NAMES)
    assert body.parents.tolist() == BODY["parent"] and body.parents.dtype == np.int64
    assert np.array_equal(body.translations, np.array(BODY["trta"], np.float32).astype(np.float64))
    assert body.translations.dtype == np.float64 and body.translations.shape == (19, 3)


def test_sample_parts_take_their_textures_from_trma(sample):
    c = open_container(os.path.join(ONI, "TRMAchar0.oni"))
    names = [c.full_name(int(link) >> 8)[4:] for link in counted_items(c, 0, TRMA_TAG)]
    c.f.close()
    parts = sample.body.parts
    assert [part.mesh.texture_name for part in parts] == names and set(names) == set(BODY["textures"])
    assert all(part.mesh.texture.name == name and part.mesh.texture.pixels.shape == (8, 8, 4)
               for part, name in zip(parts, names))
    assert all(len(part.mesh.triangles) and part.mesh.points.shape[1] == 3 for part in parts)


def test_sample_trac_gives_the_six_animations(sample):
    assert ["TRAM" + t.name for t in sample.animations] == [a["name"] for a in MANIFEST["animations"]]
    assert [t.name for t in sample.animations] == BODY["animations"]
    for tram in sample.animations:
        alone = read_tram_file(os.path.join(ONI, f"TRAM{tram.name}.oni"))
        assert cg.tram_differences(tram, alone) == []


def test_sample_level_gives_the_loose_character(sample):
    packed, = read_characters(LEVEL)
    assert_same_character(packed, sample)
    assert_same_character(read_character(LEVEL), sample)


def assert_same_character(a, b):
    """The same character; the same number of warnings (they name the files they looked beside)."""
    assert (a.name, a.body.name, len(a.warnings)) == (b.name, b.body.name, len(b.warnings))
    assert np.array_equal(a.body.parents, b.body.parents) and np.array_equal(a.body.translations, b.body.translations)
    for p, q in zip(a.body.parts, b.body.parts, strict=True):
        assert (p.mesh is None) == (q.mesh is None)
        if p.mesh is not None:
            assert np.array_equal(p.mesh.points, q.mesh.points) and np.array_equal(p.mesh.triangles, q.mesh.triangles)
            assert p.mesh.texture_name == q.mesh.texture_name
            assert (p.mesh.texture is None) == (q.mesh.texture is None)
            assert p.mesh.texture is None or p.mesh.texture.raw == q.mesh.texture.raw
    assert [t.name for t in a.animations] == [t.name for t in b.animations]
    assert all(cg.tram_differences(s, t) == [] for s, t in zip(a.animations, b.animations))


def test_sample_bare_body(sample):
    bare = read_character(os.path.join(ONI, "TRBSchar0.oni"))
    assert (bare.name, bare.animations, bare.warnings) == ("char0", [], [])
    assert np.array_equal(bare.body.parents, sample.body.parents)
    assert all(part.mesh.texture is None and part.mesh.texture_name == "" for part in bare.body.parts)


def sample_scene(with_meshes=True):
    """The samples' character as a generator scene (names, links, weights and body as OniSplit made them)."""
    c = open_container(os.path.join(ONI, "TRACchar0.oni"))
    entries = counted_items(c, 0, TRAC_TAG)
    c.f.close()
    scene = cg.CharacterScene()
    trma = [part.mesh.texture_name for part in read_character(os.path.join(ONI, "ONCCchar0.oni")).body.parts]
    scene.characters["char0"] = cg.GenCharacter("char0", "char0", trma, "char0", health=100)
    scene.collections["char0"] = cg.GenCollection("char0", BODY["animations"], entries["weight"].tolist())
    rng = np.random.default_rng(0)
    scene.meshes = {f"m{p}": cg.gen.random_mesh(rng, f"m{p}") for p in range(19)}
    scene.bodies["char0"] = cg.GenBody("char0", tuple(BODY["parent"]), np.array(BODY["trta"], np.float32),
                                       list(scene.meshes))
    return scene


@pytest.mark.parametrize("name", ["ONCCchar0", "TRMAchar0", "TRACchar0"])
def test_generator_writes_onisplit_bytes(name):
    assert cg.loose_file_bytes(sample_scene(), name) == open(os.path.join(ONI, name + ".oni"), "rb").read()


def test_generator_writes_onisplit_body_instances(tmp_path):
    path = tmp_path / "TRBSchar0.oni"
    path.write_bytes(cg.loose_file_bytes(sample_scene(), "TRBSchar0"))
    ours, theirs = sample_instances(str(path)), sample_instances("TRBSchar0.oni")
    body = ("TRBSchar0", "TRCM#1", "TRGA#2", "TRTA#3", "TRIA#4")
    assert all(ours[key] == theirs[key] for key in body)
    assert sorted(ours) == sorted(theirs)


# --- generated ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scene():
    return cg.standard_scene(np.random.default_rng(11), missing_texture=True)


@pytest.fixture(scope="module")
def written(scene, tmp_path_factory):
    folder = tmp_path_factory.mktemp("characters")
    return cg.write_loose(scene, str(folder / "oni")), cg.write_level(scene, str(folder / "level"))


def expected_animations(scene, collection):
    found = []
    while collection:
        c = scene.collections[collection]
        found += [n for n in c.animations if n not in found]
        collection = c.parent
    return found


@pytest.mark.parametrize("layout", ["loose", "level"])
def test_generated_characters(scene, written, layout):
    characters = ([read_character(os.path.join(written[0], f"ONCC{n}.oni")) for n in scene.characters]
                  if layout == "loose" else read_characters(written[1]))
    assert [ch.name for ch in characters] == list(scene.characters)
    for ch in characters:
        generated = scene.characters[ch.name]
        body = scene.bodies[generated.body]
        assert ch.body.parents.tolist() == [-1, *body.parents[1:]]
        assert np.array_equal(ch.body.translations, body.translations.astype(np.float64))
        for part, mesh_name, texture in zip(ch.body.parts, body.meshes, cg.texture_names(scene, ch.name)):
            assert np.array_equal(part.mesh.points, scene.meshes[mesh_name].points)
            assert part.mesh.texture_name == (texture or "")
            assert (part.mesh.texture is None) == (texture in (None, "nowhere"))
            assert part.mesh.texture is None or part.mesh.texture.raw == scene.textures[texture].raw
        assert [t.name for t in ch.animations] == expected_animations(scene, generated.collection)
        assert all(cg.tram_differences(t, scene.trams[t.name]) == [] for t in ch.animations)
    hero, villain = characters
    assert len(hero.warnings) == 1 and "TXMPnowhere not found" in hero.warnings[0] and villain.warnings == []
    assert hero.body.parts[10].mesh.texture_name == "cloth"     # its M3GM's own texture, not TRMA's face
    shared = {id(t) for t in hero.animations} & {id(t) for t in villain.animations}
    assert len(shared) == (4 if layout == "level" else 0)   # one read builds each animation once


def test_generated_level_and_loose_give_the_same(scene, written):
    for packed in read_characters(written[1]):
        assert_same_character(packed, read_character(os.path.join(written[0], f"ONCC{packed.name}.oni")))


def test_generated_bare_body_with_sibling_lists(written):
    bare = read_character(os.path.join(written[0], "TRBSsmall.oni"))
    assert bare.body.parents.tolist() == [-1, 0, 0, 0, 1, 1, 3] and bare.body.parts[5].mesh is None
    assert [part.name for part in bare.body.parts] == list(PART_NAMES[:7])


def test_the_tree_items_are_onisplits():
    assert cg.tria_items(cg.BIPED_PARENTS)[:3] == [(0, 1, 0, 0), (0, 2, 4, 0), (1, 3, 0, 0)]


# --- bad input (docs/bad_input.md) ---------------------------------------------------------------

@pytest.fixture
def loose(tmp_path):
    """A fresh copy of the generated loose files (without the missing texture's warning)."""
    folder = tmp_path / "oni"
    cg.write_loose(cg.standard_scene(np.random.default_rng(11)), str(folder))
    return folder


def patch(path, tag, offset, data, n=0):
    """Writes `data` at `offset` of the n-th `tag` instance's data in the .oni at `path`."""
    c = open_container(str(path))
    index = int([i for i in c.indices(tag) if not c.is_placeholder(int(i))][n])
    at = c.record(index)[1] + 8 + offset
    c.f.close()
    content = bytearray(path.read_bytes())
    content[at:at + len(data)] = data
    path.write_bytes(bytes(content))


def refused(path, *fragments):
    with pytest.raises(ObanError) as error:
        read_character(str(path))
    for fragment in fragments:
        assert fragment in str(error.value)
    return str(error.value)


def test_a_missing_texture_is_a_warning(tmp_path):
    scene = cg.standard_scene(np.random.default_rng(11), missing_texture=True)
    folder = cg.write_loose(scene, str(tmp_path))
    hero = read_character(os.path.join(folder, "ONCChero.oni"))
    part = hero.body.parts[3]
    assert part.mesh.texture is None and part.mesh.texture_name == "nowhere"
    assert hero.warnings == ["TXMPnowhere not found (TXMPnowhere.oni beside TRMAhero.oni does not hold it): "
                             "imported without it"]


def test_a_missing_animation_is_a_warning(loose):
    os.remove(loose / "TRAMwrap.oni")
    hero = read_character(str(loose / "ONCChero.oni"))
    assert "wrap" not in [t.name for t in hero.animations] and len(hero.animations) == 7
    assert any("TRAMwrap not found" in w for w in hero.warnings)


def test_a_missing_body_is_refused_with_where_to_put_it(loose):
    os.remove(loose / "TRBSbiped.oni")
    refused(loose / "ONCChero.oni", "body set TRBSbiped is not found: put TRBSbiped.oni beside ONCChero.oni")


def test_a_loop_of_collections(tmp_path):
    scene = cg.standard_scene(np.random.default_rng(11))
    scene.collections["common"].parent = "hero"
    folder = cg.write_loose(scene, str(tmp_path))
    refused(os.path.join(folder, "ONCChero.oni"), "TRAChero", "chain of parent collections loops back")
    scene.collections["common"].parent = "common"
    refused(cg.write_level(scene, str(tmp_path / "level")), "TRACcommon", "loops back to it")


def test_a_tram_for_another_body(tmp_path):
    scene = cg.standard_scene(np.random.default_rng(11))
    scene.collections["common"].animations.append("seven")
    scene.collections["common"].weights.append(1)
    folder = cg.write_loose(scene, str(tmp_path))
    message = refused(os.path.join(folder, "ONCChero.oni"), "TRAMseven", "7 parts, its character's body has 19")
    assert message.startswith(os.path.join(folder, "TRAMseven.oni"))


@pytest.mark.parametrize("part,item,fragment", [
    (0, (0, 1, 4, 0), "part 0 (the root) has a sibling, part 4"),
    (2, (1, 30, 0, 0), "part 2's children reach part 30, past the 19 parts"),
    (3, (2, 1, 0, 0), "part 1 is reached twice (not a tree)"),
    (6, (5, 0, 6, 0), "part 6 is reached twice"),
    (7, (0, 8, 0, 0), "part 7 is not reached from part 0"),
])
def test_a_hierarchy_that_is_not_a_tree(loose, part, item, fragment):
    if part == 7:   # cut part 7 from the root's list: part 4's next sibling
        part, item = 4, (0, 5, 0, 0)
    patch(loose / "TRBSbiped.oni", b"AIRT", 0x18 + 4 * part, bytes(item))
    message = refused(loose / "ONCChero.oni", fragment)
    assert "TRBSbiped.oni" in message and "TRIA" in message


@pytest.mark.parametrize("tag,name", [(b"AGRT", "TRGA"), (b"ATRT", "TRTA"), (b"AIRT", "TRIA")])
def test_a_body_array_count_differs_from_the_parts(loose, tag, name):
    patch(loose / "TRBSbiped.oni", tag, 0x16, struct.pack("<H", 18))
    refused(loose / "ONCChero.oni", f"unnamed {name}): 18 items for the 19 parts")


def test_a_texture_count_differs_from_the_parts(loose):
    patch(loose / "TRMAhero.oni", b"AMRT", 0x16, struct.pack("<H", 17))
    refused(loose / "ONCChero.oni", "TRMAhero): 17 textures for the 19 parts")


@pytest.mark.parametrize("tag,offset,fragment", [
    (b"AGRT", 0x16, "TRGA): count says 65535 but only 19 fit"),
    (b"AMRT", 0x16, "TRMAhero): count says 65535 but only 19 fit"),
    (b"CART", 0x16, "TRAChero): count says 65535"),
])
def test_a_count_beyond_its_instance(loose, tag, offset, fragment):
    patch(loose / ("TRMAhero.oni" if tag == b"AMRT" else "TRAChero.oni" if tag == b"CART" else "TRBSbiped.oni"),
          tag, offset, b"\xff\xff")
    refused(loose / "ONCChero.oni", fragment)


@pytest.mark.parametrize("offset,value,fragment", [
    (0xC34, 0x201, "body set link points to instance 2 (TRMAhero), not a TRBS"),
    (0xC38, 0x101, "body textures link points to instance 1 (TRBSbiped), not a TRMA"),
    (0xC80, 0x101, "animation collection link points to instance 1 (TRBSbiped), not a TRAC"),
    (0xC34, 0x901, "body set link 0x00000901 points outside"),
    (0xC34, 0, "no body set (link 0)"),
])
def test_oncc_links(loose, offset, value, fragment):
    patch(loose / "ONCChero.oni", b"CCNO", offset, struct.pack("<I", value))
    refused(loose / "ONCChero.oni", "ONCChero", fragment)


def test_links_to_the_wrong_tag_inside_the_body(loose):
    patch(loose / "TRBSbiped.oni", b"MCRT", 0x54, struct.pack("<I", 0x301))   # TRGA link -> the TRTA
    refused(loose / "ONCChero.oni", "geometry link points to instance 3 (unnamed TRTA), not a TRGA")
    patch(loose / "TRBSbiped.oni", b"MCRT", 0x54, struct.pack("<I", 0x201))
    patch(loose / "TRBSbiped.oni", b"AGRT", 0x18, struct.pack("<I", 0x301))   # part 0's mesh -> the TRTA
    refused(loose / "ONCChero.oni", "part 0 geometry link points to instance 3 (unnamed TRTA), not a M3GM")
    patch(loose / "TRBSbiped.oni", b"AGRT", 0x18, struct.pack("<I", 0x501))
    patch(loose / "TRAChero.oni", b"CART", 0x18 + 8, struct.pack("<I", 0x001))   # an entry -> the TRAC itself
    refused(loose / "ONCChero.oni", "animation 0 link points to instance 0 (TRAChero), not a TRAM")


def test_the_body_set_without_its_last_level(loose):
    patch(loose / "TRBSbiped.oni", b"SBRT", 16, bytes(4))
    refused(loose / "ONCChero.oni", "TRBSbiped): no level of detail 4 (TRCM) (link 0)")


@pytest.mark.parametrize("parts", [0, 33])
def test_a_part_count_out_of_range(loose, parts):
    patch(loose / "TRBSbiped.oni", b"MCRT", 4, struct.pack("<H", parts))
    refused(loose / "ONCChero.oni", f"{parts} parts (1 to 32 can be animated)")


def test_a_non_finite_translation(loose):
    patch(loose / "TRBSbiped.oni", b"ATRT", 0x18 + 12 * 5 + 4, struct.pack("<f", float("inf")))
    refused(loose / "ONCChero.oni", "TRTA): non-finite translation")


MAX_SQUARE = float(np.finfo(np.float32).max)   # the square of a length the import keeps, at most


def reaches(translations, parents):
    """Each part's translations from the root added up as lengths, part by part up the tree."""
    found = []
    for part in range(len(parents)):
        total, at = 0.0, part
        while at >= 0:
            total += sum(float(c) ** 2 for c in translations[at]) ** 0.5
            at = parents[at]
        found.append(total)
    return found


def with_translations(loose, changes):
    """The generated body's translations, `changes` ({part: (x, y, z)}) written into its TRTA."""
    translations = cg.standard_scene(np.random.default_rng(11)).bodies["biped"].translations.copy()
    for part, value in changes.items():
        translations[part] = value
        patch(loose / "TRBSbiped.oni", b"ATRT", 0x18 + 12 * part, np.array(value, np.float32).tobytes())
    return translations


@pytest.mark.parametrize("changes", [
    {3: (3.4e38, 0, 0)},                                  # the damaged file: one translation
    {1: (1e19, 0, 0), 2: (0, -1e19, 0)},                  # each within, added up beyond
    {11: (1.1e19, -1.1e19, 1.1e19)},                      # one, its components each within
], ids=["3.4e38", "two of 1e19", "components of 1.1e19"])
def test_translations_whose_square_leaves_float32(loose, changes):
    """A part that some pose would take farther from the root than a length whose square
    float32 holds (Blender finds a bone's length through its square) is refused."""
    translations = with_translations(loose, changes)
    far = [(part, reach) for part, reach in enumerate(reaches(translations, cg.BIPED_PARENTS))
           if reach * reach > MAX_SQUARE]
    part, reach = far[0]
    assert refused(loose / "ONCChero.oni") == (
        f"{loose / 'TRBSbiped.oni'}: instance 3 (unnamed TRTA): part {part}'s translations from the root add up to "
        f"{reach:.3g} units, a length whose square leaves float32's range")


def test_translations_within_float32_are_read(loose):
    translations = with_translations(loose, {1: (1.2e19, 0, 0), 2: (0, 0, -6e18)})
    assert max(reaches(translations, cg.BIPED_PARENTS)) ** 2 <= MAX_SQUARE
    body = read_character(str(loose / "ONCChero.oni")).body
    assert np.array_equal(body.translations, translations.astype(np.float64))


def test_a_part_before_its_parent(tmp_path):
    """The engine walks the tree in any order; the import poses parts in order, parents first."""
    scene = cg.standard_scene(np.random.default_rng(11))
    parents = list(scene.bodies["biped"].parents)
    parents[1], parents[2], parents[3] = 2, 0, 1          # the thigh under the calf, the foot under the thigh
    scene.bodies["biped"].parents = tuple(parents)
    folder = cg.write_loose(scene, str(tmp_path))
    assert refused(os.path.join(folder, "ONCChero.oni")) == (
        f"{os.path.join(folder, 'TRBSbiped.oni')}: instance 4 (unnamed TRIA): part 1 comes before its parent, part 2 "
        f"(the import needs each part after its parent, as every known body has them)")


def test_short_instances(tmp_path):
    for name, fragment in (("ONCChero.oni", "ONCChero): 3000 bytes, too short for an ONCC"),
                           ("TRBSbiped.oni", "TRCM): 80 bytes, too short for a TRCM")):
        folder = tmp_path / name
        cg.write_loose(cg.standard_scene(np.random.default_rng(11)), str(folder))
        path = folder / name
        tag = b"CCNO" if name.startswith("ONCC") else b"MCRT"
        c = open_container(str(path))
        index = int(c.indices(tag)[0])
        c.f.close()
        content = bytearray(path.read_bytes())
        struct.pack_into("<I", content, 64 + 20 * index + 12, 8 + (3000 if tag == b"CCNO" else 80))
        path.write_bytes(bytes(content))
        refused(folder / "ONCChero.oni", fragment)


def test_a_file_without_a_character(tmp_path):
    with pytest.raises(ObanError, match="holds no character class"):
        read_character(os.path.join(ONI, "TRAMchar0_walk00.oni"))
    with pytest.raises(ObanError, match=r"holds no character class \(ONCC\)"):
        read_characters(os.path.join(ONI, "TRBSchar0.oni"))


def test_a_sample_folder_without_its_textures(tmp_path):
    for name in os.listdir(ONI):
        if not name.startswith("TXMP"):
            shutil.copy(os.path.join(ONI, name), tmp_path / name)
    character = read_character(str(tmp_path / "ONCCchar0.oni"))
    assert all(part.mesh.texture is None and part.mesh.texture_name for part in character.body.parts)
    assert len(character.warnings) == 3 and all("imported without it" in w for w in character.warnings)
