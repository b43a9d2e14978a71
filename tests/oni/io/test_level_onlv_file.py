"""onlv_file: a level's ONLV .oni as OniSplit's -create:level writes it, with the object setups
given (docs/level.md 13). The setups as read give back OniSplit's own file: the sample level's
(tests/data/environment/oni/ONLVlevel5.oni), from the loose file and from the .dat (which keeps
one of instances alike), and that of a level with placed objects (tests/data/environment/placed:
-create:level's ONLV but the 64 bytes after each name, which -import writes 0)."""

import lzma
import os
import shutil

import numpy as np
import pytest
from onlv_bytes import names_zeroed
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.level_rebuild.oboa_xml import Setup
from oban_import.oni.io.level_rebuild.onlv_file import UNUSED, onlv_file_bytes, stored_level
from oban_import.oni.io.objects.oboa import OBJECT_DTYPE, OBOA_OBJECTS_OFFSET
from oban_import.oni.io.objects.read import empty_setup, read_objects

ENVIRONMENT = os.path.join(DATA, "environment")
PLACED = os.path.join(ENVIRONMENT, "placed")
ONISPLITS = os.path.join(ENVIRONMENT, "oni", "ONLVlevel5.oni")


def used(level):
    return [n for n, record in enumerate(level.records) if not empty_setup(record)]


@pytest.fixture
def placed_level(tmp_path):
    """tests/data/environment/placed/level unpacked into tmp_path."""
    for name in ("level5_Final.dat", "level5_Final.raw"):
        with lzma.open(os.path.join(PLACED, "level", name + ".xz")) as f:
            (tmp_path / name).write_bytes(f.read())
    return str(tmp_path / "level5_Final.dat")


@pytest.mark.parametrize("path", [ONISPLITS, os.path.join(ENVIRONMENT, "level", "level5_Final.dat")])
def test_the_sample_levels_setups_give_back_onisplits_onlv(path):
    with open_library(path) as library:
        level = stored_level(library.main)
        assert len(level.records) == 16 + UNUSED
        written = onlv_file_bytes(level, used(level))
    assert written == open(ONISPLITS, "rb").read()


def test_a_level_with_placed_objects_gives_back_create_levels_onlv(placed_level, tmp_path):
    onisplits = tmp_path / "ONLVlevel5.oni"
    with lzma.open(os.path.join(PLACED, "onisplit", "ONLVlevel5.oni.xz")) as f:
        onisplits.write_bytes(f.read())
    with open_library(placed_level) as library:
        level = stored_level(library.main)
        assert [record["name"].decode() for record in level.records[:9]] == [f"obj0{k}_part{int(k == 2)}"
                                                                             for k in range(9)]
        assert not any(record["padding"].tobytes().strip(b"\0") for record in level.records)   # -import wrote 0
        written = onlv_file_bytes(level, used(level))
    assert written != onisplits.read_bytes() and written == names_zeroed(str(onisplits))


def test_a_setup_from_the_scene_is_stored_as_given(placed_level, tmp_path):
    with open_library(placed_level) as library:
        level = stored_level(library.main)
        moved = Setup(name="moved", flags=0x1200, door_gunk_id=0, door_id=0, physics=1, script_id=7,
                      position=np.float32([1, 2, 3]), rotation=np.float32([0, 0, 0.6, 0.8]), scale=2.0,
                      origin=np.arange(12, dtype=np.float32), geometries=["obj05_part0", "obj05_part1"],
                      animation="obj05_anim")
        written = onlv_file_bytes(level, [(moved, level.records[0])] + used(level)[1:])
    folder = tmp_path / "written"
    folder.mkdir()
    (folder / "ONLVlevel5.oni").write_bytes(written)
    for name in ("M3GMobj05_part0", "M3GMobj05_part1", "OBANobj05_anim", "TXMPtex05_dxt1", "TXMPtex00_bgra4444"):
        shutil.copy(os.path.join(DATA, "objects", "oni", name + ".oni"), folder)
    objects = read_objects(str(folder / "ONLVlevel5.oni")).objects
    first = objects[0]
    assert first.name == "moved" and first.flags == 0x1200 and first.physics == 1 and first.script_id == 7
    assert np.array_equal(first.position, [1, 2, 3]) and np.array_equal(first.rotation, np.float32([0, 0, 0.6, 0.8]))
    assert first.scale == 2.0 and np.array_equal(first.origin, np.arange(12))
    assert len(first.meshes) == 2 and first.animation is not None
    with open_library(placed_level) as library:
        as_read = read_objects(placed_level, library).objects
    assert [o.name for o in objects[1:]] == [o.name for o in as_read[1:]]


def test_a_file_without_one_level_instance_is_refused():
    path = os.path.join(ENVIRONMENT, "oni", "AKEVlevel5.oni")
    with open_library(path) as library, pytest.raises(ObanError, match="holds 0 level instances"):
        stored_level(library.main)


def onisplits_own(tmp_path, name_tail=b""):
    """OniSplit's own -create:level ONLV of the placed level (its placed objects' mesh file names in
    the 64 bytes after their names), setup 0's name field given `name_tail` past its NUL."""
    with lzma.open(os.path.join(PLACED, "onisplit", "ONLVlevel5.oni.xz")) as f:
        data = bytearray(f.read())
    path = tmp_path / "ONLVlevel5.oni"
    path.write_bytes(data)
    with open_library(str(path)) as library:
        name = library.main.record(stored_level(library.main).oboa)[1] + 8 + OBOA_OBJECTS_OFFSET \
            + OBJECT_DTYPE.fields["name"][1]
    end = data.index(b"\0", name)
    data[end + 1:end + 1 + len(name_tail)] = name_tail
    path.write_bytes(data)
    return str(path)


def test_the_bytes_after_a_setups_name_are_written_back_as_read(tmp_path):
    """Non-zero bytes past a setup's name as read (-create:level's mesh file names in the 64 after
    it; a byte after the name's NUL) come back: an unedited rebuild of OniSplit's own ONLV is that
    file byte for byte, and a setup from the scene at a stored place, under its stored name, keeps them."""
    path = onisplits_own(tmp_path, name_tail=b"\x07tail")
    with open_library(path) as library:
        level = stored_level(library.main)
        padded = [n for n in used(level) if level.records[n]["padding"].tobytes().strip(b"\0")]
        assert padded == list(range(9)) and level.records[0]["name"] == b"obj00_part0\0\x07tail"
        assert onlv_file_bytes(level, used(level)) == open(path, "rb").read()
        moved = Setup(name="obj00_part0", flags=0x200, door_gunk_id=0, door_id=0, physics=1, script_id=7,
                      position=np.float32([1, 2, 3]), rotation=np.float32([0, 0, 0.6, 0.8]), scale=2.0,
                      origin=np.arange(12, dtype=np.float32), geometries=["obj00_part0"])
        renamed = Setup(**{**moved.__dict__, "name": "renamed"})
        written = [onlv_file_bytes(level, [(setup, level.records[0])] + used(level)[1:]) for setup in (moved, renamed)]
    for data, name in zip(written, (b"obj00_part0\0\x07tail", b"renamed")):
        (tmp_path / "back").mkdir(exist_ok=True)
        (tmp_path / "back" / "ONLVlevel5.oni").write_bytes(data)
        with open_library(str(tmp_path / "back" / "ONLVlevel5.oni")) as library:
            back = stored_level(library.main).records[0]
        assert back["padding"].tobytes() == level.records[0]["padding"].tobytes() and back["name"] == name


@pytest.mark.parametrize("count", [65503, 65504, 65535, 65536])
def test_setups_past_an_oboas_count_are_refused(count, tmp_path):
    """An OBOA counts its setups in 16 bits, and -create:level adds 32 unused: 65,503 setups are
    written (the OBOA counting 65,535), more are refused naming the count and the limit."""
    scene = Setup(name="x", flags=0x200, door_gunk_id=0, door_id=0, physics=0, script_id=0,
                  position=np.zeros(3, np.float32), rotation=np.float32([0, 0, 0, 1]), scale=1.0,
                  origin=np.zeros(12, np.float32), geometries=[])
    with open_library(ONISPLITS) as library:
        level = stored_level(library.main)
        if count + UNUSED > 0xFFFF:
            with pytest.raises(ObanError, match=f"{count} object setups and the 32 unused -create:level adds: "
                                                f"{count + UNUSED}, more than an OBOA counts \\(65535\\)$"):
                onlv_file_bytes(level, [(scene, None)] * count)
            return
        data = onlv_file_bytes(level, [(scene, None)] * count)
    (tmp_path / "ONLVlevel5.oni").write_bytes(data)
    with open_library(str(tmp_path / "ONLVlevel5.oni")) as library:
        assert len(stored_level(library.main).records) == 0xFFFF
