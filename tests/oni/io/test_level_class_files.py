"""A level's classes carried out as OniSplit's .oni files (docs/level.md 11, class_files.py):
from OniSplit's level (tests/data/environment/level, its `-import:nosep` of the folder oni/),
every DOOR, OFGA, M3GM, OBAN and TXMP file of oni/ byte for byte and no other; from
tests/data/classes_more (the same packed with consoles, turrets and triggers OniSplit made from
XML), those too; from the loose ONLV, the files beside it; damaged copies of the level (bytes
patched where the Container puts the field) raise ObanError naming the file, the instance and
the fault."""

import os
import shutil
import struct

import numpy as np
import pytest
from objects_generate import Instances, write_level_files
from paths import DATA as TEST_DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import (CONS_TAG, COUNT_OFFSET, DESCRIPTOR_DTYPE, DOOR_TAG, OFGA_TAG,
                                                    PLACEHOLDER, TRGE_TAG, TRIG_TAG, TURR_TAG, TXAN_TAG, TXMP_TAG,
                                                    UNNAMED, Container, tag_name)
from oban_import.oni.io.container.instance_file import instance_file_bytes
from oban_import.oni.io.level_rebuild.class_files import LINKS, SWAP_BYTES, class_files
from oban_import.oni.io.objects.meshes import M3GM_LINKS_OFFSET
from oban_import.oni.io.objects.textures import BGR, TXMP_FIELDS, TXMP_OFFSET

DATA = os.path.join(TEST_DATA, "environment")
LEVEL = os.path.join(DATA, "level", "level5_Final.dat")
LOOSE_FOLDER = os.path.join(DATA, "oni")
CLASSES = ("DOOR", "OFGA", "M3GM", "OBAN", "TXMP")
MORE = os.path.join(TEST_DATA, "classes_more")
MORE_LEVEL = os.path.join(MORE, "level", "level5_Final.dat")
MORE_FOLDER = os.path.join(MORE, "oni")
RAW_OFFSET_AT = TXMP_OFFSET + TXMP_FIELDS.fields["raw_offset"][1]


def loose_files(prefixes=CLASSES):
    return {name: open(os.path.join(LOOSE_FOLDER, name), "rb").read() for name in sorted(os.listdir(LOOSE_FOLDER))
            if name.startswith(prefixes)}


@pytest.fixture
def level_copy(tmp_path):
    for extension in (".dat", ".raw"):
        shutil.copy(LEVEL[:-4] + extension, tmp_path / ("level5_Final" + extension))
    return str(tmp_path / "level5_Final.dat")


def located(path, full_name):
    """(descriptor index, file offset of its data, the Container's label, descriptor count) of
    the instance `full_name`."""
    with open(path, "rb") as f:
        c = Container(f, path, os.path.getsize(path))
        index = next(i for i in range(len(c.descriptors)) if c.full_name(i) == full_name)
        return index, c.instance(index, c.tag_of(index))[1], c.label(index), len(c.descriptors)


def link_byte(tag, field):
    """Where class_files.LINKS puts a template's link `field` in its data."""
    return next(byte for name, byte, _ in LINKS[tag].fields if name == field)


def patch(path, offset, value: int):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(value.to_bytes(4, "little"))


def expect_error(path, *parts):
    with pytest.raises(ObanError) as info:
        class_files(path)
    message = str(info.value)
    assert info.value.path == path and message.startswith(f"{path}: "), message
    for part in parts:
        assert part in message, message


# --- the sample --------------------------------------------------------------------------------

def test_every_class_comes_out_as_onisplit_wrote_it():
    files = class_files(LEVEL)
    expected = loose_files()
    assert sorted(files) == sorted(expected) and len(files) == 53
    assert [name for name in expected if files[name] != expected[name]] == []


def more_files(prefixes=("CONS", "TURR", "TRIG", "TRGE")):
    return {name: open(os.path.join(MORE_FOLDER, name), "rb").read() for name in sorted(os.listdir(MORE_FOLDER))
            if name.startswith(prefixes)}


def test_consoles_turrets_and_triggers_come_out_as_onisplit_wrote_them():
    """The 8 classes OniSplit made from classes_more/xml (an unnamed TRGE inside two TRIGs, a
    named one of its own; a console's screen made from an .obj: an unnamed M3GM and its arrays),
    packed with the sample's files: each byte for byte, and the sample's 53 as before."""
    files = class_files(MORE_LEVEL)
    expected = {**loose_files(), **more_files()}
    assert len(more_files()) == 8 and sorted(files) == sorted(expected) and len(files) == 61
    assert [name for name in expected if files[name] != expected[name]] == []


def test_consoles_turrets_and_triggers_by_tag():
    for tag in (CONS_TAG, TURR_TAG, TRIG_TAG, TRGE_TAG):
        name = tag_name(tag)
        files = class_files(MORE_LEVEL, tags=(tag,))
        assert files == more_files((name,)) and files, name


def test_an_unnamed_emitter_numbered_as_the_xml_importer_does():
    """TRIGtr_laser: its M3GM, its TRGE, its OBAN, then the TRGE's M3GM (breadth first)."""
    path = os.path.join(MORE_FOLDER, "TRIGtr_laser.oni")
    with open(path, "rb") as f:
        c = Container(f, path, os.path.getsize(path))
        assert [c.full_name(i) or tag_name(c.tag_of(i)) for i in range(len(c.descriptors))] == [
            "TRIGtr_laser", "M3GMfu_blocker_box", "TRGE", "OBANdr_slide_anim", "M3GMdr_slide_window"]
    assert class_files(MORE_LEVEL, tags=(TRIG_TAG,))["TRIGtr_laser.oni"] == open(path, "rb").read()


def test_a_trigger_emitter_of_the_wrong_tag(tmp_path):
    for extension in (".dat", ".raw"):
        shutil.copy(MORE_LEVEL[:-4] + extension, tmp_path / ("level5_Final" + extension))
    level = str(tmp_path / "level5_Final.dat")
    turret, _, turret_label, _ = located(level, "TURRtu_gun")
    _, at, label, _ = located(level, "TRIGtr_named")
    patch(level, at + link_byte(TRIG_TAG, "emitter"), turret << 8 | 1)
    expect_error(level, f"{label}: emitter link points to {turret_label}, not a TRGE")


def test_the_tags_asked_for_only():
    assert class_files(LEVEL, tags=(DOOR_TAG,)) == loose_files(("DOOR",))


def test_a_loose_level_gives_the_files_beside_it():
    assert class_files(os.path.join(LOOSE_FOLDER, "ONLVlevel5.oni")) == loose_files()
    assert class_files(os.path.join(LOOSE_FOLDER, "ONLVlevel5.oni"), tags=(DOOR_TAG,)) == loose_files(("DOOR",))


def test_a_name_becomes_a_file_name(level_copy):
    """A space is `_`, a path separator OniSplit's %2F; the instance keeps its name."""
    with open(level_copy, "rb") as f:
        c = Container(f, level_copy, os.path.getsize(level_copy))
        index = next(i for i in range(len(c.descriptors)) if c.full_name(i) == "OBANdr_swing_anim")
        name_at = c.header["name_offset"] + int(c.descriptors["name_offset"][index])
    with open(level_copy, "r+b") as f:
        f.seek(name_at + len("OBANdr"))
        f.write(b" swing/")
    files = class_files(level_copy)
    assert "OBANdr_swing%2Fanim.oni" in files and "OBANdr_swing_anim.oni" not in files
    assert b"OBANdr swing/anim\0" in files["OBANdr_swing%2Fanim.oni"]
    assert b"OBANdr swing/anim\0" in files["DOORdr_swing.oni"]   # its placeholder


def texture(raw_offset, animation=0, environment_map=0):
    """A 16 x 16 BGR TXMP's data, as OniSplit writes it (SwapBytes set, no mipmaps)."""
    fields = struct.pack("<IHHIIII", SWAP_BYTES, 16, 16, BGR, animation, environment_map, raw_offset)
    return bytes(TXMP_OFFSET) + fields + bytes(12)


def frames(*links):
    """A TXAN's data: speed 2, its frames' links."""
    return bytes(12) + struct.pack("<hhiI", 2, 2, 0, len(links)) + struct.pack(f"<{len(links)}I", *links)


def test_an_animated_texture(tmp_path):
    """An animated TXMP comes out as OniSplit's texture importers lay it out (checked by hand:
    its -create of a texture XML of three frames with an environment map, -import:nosep, then
    this): the texture, its other frames, their TXAN (whose first frame, the texture, is link
    0), the environment map a placeholder; the frames' pixels in the raw table in that order.
    In the level they stand in another order."""
    pixels = [bytes([k]) * 1024 for k in (1, 2, 3)]
    level = Instances()
    at = [level.add_raw(p) for p in pixels]
    level.add("TXAN", "", frames(0, 4 << 8 | 1, 2 << 8 | 1))                  # 0
    level.add("TXMP", "TXMPenv", texture(level.add_raw(bytes(1024))))           # 1
    level.add("TXMP", "", texture(at[2], environment_map=1 << 8 | 1))           # 2: the third frame
    level.add("TXMP", "TXMPanim", texture(at[0], 0 << 8 | 1, 1 << 8 | 1))       # 3
    level.add("TXMP", "", texture(at[1], environment_map=1 << 8 | 1))           # 4: the second frame
    files = class_files(write_level_files(level, tmp_path, "level9_Final"))
    assert sorted(files) == ["TXMPanim.oni", "TXMPenv.oni"]
    expected = instance_file_bytes([
        (TXMP_TAG, "TXMPanim", texture(32, 3 << 8 | 1, 4 << 8 | 1)),
        (TXMP_TAG, "", texture(32 + 1024, environment_map=4 << 8 | 1)),
        (TXMP_TAG, "", texture(32 + 2048, environment_map=4 << 8 | 1)),
        (TXAN_TAG, "", frames(0, 1 << 8 | 1, 2 << 8 | 1)),
        (TXMP_TAG, "TXMPenv", None)], bytes(32) + b"".join(pixels))
    assert files["TXMPanim.oni"] == expected


# --- bad input ---------------------------------------------------------------------------------

def test_a_link_past_the_descriptors(level_copy):
    _, at, label, count = located(level_copy, "M3GMdr_swing_panel")
    patch(level_copy, at + M3GM_LINKS_OFFSET, count << 8 | 1)
    expect_error(level_copy, f"{label}: points link 0x{count << 8 | 1:08x} points outside the {count} instances")


def test_a_link_to_the_wrong_tag(level_copy):
    door, _, door_label, _ = located(level_copy, "DOORdr_swing")
    _, at, label, _ = located(level_copy, "OFGAfu_crate")
    element = COUNT_OFFSET + 4 + LINKS[OFGA_TAG].items[1].fields["mesh"][1]
    patch(level_copy, at + element, door << 8 | 1)
    expect_error(level_copy, f"{label}: element 0 link points to {door_label}, not a M3GM")


def test_a_value_not_a_link(level_copy):
    _, at, label, _ = located(level_copy, "DOORdr_lift")
    patch(level_copy, at + link_byte(DOOR_TAG, "animation"), 0x1234)
    expect_error(level_copy, f"{label}: animation link 0x00001234 points outside")


def test_a_count_that_does_not_fit(level_copy):
    _, at, label, _ = located(level_copy, "OFGAdr_double")
    patch(level_copy, at + COUNT_OFFSET, 0xFFFFFFFF)
    expect_error(level_copy, f"{label}: element count says 4294967295 but only 2 fit in the instance")


def test_pixels_outside_the_raw(level_copy):
    _, at, label, _ = located(level_copy, "TXMPdr_swing_tex")
    raw_size = os.path.getsize(level_copy[:-4] + ".raw")
    patch(level_copy, at + RAW_OFFSET_AT, raw_size - 32)
    expect_error(level_copy, f"{label}'s pixels: 1364 bytes of raw data at {raw_size - 32} lie outside "
                             f"level5_Final.raw ({raw_size} bytes)")


def test_a_mac_level(level_copy):
    patch(level_copy, 0, 0x23C13061)   # the low half of the Mac/demo template checksum
    expect_error(level_copy, "a Mac or demo level (its pixels are in a .sep)")


def test_no_raw(level_copy):
    os.remove(level_copy[:-4] + ".raw")
    expect_error(level_copy, "'s pixels: its raw data file level5_Final.raw is missing")


def test_an_unnamed_instance_without_data(level_copy):
    _, at, label, _ = located(level_copy, "M3GMdr_swing_panel")
    with open(level_copy, "rb") as f:
        f.seek(at + M3GM_LINKS_OFFSET)
        points = int.from_bytes(f.read(4), "little") >> 8
    flags_at = 64 + DESCRIPTOR_DTYPE.itemsize * points + DESCRIPTOR_DTYPE.fields["flags"][1]
    patch(level_copy, flags_at, UNNAMED | PLACEHOLDER)
    expect_error(level_copy, f"{label} links instance {points} (unnamed PNTA), which has neither data nor a name")


def test_random_damage_raises_only_oban_errors(level_copy):
    """Words of the classes' records set to random or boundary values: a result or an ObanError."""
    damage(level_copy, [tag for tag in LINKS if tag_name(tag) in CLASSES])


def test_random_damage_to_consoles_turrets_and_triggers(tmp_path):
    for extension in (".dat", ".raw"):
        shutil.copy(MORE_LEVEL[:-4] + extension, tmp_path / ("level5_Final" + extension))
    damage(str(tmp_path / "level5_Final.dat"), [CONS_TAG, TURR_TAG, TRIG_TAG, TRGE_TAG])


def damage(level_copy, tags):
    original = open(level_copy, "rb").read()
    with open(level_copy, "rb") as f:
        c = Container(f, level_copy, os.path.getsize(level_copy))
        records = [(c.data_start + int(c.starts[i]), int(c.ends[i] - c.starts[i]))
                   for i in range(len(c.descriptors)) if c.tag_of(i) in tags and not c.is_placeholder(i)]
    rng = np.random.default_rng(5)
    for _ in range(150):
        data = bytearray(original)
        for _ in range(rng.integers(1, 4)):
            start, size = records[rng.integers(len(records))]
            at = start + 8 + 4 * int(rng.integers((size - 8) // 4))
            value = int(rng.choice([0, 1, 0x101, 0xFFFFFFFF, 0x7FFFFFFF, int(rng.integers(1 << 32))]))
            data[at:at + 4] = value.to_bytes(4, "little")
        open(level_copy, "wb").write(data)
        try:
            class_files(level_copy)
        except ObanError as error:
            assert error.path == level_copy
