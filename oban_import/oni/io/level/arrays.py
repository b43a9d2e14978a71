"""Pieces the level templates share (docs/level.md 1, 5): NUL-padded names, the first fault
of an array (their counted arrays: container.counted)."""

import numpy as np


def text(value: bytes) -> str:
    """A NUL-padded name as stored: up to its first NUL, each byte one character."""
    return value.split(b"\0", 1)[0].decode("latin-1")


def first_bad(bad: np.ndarray) -> int | None:
    """The index of the first true of a boolean array (its rows: of the first row with one), or None."""
    rows = bad.any(axis=tuple(range(1, bad.ndim)))
    return int(np.argmax(rows)) if rows.any() else None
