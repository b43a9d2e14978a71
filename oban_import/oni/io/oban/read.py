"""Every OBAN of any file that holds them: a raw instance file, an .oni or level .dat, or
OniSplit's XML, the container picked by content, then by extension."""

import os

from ....core.errors import ObanError
from ....core.files import each_file, open_regular, read_head
from ....core.names import name_matcher
from ..container.container import OBAN_TAG, Container, looks_like_container
from .onisplit_xml import looks_like_xml, read_xml
from .record import MAX_RECORD, Animation, check, check_all, onisplit_name, parse_record, read_raw_many

RAW_AT_ONCE = 64     # raw files read before they are parsed together: bounds the records held (64 x MAX_RECORD)


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
    read = _read_container
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


def _read_container(f, path: str, size: int, name_filter=None) -> list[Animation]:
    """Every OBAN of an .oni or level .dat file open as `f` (`size` bytes), in descriptor order,
    unchecked; `name_filter(name) -> bool` picks instances by name before their records are read."""
    container = Container(f, path, size)
    fallback = onisplit_name(path)
    animations = []
    for i in container.with_data(OBAN_TAG):
        name = container.short_name(i) or fallback
        if name_filter and not name_filter(name):
            continue
        record, offset = container.record(i)
        animations.append(parse_record(record, path, name, file_offset=offset))
    return animations


def read_oban(c: Container, index: int) -> Animation:
    """The OBAN at descriptor `index` of container `c`, checked (a Library builds it once)."""
    record, offset = c.record(index)
    if c.tag_of(index) != OBAN_TAG or len(record) < 8:
        raise ObanError(c.path, f"{c.label(index)} is not an OBAN with data")
    animation = parse_record(record, c.path, c.short_name(index) or c.label(index), file_offset=offset)
    check(animation, c.path)
    return animation
