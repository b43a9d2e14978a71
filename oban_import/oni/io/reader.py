"""Reads any file that holds OBANs: picks the container by content, then by extension."""

import fnmatch
import os

from ...core.errors import ObanError
from ...core.files import each_file, open_regular, read_head
from .container import (M3GM_TAG, OBAN_TAG, OBOA_TAG, ONCC_TAG, TRAC_TAG, TRAM_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG,
                        TRIA_TAG, TRMA_TAG, TRTA_TAG, TXMP_TAG, Container, looks_like_container, read_container)
from .oban import MAX_RECORD, Animation, check_all, read_raw_many
from .onisplit_xml import looks_like_xml, read_xml
from .tram_xml import looks_like_tram_xml

EXTENSIONS = (".oban", ".oni", ".dat", ".xml")
CONTENTS = (("objects", {OBOA_TAG}), ("characters", {ONCC_TAG}), ("bodies", {TRBS_TAG}), ("animations", {TRAM_TAG}),
            ("obans", {OBAN_TAG}), ("character parts", {TRAC_TAG, TRCM_TAG, TRGA_TAG, TRIA_TAG, TRMA_TAG, TRTA_TAG}))
RAW_AT_ONCE = 64     # raw files read before they are parsed together: at most 128 MB of records held
XML_HEAD = 1 << 16   # bytes of an .xml file enough to see its first element


def read_file(path: str, name_glob: str | None = None) -> list[Animation]:
    """Every OBAN instance in the file at `path`, checked; ObanError on bad input.

    `name_glob` (e.g. '*door*', case-insensitive) keeps only the instances it matches.
    """
    (read,) = read_files([path], name_glob)
    if isinstance(read, ObanError):
        raise read
    return read


def read_files(paths, name_glob: str | None = None, progress=None) -> list:
    """read_file() of each path: its animations, or the ObanError that refuses the file.
    Raw instance files are parsed RAW_AT_ONCE at a time, together (read_raw_many), and the
    animations of all the files are checked together (check_all), in one pass.
    `progress(fraction)` is called as the files are read."""
    name_filter = name_matcher(name_glob)
    paths = [os.fspath(path) for path in paths]
    read = []
    for first in range(0, len(paths), RAW_AT_ONCE):
        group = paths[first:first + RAW_AT_ONCE]
        read += _parse_raw(group, each_file(group, lambda path: _read_unchecked(path, name_filter)), name_filter)
        if progress:
            progress(len(read) / len(paths))
    owners = [index for index, r in enumerate(read) if isinstance(r, list) for _ in r]   # each animation's file
    for index, error in zip(owners, check_all([a for r in read if isinstance(r, list) for a in r],
                                              [paths[index] for index in owners])):
        if error and isinstance(read[index], list):   # the file's first refusal
            read[index] = error
    return read


class _RawHead(tuple):
    """(the first min(size, MAX_RECORD) bytes, size) of a raw instance file, not parsed yet."""


def _read_unchecked(path, name_filter):
    """By content, then by extension: a container's or an XML file's animations, or a raw
    instance file's _RawHead (all such a file can use, in one read)."""
    extension = os.path.splitext(path)[1].lower()
    read = read_container
    if extension not in (".oni", ".dat"):
        head, size = read_head(path, MAX_RECORD)
        if not looks_like_container(head):
            if extension != ".xml" and not looks_like_xml(head):
                return _RawHead((head, size))
            read = read_xml
    f, size = open_regular(path)
    with f:
        try:
            return read(f, path, size, name_filter)
        except OSError as error:
            raise ObanError(path, f"cannot be read: {error.strerror or error}") from None


def _parse_raw(paths, read, name_filter):
    """`read` (each_file of _read_unchecked) with each _RawHead parsed, all together."""
    raw = [index for index, r in enumerate(read) if isinstance(r, _RawHead)]
    for index, parsed in zip(raw, read_raw_many([read[i] for i in raw], [paths[i] for i in raw])):
        read[index] = parsed if isinstance(parsed, ObanError) or not name_filter else \
            [a for a in parsed if name_filter(a.name)]
    return read


def level_of_raw_data(path: str) -> str | None:
    """The level .dat beside a .raw (`levelN_Final.raw`), whose raw data it is, else None:
    read with the level, never on its own as an OBAN."""
    stem, extension = os.path.splitext(os.fspath(path))
    if extension.lower() != ".raw":
        return None
    return next((stem + dat for dat in (".dat", ".DAT") if os.path.isfile(stem + dat)), None)


def name_matcher(name_glob: str | None):
    """name -> bool for a case-insensitive glob ('*door*'); None for no glob."""
    if not name_glob:
        return None
    pattern = name_glob.lower()
    return lambda name: fnmatch.fnmatchcase(name.lower(), pattern)


def contents(path: str) -> frozenset:
    """What an Oni container holds besides OBANs (docs/objects.md, docs/characters.md), by
    the tags of its instances with data: 'objects' (an object setup array: a level, an OBOA
    .oni), 'characters' (character classes, ONCC), 'bodies' (body sets, TRBS), 'animations'
    (TRAMs), 'obans', 'character parts' (a collection, textures or a body's pieces), or else
    'mesh' or 'texture' (a loose .oni of one M3GM or TXMP); 'animations' for OniSplit's XML
    of a TRAM; empty for anything else (also for files that are not Oni containers, and
    without opening anything but .oni, .dat and .xml files, which only those can be)."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension == ".xml":
        return frozenset({"animations"}) if looks_like_tram_xml(read_head(os.fspath(path), XML_HEAD)[0]) \
            else frozenset()
    if extension not in (".oni", ".dat"):
        return frozenset()
    f, size = open_regular(os.fspath(path))
    with f:
        try:
            if not looks_like_container(f.read(12)):
                return frozenset()
            f.seek(0)
            container = Container(f, path, size)
            present = {bytes(tag) for tag, placeholder in zip(container.descriptors["tag"],
                                                               container.ends == container.starts)
                       if not placeholder}
        except OSError as error:
            raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
    found = {kind for kind, tags in CONTENTS if present & tags}
    if not found:
        found = {"mesh"} if M3GM_TAG in present else {"texture"} if TXMP_TAG in present else set()
    return frozenset(found)
