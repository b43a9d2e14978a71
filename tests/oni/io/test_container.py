"""The containers (oni/io/container/container.py, instance_file.py; docs/formats.md, containers
2-3, docs/objects.md 1-2): headers, descriptors, names, links and raw data of files OniSplit
wrote, and the one .oni writer against them and against the layout written out here."""

import io
import os
import struct

import numpy as np
import pytest
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.core.files import open_regular
from oban_import.oni.io.container.container import (AKEV_TAG, M3GM_TAG, OBAN_TAG, PLACEHOLDER, TXMP_TAG, UNNAMED,
                                                    Container, level_of_raw_data, short_name, tag_name)
from oban_import.oni.io.container.instance_file import instance_file_bytes

ENVIRONMENT_LEVEL = os.path.join(DATA, "environment", "level", "level5_Final.dat")


def opened(path):
    f, size = open_regular(path)
    return Container(f, path, size)


def test_a_loose_oni_and_a_level_as_onisplit_wrote_them():
    loose = opened(os.path.join(DATA, "objects", "oni", "M3GMobj02_part0.oni"))
    assert loose.version == "VR32"
    main = loose.first(M3GM_TAG)
    assert main == 0 and loose.full_name(main) == "M3GMobj02_part0" and loose.short_name(main) == "obj02_part0"
    texture = next(i for i in range(len(loose.descriptors)) if loose.tag_of(i) == TXMP_TAG)
    assert loose.is_placeholder(texture) and texture not in loose.with_data(TXMP_TAG)   # its texture lives beside it
    unnamed = [i for i in range(len(loose.descriptors)) if loose.is_unnamed(i)]
    assert unnamed and all(loose.full_name(i) == "" and "unnamed" in loose.label(i) for i in unnamed)
    level = opened(ENVIRONMENT_LEVEL)
    assert level.version == "VR31" and len(level.with_data(OBAN_TAG)) == 6
    akev = level.first(AKEV_TAG)
    assert level.short_name(akev) == "level5" and level.label(akev) == f"instance {akev} (AKEVlevel5)"
    data, offset = level.instance(akev, AKEV_TAG)
    assert open(ENVIRONMENT_LEVEL, "rb").read()[offset:offset + len(data)] == data


def test_links_are_checked_for_range_and_tag():
    level = opened(ENVIRONMENT_LEVEL)
    akev = level.first(AKEV_TAG)
    data, _ = level.instance(akev, AKEV_TAG)
    points = struct.unpack_from("<I", data, 0)[0]                # the AKEV's first link: its PNTA
    assert level.link(0, b"ATNP", akev, "points") is None
    assert tag_name(level.tag_of(level.link(points, b"ATNP", akev, "points"))) == "PNTA"
    with pytest.raises(ObanError, match=r"points link points to instance \d+ \(unnamed PNTA\), not an OBAN"):
        level.link(points, OBAN_TAG, akev, "points")
    with pytest.raises(ObanError, match=r"points link 0x0fffff01 points outside the \d+ instances of the file"):
        level.link(0x0FFFFF01, b"ATNP", akev, "points")
    with pytest.raises(ObanError, match="is not an OBAN"):
        level.instance(akev, OBAN_TAG)


def test_raw_data_is_read_inside_its_table_and_nowhere_else(tmp_path):
    texture = opened(os.path.join(DATA, "objects", "oni", "TXMPtex03_rgba.oni"))
    size = texture.raw_size("pixels")
    assert size == texture.header["raw_size"] > 0
    assert len(texture.raw(0, size, "pixels")) == size
    with pytest.raises(ObanError, match=f"pixels: 4 bytes of raw data at {size - 2} lie outside the raw table"):
        texture.raw(size - 2, 4, "pixels")
    lonely = tmp_path / "level5_Final.dat"
    lonely.write_bytes(open(ENVIRONMENT_LEVEL, "rb").read())
    level = opened(str(lonely))
    with pytest.raises(ObanError, match="lists: its raw data file level5_Final.raw is missing"):
        level.raw(0, 4, "lists")


def test_a_raw_file_is_read_with_its_level():
    raw = os.path.join(DATA, "environment", "level", "level5_Final.raw")
    assert level_of_raw_data(raw) == ENVIRONMENT_LEVEL[:-4] + ".dat"
    assert level_of_raw_data(ENVIRONMENT_LEVEL) is None


def test_short_names():
    assert short_name("OBANdoor", "OBAN") == "door" and short_name("door", "OBAN") == "door"
    assert short_name("", "TRAM") == ""


def written_layout(instances, raw):
    """The VR32 layout written out field by field (docs/formats.md, containers 2): the header,
    the descriptors, the names, each record 32-aligned with its header (the link to itself, 0),
    then the raw table."""
    align = lambda n: (n + 31) // 32 * 32   # noqa: E731
    names = b"".join(name.encode() + b"\0" for _, name, _ in instances if name)
    name_offset = align(64 + 20 * len(instances))
    data_offset = align(name_offset + len(names))
    descriptors, records, data_at, name_at = b"", b"", 0, 0
    for index, (tag, name, data) in enumerate(instances):
        flags = (0 if name else UNNAMED) | (PLACEHOLDER if data is None else 0)
        if data is None:
            descriptors += struct.pack("<4sIIII", tag, 0, name_at if name else 0, 0, flags)
        else:
            descriptors += struct.pack("<4sIIII", tag, data_at + 8, name_at if name else 0, len(data) + 8, flags)
            record = struct.pack("<II", index << 8 | 1, 0) + data
            records += record + bytes(align(len(record)) - len(record))
            data_at += align(len(record))
        name_at += len(name) + 1 if name else 0
    raw_offset = align(data_offset + data_at)
    header = struct.pack("<Q4sQ9I8x", 0x0003BCDF33DC271F, b"23RV", 0x0008001000140040, len(instances), 0, 0,
                         data_offset, data_at, name_offset, len(names), raw_offset, len(raw))
    out = bytearray(raw_offset + len(raw))
    out[:64 + len(descriptors)] = header + descriptors
    out[name_offset:name_offset + len(names)] = names
    out[data_offset:data_offset + len(records)] = records
    out[raw_offset:] = raw
    return bytes(out)


def test_the_writer_lays_a_file_out_as_the_format_says_and_the_reader_reads_it_back(tmp_path):
    rng = np.random.default_rng(2)
    raw = bytes(32) + rng.bytes(100) + bytes(28)
    instances = [(b"MG3M", "M3GMbox", rng.bytes(57)), (b"ATNP", "", rng.bytes(64)), (b"PMXT", "TXMPwall", None),
                 (b"NABO", "OBANdoor", rng.bytes(8))]
    written = instance_file_bytes(instances, raw)
    assert written == written_layout(instances, raw)
    path = tmp_path / "M3GMbox.oni"
    path.write_bytes(written)
    back = opened(str(path))
    assert [back.full_name(i) for i in range(4)] == ["M3GMbox", "", "TXMPwall", "OBANdoor"]
    assert back.is_placeholder(2) and back.is_unnamed(1) and back.with_data(b"PMXT") == []
    assert back.instance(0, b"MG3M")[0] == instances[0][2] and back.instance(3, b"NABO")[0] == instances[3][2]
    assert back.raw(32, 100, "raw") == raw[32:132]


def test_a_file_of_no_raw_data_ends_with_its_last_record():
    written = instance_file_bytes([(b"NABO", "OBANdoor", bytes(40))])
    header = struct.unpack_from("<Q4sQ9I", written)
    assert header[-2:] == (0, 0) and len(written) == header[6] + 48     # raw offset, size 0; 8 + 40 bytes


def misnamed_one_by_one(c, tags):
    """What Container.misnamed gives, worked out one instance at a time with full_name."""
    known = {tag_name(tag) for tag in tags}
    for index in range(len(c.descriptors)):
        if not c.is_unnamed(index):
            said, tag = c.full_name(index)[:4], tag_name(c.tag_of(index))
            if said != tag and said in known:
                return index
    return None


def outcome(call):
    try:
        return call()
    except ObanError as error:
        return str(error)


@pytest.mark.parametrize("seed", range(40))
def test_names_looked_at_together_give_what_one_by_one_gives(seed):
    """misnamed on the sample level with tags swapped, names renamed, name offsets moved (past the
    table too), terminators dropped and names made unnamed: the same instance, or the same error,
    as full_name one descriptor at a time."""
    from oban_import.oni.io.container.container import DESCRIPTOR_DTYPE, HEADER_DTYPE
    rng = np.random.default_rng(seed)
    data = bytearray(open(ENVIRONMENT_LEVEL, "rb").read())
    header = np.frombuffer(data, HEADER_DTYPE, 1)[0]
    names_at, names_size = int(header["name_offset"]), int(header["name_size"])
    count = int(header["instance_count"])
    descriptors = np.frombuffer(data, DESCRIPTOR_DTYPE, count, 64).copy()
    tags = [OBAN_TAG, AKEV_TAG, M3GM_TAG, TXMP_TAG]
    for _ in range(int(rng.integers(1, 4))):
        i, kind = int(rng.integers(count)), rng.choice(["swap", "rename", "offset", "unterminate", "unnamed"])
        if kind == "swap":
            descriptors["tag"][i] = tags[int(rng.integers(len(tags)))]
        elif kind == "rename" and descriptors["flags"][i] & UNNAMED == 0:
            at = names_at + int(descriptors["name_offset"][i])
            data[at:at + 4] = tag_name(tags[int(rng.integers(len(tags)))]).encode()
        elif kind == "offset":   # inside a name, or past the table
            descriptors["name_offset"][i] = int(rng.integers(names_size)) + names_size * int(rng.integers(2))
        elif kind == "unterminate":   # the terminators of a stretch of names dropped: one name past 255 bytes
            start = int(rng.integers(names_size))
            end = min(names_size, start + 300)
            data[names_at + start:names_at + end] = b"x" * (end - start)
        else:
            descriptors["flags"][i] ^= UNNAMED
    data[64:64 + descriptors.nbytes] = descriptors.tobytes()
    c = Container(io.BytesIO(bytes(data)), ENVIRONMENT_LEVEL, len(data))
    assert outcome(lambda: c.misnamed(tags)) == outcome(lambda: misnamed_one_by_one(c, tags))
