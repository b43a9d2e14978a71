"""Links across files (oni/io/container/library.py; docs/objects.md 1, 8): placeholders found
among the loose .oni files of the folder and nowhere else, each instance built once with its
warnings told again, files opened once."""

import os
import shutil

import pytest
from paths import DATA

from oban_import.core.errors import ObanError
from oban_import.oni.io.container.container import M3GM_TAG, PNTA_TAG, TXMP_TAG
from oban_import.oni.io.container.instance_file import instance_file_bytes
from oban_import.oni.io.container.library import Library, open_library

OBJECTS = os.path.join(DATA, "objects", "oni")
MESH = os.path.join(OBJECTS, "M3GMobj02_part0.oni")


def texture_link(library):
    """The value and descriptor of the mesh's texture link (the last of its seven, at 0x04)."""
    c = library.main
    mesh = c.first(M3GM_TAG)
    data, _ = c.instance(mesh, M3GM_TAG)
    return int.from_bytes(data[0x04 + 4 * 6:0x04 + 4 * 7], "little"), mesh


def test_a_placeholder_leads_to_the_file_of_its_name_beside():
    with open_library(MESH) as library:
        value, mesh = texture_link(library)
        other, index = library.follow(library.main, value, TXMP_TAG, mesh, "texture")
        assert other is not library.main and os.path.basename(other.path) == "TXMPtex02_bgra5551.oni"
        assert other.full_name(index) == "TXMPtex02_bgra5551" and not other.is_placeholder(index)
        assert library.open(other.path) is other and library.open_all([MESH, other.path]) == [library.main, other]


def test_a_placeholder_not_found_is_a_warning_naming_it(tmp_path):
    shutil.copy(MESH, tmp_path)
    with open_library(str(tmp_path / os.path.basename(MESH))) as library:
        value, mesh = texture_link(library)
        assert library.follow(library.main, value, TXMP_TAG, mesh, "texture") is None
        assert library.warnings == ["TXMPtex02_bgra5551 not found (TXMPtex02_bgra5551.oni beside "
                                    "M3GMobj02_part0.oni does not hold it): imported without it"]


@pytest.mark.parametrize("name", ["../M3GMother", "sub/M3GMother", "C:M3GMother"])
def test_a_placeholder_whose_name_is_a_path_is_never_followed_out_of_the_folder(tmp_path, name):
    inside = tmp_path / "inside"
    inside.mkdir()
    (tmp_path / "M3GMother.oni").write_bytes(instance_file_bytes([(M3GM_TAG, "M3GMother", bytes(40))]))
    owner = instance_file_bytes([(PNTA_TAG, "PNTAowner", bytes(0x38)), (M3GM_TAG, name, None)])
    path = inside / "PNTAowner.oni"
    path.write_bytes(owner)
    with Library(str(path)) as library:
        assert library.follow(library.main, 1 << 8 | 1, M3GM_TAG, 0, "mesh") is None
        assert len(library.containers) == 1 and "not found" in library.warnings[0]


def test_what_is_built_is_built_once_and_its_warnings_told_again(tmp_path):
    built = []

    def build(c, index):
        built.append(index)
        library.warn(f"warned about {index}")
        return object()

    with open_library(MESH) as library:
        first = library.cached(library.main, 0, build)
        library.events.clear()
        assert library.cached(library.main, 0, build) is first and built == [0]
        assert library.events == ["warned about 0"] and library.warnings == ["warned about 0"]
        together = library.cached_all([(library.main, 0), (library.main, 1), (library.main, 1)],
                                      lambda pairs: [f"made {index}" for _, index in pairs])
        assert together == [first, "made 1", "made 1"]


def test_a_file_that_cannot_be_opened_fails_the_read(tmp_path):
    junk = tmp_path / "M3GMjunk.oni"
    junk.write_bytes(b"not an oni file at all, and more bytes than a header needs" * 2)
    with pytest.raises(ObanError, match="not an Oni file"):
        with open_library(str(junk)):
            pass
