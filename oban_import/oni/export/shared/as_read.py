"""What was read, still: a value the user left alone comes back from Blender within float32
rounding of what the import read (Blender holds points, matrices and keys in float32, and the
import's change of axes and scale is undone in float64); within AS_READ of it, it is what was
read, and every export writes it as read."""

import numpy as np

AS_READ = 1e-5   # relative to the value read (at least 1)


def close(values, read) -> np.ndarray:
    """Elementwise: whether each of `values` is within AS_READ of `read` (broadcast)."""
    return np.abs(values - read) <= AS_READ * np.maximum(1.0, np.abs(read))


def rows_close(values, read) -> np.ndarray:
    """(n,) whether each row of `values` is within AS_READ of `read`'s."""
    return close(values, read).all(axis=1)


def kept_as_read(values, read, comparable=True) -> np.ndarray:
    """float32 `values`, each within AS_READ of what was read (`read`, where `comparable`,
    broadcast) exactly that."""
    return np.where(comparable & close(values, read), read, values).astype(np.float32)


def matrix_as_read(matrix, read) -> bool:
    """Whether a matrix is within AS_READ of `read`, relative to its largest entry (at least 1)."""
    return bool(np.abs(read - matrix).max() <= AS_READ * max(1.0, np.abs(matrix).max()))


def motion_as_read(errors) -> bool:
    """Whether a motion replays what was read: its worst relative error (each frame's, from
    engine.rotations.relative_errors) under AS_READ."""
    return bool(np.max(errors, initial=0.0) < AS_READ)
