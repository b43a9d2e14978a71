"""Reads any file that holds OBANs: picks the container by content, then by extension."""

import fnmatch
import os
import stat

from ..errors import ObanError
from .container import looks_like_container, read_container
from .oban import Animation, read_raw
from .onisplit_xml import looks_like_xml, read_xml

EXTENSIONS = (".oban", ".oni", ".dat", ".xml")
# Non-blocking, so that opening a FIFO does not wait for a writer (it is refused after fstat).
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_file(path: str, name_glob: str | None = None) -> list[Animation]:
    """Every OBAN instance in the file at `path`, checked; ObanError on bad input.

    `name_glob` (e.g. '*door*', case-insensitive) keeps only the instances it matches.
    """
    path = os.fspath(path)
    name_filter = None
    if name_glob:
        pattern = name_glob.lower()
        name_filter = lambda name: fnmatch.fnmatchcase(name.lower(), pattern)
    try:
        f = open(os.open(path, OPEN_FLAGS), "rb")
    except IsADirectoryError:
        raise ObanError(path, "is a directory, not a file") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise ObanError(path, f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    with f:
        try:
            return _read(f, path, name_filter)
        except OSError as error:
            raise ObanError(path, f"cannot be read: {error.strerror or error}") from None


def _read(f, path, name_filter):
    mode, size = (info := os.fstat(f.fileno())).st_mode, info.st_size
    if stat.S_ISDIR(mode):
        raise ObanError(path, "is a directory, not a file")
    if not stat.S_ISREG(mode):  # a pipe or device: read() may never end
        raise ObanError(path, "is not a regular file")
    head = f.read(12)
    f.seek(0)
    extension = os.path.splitext(path)[1].lower()
    if looks_like_container(head) or extension in (".oni", ".dat"):
        return read_container(f, path, size, name_filter)
    if extension == ".xml" or looks_like_xml(head):
        return read_xml(f, path, size, name_filter)
    return [a for a in read_raw(f, path, size) if not name_filter or name_filter(a.name)]
