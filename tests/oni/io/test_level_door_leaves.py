"""door_leaves: a door's leaf setups as OniSplit's -create:level makes them (docs/level.md 13),
against OniSplit's own: every leaf of the sample level (examples/level5_Final.dat), of its level
with placed objects (tests/data/environment/placed/level) and of -create:level's ONLV of doors
moved and turned (placed/moved_door), each field bit for bit."""

import lzma
import os
from dataclasses import replace

import numpy as np
import pytest
from paths import DATA, EXAMPLES

from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.level.read import read_level
from oban_import.oni.io.level_rebuild.door_leaves import leaf_records, moved_leaves
from oban_import.oni.io.level_rebuild.onlv_file import stored_level

PLACED = os.path.join(DATA, "environment", "placed")
MOVED = os.path.join(PLACED, "moved_door")   # door id: its leaves' setups; doors 2, 4, 11 moved or turned
FIELDS = ("flags", "door_gunk_id", "door_id", "physics", "script_id", "position", "rotation", "scale", "origin",
          "name", "padding")


def unpacked(tmp_path, folder, name):
    """`folder`/`name`.xz into tmp_path; its path."""
    with lzma.open(os.path.join(folder, name + ".xz")) as f:
        (tmp_path / name).write_bytes(f.read())
    return str(tmp_path / name)


def level_of(tmp_path, folder):
    for name in ("level5_Final.dat", "level5_Final.raw"):
        unpacked(tmp_path, folder, name)
    return str(tmp_path / "level5_Final.dat")


def records_of(path):
    with open_library(path) as library:
        return stored_level(library.main).records


def assert_made(doors, records):
    """Every leaf of `doors` (their setups index `records`) is leaf_records' bit for bit."""
    leaves = 0
    for door in doors:
        made = leaf_records(door)
        assert len(made) == door.leaf_count
        for record, setup in zip(made, door.setups):
            stored = records[setup]
            assert all(record[f].tobytes() == stored[f].tobytes() for f in FIELDS), (door.id, setup)
            leaves += 1
    assert leaves == 16


@pytest.mark.parametrize("source", ["sample", "placed"])
def test_every_leaf_of_onisplits_levels_is_made_bit_for_bit(tmp_path, source):
    path = os.path.join(EXAMPLES, "level5_Final.dat") if source == "sample" else level_of(tmp_path, os.path.join(
        PLACED, "level"))
    assert_made(read_level(path).doors, records_of(path))


def test_moved_and_turned_doors_leaves_are_create_levels(tmp_path):
    """The doors of OniSplit's level of the moved doors, their leaves against the ONLV
    -create:level made of them (not the one the level holds, the add-on's)."""
    doors = read_level(level_of(tmp_path, os.path.join(MOVED, "level"))).doors
    before = {door.id: door for door in read_level(os.path.join(EXAMPLES, "level5_Final.dat")).doors}
    moved = [door.id for door in doors if door.position.tobytes() + door.rotation.tobytes()
             != before[door.id].position.tobytes() + before[door.id].rotation.tobytes()]
    assert moved == [2, 4, 11]
    assert_made(doors, records_of(unpacked(tmp_path, MOVED, "ONLVlevel5.oni")))


def listed_with(doors):
    """An object list (ids 1…) holding `doors` at their ids, nothing else of use."""
    listed = [None] * max(door.id for door in doors)
    for door in doors:
        listed[door.id - 1] = door
    return listed


def test_only_the_moved_doors_leaves_are_made_again():
    doors = read_level(os.path.join(EXAMPLES, "level5_Final.dat")).doors
    assert moved_leaves(doors, listed_with(doors)) == ({}, "")
    double = next(door for door in doors if door.id == 4)
    turned = replace(double, position=double.position + np.float32(1), rotation=np.float32([0, 150, 0]))
    found, why = moved_leaves(doors, listed_with([turned if door is double else door for door in doors]))
    assert why == "" and sorted(found) == list(double.setups)
    assert [record.tobytes() for record in found.values()] == [record.tobytes() for record in leaf_records(turned)]
    assert not np.array_equal(found[double.setups[0]]["origin"], records_of(
        os.path.join(EXAMPLES, "level5_Final.dat"))[double.setups[0]]["origin"])


@pytest.mark.parametrize("change, said", [
    ("classless", "door 4 ('dr_double') is moved and its class's first geometry, its meshes or its animation is not "
                  "in the level read"),
    ("shared", "door 4 ('dr_double') is moved and its door id 4 is another door's too"),
])
def test_a_moved_door_whose_leaves_cannot_be_made_says_why(change, said):
    doors = read_level(os.path.join(EXAMPLES, "level5_Final.dat")).doors
    k = next(k for k, door in enumerate(doors) if door.id == 4)
    if change == "classless":
        doors[k] = replace(doors[k], door_class=None)
    else:
        doors[0] = replace(doors[0], door_id=doors[k].door_id)
    moved = list(doors)
    moved[k] = replace(doors[k], position=doors[k].position + np.float32(1))
    found, why = moved_leaves(doors, listed_with(moved))
    assert found == {} and why.startswith(said)
