"""The engine's matrix at every frame (spec sections 3-4), all frames at once."""

import numpy as np

from .animation import LOCALIZED, matrix_from_columns

# Rx(+pi/2): y -> z. Localized (door) animations are turned by it (spec 4, step 5).
LOCALIZED_TURN = np.array([[1.0, 0.0, 0.0],
                           [0.0, 0.0, -1.0],
                           [0.0, 1.0, 0.0]])


STRIDE = 2.0 ** 33  # separates animations on one time line: any u32 key frame fits below it


def sample_keys(animation, frames=None):
    """Position (n, 3) and quaternion (n, 4, stored x y z w) at each frame, float64.

    A frame on a key takes that key as stored; between keys the position is lerped
    and the quaternion normalised-lerped with the shorter-arc flip; outside the keys
    the nearest end key holds.
    """
    f = np.arange(animation.frames, dtype=np.float64) if frames is None else np.asarray(frames, np.float64)
    return _sample(animation.keys, animation.keys["frame"].astype(np.float64), f, 0, len(animation.keys))


def sample_many(animations):
    """sample_keys for frames 0 .. frames - 1 of several animations at once, one after
    another: (position (N, 3), quaternion (N, 4), index of each frame's animation (N,))."""
    frame_counts = np.array([a.frames for a in animations])
    key_counts = np.array([len(a.keys) for a in animations])
    keys = np.concatenate([a.keys for a in animations])
    owner_of_key = np.repeat(np.arange(len(animations)), key_counts)
    owner = np.repeat(np.arange(len(animations)), frame_counts)
    first_frame = np.repeat(np.cumsum(frame_counts) - frame_counts, frame_counts)
    frame = np.arange(len(owner)) - first_frame
    key_end = np.cumsum(key_counts)
    position, quaternion = _sample(keys, owner_of_key * STRIDE + keys["frame"], owner * STRIDE + frame,
                                   (key_end - key_counts)[owner], key_end[owner])
    return position, quaternion, owner


def _sample(keys, key_times, times, first_key, end_key):
    """The engine's lookup and blend; keys[first_key:end_key] belong to each time.

    Every time gets t in [0, 1) between the key at or before it and the next one:
    t = 0 (a time on a key, or outside the keys) gives that key exactly as stored."""
    rotations = keys["rotation"].astype(np.float64)
    positions = keys["position"].astype(np.float64)
    after = np.searchsorted(key_times, times, side="right")     # first key later than the time
    before = np.clip(after - 1, first_key, end_key - 1)
    after = np.minimum(after, end_key - 1)
    start, span = key_times[before], key_times[after] - key_times[before]
    between = (times > start) & (span > 0)
    t = np.divide(times - start, span, out=np.zeros_like(times), where=between)[:, None]

    p_before = positions[before]
    position = p_before + t * (positions[after] - p_before)
    q_before, q_after = rotations[before], rotations[after]
    q_after *= np.where((q_before * q_after).sum(axis=1, keepdims=True) < 0.0, -1.0, 1.0)
    quaternion = (1.0 - t) * q_before + t * q_after
    length = np.linalg.norm(quaternion, axis=1, keepdims=True)
    blended = between[:, None] & (length > 0.0)
    quaternion = np.divide(quaternion, length, out=quaternion, where=blended)
    quaternion[between & (length[:, 0] == 0.0)] = (0.0, 0.0, 0.0, 1.0)  # MUrQuat_Lerp's zero case
    return position, quaternion


def rotation_matrices(quaternions):
    """(n, 4) stored quaternions -> (n, 3, 3) rotations, the engine's transposed convention."""
    x, y, z, w = np.moveaxis(np.asarray(quaternions, np.float64), -1, 0)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    r = np.empty(x.shape + (3, 3))
    r[..., 0, 0] = 1.0 - s * (y * y + z * z)
    r[..., 1, 0] = s * (x * y - w * z)
    r[..., 2, 0] = s * (x * z + w * y)
    r[..., 0, 1] = s * (x * y + w * z)
    r[..., 1, 1] = 1.0 - s * (x * x + z * z)
    r[..., 2, 1] = s * (y * z - w * x)
    r[..., 0, 2] = s * (x * z - w * y)
    r[..., 1, 2] = s * (y * z + w * x)
    r[..., 2, 2] = 1.0 - s * (x * x + y * y)
    return r


def frame_parts(animation, frames=None):
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


def frame_matrices(animation, frames=None):
    """M(f) of spec 4 as (n, 4, 4) float64: T(position) . R(q) . Base, turned if Localized."""
    rotation, translation = frame_parts(animation, frames)
    m = np.zeros((len(rotation), 4, 4))
    m[:, :3, :3] = rotation @ matrix_from_columns(animation.base_matrix)[:3, :3]
    m[:, :3, 3] = translation
    m[:, 3, 3] = 1.0
    return m
