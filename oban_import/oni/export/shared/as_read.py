"""What was read, still: a value the user left alone comes back from Blender within float32
rounding of what the import read (Blender holds points, matrices and keys in float32, and the
import's change of axes and scale is undone in float64); within AS_READ of it, it is what was
read, and every export writes it as read."""

import numpy as np

AS_READ = 1e-5   # relative to the value read (at least 1)
NORMAL_AS_READ = 2e-2   # a unit normal Blender draws this close to the one set is it: before 4.5 Blender keeps a
                        # custom normal as angles in its corner's space, drawn up to 0.011 off on generated meshes


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


def normals_close(drawn, read) -> np.ndarray:
    """(n,) whether each of the (n, 3) unit normals Blender draws is within NORMAL_AS_READ of
    the one set (`read`, unit length, Blender's axes)."""
    return np.abs(drawn - read).max(axis=1, initial=0.0) <= NORMAL_AS_READ


def matrix_as_read(matrix, read) -> bool:
    """Whether a matrix is within AS_READ of `read`, relative to its largest entry (at least 1)."""
    return bool(np.abs(read - matrix).max() <= AS_READ * max(1.0, np.abs(matrix).max()))


def motion_as_read(errors) -> bool:
    """Whether a motion replays what was read: its worst relative error (each frame's, from
    engine.rotations.relative_errors) under AS_READ."""
    return bool(np.max(errors, initial=0.0) < AS_READ)
