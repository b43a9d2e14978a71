"""OniSplit XML: bitwise agreement with the .oni samples, names, every class of bad
input, and hostile files (entities, depth, size), each refused fast in little memory."""

import os
import re
import socket
from pathlib import Path

import numpy as np
import pytest
from limits import measured
from oban_generate import random_animation
from paths import DATA
from test_oban_read import expect_error

from oban_import.oni.engine.frames import frame_matrices
from oban_import.oni.io.oban import onisplit_xml as xml_reader
from oban_import.oni.io.oban.read import read_file

NAMES = ("camera_flyby", "door_swing", "fan_loop", "lift_pingpong", "spec_example")
SPEC_EXAMPLE = Path(DATA, "xml", "OBANspec_example.xml").read_text(encoding="utf-8")


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return str(path)




def edited(old, new):
    """The spec example with the first `old` replaced by `new`."""
    assert old in SPEC_EXAMPLE, old
    return SPEC_EXAMPLE.replace(old, new, 1)


def numbers(values):
    return " ".join(f"{float(v):.9g}" for v in values)  # 9 significant digits round-trip a float32


def oban_xml(animation, xml_id="0", tag="OBAN", attributes=""):
    """An OBAN element as OniSplit writes it."""
    keys = "".join(f"<OBANKeyFrame><Rotation>{numbers(k['rotation'])}</Rotation>"
                   f"<Translation>{numbers(k['position'])}</Translation><Time>{k['frame']}</Time>"
                   "</OBANKeyFrame>\n" for k in animation.keys)
    return (f'<{tag} id="{xml_id}"{attributes}><Flags>{animation.flags}</Flags>'
            f"<InitialTransform>{numbers(animation.start_matrix)}</InitialTransform>"
            f"<BaseTransform>{numbers(animation.base_matrix)}</BaseTransform>"
            f"<FrameLength>{animation.ticks_per_frame}</FrameLength><FrameCount>{animation.frames}</FrameCount>"
            f"<HalfStopFrame>{animation.door_open_frame}</HalfStopFrame><KeyFrames>\n{keys}</KeyFrames></{tag}>")


# ---- the samples --------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_xml_reads_bitwise_equal_to_the_oni_file_onisplit_made_from_it(name):
    xml, = read_file(os.path.join(DATA, "xml", f"OBAN{name}.xml"))
    oni, = read_file(os.path.join(DATA, "oni", f"OBAN{name}.oni"))
    assert xml.name == oni.name == name
    assert xml.keys.tobytes() == oni.keys.tobytes()
    assert xml.start_matrix.tobytes() == oni.start_matrix.tobytes()
    assert xml.base_matrix.tobytes() == oni.base_matrix.tobytes()
    assert (xml.flags, xml.ticks_per_frame, xml.frames, xml.door_open_frame, xml.warnings) == \
           (oni.flags, oni.ticks_per_frame, oni.frames, oni.door_open_frame, oni.warnings)
    assert np.array_equal(frame_matrices(xml), frame_matrices(oni))


def test_generated_animations_round_trip_bit_for_bit(tmp_path):
    rng = np.random.default_rng(7)
    animations = [random_animation(rng, frames=200, key_count=150) for _ in range(3)]
    for a in animations:
        a.start_matrix = rng.normal(0, 1e3, 12).astype(np.float32)
    body = "".join(oban_xml(a, str(i)) for i, a in enumerate(animations))
    read = read_file(write(tmp_path, "OBANmany.xml", f"<Oni>{body}</Oni>"))
    assert [a.name for a in read] == ["many", "many_1", "many_2"]
    for original, copy in zip(animations, read):
        assert copy.keys.tobytes() == original.keys.tobytes()
        assert copy.start_matrix.tobytes() == original.start_matrix.tobytes()
        assert copy.base_matrix.tobytes() == original.base_matrix.tobytes()


def test_numbers_become_float32_through_a_double_as_in_onisplit(tmp_path):
    # 1 + 2**-24 is halfway between two float32s; a hair above it, the nearest float32 is
    # 1 + 2**-23, but the nearest double is the halfway point itself, which rounds to even:
    # .NET 4's XmlConvert.ToSingle (text -> double -> float) gives 1.0, and so do we.
    text = edited("<Translation>10 20 30</Translation>",
                  "<Translation>1.00000005960464477539062501 1e-46 -3.4028235e38</Translation>")
    key = read_file(write(tmp_path, "a.xml", text))[0].keys[0]
    assert key["position"].tolist() == [1.0, 0.0, float(np.float32(-3.4028235e38))]


def test_names_come_from_the_file_name(tmp_path):
    assert read_file(write(tmp_path, "OBANdoor.xml", SPEC_EXAMPLE))[0].name == "door"
    assert read_file(write(tmp_path, "lift.xml", SPEC_EXAMPLE))[0].name == "lift"
    assert read_file(write(tmp_path, "OBAN.xml", SPEC_EXAMPLE))[0].name == "OBAN"


def test_xml_is_recognised_by_content_and_extension(tmp_path):
    for name, data in (("door", SPEC_EXAMPLE), ("door.txt", "\ufeff" + SPEC_EXAMPLE),
                       ("door.XML", SPEC_EXAMPLE)):
        assert read_file(write(tmp_path, name, data))[0].name == "door"
    utf16 = SPEC_EXAMPLE.replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")
    assert read_file(write(tmp_path, "door.xml", utf16))[0].keys.tobytes() == \
        read_file(write(tmp_path, "copy.xml", SPEC_EXAMPLE))[0].keys.tobytes()


def test_several_obans_other_instances_and_name_filter(tmp_path):
    a, b = (random_animation(np.random.default_rng(i), frames=20, key_count=4) for i in (1, 2))
    second = oban_xml(b, "9", tag="Instance", attributes=' type="OBAN"')
    text = f'<Oni>{oban_xml(a, "5")}<TXMP id="1"><Anything><Goes/></Anything></TXMP>{second}</Oni>'
    path = write(tmp_path, "OBANpair.xml", text)
    assert [x.name for x in read_file(path)] == ["pair", "pair_9"]
    assert [x.name for x in read_file(path, "*_9")] == ["pair_9"]
    assert read_file(path, "nothing") == []


# ---- fields -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, flags", [("", 0), ("None", 0), ("NormalLoop", 1), (" ZAxisUp Autostart ", 0x18),
                                         ("BackToBackLoop RandomStartFrame", 6), ("17", 0x11), ("+0", 0)])
def test_flags(tmp_path, text, flags):
    assert read_file(write(tmp_path, "a.xml", edited("<Flags>NormalLoop</Flags>", f"<Flags>{text}</Flags>")))[0].flags == flags


@pytest.mark.parametrize("text, flags", [("NormalLoop NormalLoop", 0x1), ("ZAxisUp NormalLoop ZAxisUp", 0x11),
                                         ("Autostart Autostart Autostart", 0x8), ("None NormalLoop None", 0x1)])
def test_a_flag_named_twice_is_set_once(tmp_path, text, flags):
    """OniSplit reads <Flags> as .NET's Enum.Parse reads the names joined by commas (MetaEnum.XmlToBinary):
    their bits OR-ed, so a name given again changes nothing (it never clears its bit)."""
    assert read_file(write(tmp_path, "a.xml", edited("<Flags>NormalLoop</Flags>", f"<Flags>{text}</Flags>")))[0].flags == flags


def test_empty_flags_element(tmp_path):
    assert read_file(write(tmp_path, "a.xml", edited("<Flags>NormalLoop</Flags>", "<Flags />")))[0].flags == 0


def test_unknown_flag_bits_given_as_a_number_are_kept_and_warned_about(tmp_path):
    animation = read_file(write(tmp_path, "a.xml", edited("NormalLoop", "2147483665")))[0]
    assert animation.flags == 0x80000011 and animation.warnings == ["unknown flag bits 0x80000000 kept"]


@pytest.mark.parametrize("text, message", [
    ("Loop", "line 4: unknown flag 'Loop' (known: NormalLoop BackToBackLoop RandomStartFrame Autostart ZAxisUp"),
    ("normalloop", "unknown flag 'normalloop'"),
    ("NormalLoop  ZAxisUp", "unknown flag ''"),
    ("NormalLoop,ZAxisUp", "unknown flag 'NormalLoop,ZAxisUp'"),
    ("4294967296", "line 4: <Flags> '4294967296' is out of range (0 to 4294967295)"),
    ("-1", "<Flags> '-1' is out of range"),
    ("1.5", "<Flags> '1.5' is not a whole number"),
])
def test_bad_flags(tmp_path, text, message):
    expect_error(write(tmp_path, "a.xml", edited("NormalLoop", text)), message)


@pytest.mark.parametrize("old, new, message", [
    ("<Rotation>0 0 0 1</Rotation>", "<Rotation>0 0 1</Rotation>", "line 12: <Rotation> needs 4 numbers, found 3"),
    ("<Rotation>0 0 0 1</Rotation>", "<Rotation/>", "line 12: <Rotation> needs 4 numbers, found 0"),
    ("<Translation>10 20 30</Translation>", "<Translation>10 abc 30</Translation>", "line 13: 'abc' is not a number"),
    ("<Translation>10 20 30</Translation>", "<Translation>10 2_0 30</Translation>", "line 13: '2_0' is not a number"),
    ("<Translation>10 20 30</Translation>", "<Translation>10 \u0662\u0660 30</Translation>", "is not a number"),
    ("<Translation>10 20 30</Translation>", "<Translation>10 0x14 30</Translation>", "'0x14' is not a number"),
    ("<Translation>10 20 30</Translation>", "<Translation>10 1,5 30</Translation>", "'1,5' is not a number"),
    ("2 0 0 0 2 0 0 0 2 10 20 30", "2 0 0 0 2 0 0 0 2 10 20", "line 5: <InitialTransform> needs 12 numbers, found 11"),
    ("<FrameCount>4</FrameCount>", "<FrameCount>65536</FrameCount>", "line 8: <FrameCount> '65536' is out of range (0 to 65535)"),
    ("<FrameLength>80</FrameLength>", "<FrameLength>-80</FrameLength>", "<FrameLength> '-80' is out of range"),
    ("<HalfStopFrame>0</HalfStopFrame>", "<HalfStopFrame>x</HalfStopFrame>", "line 9: <HalfStopFrame> 'x' is not a whole number"),
    ("<Time>3</Time>", "<Time>4294967296</Time>", "line 19: <Time> '4294967296' is out of range (0 to 4294967295)"),
    ("<Time>3</Time>", f"<Time>{'9' * 5000}</Time>", "is out of range (0 to 4294967295)"),
    ("<Time>3</Time>", "<Time>3.0</Time>", "<Time> '3.0' is not a whole number"),
])
def test_bad_values(tmp_path, old, new, message):
    expect_error(write(tmp_path, "a.xml", edited(old, new)), message)


def test_leading_zeros_and_padding_are_fine(tmp_path):
    text = edited("<Time>3</Time>", f"<Time>\n  {'0' * 5000}3  </Time>")
    assert read_file(write(tmp_path, "a.xml", text))[0].keys["frame"].tolist() == [0, 3]


@pytest.mark.parametrize("old, new, message", [
    ("<Rotation>0 0 0 1</Rotation>", "<Rotation>nan 0 0 1</Rotation>", "'a': non-finite value in key 0"),
    ("<Translation>10 25 30</Translation>", "<Translation>10 -Infinity 30</Translation>", "non-finite value in key 1"),
    ("<Translation>10 25 30</Translation>", "<Translation>10 1e39 30</Translation>", "non-finite value in key 1"),
    ("2 0 0 0 2 0 0 0 2 10 20 30", "2 0 0 0 2 0 0 0 2 10 inf 30", "non-finite value in the start matrix"),
    ("<Time>3</Time>", "<Time>0</Time>", "key frames not increasing at key 1"),
    ("<FrameCount>4</FrameCount>", "<FrameCount>0</FrameCount>", "frame count is 0"),
])
def test_values_the_engine_cannot_play_are_refused_by_check(tmp_path, old, new, message):
    expect_error(write(tmp_path, "a.xml", edited(old, new)), message)


def test_no_keys(tmp_path):
    text = re.sub(r"<KeyFrames>.*</KeyFrames>", "<KeyFrames/>", SPEC_EXAMPLE, flags=re.S)
    expect_error(write(tmp_path, "a.xml", text), "'a': no keys")


# ---- structure -----------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, message", [
    ("    <FrameCount>4</FrameCount>\n", "", "line 8: missing <FrameCount> before <HalfStopFrame>"),
    ("<Flags>NormalLoop</Flags>", "", "line 5: missing <Flags> before <InitialTransform>"),
    ("<Time>3</Time>", "", "line 20: missing <Time> in <OBANKeyFrame>"),
    ("<KeyFrames>", "<KeyFrames><Extra/>", "line 10: unexpected <Extra> in <KeyFrames>"),
    ("<Flags>NormalLoop</Flags>", "<Flags>NormalLoop</Flags><Flags/>", "line 4: <Flags> given twice in <OBAN>"),
    ("<Flags>NormalLoop</Flags>", "<Flag>NormalLoop</Flag>", "line 4: unexpected <Flag> in <OBAN>"),
    ("<Rotation>0 0 0 1</Rotation>", "<Rotation>0 <b/>0 0 1</Rotation>", "line 12: unexpected <b> inside <Rotation>"),
    ("<KeyFrames>", "<KeyFrames>stray", "line 10: unexpected text 'stray' in <KeyFrames>"),
    ("<OBAN id=\"0\">", "<OBAN>", "line 3: <OBAN> has no id attribute"),
    ("<Oni>", "<Foo>", "not an OniSplit XML file: root element is <Foo>"),
    ("<Rotation>0 0 0 1</Rotation>", "<Rotation>0 0 0 1</Rotatio>", "mismatched tag at line 12, column 28"),
])
def test_structure_errors(tmp_path, old, new, message):
    expect_error(write(tmp_path, "a.xml", edited(old, new).replace("</Foo>", "</Oni>")), message)


def test_missing_key_frames(tmp_path):
    text = re.sub(r"\s*<KeyFrames>.*</KeyFrames>", "", SPEC_EXAMPLE, flags=re.S)
    expect_error(write(tmp_path, "a.xml", text), "line 10: missing <KeyFrames> in <OBAN>")


def test_no_oban_and_duplicate_ids(tmp_path):
    expect_error(write(tmp_path, "a.xml", "<Oni><TXMP id='0'/></Oni>"), "no <OBAN> element")
    expect_error(write(tmp_path, "b.xml", "<Oni/>"), "no <OBAN> element")
    body = SPEC_EXAMPLE.split("<Oni>")[1].split("</Oni>")[0]
    expect_error(write(tmp_path, "c.xml", f"<Oni>{body}{body}</Oni>"), "line 23: id '0' is used twice")


def test_too_many_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(xml_reader, "MAX_KEYS", 1)
    expect_error(write(tmp_path, "a.xml", SPEC_EXAMPLE), "line 16: more than 1 key frames")


# ---- hostile files: each refused within 20 MB -------------------------------------------------

def refused(tmp_path, data, *fragments):
    """The message for `data`, its read's tracemalloc peak under 20 MB; never any other exception."""
    path = write(tmp_path, "OBANhostile.xml", data)
    message, peak = measured(lambda: expect_error(path, *fragments))
    assert peak < 20 << 20, peak
    return message


BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE Oni [\n <!ENTITY lol0 "lol">\n'
                  + "".join(f' <!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">\n' for i in range(1, 10))
                  + "]>\n<Oni>&lol9;</Oni>")


@pytest.mark.parametrize("data", [
    BILLION_LAUGHS,
    '<!DOCTYPE Oni [<!ENTITY a "' + "x" * 100_000 + '">]><Oni>' + "&a;" * 10_000 + "</Oni>",   # quadratic blowup
    '<?xml version="1.0"?><!DOCTYPE Oni [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><Oni>&xxe;</Oni>',
    '<!DOCTYPE Oni [<!ENTITY xxe SYSTEM "http://127.0.0.1:9/x">]><Oni><OBAN id="0">&xxe;</OBAN></Oni>',
    '<!DOCTYPE Oni [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><Oni/>',            # parameter entity
    '<!DOCTYPE Oni SYSTEM "http://127.0.0.1:9/oni.dtd"><Oni/>',                              # external DTD
    "<!DOCTYPE Oni><Oni/>",
], ids=["billion_laughs", "quadratic_blowup", "xxe_file", "xxe_http", "parameter_entity", "external_dtd", "doctype"])
def test_doctype_and_entities_are_refused_before_anything_is_expanded_or_fetched(tmp_path, monkeypatch, data):
    def no_network(*args, **kwargs):
        raise AssertionError("network access")
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    message = refused(tmp_path, data, "DOCTYPE and entities are not allowed")
    assert "root:" not in message  # nothing of /etc/passwd


def test_undeclared_entity(tmp_path):
    refused(tmp_path, "<Oni>&xxe;</Oni>", "undefined entity at line 1, column 6")


def test_deep_nesting(tmp_path):
    refused(tmp_path, "<Oni>" + "<a>" * 100_000 + "</a>" * 100_000 + "</Oni>", "line 1: elements nested deeper than 32")
    refused(tmp_path, "<a>" * 100_000, "not an OniSplit XML file: root element is <a>")


def test_huge_text(tmp_path):
    refused(tmp_path, edited("<FrameCount>4", "<FrameCount>" + "9" * 10_000_000),
            "line 8: text of <FrameCount> longer than 65536 characters")
    refused(tmp_path, "<Oni>" + "9" * 10_000_000 + "</Oni>", "line 1: unexpected text '9999")


def test_pathological_number_is_refused(tmp_path):
    refused(tmp_path, edited("<Rotation>0 0 0 1", "<Rotation>0 0 0 " + "1" * 65_000 + "x"), "is not a number")


def test_huge_number_of_elements(tmp_path):
    refused(tmp_path, "<Oni>" + "<a/>" * 2_000_000 + "</Oni>", f"more than {xml_reader.MAX_ELEMENTS} elements")


@pytest.mark.parametrize("markup", ["<!--" + "x" * 3_000_000 + "-->", "<TXMP id='" + "x" * 3_000_000 + "'/>",
                                    "<?pi " + "x" * 3_000_000 + "?>"], ids=["comment", "attribute", "pi"])
def test_huge_markup(tmp_path, markup):
    refused(tmp_path, "<Oni>" + markup + "</Oni>", "line 1: a tag, comment or declaration longer than 1 MiB")


def test_file_over_the_size_cap_is_refused_before_reading(tmp_path):
    path = str(tmp_path / "big.xml")
    with open(path, "wb") as f:
        f.truncate(xml_reader.MAX_FILE_SIZE + 1)  # sparse: no disk used
    _, peak = measured(lambda: expect_error(path, f"{xml_reader.MAX_FILE_SIZE + 1} bytes", "256 MiB are refused"))
    assert peak < 8 << 20, peak   # not read: a read of 256 MiB would hold it


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"  \n", "no element found at line 2, column 1"),
    (SPEC_EXAMPLE[:300].encode(), "unclosed token at line 9, column 5"),
    (SPEC_EXAMPLE[:SPEC_EXAMPLE.index("</KeyFrames>")].encode(), "no element found at line 21, column 5"),
    (SPEC_EXAMPLE.encode() + b"<Oni/>", "junk after document element at line 24, column 1"),
    (SPEC_EXAMPLE.replace("NormalLoop", "Normal\xe9Loop").encode("latin-1"), "not well-formed (invalid token) at line 4"),
    (SPEC_EXAMPLE.replace("NormalLoop", "Normal\x01Loop").encode(), "not well-formed (invalid token) at line 4"),
    (SPEC_EXAMPLE.encode("utf-16-le"), "encoding specified in XML declaration is incorrect at line 1"),
    (SPEC_EXAMPLE.replace("utf-8", "klingon").encode(), "unsupported encoding: unknown encoding: klingon"),
    (SPEC_EXAMPLE.replace("utf-8", "shift_jis").encode(), "unsupported encoding: multi-byte encodings are not supported"),
    (SPEC_EXAMPLE.replace("utf-8", "rot13").encode(), "unsupported encoding"),
    (SPEC_EXAMPLE.replace("utf-8", "utf-16").encode(), "encoding specified in XML declaration is incorrect"),
    (b"\x00\x01\x02garbage", "not well-formed (invalid token) at line 1, column 1"),
], ids=["empty", "blank", "truncated_in_tag", "truncated", "two_roots", "latin1_bytes", "control_char",
        "utf16_without_bom", "unknown_encoding", "multibyte_encoding", "not_a_text_codec", "wrong_declaration",
        "binary"])
def test_malformed_files(tmp_path, data, message):
    refused(tmp_path, data, message)
