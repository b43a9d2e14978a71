"""list_file: an object list as its own .oni, against OniSplit's: read back from the files its
plain -create wrote (tests/data/environment/objc), every list is written byte for byte."""

import os

import pytest
from paths import DATA

from oban_import.oni.io.container.library import open_library
from oban_import.oni.io.level.object_lists import LIST_PREFIX, is_object_list, read_object_list
from oban_import.oni.io.level_rebuild.list_file import list_file_bytes

OBJC = os.path.join(DATA, "environment", "objc")


@pytest.mark.parametrize("name", sorted(os.listdir(OBJC)))
def test_onisplits_list_files_are_written_byte_for_byte(name):
    path = os.path.join(OBJC, name)
    with open_library(path) as library:
        c = library.main
        index = next(i for i in range(len(c.descriptors)) if is_object_list(c, i))
        objects, warnings = read_object_list(c, index)
        full = c.full_name(index)
    assert warnings == [] and len(objects.ids) in (4, 12)
    written = list_file_bytes(full[len(LIST_PREFIX):], objects.types.tolist(), objects.ids, objects.flags,
                              objects.positions, objects.rotations, objects.payloads)
    assert written == open(path, "rb").read()


def test_own_data_is_padded_to_four_bytes():
    one = list_file_bytes("Combat", ["CMBT"], [3], [0], [(1, 2, 3)], [(0, 90, 0)], [b"abcde"])
    two = list_file_bytes("Combat", ["CMBT"], [3], [0], [(1, 2, 3)], [(0, 90, 0)], [b"abcde\0\0\0"])
    assert one == two and b"TBMC" in one and b"BINACJBOCombat\0" in one
