"""oboa_xml: a level of placed objects alone as the OBOA XML OniSplit's plain -create makes its
OBOA of (docs/level.md 13). The sample's setups, read from the level or from OniSplit's loose
OBOA, write the XML of which OniSplit rebuilt that level byte for byte (tests/data/
objects_rebuilt/unedited); its values are the authored ones (tests/data/objects/expected.json)."""

import dataclasses
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.level_rebuild.oboa_xml import OBOA_FILE, oboa_xml, stored_setups
from oban_import.oni.io.objects.oboa import OBJECT_DTYPE, OBOA_OBJECTS_OFFSET

OBJECTS = os.path.join(DATA, "objects")
LEVEL9 = os.path.join(OBJECTS, "level", "level9_Final.dat")
REBUILT = os.path.join(DATA, "objects_rebuilt")


def expected():
    with open(os.path.join(OBJECTS, "expected.json")) as f:
        return json.load(f)["objects"]


def floats(text):
    return np.array(text.split(), np.float64).astype(np.float32)


@pytest.mark.parametrize("path", [LEVEL9, os.path.join(OBJECTS, "oni", "OBOAlevel9_objects.oni")])
def test_the_sample_writes_the_xml_onisplit_rebuilt_it_from(path):
    stored = stored_setups(path)
    assert stored.name == "level9_objects" and stored.particles == [False] * 9
    with open(os.path.join(REBUILT, "unedited", OBOA_FILE.format(stored.name)), encoding="utf-8") as f:
        assert oboa_xml(stored.setups) == f.read()


def test_the_xml_holds_the_authored_objects():
    root = ET.fromstring(oboa_xml(stored_setups(LEVEL9).setups))
    arrays = {array.get("id"): [link.text for link in array.iter("Link")] for array in root.iter("M3GA")}
    objects = root.findall("OBOA/Objects/OBOAObject")
    assert len(objects) == 9
    for element, authored in zip(objects, expected()):
        assert element.findtext("Name") == authored["name"]
        assert arrays[element.findtext("Geometry").lstrip("#")] == [f"M3GM{g['name']}" for g in authored["geometries"]]
        assert element.findtext("Animation") == (f"OBAN{authored['animation']}" if authored["animation"] else "")
        assert element.findtext("Flags") == "InUse" and element.findtext("ScriptId") == "65535"
        assert element.findtext("PhysicsType") == ("Static" if authored["role"] == "static" else "Animated")
        for tag, key in (("Position", "position"), ("Rotation", "rotation"), ("Transform", "origin")):
            assert np.array_equal(floats(element.findtext(tag)), np.float32(authored[key])), (authored["name"], tag)
        assert float(element.findtext("Scale")) == authored["scale"]


def test_flags_and_physics_without_a_name_are_numbers_and_names_are_escaped():
    setup = stored_setups(LEVEL9).setups[0]
    odd = dataclasses.replace(setup, flags=0x200 | 0x1000 | 0x4000, physics=7, name="a & <b>", script_id=-5,
                              door_id=4099)
    unused = dataclasses.replace(setup, flags=0, geometries=[], animation="")
    root = ET.fromstring(oboa_xml([odd, unused]))
    first, second = root.findall("OBOA/Objects/OBOAObject")
    assert (first.findtext("Flags"), first.findtext("PhysicsType")) == (str(0x5200), "7")
    assert (first.findtext("Name"), first.findtext("ScriptId"), first.findtext("DoorId")) == ("a & <b>", "-5", "4099")
    assert (second.findtext("Flags"), second.findtext("Geometry")) == ("None", "")
    assert len(root.findall("M3GA")) == 1


def test_a_level_without_a_named_oboa_is_refused():
    with pytest.raises(ObanError, match="holds 0 named object setup arrays"):
        stored_setups(os.path.join(DATA, "environment", "level", "level5_Final.dat"))


def oboa_with(tmp_path, edits: dict) -> str:
    """OniSplit's loose OBOA of the sample, setup 3's bytes {at: value} (of its record) set."""
    source = os.path.join(OBJECTS, "oni", "OBOAlevel9_objects.oni")
    data = bytearray(open(source, "rb").read())
    with open_library(source) as library:
        start = library.main.record(0)[1] + 8 + OBOA_OBJECTS_OFFSET + 3 * OBJECT_DTYPE.itemsize
    for at, value in edits.items():
        data[start + at] = value
    path = tmp_path / "OBOAlevel9_objects.oni"
    path.write_bytes(data)
    return str(path)


NAME_AT, PADDING_AT = OBJECT_DTYPE.fields["name"][1], OBJECT_DTYPE.fields["padding"][1]
WHOLE_NAME = dict(enumerate(b"N" * 64, NAME_AT))       # a name filling its field, no NUL


@pytest.mark.parametrize("edits, name", [
    ({NAME_AT + len("object03") + 1: 0x41}, "object03"),         # past the name's NUL
    ({PADDING_AT: 0x41}, "object03"),
    ({OBJECT_DTYPE.itemsize - 1: 0x41}, "object03"),
    ({**WHOLE_NAME, PADDING_AT: 0x41}, "N" * 64),
])
def test_a_byte_past_a_name_the_xml_cannot_carry_is_refused(tmp_path, edits, name):
    """The XML holds a setup's name as text and writes the 64 bytes after it 0 (OniSplit's
    XmlImporter: String64, then Padding(64)): a byte not 0 past the name's end is refused, naming
    the setup; a name filling its field has no end in it, and the 64 after it are checked all
    the same."""
    with pytest.raises(ObanError, match=r"OBOAlevel9_objects\.oni: instance 0 \(OBOAlevel9_objects\) object 3 "
                                        rf"\('{name}'\): a byte past its name is not 0 "):
        stored_setups(oboa_with(tmp_path, edits))
    cleared = {**edits, list(edits)[-1]: 0}                      # the last edit the byte refused
    assert stored_setups(oboa_with(tmp_path, cleared)).setups[3].name == name


@pytest.mark.parametrize("count", [65535, 65536])
def test_more_setups_than_an_oboa_counts_are_refused(count):
    """OniSplit's XmlImporter reads at most 65,535 elements of an array counted in 16 bits (an
    OBOA's setups) and fails on the next: 65,535 are written, 65,536 refused."""
    setups = [stored_setups(LEVEL9).setups[0]] * count
    if count > 0xFFFF:
        with pytest.raises(ObanError, match="^OBOA: 65536 object setups: an OBOA counts at most 65535$"):
            oboa_xml(setups)
        return
    assert oboa_xml(setups).count("<OBOAObject>") == count
