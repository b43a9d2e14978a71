"""Opening input files safely, for every reader: regular files only (a FIFO or a device
could block a read forever), errors as ObanError naming the file; and reading many, a
refused file not stopping the others."""

import os
import stat

from .errors import ObanError

PROGRESS_STEP = 16   # files (or objects) between two progress reports

# Non-blocking, so that opening a FIFO does not wait for a writer (it is refused after fstat).
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def open_regular(path: str) -> tuple:
    """(a binary file, its size) for a regular file; ObanError otherwise. Non-blocking, so
    that a FIFO is refused without waiting for a writer."""
    try:
        f = open(os.open(path, OPEN_FLAGS), "rb")
    except IsADirectoryError:
        raise ObanError(path, "is a directory, not a file") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise ObanError(path, f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    mode, size = (info := os.fstat(f.fileno())).st_mode, info.st_size
    if not stat.S_ISREG(mode):  # a pipe or device: read() may never end
        f.close()
        raise ObanError(path, "is a directory, not a file" if stat.S_ISDIR(mode) else "is not a regular file")
    return f, size


def read_bytes(path: str) -> bytes:
    """The whole of a regular file; ObanError naming it otherwise."""
    f, _ = open_regular(path)
    with f:
        try:
            return f.read()
        except OSError as error:
            raise ObanError(path, f"cannot be read: {error.strerror or error}") from None


def each_file(paths, read, progress=None) -> list:
    """read(path) for each path, in order: what it returns, or the ObanError it raises
    (the other files still read). `progress(share done)` every PROGRESS_STEP files."""
    out = []
    for index, path in enumerate(paths):
        try:
            out.append(read(path))
        except ObanError as error:
            out.append(error)
        if progress and index % PROGRESS_STEP == PROGRESS_STEP - 1:
            progress((index + 1) / len(paths))
    return out
