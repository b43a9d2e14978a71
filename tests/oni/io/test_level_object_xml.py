"""The objects other than doors and furniture as OniSplit's object XML (object_xml.py,
docs/level.md 11), against OniSplit v0.9.99.2 itself (tests/data/objects_xml; its README has
every command): for every object of its twelve lists (`oni/`, made by `-create` from the
authored `src/`), osd_xml's element holds the values OniSplit's own `-extract:xml` (`xml/`)
wrote, compared here with xml.etree alone; the lists written from the payloads are the golden
files (`golden/`) OniSplit turned back into byte-identical `.oni` files; and bad payloads of
every type are refused with an ObanError naming the object, nothing else raised."""

import functools
import os
import random
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import BINA_TAG, Container
from oban_import.oni.io.level_rebuild.object_xml import OSD_TYPES, level_given, osd_xml

DATA = os.path.join(TEST_DATA, "objects_xml")
LISTS = ("Character", "Console", "Flag", "Neutral", "Particle", "Patrol_Path", "PowerUp", "Sound", "Trigger",
         "Trigger_Volume", "Turret", "Weapon")
KINDS = {"Character": "CHAR", "Console": "CONS", "Flag": "FLAG", "Neutral": "NEUT", "Particle": "PART",
         "Patrol_Path": "PATR", "PowerUp": "PWRU", "Sound": "SNDG", "Trigger": "TRIG", "Trigger_Volume": "TRGV",
         "Turret": "TURR", "Weapon": "WEAP"}
HEADER_FLAGS = {"Locked": 0x1, "PlacedInGame": 0x2, "Temporary": 0x4, "Gunk": 0x8}   # as rebuild.py _header names them
# Where osd_xml names an element as -create:level reads it and -extract:xml names it otherwise
RENAMED = {("FLAG", "Notes"): "Note", ("CONS", "TriggeredTexture"): "TrigerredTexture"}
FLAG_ELEMENTS = {"Flags", "TargetedTeams", "Other"}   # names of set bits: compared as sets
INTEGER = re.compile(r"-?\d+$")
LABEL = "object 7"


@functools.lru_cache(maxsize=None)
def stored(name):
    """Each object of BINACJBO<name>.oni: (type, flags, position, rotation, payload), walked
    here by the sizes (docs/level.md 1), independent of the reader."""
    path = os.path.join(DATA, "oni", f"BINACJBO{name}.oni")
    with open(path, "rb") as f:
        c = Container(f, path, os.path.getsize(path))
        data, _ = c.instance(c.with_data(BINA_TAG)[0], BINA_TAG)
        size, offset = (int(v) for v in np.frombuffer(data, "<u4", 2))
        raw = c.raw(offset, size, "the list")
    objects, at = [], 12
    while n := int.from_bytes(raw[at:at + 4], "little"):
        item = raw[at + 4:at + 4 + n]
        objects.append((item[3::-1].decode(), int.from_bytes(item[8:12], "little"),
                        np.frombuffer(item, "<f4", 3, 12), np.frombuffer(item, "<f4", 3, 24), item[0x24:]))
        at += 4 + n
    return objects


def header(flags, position, rotation) -> str:
    """The object's header as rebuild.py's _header writes it."""
    names = str(flags) if flags & ~sum(HEADER_FLAGS.values()) else \
        " ".join(name for name, bit in HEADER_FLAGS.items() if flags & bit)
    position, rotation = (" ".join(map(repr, np.asarray(v, np.float32).astype(np.float64).tolist()))
                          for v in (position, rotation))
    return f"<Header><Flags>{names}</Flags><Position>{position}</Position><Rotation>{rotation}</Rotation></Header>"


def list_xml(name) -> str:
    """The object list written from the stored payloads, each object named by its type."""
    items = "".join(f"<{kind}>{header(flags, position, rotation)}{osd_xml(kind, payload, name, f'object {k}')}</{kind}>"
                    for k, (kind, flags, position, rotation, payload) in enumerate(stored(name)))
    return f'<?xml version="1.0" encoding="utf-8"?>\n<Oni><Objects>{items}</Objects></Oni>\n'


def leaves(element, kind, path=()):
    """(path of element names, attributes, text) of each element without children and of each
    attribute-holding element, in document order; -extract:xml's names renamed as osd_xml's."""
    found = []
    for child in element:
        tag = RENAMED.get((kind, child.tag), child.tag)
        if len(child) == 0 or child.attrib:
            found.append((path + (tag,), dict(child.attrib), (child.text or "") if len(child) == 0 else ""))
        found += leaves(child, kind, path + (tag,))
    return found


def same_value(mine: str, theirs: str, tag: str) -> bool:
    """Equal as OniSplit reads them: text exactly (-extract:xml writes a CR LF as LF), numbers
    token by token (integers exactly, others as float32 bits), flags as sets of names."""
    if mine.replace("\r\n", "\n") == theirs.replace("\r\n", "\n"):
        return True
    a, b = mine.split(), theirs.split()
    if tag in FLAG_ELEMENTS and not any(INTEGER.match(t) for t in a + b):
        return set(a) == set(b)
    if len(a) != len(b):
        return False
    try:
        return all(int(x) == int(y) if INTEGER.match(x) and INTEGER.match(y) else
                   np.float32(float(x)).view(np.uint32) == np.float32(float(y)).view(np.uint32) for x, y in zip(a, b))
    except ValueError:
        return False


@pytest.mark.parametrize("name", LISTS)
def test_every_field_is_the_value_onisplit_extracts(name):
    extracted = ET.parse(os.path.join(DATA, "xml", f"BINACJBO{name}.xml")).getroot().find("Objects")
    objects = stored(name)
    assert len(extracted) == len(objects) >= 3
    for k, (theirs, (kind, _, _, _, payload)) in enumerate(zip(extracted, objects)):
        assert theirs.tag == kind == KINDS[name]
        mine = ET.fromstring(osd_xml(kind, payload, name, f"object {k}"))
        a, b = leaves(mine, kind), leaves(theirs.find("OSD"), kind)
        assert [path for path, _, _ in a] == [path for path, _, _ in b], (name, k)
        for (path, mine_attributes, mine_text), (_, their_attributes, their_text) in zip(a, b):
            assert same_value(mine_text, their_text, path[-1]), (name, k, path, mine_text, their_text)
            assert mine_attributes.keys() == their_attributes.keys(), (name, k, path)
            assert all(same_value(mine_attributes[key], their_attributes[key], key) for key in mine_attributes), \
                (name, k, path, mine_attributes, their_attributes)


@pytest.mark.parametrize("name", LISTS)
def test_the_lists_written_are_the_golden_files_onisplit_rebuilt_byte_for_byte(name):
    with open(os.path.join(DATA, "golden", f"BINACJBO{name}.xml"), encoding="utf-8", newline="") as f:
        declaration, comment, body = f.read().split("\n", 2)
    assert comment.startswith("<!-- Verified:") and "cmp" in comment
    assert f"{declaration}\n{body}" == list_xml(name)


def test_every_type_is_in_the_samples():
    assert sorted(KINDS.values()) == sorted(OSD_TYPES)
    assert {kind for name in LISTS for kind, *_ in stored(name)} == set(OSD_TYPES)


def refused(kind, payload, *words):
    """osd_xml refuses the payload with an ObanError naming the file, the label and `words`."""
    with pytest.raises(ObanError) as error:
        osd_xml(kind, payload, "list.oni", LABEL)
    message = str(error.value)
    assert message.startswith(f"list.oni: {LABEL}: {kind}: "), message
    assert all(word in message for word in words), message
    return message


def payloads():
    return [(kind, payload) for name in LISTS for kind, *_, payload in stored(name)]


@pytest.mark.parametrize("name", LISTS)
def test_a_truncated_payload_is_refused(name):
    for kind, *_, payload in stored(name):
        for cut in sorted({0, 1, 3, 4, len(payload) // 2, len(payload) - 4, len(payload) - 1} - {len(payload)}):
            refused(kind, payload[:max(cut, 0)])


@pytest.mark.parametrize(("kind", "at", "size", "what"), [
    ("CONS", 0x100, 2, "events"), ("TRIG", 0x55, 2, "events"), ("NEUT", 0x22, 2, "dialog lines"),
    ("PATR", 0x20, 4, "path points")])
def test_a_count_past_the_payload_is_refused_before_anything_is_made_of_it(kind, at, size, what):
    payload = next(p for k, p in payloads() if k == kind)
    for count in (2 ** (8 * size) - 1, len(payload)):
        refused(kind, payload[:at] + count.to_bytes(size, "little") + payload[at + size:], what, "cannot fit")


def patrol(*points: bytes, count=None) -> bytes:
    """A patrol path's OSD: a name, the point count, ids 1 and 0, the points (u32 type, values), padded."""
    data = b"path".ljust(32, b"\0") + (len(points) if count is None else count).to_bytes(4, "little") \
        + b"\1\0\0\0" + b"".join(points)
    return data + bytes(-len(data) % 4)


def point(kind: int, values: bytes = b"") -> bytes:
    return kind.to_bytes(4, "little") + values


def weapon(name: bytes) -> bytes:
    return name.ljust(32, b"\0")


def test_bad_strings_are_refused():
    refused("WEAP", weapon(b"w1\0tap"), "Class", "after the NUL")
    refused("WEAP", weapon(b"w1_\xff"), "Class", "not UTF-8")
    refused("WEAP", weapon(b"w1_\xc3"), "Class", "not UTF-8")              # a character cut by the field's end
    refused("WEAP", weapon(b"w1\x01"), "Class", "0x01", "XML cannot carry")
    refused("WEAP", weapon(b"   "), "Class", "white space")
    assert osd_xml("WEAP", weapon(b" w\t1\r\n"), "list.oni", LABEL) == "<OSD><Class> w\t1&#13;\n</Class></OSD>"


def test_an_event_type_onisplit_cannot_name_is_refused():
    payload = next(p for k, p in payloads() if k == "CONS")
    refused("CONS", payload[:0x102] + b"\x0c\0" + payload[0x104:], "event 0", "type 12")


def test_a_script_of_white_space_is_carried_as_an_attribute():
    payload = next(p for k, p in payloads() if k == "TRIG")
    events = b"\1\0" + b"\1\0" + b"  ".ljust(32, b"\0")
    text = osd_xml("TRIG", payload[:0x55] + events + bytes(-(0x55 + len(events)) % 4), "list.oni", LABEL)
    assert text.endswith('<Events><Script Function="  " /></Events></OSD>')


def test_path_points_onisplit_cannot_write_are_refused():
    refused("PATR", patrol(point(24)), "path point 0", "type 24")
    refused("PATR", patrol(point(1), point(6), point(1)), "path point 1", "only as the last point")
    refused("PATR", patrol(point(6), point(16, b"\0\0\0\0")), "only as the last point")
    refused("PATR", patrol(point(1), point(16, b"\0\0\0\0")), "loops from point 0")
    refused("PATR", patrol(point(1), point(16, b"\2\0\0\0")), "loops from point 2")
    refused("PATR", patrol(point(22, b"\2")), "IgnorePlayer", "is 2")
    refused("PATR", patrol(point(11)), "path point 0 of 1 lies past")
    assert osd_xml("PATR", patrol(point(1), point(16, b"\1\0\0\0")), "list.oni", LABEL).endswith(
        "<Points><Stop /><Loop></Loop></Points></OSD>")


def test_a_sound_volume_onisplit_cannot_name_is_refused():
    payload = next(p for k, p in payloads() if k == "SNDG")
    refused("SNDG", payload[:0x20] + b"XOBV" + payload[0x24:], "volume type")


def test_a_nan_onisplit_cannot_write_is_refused():
    box = next(p for k, p in payloads() if k == "SNDG" and p[0x20:0x24] == (1447841093).to_bytes(4, "little"))
    refused("SNDG", box[:0x3C] + (0x7FC00000).to_bytes(4, "little") + box[0x40:], "Volume", "NaN", "0x7fc00000")


def test_bytes_onisplit_writes_as_zero_are_checked():
    turret = next(p for k, p in payloads() if k == "TURR")
    refused("TURR", turret[:0x50] + b"\1" + turret[0x51:], "writes as 0")
    refused("TURR", turret + bytes(4), "where OniSplit writes")
    sphere = next(p for k, p in payloads() if k == "SNDG" and p[0x20:0x24] == (1397770322).to_bytes(4, "little"))
    refused("SNDG", sphere[:-1] + b"\1", "writes as 0")
    refused("PATR", patrol(point(22, b"\1"))[:-1] + b"\1", "writes as 0")


def test_a_type_onisplit_reads_otherwise_is_refused():
    with pytest.raises(ObanError, match=f"^list.oni: {LABEL}: object type 'DOOR' is not one of"):
        osd_xml("DOOR", bytes(0xD5), "list.oni", LABEL)


def written_or_refused(kind, payload):
    """osd_xml either writes a well-formed OSD element or refuses with an ObanError naming the object."""
    try:
        text = osd_xml(kind, payload, "list.oni", LABEL)
    except ObanError as error:
        assert str(error).startswith(f"list.oni: {LABEL}: {kind}: ")
        return False
    assert ET.fromstring(text).tag == "OSD"
    return True


@pytest.mark.parametrize("kind", OSD_TYPES)
def test_random_and_mutated_payloads_give_an_element_or_an_oban_error(kind):
    rng = random.Random(f"object_xml {kind}")
    samples = [p for k, p in payloads() if k == kind]
    for _ in range(300):
        written_or_refused(kind, rng.randbytes(rng.choice([rng.randrange(0, 700), len(rng.choice(samples))])))
    written = 0
    for _ in range(600):
        payload = bytearray(rng.choice(samples))
        for _ in range(rng.randrange(1, 4)):
            payload[rng.randrange(len(payload))] = rng.randrange(256)
        written += written_or_refused(kind, bytes(payload))
    assert written     # mutations of values are written, not all refused


def test_what_create_level_cannot_take_is_given_otherwise_and_its_list_replaced():
    """level_given: a console's or trigger's negative event targets (it reads them signed and
    writes them unsigned) given as 0, every other byte as it is, and the list to be replaced;
    a flag's prefix as 0 and FLAG, PART, SNDG lists always replaced; anything else as it is."""
    for kind, name in (("CONS", "Console"), ("TRIG", "Trigger")):
        for k, (kind_, _, _, _, payload) in enumerate(p for p in stored(name) if p[0] == kind):
            given, whole = level_given(kind, payload)
            if k == 0:   # events 3 and 5 target -1 and -32768 (tests/data/objects_xml/README.md)
                before = osd_xml(kind, payload, "x", "y")
                assert 'TargetId="-1"' in before and 'TargetId="-32768"' in before
                assert whole and osd_xml(kind, given, "x", "y") == \
                    before.replace('TargetId="-1"', 'TargetId="0"').replace('TargetId="-32768"', 'TargetId="0"')
            else:
                assert not whole and given == payload
    for kind, name in (("FLAG", "Flag"), ("PART", "Particle"), ("SNDG", "Sound"), ("NEUT", "Neutral"),
                       ("PATR", "Patrol_Path"), ("CHAR", "Character"), ("TURR", "Turret")):
        for kind_, _, _, _, payload in stored(name):
            given, whole = level_given(kind_, payload)
            assert whole == (kind_ in ("FLAG", "PART", "SNDG"))
            assert given == (payload[:4] + bytes(2) + payload[6:] if kind_ == "FLAG" else payload)


def test_values_read_unsigned_at_level_are_written_unsigned():
    """level_osd_xml: what -create:level reads as an int and writes unsigned, written as the
    unsigned value of its 16 bits (-1 as 65535, -32768 as 32768); everything else as osd_xml."""
    from oban_import.oni.io.level_rebuild.object_xml import level_osd_xml
    for kind, name, field, offset in (("NEUT", "Neutral", "NeutralId", 0x20), ("PATR", "Patrol_Path", "PatrolId", 0x24),
                                      ("TURR", "Turret", "TurretId", 0x3F), ("TRIG", "Trigger", "TimeOn", 0x51)):
        for kind_, _, _, _, payload in stored(name):
            if kind_ != kind:
                continue
            plain, level = osd_xml(kind, payload, "x", "y"), level_osd_xml(kind, payload, "x", "y")
            value = int.from_bytes(payload[offset:offset + 2], "little", signed=True)
            assert f"<{field}>{value & 0xFFFF}</{field}>" in level and f"<{field}>{value}</{field}>" in plain
            assert re.sub("-?[0-9]+", "#", plain) == re.sub("-?[0-9]+", "#", level)   # the same but numbers
    char = next(p for k, _, _, _, p in stored("Character") if k == "CHAR" and b"\xff\xff" in p[0x1AC:0x1B4])
    assert level_osd_xml("CHAR", char, "x", "y") == osd_xml("CHAR", char, "x", "y")   # a character's ids stay signed
