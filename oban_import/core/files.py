"""Opening input files safely, for every reader: regular files only (a FIFO or a device
could block a read forever), errors as ObanError naming the file; reading many, a refused
file not stopping the others. What an export writes goes through output_files.py."""

import io
import os
import stat

from .errors import ObanError

PROGRESS_STEP = 16   # files (or objects) between two progress reports

# Non-blocking, so that opening a FIFO does not wait for a writer (it is refused after fstat).
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def open_regular(path: str) -> tuple:
    """(a binary file, its size) for a regular file; ObanError otherwise. Non-blocking, so
    that a FIFO is refused without waiting for a writer."""
    descriptor, size = _open_descriptor(path)
    return open(descriptor, "rb"), size


def open_small_whole(path: str, limit: int) -> tuple:
    """(a binary file, its size) for a regular file, ObanError otherwise: read whole into
    memory (io.BytesIO) when it has at most `limit` bytes, as read_head reads it."""
    descriptor, size = _open_descriptor(path)
    if size > limit:
        return open(descriptor, "rb"), size
    return io.BytesIO(_read_descriptor(descriptor, path, size)), size


def read_head(path: str, limit: int) -> tuple:
    """(the first min(size, limit) bytes, size) of a regular file; ObanError otherwise.
    Four system calls, where open_regular() and a read take seven (a file object checks
    its descriptor again, asks whether it is a terminal, where it stands)."""
    descriptor, size = _open_descriptor(path)
    return _read_descriptor(descriptor, path, min(size, limit)), size


def _read_descriptor(descriptor, path, wanted):
    """`wanted` bytes (fewer if the file ends first) from an open descriptor, which it closes."""
    chunks = []
    try:
        while wanted and (chunk := os.read(descriptor, wanted)):
            chunks.append(chunk)
            wanted -= len(chunk)
    except OSError as error:
        raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _open_descriptor(path: str) -> tuple:
    """(an open file descriptor, the size) of a regular file; ObanError otherwise."""
    try:
        descriptor = os.open(path, OPEN_FLAGS)
    except IsADirectoryError:
        raise ObanError(path, "is a directory, not a file") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise ObanError(path, f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    try:
        info = os.fstat(descriptor)
    except OSError as error:
        os.close(descriptor)
        raise ObanError(path, f"cannot be read: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):  # a pipe or device: read() may never end
        os.close(descriptor)
        raise ObanError(path, "is a directory, not a file" if stat.S_ISDIR(info.st_mode) else "is not a regular file")
    return descriptor, info.st_size


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


class Closes:
    """A context manager that closes what it is (its close()) on leaving."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
