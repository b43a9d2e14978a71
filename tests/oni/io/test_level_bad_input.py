"""Bad input to the level readers (docs/level.md 7, docs/bad_input.md "Levels:
environment and object lists"): every error names the file, the instance and the fault, and
nothing is read; every warning is given once and the rest still comes in.

The inputs: object lists built by the generator's list writer (level_generate.list_bytes) and
stored as a loose BINACJBODoor.oni (raw table from byte 32), or the generator's standard level
written as loose files and then patched where the spec puts each field (the instance found with
the container reader).
"""

import math
import os
import struct

import level_generate as gen
import numpy as np
import pytest

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import Container
from oban_import.oni.io.container.instance_file import instance_file_bytes
from oban_import.oni.io.level.read import read_level

BUNGIE = "no object setup array (OBOA) holds the doors' leaves: each is placed by Bungie's rule"


# --- helpers ---------------------------------------------------------------------------------

def expect_error(path, *parts):
    with pytest.raises(ObanError) as info:
        read_level(path)
    message = str(info.value)
    assert message.startswith(f"{info.value.path}: ") and len(message) < 400
    for part in parts:
        assert part in message, message
    return info.value


def list_file(folder, raw, size=None, offset=32, name="BINACJBODoor"):
    """A loose BINACJBO .oni of the raw list `raw` (the BINA: size, offset into the raw table)."""
    path = os.path.join(folder, name + ".oni")
    with open(path, "wb") as f:
        f.write(instance_file_bytes([(b"ANIB", name, struct.pack("<2I", len(raw) if size is None else size, offset))],
                                    bytes(32) + raw))
    return path


def door_entry(object_id=1, **fields):
    door = gen.GenDoor(**{"class_name": "dr_x", "door_id": object_id, **fields})
    return gen.door(object_id, door)


def instance_at(path, tag, which=0):
    """(file offset of the data of the `which`-th instance of `tag` with data, its descriptor index)."""
    with open(path, "rb") as f:
        c = Container(f, str(path), os.path.getsize(path))
        index = c.with_data(tag.encode()[::-1])[which]
        return c.data_start + int(c.starts[index]) + 8, index


def patch(path, tag, at, fmt, *values, which=0):
    offset, _ = instance_at(path, tag, which)
    with open(path, "r+b") as f:
        f.seek(offset + at)
        f.write(struct.pack(fmt, *values))


@pytest.fixture
def loose(tmp_path):
    """The standard level as loose files; returns the folder."""
    gen.write_loose(gen.standard_level(np.random.default_rng(7)), tmp_path)
    return tmp_path


def standard_with(tmp_path, change, environment=True):
    level = gen.standard_level(np.random.default_rng(7), environment=environment)
    change(level)
    gen.write_loose(level, tmp_path)
    return tmp_path


# --- object lists -----------------------------------------------------------------------------

def test_a_list_outside_the_raw_data(tmp_path):
    raw = gen.list_bytes([door_entry()])
    expect_error(list_file(tmp_path, raw, offset=1 << 20), "instance 0 (BINACJBODoor): 272 bytes of raw data at "
                 "1048576 lie outside the raw table (304 bytes)")
    expect_error(list_file(tmp_path, raw, size=0xFFFFFFF0), "instance 0 (BINACJBODoor): 4294967280 bytes of raw data "
                 "at 32 lie outside the raw table")
    level = gen.GenLevel(lists={"Door": [door_entry()]}, with_onlv=False)
    path = gen.write_level(level, tmp_path / "dat")
    raw_path = path[:-4] + ".raw"
    os.truncate(raw_path, 100)
    expect_error(path, "(BINACJBODoor): 272 bytes of raw data at 32 lie outside level7_Final.raw (100 bytes)")
    os.remove(raw_path)
    expect_error(path, "(BINACJBODoor): its raw data file level7_Final.raw is missing")


@pytest.mark.parametrize("fault, message", [
    ("magic", "its list starts with b'XJBO', not CJBO"),
    ("short", "its list of 8 bytes is too short for its header (12)"),
    ("size", "its list says 283 bytes follow its size, the BINA 264"),
    ("version", "object list version 40 (only 39 is known)"),
    ("no end", "its list ends at byte 268 without the 0 that ends it"),
])
def test_a_list_header_at_fault(tmp_path, fault, message):
    raw = bytearray(gen.list_bytes([door_entry()], version=40 if fault == "version" else 39))
    if fault == "magic":
        raw[0] = ord("X")
    elif fault == "short":
        raw = raw[:8]
    elif fault == "size":
        struct.pack_into("<I", raw, 4, 283)
    elif fault == "no end":
        raw = raw[:-4]
        struct.pack_into("<I", raw, 4, len(raw) - 8)
    expect_error(list_file(tmp_path, bytes(raw)), "instance 0 (BINACJBODoor): " + message)


@pytest.mark.parametrize("n, message", [
    (0x20, "has size 32, under 0x24"), (0x26, "has size 38, not a multiple of 4"),
    (0x400, "has size 1024, past the list's 528 bytes"), (0, None)])
def test_an_object_size_at_fault(tmp_path, n, message):
    objects = gen.list_bytes([door_entry(1), door_entry(2)])
    raw = bytearray(objects)
    second = 12 + 4 + 252
    struct.pack_into("<I", raw, second, n)
    if message is None:   # a 0 in its place ends the list early: the rest is not read
        assert [d.id for d in read_level(list_file(tmp_path, bytes(raw))).doors] == [1]
        return
    expect_error(list_file(tmp_path, bytes(raw)), f"instance 0 (BINACJBODoor): object 1 (at byte {second}) " + message)


def test_a_door_or_furniture_too_short(tmp_path):
    short = gen.GenObjectEntry("DOOR", 7, 0, (0, 0, 0), (0, 0, 0), bytes(0xF4 - 0x24))
    expect_error(list_file(tmp_path, gen.list_bytes([door_entry(), short])),
                 "instance 0 (BINACJBODoor): object 1 (id 7): a DOOR of 244 bytes, shorter than 0xf9")
    short = gen.GenObjectEntry("FURN", 8, 0, (0, 0, 0), (0, 0, 0), bytes(0x70 - 0x24))
    expect_error(list_file(tmp_path, gen.list_bytes([short]), name="BINACJBOFurniture"),
                 "instance 0 (BINACJBOFurniture): object 0 (id 8): a FURN of 112 bytes, shorter than 0x74")


def test_events_at_fault(tmp_path):
    expect_error(list_file(tmp_path, gen.list_bytes([door_entry(3, events=[(1, "go"), (12, 5)])])),
                 "instance 0 (BINACJBODoor): object 0 (id 3): door event 1 has type 12 (0 to 11 are known)")
    entry = door_entry(4, events=[(2, 9)])
    payload = bytearray(entry.payload)
    struct.pack_into("<H", payload, 0xF7 - 0x24, 3)   # three events: the padding reads as a None, then the end
    entry.payload = bytes(payload)
    expect_error(list_file(tmp_path, gen.list_bytes([entry])),
                 "instance 0 (BINACJBODoor): object 0 (id 4): door event 2 of 3 lies past the object's 256 bytes")
    entry = door_entry(5, events=[(1, "x" * 32)])
    entry.payload = entry.payload[:-20]                      # a script name cut short
    expect_error(list_file(tmp_path, gen.list_bytes([entry])),
                 "instance 0 (BINACJBODoor): object 0 (id 5): door event 0 of 1 lies past the object's 264 bytes")


@pytest.mark.parametrize("where", ["position", "rotation", "frame", "radius"])
def test_non_finite_object_values(tmp_path, where):
    position, rotation, door = (0, 0, 0), (0, 0, 0), gen.GenDoor("dr_x", 6)
    if where == "position":
        position = (math.nan, 0, 0)
    elif where == "rotation":
        rotation = (0, math.inf, 0)
    elif where == "frame":
        door.center = (0, 0, math.nan)
    else:
        door.radius_squared = -math.inf
    entry = gen.door(6, door, position, rotation)
    field = {"frame": "door's frame position", "radius": "door's radius squared"}.get(where, where)
    expect_error(list_file(tmp_path, gen.list_bytes([entry])),
                 f"instance 0 (BINACJBODoor): object 0 (id 6): non-finite value in its {field}")


def test_a_bina_too_short(tmp_path):
    path = tmp_path / "BINACJBODoor.oni"
    path.write_bytes(instance_file_bytes([(b"ANIB", "BINACJBODoor", bytes(4))]))
    expect_error(path, "instance 0 (BINACJBODoor): 4 bytes, too short for a BINA (8)")


# --- the environment ----------------------------------------------------------------------------

@pytest.mark.parametrize("tag, at, value, message", [
    ("AGQG", 0x14, 0xFFFFFFFF, "instance 4 (unnamed AGQG): quads count says 4294967295 but only 60 fit in the "
                               "instance"),
    ("AGQR", 0x14, 0x7FFFFFFF, "instance 5 (unnamed AGQR): quad textures count says 2147483647 but only 60 fit"),
    ("PLEA", 0x14, 31, "instance 2 (unnamed PLEA): planes count says 31 but only 30 fit in the instance"),
    ("AKVA", 0x14, 4, "instance 9 (unnamed AKVA): rooms count says 4 but only 3 fit in the instance"),
    ("TXMA", 0x14, 100, "instance 8 (unnamed TXMA): texture count says 100 but only 6 fit in the instance"),
])
def test_an_environment_count_that_does_not_fit(loose, tag, at, value, message):
    patch(loose / "AKEVgen.oni", tag, at, "<I", value)
    expect_error(loose / "AKEVgen.oni", message)
    expect_error(loose / "ONLVgen.oni", message)   # the same fault, reached through the ONLV


@pytest.mark.parametrize("field, message", [
    ("point", "instance 4 (unnamed AGQG): quad 7 corner 2 is point 40, past the 40 points"),
    ("negative point", "instance 4 (unnamed AGQG): quad 7 corner 2 is point -1, past the 40 points"),
    ("uv", "instance 4 (unnamed AGQG): quad 7 corner 2 is texture coordinate 20, past the 20 texture coordinates"),
    ("texture", "instance 5 (unnamed AGQR): quad 7 is texture 6, past the 6 textures"),
    ("plane", "instance 6 (unnamed AGQC): quad 7 is plane 30, past the 30 planes"),
    ("door frame", "instance 16 (unnamed AKDA): door frame 1 is quad 60, past the 60 quads"),
])
def test_an_index_past_its_array(tmp_path, field, message):
    def change(level):
        env = level.environment
        if field in ("point", "negative point"):
            env.quad_points[7, 2] = 40 if field == "point" else -1
        elif field == "uv":
            env.quad_uvs[7, 2] = 20
        elif field == "texture":
            env.quad_textures[7] = 6
        elif field == "plane":
            env.collision_planes[7] = 30 | -0x80000000
        else:
            env.door_frames[1] = (60, *env.door_frames[1][1:])
    expect_error(standard_with(tmp_path, change) / "AKEVgen.oni", message)


@pytest.mark.parametrize("field, message", [
    ("quad_textures", "instance 5 (unnamed AGQR): 59 quad textures for the 60 quads of instance 4 (unnamed AGQG)"),
    ("collision_planes", "instance 6 (unnamed AGQC): 59 quad collision for the 60 quads of instance 4 (unnamed "
                         "AGQG)")])
def test_a_quad_array_of_another_length(tmp_path, field, message):
    def change(level):
        setattr(level.environment, field, getattr(level.environment, field)[:-1])
        level.environment.collision_boxes = level.environment.collision_boxes[:len(level.environment.collision_planes)]
    expect_error(standard_with(tmp_path, change) / "AKEVgen.oni", message)


@pytest.mark.parametrize("field", ["points", "uvs"])
def test_non_finite_points_or_texture_coordinates(tmp_path, field):
    def change(level):
        getattr(level.environment, field)[3, 1] = np.inf
    what, tag = ("points", "PNTA") if field == "points" else ("texture coordinates", "TXCA")
    expect_error(standard_with(tmp_path, change) / "AKEVgen.oni",
                 f"(unnamed {tag}): non-finite value in its {what}")


def test_links_to_the_wrong_tag(loose):
    _, txca = instance_at(loose / "AKEVgen.oni", "TXCA")
    patch(loose / "AKEVgen.oni", "AKEV", 0, "<I", txca << 8 | 1)
    expect_error(loose / "AKEVgen.oni", "instance 0 (AKEVgen): points link points to instance 3 (unnamed TXCA), "
                                        "not a PNTA")
    _, oboa = instance_at(loose / "ONLVgen.oni", "OBOA")
    patch(loose / "ONLVgen.oni", "ONLV", 0x40, "<I", oboa << 8 | 1)
    expect_error(loose / "ONLVgen.oni", "instance 0 (ONLVgen): environment link points to instance",
                 "(unnamed OBOA), not an AKEV")
    patch(loose / "DOORdr_single.oni", "DOOR", 0, "<I", 2 << 8 | 1)
    expect_error(loose / "BINACJBODoor.oni", "DOORdr_single.oni: instance 0 (DOORdr_single): leaf link points to "
                                             "instance 2 (OBANdoor_anim), not an OFGA")
    patch(loose / "DOORdr_single.oni", "DOOR", 0, "<I", 9 << 8 | 1)
    expect_error(loose / "BINACJBODoor.oni", "(DOORdr_single): leaf link 0x00000901 points outside the 3 instances")


def test_required_arrays_and_instance_sizes(loose, tmp_path):
    patch(loose / "AKEVgen.oni", "AKEV", 0, "<I", 0)
    expect_error(loose / "AKEVgen.oni", "instance 0 (AKEVgen): no points (PNTA) (link 0)")
    cut = tmp_path / "cut"
    cut.mkdir()
    for tag, name, size, message in (("AKEV", "AKEVgen", 0x50, "80 bytes, too short for an AKEV (0x5c)"),
                                     ("ONLV", "ONLVgen", 0x2F8, "760 bytes, too short for an ONLV (0x2fc)"),
                                     ("DOOR", "DOORx", 96, "96 bytes, too short for a DOOR (100)"),
                                     ("OFGA", "OFGAx", 0x14, "20 bytes, too short for its element count at 0x14")):
        path = cut / f"{name}.oni"
        path.write_bytes(instance_file_bytes([(tag.encode()[::-1], name, bytes(size))]))
        expect_error(path, f"instance 0 ({name}): {message}")


def test_an_ofga_count_that_does_not_fit(loose):
    patch(loose / "OFGAfu_shelf.oni", "OFGA", 0x14, "<I", 3)
    expect_error(loose / "BINACJBOFurniture.oni", "OFGAfu_shelf.oni: instance 0 (OFGAfu_shelf): element count says 3 "
                                                  "but only 2 fit in the instance")


def test_an_object_quad_past_the_quads(tmp_path):
    def change(level):
        level.object_quads[2] = (level.object_quads[2][0], [4, 60])
    expect_error(standard_with(tmp_path, change) / "ONLVgen.oni",
                 "(unnamed ONOA): object 2 (tag 0x03000003) lists quad 60, past the environment's 60 quads")


def test_a_file_without_any_of_it(tmp_path):
    path = tmp_path / "TXMPx.oni"
    path.write_bytes(instance_file_bytes([(b"PMXT", "TXMPx", bytes(0xA0))]))
    expect_error(path, "holds no level (ONLV), environment (AKEV), object list (BINACJBO), door class (DOOR) or "
                       "furniture geometry (OFGA)")


# --- warnings ---------------------------------------------------------------------------------------

def test_zero_area_quads_are_warned_and_marked(tmp_path):
    def change(level):
        env = level.environment
        env.quad_points[4] = [1, 1, 1, 1]
        env.points[5], env.points[6] = env.points[3] * 2, env.points[3] * 4   # three points on a line
        env.quad_points[9] = [3, 5, 6, 6]
        env.flags[9] |= 0x40
    read = read_level(standard_with(tmp_path, change) / "AKEVgen.oni")
    assert np.flatnonzero(read.environment.zero_area).tolist() == [4, 9]
    assert read.warnings == ["AKEVgen: 2 quads of zero area (quad 4 first): skipped"]


def test_classes_not_found(loose):
    os.remove(loose / "DOORdr_single.oni")
    os.remove(loose / "OFGAfu_box.oni")
    read = read_level(loose / "ONLVgen.oni")
    assert read.warnings == [
        "door class DOORdr_single not found (not in BINACJBODoor.oni, nor DOORdr_single.oni beside it): its doors "
        "are not drawn",
        "furniture geometry OFGAfu_box not found (not in BINACJBOFurniture.oni, nor OFGAfu_box.oni beside it): that "
        "furniture is not drawn"]
    assert [d.door_class is None for d in read.doors] == [True, False, True, False]
    assert [f.geometry is None for f in read.furniture] == [True, False]
    assert len(read.environment.flags) == 60 and sorted(read.door_classes) == ["dr_double"]


def test_a_door_texture_not_found(loose):
    os.remove(loose / "TXMPDOORTEX.oni")
    read = read_level(loose / "BINACJBODoor.oni")
    assert read.warnings == [
        "door texture TXMPDOORTEX not found (not in BINACJBODoor.oni, nor TXMPDOORTEX.oni beside it): imported "
        "without it", "door texture TXMPdoortex not found (not in BINACJBODoor.oni, nor TXMPdoortex.oni beside it): "
        "imported without it", BUNGIE]
    assert [[t and t.name for t in d.textures] for d in read.doors] == [[None, None], [None, "wall"], [None, None],
                                                                        [None, None]]


def test_a_door_class_without_an_animation(tmp_path):
    def change(level):
        level.door_classes["dr_single"].animation = None
    read = read_level(standard_with(tmp_path, change) / "ONLVgen.oni")
    assert read.warnings == ["DOORdr_single has no animation (OBAN link 0): the engine never opens its doors, which "
                             "stay gunk"]
    assert read.door_classes["dr_single"].animation is None and read.door_classes["dr_single"].animation_name == ""


def test_leaves_without_setups_and_door_ids_at_fault(tmp_path):
    def change(level):
        level.setups = [s for s in level.setups if s.door_id != (2 | 0x1000)]
        entries = level.lists["Door"]
        entries[2] = gen.door(3, gen.GenDoor("dr_single", 2))              # door id 2 twice
        entries[3] = gen.door(4, gen.GenDoor("dr_double", 0x1005, flags=0x80))
    read = read_level(standard_with(tmp_path, change) / "ONLVgen.oni")
    assert read.warnings == [
        "door id 2 is used by 2 doors (object ids 2, 3): the first OBOA setup of that id serves them all",
        "door (object id 4) has door id 4101, 0x1000 or more: the engine takes such an id for a second leaf's",
        "door (object id 2) leaf 1: no OBOA setup of door id 4098: placed by Bungie's rule",
        "door (object id 4) leaf 0: no OBOA setup of door id 4101: placed by Bungie's rule",
        "door (object id 4) leaf 1: no OBOA setup of door id 4101: placed by Bungie's rule"]
    assert [d.setups for d in read.doors] == [(0, None), (1, None), (1, None), (None, None)]


def test_an_environment_not_found_leaves_the_rest(loose):
    os.remove(loose / "AKEVgen.oni")
    read = read_level(loose / "ONLVgen.oni")
    assert read.environment is None and len(read.doors) == 4 and read.object_quads
    assert read.warnings == ["AKEVgen not found (AKEVgen.oni beside ONLVgen.oni does not hold it): imported without it"]
