"""A file's TRAMs: a loose .oni's, a level's (.dat + .raw), or OniSplit's XML of one, as
OniSplit's -create makes it (docs/characters.md 9)."""

import os

from ....core.files import open_regular
from ..container.container import TRAM_TAG
from ..container.library import Library, open_library, reading
from ..objects.read import main_instance
from .read import read_tram_instances
from .tram import Tram
from .xml_read import read_tram_xml


def read_tram_file(path: str) -> Tram:
    """The TRAM of a loose .oni (the first one of a level .dat), its raw data from the file's raw
    table (or the level's .raw); or of OniSplit's XML of one (.xml), as OniSplit's -create makes it
    (docs/characters.md 9)."""
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() == ".xml":
        with reading(path):
            f, size = open_regular(path)
            with f:
                return read_tram_xml(f, path, size)[0]
    with open_library(path) as library:
        c = library.main
        return library.cached_all([(c, main_instance(c, TRAM_TAG, "animation (TRAM)"))], read_tram_instances)[0]


def read_trams(path: str, library: Library | None = None) -> list[Tram]:
    """Every TRAM of a level .dat (+ .raw) or a .oni, in descriptor order; the one of
    OniSplit's XML of a TRAM."""
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() == ".xml":
        return [read_tram_file(path)]
    with open_library(path, library) as library:
        c = library.main
        return library.cached_all([(c, i) for i in c.with_data(TRAM_TAG)], read_tram_instances)
