"""Reads any file that holds OBANs: picks the container by content, then by extension."""

import fnmatch
import os
import stat

from . import binary, xml_reader
from .errors import ObanError

EXTENSIONS = (".oban", ".oni", ".dat", ".xml")


def read_file(path, name_glob=None):
    """Every OBAN instance in the file at `path`, checked; ObanError on bad input.

    `name_glob` (e.g. '*door*', case-insensitive) keeps only the instances it matches.
    """
    path = os.fspath(path)
    name_filter = None
    if name_glob:
        pattern = name_glob.lower()
        name_filter = lambda name: fnmatch.fnmatchcase(name.lower(), pattern)
    try:
        mode = os.stat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a pipe or device: open() or read() may never end
            raise ObanError(path, "is not a regular file")
        with open(path, "rb") as f:
            head = f.read(12)
    except IsADirectoryError:
        raise ObanError(path, "is a directory, not a file") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise ObanError(path, f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    extension = os.path.splitext(path)[1].lower()
    try:
        if binary.looks_like_container(head) or extension in (".oni", ".dat"):
            animations = binary.read_container(path, name_filter)
        elif extension == ".xml" or xml_reader.looks_like_xml(head):
            animations = xml_reader.read_xml(path, name_filter)
        else:
            animations = [a for a in binary.read_raw(path) if not name_filter or name_filter(a.name)]
    except OSError as error:
        raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
    return animations
