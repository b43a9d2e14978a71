"""The pieces every level template is made of (docs/level.md 1, 5): a u32 count and its items,
checked against the instance before anything is made of them, and NUL-padded names."""

import numpy as np

from ....core.errors import ObanError

COUNT_OFFSET = 0x14   # the u32 count of an array template; its items follow it


def counted(data: bytes, dtype, path: str, label: str, what: str, offset: int = COUNT_OFFSET) -> np.ndarray:
    """The items (`what`) after the u32 count at `offset` of an instance's data, the count
    checked against the instance's size first; a copy, so that the file's bytes can go."""
    dtype = np.dtype(dtype)
    if len(data) < offset + 4:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for its {what} count at 0x{offset:x}")
    count = int.from_bytes(data[offset:offset + 4], "little")
    room = (len(data) - offset - 4) // dtype.itemsize
    if count > room:
        raise ObanError(path, f"{label}: {what} count says {count} but only {room} fit in the instance")
    return np.frombuffer(data, dtype, count=count, offset=offset + 4).copy()


def text(value: bytes) -> str:
    """A NUL-padded name as stored: up to its first NUL, each byte one character."""
    return value.split(b"\0", 1)[0].decode("latin-1")


def first_bad(bad: np.ndarray) -> int | None:
    """The index of the first true of a boolean array (its rows: of the first row with one), or None."""
    rows = bad.any(axis=tuple(range(1, bad.ndim)))
    return int(np.argmax(rows)) if rows.any() else None
