"""Oni frames -> Blender location / rotation / scale (docs/engine.md 4), all frames at once.

`axes` is the 3x3 change of basis from Oni to Blender axes (the default maps
(x, y, z) to (x, -z, y)); `scale` multiplies translations. Rotations are worked
as quaternions (Blender's w, x, y, z): the engine's R(q) for a stored (x, y, z, w)
is the usual rotation of (-w, x, y, z) (docs/engine.md 1), and a change of basis by A turns
a quaternion's vector part by A; so no per-frame matrix is needed.
"""

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from ...core.runs import bounded_runs
from ..io.oban.record import LOCALIZED, Animation, all_keys, matrix_from_columns
from .frames import key_table, run_starts, sample_many
from .rotations import (IDENTITY_QUATERNION, LOCALIZED_TURN_QUATERNION, continuous, hamilton_from_stored,
                        matrix_quaternions, multiply, quaternion_matrices, rotate, split_rotation_scale)

DEFAULT_AXES = np.array([[1.0, 0.0, 0.0],
                         [0.0, 0.0, -1.0],
                         [0.0, 1.0, 0.0]])
AXIS_VECTORS = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1), "-X": (-1, 0, 0), "-Y": (0, -1, 0), "-Z": (0, 0, -1)}
BASE_TOLERANCE = 1e-5  # relative; a base matrix held less exactly than this is reported
CHUNK_FRAMES = 1 << 14  # frames worked on at a time: the temporaries stay in the CPU's cache


def axes_matrix(forward: str, up: str) -> np.ndarray:
    """The Oni -> Blender change of basis for an orientation choice ('-Z', 'Y'): Oni's
    `forward` axis becomes Blender's +Y and its `up` +Z (bpy_extras' axis_conversion)."""
    f, u = np.array(AXIS_VECTORS[forward], np.float64), np.array(AXIS_VECTORS[up], np.float64)
    if abs(f @ u):
        raise ValueError(f"forward {forward} and up {up} use the same axis")
    source = np.column_stack([f, u, np.cross(f, u)])
    return np.column_stack([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]) @ source.T


def blender_points(points, axes_matrix: np.ndarray, scale: float) -> np.ndarray:
    """(..., 3) Oni points (or offsets) -> Blender's axes and units: s.A.p (to_oni.oni_points turns
    them back)."""
    return scale * np.asarray(points, np.float64) @ np.asarray(axes_matrix, np.float64).T


def blender_matrices(matrix: np.ndarray, axes_matrix: np.ndarray, scale: float) -> np.ndarray:
    """[sA 0; 0 1] . W . [sA 0; 0 1]^-1 for (..., 4, 4) engine matrices W (docs/objects.md 6)."""
    c, inverse = np.eye(4), np.eye(4)
    c[:3, :3] = scale * np.asarray(axes_matrix, np.float64)
    inverse[:3, :3] = c[:3, :3].T / (scale * scale)     # A is a signed permutation: A^-1 = A^T
    return c @ matrix @ inverse


def camera_matrices(matrix: np.ndarray, axes_matrix: np.ndarray, scale: float) -> np.ndarray:
    """T(sA.t) . [A.L] for (..., 4, 4) engine matrices [L | t] of a camera (docs/engine.md 4,
    cameras: both look down their local -Z with +Y up)."""
    axes = np.asarray(axes_matrix, np.float64)
    out = np.zeros(np.shape(matrix))
    out[..., :3, :3] = axes @ matrix[..., :3, :3]
    out[..., :3, 3] = scale * matrix[..., :3, 3] @ axes.T
    out[..., 3, 3] = 1.0
    return out


@dataclass
class Transforms:
    """Location, rotation and scale at n frames, side by side as F-curves want them."""
    columns: np.ndarray      # (n, 10): location (3), unit quaternion (4, Blender's w x y z, signs continuous), scale (3)
    error: float             # max |held - exact| / max |exact| of the 3x3 parts
    note: str = ""           # why these were computed on every frame where the keys were asked for

    @classmethod
    def of(cls, location, quaternion, scale, error) -> "Transforms":
        return cls(np.concatenate([location, quaternion, scale], axis=1), error)

    @property
    def location(self) -> np.ndarray:
        return self.columns[:, 0:3]

    @property
    def quaternion(self) -> np.ndarray:
        return self.columns[:, 3:7]

    @property
    def scale(self) -> np.ndarray:
        return self.columns[:, 7:10]

    def matrices(self) -> np.ndarray:
        """(n, 4, 4) matrices these transforms give in Blender."""
        m = np.zeros((len(self.columns), 4, 4))
        m[:, :3, :3] = quaternion_matrices(self.quaternion) * self.scale[:, None, :]
        m[:, :3, 3] = self.location
        m[:, 3, 3] = 1.0
        return m

    def take(self, frames) -> "Transforms":
        """The transforms at these frame indices, in this order."""
        columns = self.columns[frames]
        columns[:, 3:7] = continuous(columns[:, 3:7])
        return Transforms(columns, self.error, self.note)


def transforms_many(animations: list[Animation], axes: np.ndarray = DEFAULT_AXES, scale: float = 1.0,
                    camera: bool = False, chunk_frames: int = CHUNK_FRAMES,
                    dtype: type = np.float64) -> Iterator[Transforms]:
    """Yields the Blender transforms of every frame of each animation, in order, computed
    together for at most `chunk_frames` frames at a time, a longer animation alone (the
    temporaries stay in the CPU's cache, and a caller that needs only the first ones waits
    for no more). The
    columns are computed in float64 and kept as `dtype` (float32: half the memory).

    The keys (_BlenderKeys), not the frames, are
    turned into Blender's terms: a linear isometry of the quaternions (and a linear map
    of the positions) commutes with the engine's blend.
    """
    if not animations:
        return
    keys = _BlenderKeys(animations, axes, scale, camera)
    frame_counts, key_counts, key_starts = keys.frame_counts, keys.key_counts, keys.key_starts
    frame_starts = run_starts(frame_counts)
    for run in bounded_runs(frame_counts.tolist(), chunk_frames):
        first, end = run.start, run.stop
        chunk = slice(key_starts[first], key_starts[end - 1] + key_counts[end - 1])
        counts = frame_counts[first:end]
        sampled = sample_many(counts, key_counts[first:end], keys.frames[chunk], keys.table[chunk])
        if keys.offsets[first:end].any():
            sampled[:, 0:3] += rotate(sampled[:, 3:7], np.repeat(keys.offsets[first:end], counts, axis=0))
        columns = np.empty((10, len(sampled)), dtype).T   # channel by channel, as F-curves take them
        columns[:, :7] = sampled
        columns.T[7:10] = np.repeat(keys.held_scale[first:end].T, counts, axis=1)
        starts = frame_starts[first:end] - frame_starts[first]
        for start, count, error in zip(starts, counts, keys.errors[first:end]):
            yield Transforms(columns[start:start + count], float(error))


@dataclass
class KeyTransforms:
    """An animation's own keys in Blender's terms: blended LINEAR component by component
    and normalised (as Blender evaluates quaternion F-curves), they give the engine's
    frames exactly (docs/engine.md 4). Where the object cannot hold its base matrix (a
    translation, which keys of location cannot follow, as R(q).b is not linear in the
    blend; or a 3x3 part loc/rot/scale cannot hold), the keys are T(p).R(q) alone, for a
    pivot, and `child` is the base as its child's local matrix. `reason` says why the keys
    cannot be exact where they cannot ("" when they are)."""
    frames: np.ndarray       # (k,) OBAN frames of the keys
    columns: np.ndarray      # (k, 10): location, quaternion (w x y z, unnormalised, signs continuous), scale
    error: float             # as Transforms.error
    reason: str = ""         # why the keys alone are not exact ("" when they are)
    child: np.ndarray | None = None   # 4x4: the child's local matrix under a pivot that the keys move


def key_transforms_many(animations: list[Animation], axes: np.ndarray = DEFAULT_AXES, scale: float = 1.0,
                        camera: bool = False) -> list[KeyTransforms]:
    """Each animation's keys in Blender's terms, exact at every frame: on the object itself
    where it can hold the base matrix, else on a pivot with the base on its child."""
    if not animations:
        return []
    keys = _BlenderKeys(animations, axes, scale, camera, pivot=True)
    columns = np.empty((10, len(keys.frames))).T   # channel by channel, as F-curves take them
    columns.T[:7] = keys.table.T
    columns.T[7:] = np.repeat(keys.held_scale.T, keys.key_counts, axis=1)
    frames = keys.frames.astype(np.float64)
    children = iter(keys.children)
    return [KeyTransforms(frames[start:start + count], columns[start:start + count], 0.0 if pivoted else error,
                          child=next(children) if pivoted else None)
            for start, count, error, pivoted in zip(keys.key_starts.tolist(), keys.key_counts.tolist(),
                                                    keys.errors.tolist(), keys.pivoted.tolist())]


def in_front(matrix: np.ndarray, motion):
    """The motion (Transforms or KeyTransforms) of `matrix` . W(f): a placement, a parent's
    inverse, a Localized object's origin (4x4, Blender's terms). Where `matrix` is a
    rotation times a uniform scale it composes exactly on the columns (a fixed left
    quaternion keeps the signs continuous, and commutes with the keys' blend); otherwise
    every-frame transforms go through the matrices (their error says how far), and keys
    get a `reason`."""
    rotation, scale, error = split_rotation_scale(matrix[None, :3, :3])
    exact = np.ptp(scale) <= BASE_TOLERANCE * np.abs(scale).max() and error <= BASE_TOLERANCE
    if isinstance(motion, KeyTransforms) and (motion.reason or not exact):
        return replace(motion, reason=motion.reason or "its placement or parent is not a rotation times "
                                                       "a uniform scale")
    if not exact:
        composed = decompose(matrix @ motion.matrices())
        return replace(motion, columns=composed.columns, error=max(composed.error, motion.error))
    columns = motion.columns.copy()
    columns[:, 0:3] = motion.columns[:, 0:3] @ matrix[:3, :3].T + matrix[:3, 3]
    columns[:, 3:7] = multiply(matrix_quaternions(rotation), motion.columns[:, 3:7])
    columns[:, 7:10] *= scale[0, 0]
    return replace(motion, columns=columns)


class _BlenderKeys:
    """The keys of several animations in Blender's terms, side by side, and what the
    base matrix adds. Per frame: rotation A.turn.R(q).A^-1 . R_c and scale s_c, where
    R_c . diag(s_c) is the constant part, A.Base.A^-1 (objects) or A.Base (cameras);
    location s.A.turn.(p + R(q).b) for the base's translation b. With `pivot`, an animation
    whose base has a translation or a 3x3 part loc/rot/scale cannot hold keeps none of its
    base (`pivoted`): its keys are A.turn.T(p).R(q) and the base goes to `children`."""

    def __init__(self, animations, axes, scale, camera, pivot=False):
        axes = np.asarray(axes, np.float64)
        matrices = np.array([a.base_matrix for a in animations], np.float64).reshape(-1, 4, 3)
        base3, base_translation = np.swapaxes(matrices[:, :3], 1, 2), matrices[:, 3]
        constant = axes @ base3 if camera else axes @ base3 @ np.linalg.inv(axes)
        held_rotation, self.held_scale, self.errors = split_rotation_scale(constant, per_matrix=True)
        self.pivoted = np.zeros(len(animations), bool)
        if pivot:
            self.pivoted = base_translation.any(axis=1) | (self.errors > BASE_TOLERANCE)
            held_rotation[self.pivoted], self.held_scale[self.pivoted] = np.eye(3), 1.0
            base_translation = np.where(self.pivoted[:, None], 0.0, base_translation)
            bases = matrix_from_columns(matrices.reshape(-1, 12)[self.pivoted])
            self.children = (camera_matrices if camera else blender_matrices)(bases, axes, scale)
        # s.A.turn.R(q).b = R(q_blender) . R_c^T . s.A.b
        self.offsets = np.einsum("ni,nij->nj", scale * base_translation @ axes.T, held_rotation)
        self.frame_counts = np.array([a.frames for a in animations])
        self.key_counts = np.array([len(a.keys) for a in animations])
        self.key_starts = run_starts(self.key_counts)
        keys = all_keys(animations)
        self.frames = keys["frame"]
        key_owner = np.repeat(np.arange(len(animations)), self.key_counts)
        localized = np.array([a.has(LOCALIZED) for a in animations])
        held = matrix_quaternions(held_rotation)
        # Keys on the near side of the key before, each animation's first with w >= 0: then
        # every blend is too (the engine's flip never fires), and so are the frames.
        self.table = _blender_keys(keys, localized[key_owner], held, key_owner, axes, scale)
        self.table[:, 3:] = continuous(self.table[:, 3:], self.key_starts)


def _blender_keys(keys, turned, held, owner, axes, scale):
    """key_table() of `keys` in Blender's terms, quaternions unnormalised: position
    s.A.turn.p, quaternion A.turn.q.A^-1 . R_c (the engine's q being the usual (-w, x, y, z)),
    turned where `turned` (Localized), R_c being the `held` quaternion (one per animation)
    of each key's `owner`."""
    table = key_table(keys)
    positions, rotations = table.T[:3], table.T[3:]        # channel by channel: each row one run in memory
    rotations[:] = hamilton_from_stored(rotations.T).T
    turned = np.flatnonzero(turned)   # a few keys: indices, not a mask over all of them
    if len(turned):
        positions[:, turned] = rotate(LOCALIZED_TURN_QUATERNION, positions[:, turned].T).T
        rotations[:, turned] = multiply(LOCALIZED_TURN_QUATERNION, rotations[:, turned].T).T
    positions[:] = (scale * axes) @ positions
    rotations[1:] = (np.linalg.det(axes) * axes) @ rotations[1:]    # the change of basis
    if (held != IDENTITY_QUATERNION).any():   # else nothing to turn (a base of scales alone)
        rotations[:] = multiply(rotations, np.take(held.T, owner, axis=1), axis=0)
    return table


def decompose(matrices: np.ndarray) -> Transforms:
    """Any (n, 4, 4) affine matrices -> the nearest location, rotation and scale; a matrix equal
    to the one before it (an animation holding, a cutscene between its events) is worked once."""
    matrices = np.asarray(matrices)
    new = np.ones(len(matrices), bool)
    new[1:] = (matrices[1:] != matrices[:-1]).any(axis=(1, 2))
    if not new.all():
        heads = decompose(matrices[new])
        return Transforms(heads.columns[np.cumsum(new) - 1], heads.error)
    rotation, scale, error = split_rotation_scale(matrices[:, :3, :3])
    return Transforms.of(matrices[:, :3, 3], continuous(matrix_quaternions(rotation)), scale, error)


TWO_PI = 2.0 * np.pi
EULER_AXES = {"XYZ": (0, 1, 2), "XZY": (0, 2, 1), "YXZ": (1, 0, 2),
              "YZX": (1, 2, 0), "ZXY": (2, 0, 1), "ZYX": (2, 1, 0)}


def eulers(rotation: np.ndarray, order: str) -> np.ndarray:
    """(n, 3, 3) rotations -> (n, 3) Blender Euler angles (x, y, z) for `order`
    ('XYZ': x applied first, R = Rz.Ry.Rx), each frame the equivalent closest to
    the frame before."""
    i, j, k = EULER_AXES[order]
    parity = 1.0 if (j - i) % 3 == 1 else -1.0
    m = rotation
    cos_j = np.hypot(m[:, i, i], m[:, j, i])
    angle_j = np.arctan2(-parity * m[:, k, i], cos_j)
    locked = cos_j < 1e-9
    angle_i = np.where(locked, np.arctan2(-parity * m[:, j, k], m[:, j, j]),
                       np.arctan2(parity * m[:, k, j], m[:, k, k]))
    angle_k = np.where(locked, 0.0, np.arctan2(parity * m[:, j, i], m[:, i, i]))
    result = np.empty((len(m), 3))
    result[:, i], result[:, j], result[:, k] = angle_i, angle_j, angle_k
    return _continuous(result, (i, j, k))


def _continuous(angles, axes_order):
    """Pick, frame by frame, the equivalent Euler triple (also (a+pi, pi-b, c+pi)) nearer the
    one picked the frame before (the angles' distances summed, each angle taken to the multiple
    of 2 pi nearest; the first triple on a tie), then move each angle by the multiple of 2 pi
    nearest the frame before. Each pick depends on the last only through which triple it took,
    so the picks follow from each frame's rule for both (no loop over the frames)."""
    i, j, k = axes_order
    flipped = angles.copy()
    flipped[:, i] += np.pi
    flipped[:, j] = np.pi - flipped[:, j]
    flipped[:, k] += np.pi
    candidates = np.stack([angles, flipped])                    # (2, n, 3)
    steps = candidates[None, :, 1:] - candidates[:, None, :-1]  # (from, to, frame - 1, angle)
    cost = np.abs(steps - TWO_PI * np.round(steps / TWO_PI)).sum(axis=-1)
    takes_flipped = cost[:, 1] < cost[:, 0]                     # (after the first, after the flipped)
    # a frame's rule: the same pick after either (a fresh start), or the last one kept or swapped
    fresh = takes_flipped[0] == takes_flipped[1]
    swaps = np.cumsum(~fresh & takes_flipped[0])
    last_fresh = np.maximum.accumulate(np.where(fresh, np.arange(len(fresh)), -1))
    since = np.maximum(last_fresh, 0)
    fresh_pick = np.where(last_fresh >= 0, takes_flipped[0][since], False)   # before any: frame 0's, the first
    swapped = (swaps - np.where(last_fresh >= 0, swaps[since], 0)) % 2 == 1
    picks = np.concatenate([[False], fresh_pick ^ swapped])
    picked = candidates[picks.astype(np.intp), np.arange(len(angles))]
    turns = np.zeros_like(picked)
    turns[1:] = np.cumsum(np.round((picked[:-1] - picked[1:]) / TWO_PI), axis=0)
    return picked + TWO_PI * turns
