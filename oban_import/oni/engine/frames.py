"""The engine's matrix at every frame (docs/engine.md 1-2), all frames at once."""

import numpy as np

from ..io.oban.record import LOCALIZED, Animation, matrix_from_columns
from .rotations import LOCALIZED_TURN, rotation_matrices


def sample_keys(animation: Animation, frames=None) -> tuple[np.ndarray, np.ndarray]:
    """Position (n, 3) and unit quaternion (n, 4, stored x y z w) at each frame, float64.

    A frame on a key takes that key (normalised: R(q) of docs/engine.md 1 does not see the
    length); between keys the position is lerped and the quaternion normalised-lerped
    with the shorter-arc flip; outside the keys the nearest end key holds.
    """
    f = np.arange(animation.frames, dtype=np.float64) if frames is None else np.asarray(frames, np.float64)
    keys = animation.keys
    key_frames = keys["frame"].astype(np.float64)
    before = np.maximum(np.searchsorted(key_frames, f, side="right") - 1, 0)  # the key at or before, or the first
    values = _blend(key_table(keys), key_frames, f, before, [len(keys)])
    return values[:, :3], values[:, 3:]


def sample_many(frame_counts: np.ndarray, key_counts: np.ndarray, key_frames: np.ndarray,
                table: np.ndarray) -> np.ndarray:
    """sample_keys for frames 0 .. F - 1 of several animations at once, one after another,
    the i-th with frame_counts[i] frames and key_counts[i] keys: (N, 7) position and unit
    quaternion (or (N, 4), the quaternion alone, from a (K, 4) table).

    `key_frames` (K,) and `table` (K, 7) are the frames and key_table() of all their keys
    in order; the table may also be that after a linear map of the positions and a linear
    isometry of the quaternions (a change of axes), which the blend commutes with. The
    result is laid out channel by channel (the transpose of a (C, N) array).
    """
    first_keys = run_starts(key_counts)
    last_keys = first_keys + key_counts - 1
    frames_of_key = np.repeat(frame_counts, key_counts)
    # each key is the key at or before the frames from its own (the first key: from 0) to the next key's
    begin = np.minimum(key_frames, frames_of_key)
    begin[first_keys] = 0
    end = np.empty_like(begin)
    end[:-1] = np.minimum(key_frames[1:], frames_of_key[:-1])
    end[last_keys] = frame_counts
    before = np.repeat(np.arange(len(key_frames)), end - begin)
    frames = np.arange(len(before), dtype=np.float64) - np.repeat(run_starts(frame_counts), frame_counts)
    return _blend(table, key_frames.astype(np.float64), frames, before, last_keys + 1)


def run_starts(sizes: np.ndarray) -> np.ndarray:
    """Where each run begins when runs of these sizes are laid end to end from 0."""
    return np.cumsum(sizes) - sizes


def key_table(keys: np.ndarray) -> np.ndarray:
    """(K, 7) float64: each key's position, then its rotation (x y z w as stored); laid
    out channel by channel (the transpose of a (7, K) array), as the blend reads it."""
    floats = np.ascontiguousarray(keys).view("<f4").reshape(-1, 8)
    rows = np.empty((7, len(floats)))
    rows[:3], rows[3:] = floats[:, 4:7].T, floats[:, :4].T
    return rows.T


def _blend(table, key_frames, frames, before, key_ends):
    """The engine's blend of key_table() rows (or of quaternions alone) at `frames`, `before` being each frame's key
    at or before it (or its animation's first key), `key_ends` the ends of every
    animation's keys.

    Every frame gets t in [0, 1) from that key towards the next one: t = 0 (a frame on a
    key, or outside the keys) gives that key exactly. The blend of two keys is never the
    zero quaternion the engine turns into the identity: check() refuses zero keys, and
    after the shorter-arc flip their dot product is >= 0.
    """
    ends = np.asarray(key_ends) - 1
    gaps = np.append(np.diff(key_frames), np.inf)
    gaps[ends] = np.inf                  # an animation's last key holds: t = 0
    t = frames - np.take(key_frames, before)
    t /= np.take(gaps, before)
    np.maximum(t, 0.0, out=t)

    # from each key to the next one, rotation on the shorter arc; an animation's last key holds
    rotations = table[:, -4:]
    flip = np.where(np.einsum("ij,ij->i", rotations[:-1], rotations[1:]) < 0.0, -1.0, 1.0)
    steps = np.zeros((table.shape[1], len(table)))    # channel by channel: each of them one run in memory
    steps[:, :-1] = table[1:].T
    steps[-4:, :-1] *= flip
    steps[:, :-1] -= table[:-1].T
    steps[:, ends] = 0.0
    values = np.empty((table.shape[1], len(frames)))
    np.take(steps, before, axis=1, out=values, mode="clip")
    values *= t
    values += np.take(np.ascontiguousarray(table.T), before, axis=1, mode="clip")
    w, x, y, z = quaternion = values[-4:]
    quaternion /= np.sqrt(w * w + x * x + y * y + z * z)
    return values.T


def frame_parts(animation: Animation, frames=None) -> tuple[np.ndarray, np.ndarray]:
    """Rotation (n, 3, 3) and translation (n, 3) with M(f) = [rotation . Base3 | translation].

    Rotation includes the Localized quarter turn; translation includes the base's.
    """
    position, quaternion = sample_keys(animation, frames)
    rotation = rotation_matrices(quaternion)
    base = matrix_from_columns(animation.base_matrix)
    translation = rotation @ base[:3, 3] + position
    if animation.has(LOCALIZED):
        rotation = LOCALIZED_TURN @ rotation
        translation = translation @ LOCALIZED_TURN.T
    return rotation, translation


def frame_matrices(animation: Animation, frames=None) -> np.ndarray:
    """M(f) of docs/engine.md 2 as (n, 4, 4) float64: T(position) . R(q) . Base, turned if Localized."""
    rotation, translation = frame_parts(animation, frames)
    m = np.zeros((len(rotation), 4, 4))
    m[:, :3, :3] = rotation @ matrix_from_columns(animation.base_matrix)[:3, :3]
    m[:, :3, 3] = translation
    m[:, 3, 3] = 1.0
    return m
