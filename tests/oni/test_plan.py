"""What a file brings (oni/plan.py): the kinds each file holds, what bring() reads of them with
each choice, and a new kind read without touching anything else."""

import dataclasses
import os

import numpy as np
import objects_generate as gen
import pytest
from paths import DATA, EXAMPLES

from oban_import.core.errors import ObanError
from oban_import.oni import plan
from oban_import.oni.io.container.container import M3GM_TAG
from oban_import.oni.plan import Choices, Kind, bring, contents

CHARACTER_LEVEL = os.path.join(DATA, "characters", "level", "level3_Final.dat")


def example(name):
    return os.path.join(EXAMPLES, name)


@pytest.mark.parametrize("name, kinds", [
    ("00001-door_swing.OBAN", set()), ("OBANlift_pingpong.xml", set()), ("OBANcamera_flyby.oni", {"obans"}),
    ("level9_Final.dat", {"objects", "obans"}), ("M3GMobj03_part0.oni", {"mesh"}),
    ("TXMPtex03_rgba.oni", {"texture"}), ("ONCCchar0.oni", {"characters"}),
    ("TRBSchar0.oni", {"bodies", "character parts"}), ("TRACchar0.oni", {"character parts"}),
    ("TRAMchar0_walk00.oni", {"animations"}), ("op2_art.prt", set()), ("level9_Final.raw", set()),
])
def test_the_kinds_a_file_holds(name, kinds):
    assert contents(example(name)) == kinds


def test_a_tram_xml_holds_animations_and_an_oban_xml_nothing_but_obans(tmp_path):
    tram = os.path.join(DATA, "characters", "xml", "TRAMchar0_walk00.xml")
    assert contents(tram) == {"animations"}
    assert bring(tram).trams[0].name == "char0_walk00"
    oban_xml = bring(example("OBANlift_pingpong.xml"))   # a file of no kind brings its OBANs
    assert contents(example("OBANlift_pingpong.xml")) == set() and oban_xml.kinds == {"obans"} and oban_xml.obans


def summary(brought):
    return dict(
        level=None if brought.level is None else [o.name for o in brought.level.objects],
        loose_mesh=brought.loose_mesh, texture=brought.texture and brought.texture.name,
        characters=[(c.name, len(chosen)) for c, chosen in brought.characters], bare_body=brought.bare_body,
        trams=[t.name for t in brought.trams], parts_only=brought.parts_only, obans=brought.obans,
        level_obans=[a.name for a in brought.level_obans])


NOTHING = dict(level=None, loose_mesh=False, texture=None, characters=[], bare_body=False, trams=[],
               parts_only=False, obans=False, level_obans=[])
LEVEL9 = [f"object{i:02d}" for i in range(9)]


@pytest.mark.parametrize("name, choices, brought", [
    ("00001-door_swing.OBAN", Choices(), dict(obans=True)),
    ("OBANcamera_flyby.oni", Choices(), dict(obans=True)),
    ("level9_Final.dat", Choices(), dict(level=LEVEL9)),
    ("level9_Final.dat", Choices(objects=False), dict(obans=True)),
    ("level9_Final.dat", Choices(name_filter="OBJECT0[12]"), dict(level=["object01", "object02"])),
    ("M3GMobj03_part0.oni", Choices(), dict(level=["obj03_part0"], loose_mesh=True)),
    ("M3GMobj03_part0.oni", Choices(objects=False), {}),
    ("TXMPtex03_rgba.oni", Choices(), dict(texture="tex03_rgba")),
    ("TXMPtex03_rgba.oni", Choices(objects=False), {}),
    ("ONCCchar0.oni", Choices(), dict(characters=[("char0", 6)])),
    ("ONCCchar0.oni", Choices(animations="NONE"), dict(characters=[("char0", 0)])),
    ("ONCCchar0.oni", Choices(name_filter="*walk*", animations="MATCHING"), dict(characters=[("char0", 1)])),
    ("ONCCchar0.oni", Choices(name_filter="*walk*"), dict(characters=[("char0", 6)])),
    ("TRBSchar0.oni", Choices(), dict(characters=[("char0", 0)], bare_body=True)),
    ("TRACchar0.oni", Choices(), dict(parts_only=True)),
    ("TRAMchar0_walk00.oni", Choices(), dict(trams=["char0_walk00"])),
])
def test_what_a_file_brings(name, choices, brought):
    assert summary(bring(example(name), choices)) == NOTHING | brought


def test_a_level_of_characters_reads_each_character_once_and_no_tram_of_theirs_again():
    got = bring(CHARACTER_LEVEL)
    assert got.kinds == {"characters", "bodies", "character parts", "animations"}
    assert summary(got) == NOTHING | dict(characters=[("char0", 6)])


def test_a_levels_unused_obans_come_with_its_objects(tmp_path):
    scene, raws = gen.standard_scene(np.random.default_rng(3))
    path = gen.write_level(scene, raws, tmp_path)
    got = bring(str(path))
    assert [o.name for o in got.level.objects] == [o.name for o in scene.objects]
    assert [a.name for a in got.level_obans] == ["spare"] and not got.obans
    assert [a.name for a in bring(str(path), Choices(name_filter="sp*")).level_obans] == ["spare"]
    with pytest.raises(ObanError, match="holds no object or OBAN instance matching 'nothing'"):
        bring(str(path), Choices(name_filter="nothing"))


def test_a_new_kind_is_read_and_nothing_else_changes(monkeypatch):
    """A new format: its reader and its Kind. Here a second reading of loose meshes, by a
    reader that counts its calls, placed after the existing one."""
    read = []

    def count(brought, choices, library):
        read.append(brought.path)

    monkeypatch.setattr(plan, "KINDS", plan.KINDS + (Kind("counted", frozenset({M3GM_TAG}), count),))
    mesh = example("M3GMobj03_part0.oni")
    assert contents(mesh) == {"counted"}      # not alone any more: the loose mesh kind steps back
    assert summary(bring(mesh)) == NOTHING and read == [mesh]
    assert contents(example("level9_Final.dat")) == {"objects", "obans", "counted"}


def test_the_plan_names_each_kind_once_and_reads_placed_kinds_only_with_objects():
    names = [kind.name for kind in plan.KINDS]
    assert len(set(names)) == len(names)
    assert {k.name for k in plan.KINDS if k.placed} == {"objects", "mesh", "texture"}
    assert all(dataclasses.is_dataclass(k) for k in plan.KINDS)


def test_a_file_that_is_not_there_is_an_error_naming_it(tmp_path):
    missing = str(tmp_path / "nowhere.oni")
    with pytest.raises(ObanError, match="nowhere.oni: cannot be read"):
        bring(missing)


def test_a_file_is_opened_once_and_what_its_sources_share_is_read_once(monkeypatch):
    """A level holding characters: its TRAMs, reached by the characters' collections and read
    again as the file's own, each parsed once; the file opened once for all its sources."""
    from oban_import.oni.io.characters import read
    from oban_import.oni.io.container import library
    from oban_import.oni.io.trams import files
    parsed, opened = [], []
    real_parse, real_open = read.read_tram_instances, library.Library.__init__
    for module in (read, files):   # the characters' collections, and the file's own TRAMs
        monkeypatch.setattr(module, "read_tram_instances", lambda found: parsed.extend(found) or real_parse(found))
    monkeypatch.setattr(library.Library, "__init__", lambda self, path: opened.append(path) or real_open(self, path))
    brought = bring(CHARACTER_LEVEL)
    assert brought.characters and opened == [CHARACTER_LEVEL]
    trams = [(c.path, index) for c, index in parsed]
    assert len(trams) == len(set(trams)) == sum(len(c.animations) for c, _ in brought.characters) > 0
