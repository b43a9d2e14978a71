"""Oni frames -> Blender location / rotation / scale (spec 5), all frames at once.

`axes` is the 3x3 change of basis from Oni to Blender axes (the default maps
(x, y, z) to (x, -z, y)); `scale` multiplies translations. Rotations are worked
as quaternions (Blender's w, x, y, z): the engine's R(q) for a stored (x, y, z, w)
is the usual rotation of (-w, x, y, z) (spec 3), and a change of basis by A turns
a quaternion's vector part by A; so no per-frame matrix is needed.
"""

from dataclasses import dataclass

import numpy as np

from .animation import LOCALIZED
from .engine import sample_many

DEFAULT_AXES = np.array([[1.0, 0.0, 0.0],
                         [0.0, 0.0, -1.0],
                         [0.0, 1.0, 0.0]])
BASE_TOLERANCE = 1e-5  # relative; a base matrix held less exactly than this is reported
LOCALIZED_TURN_QUATERNION = np.array([np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0])  # Rx(+pi/2)


@dataclass
class Transforms:
    location: np.ndarray     # (n, 3)
    quaternion: np.ndarray   # (n, 4) unit, Blender's w x y z, signs continuous
    scale: np.ndarray        # (n, 3)
    error: float             # max |held - exact| / max |exact| of the 3x3 parts

    def matrices(self):
        """(n, 4, 4) matrices these transforms give in Blender."""
        m = np.zeros((len(self.location), 4, 4))
        m[:, :3, :3] = quaternion_matrices(self.quaternion) * self.scale[:, None, :]
        m[:, :3, 3] = self.location
        m[:, 3, 3] = 1.0
        return m

    def take(self, frames):
        """The transforms at these frame indices, in this order."""
        return Transforms(self.location[frames], continuous(self.quaternion[frames]), self.scale[frames],
                          self.error)


def object_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = [sA] M [sA]^-1: for empties and objects whose data lives in converted axes."""
    return transforms_many([animation], axes, scale)[0]


def camera_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = T(sAt) . A . L: a Blender camera looks where the Oni camera looked."""
    return transforms_many([animation], axes, scale, camera=True)[0]


def transforms_many(animations, axes=DEFAULT_AXES, scale=1.0, camera=False):
    """The Blender transforms of every frame of several animations, computed together.

    Per frame: rotation A.turn.R(q).A^-1 . R_c and scale s_c, where R_c . diag(s_c) is
    the constant part, A.Base.A^-1 (objects) or A.Base (cameras); location s.A.t(f).
    """
    axes = np.asarray(axes, np.float64)
    position, stored, owner = sample_many(animations)
    columns = np.array([a.base_matrix for a in animations], np.float64).reshape(-1, 4, 3)
    base3, base_translation = np.swapaxes(columns[:, :3], 1, 2), columns[:, 3]
    constant = axes @ base3 if camera else axes @ base3 @ np.linalg.inv(axes)
    held_rotation, held_scale, errors = split_rotation_scale(constant, per_matrix=True)

    q = np.concatenate([-stored[:, 3:], stored[:, :3]], axis=1)      # engine R(q): usual (-w, x, y, z)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    translation = position
    moved = base_translation.any(axis=1)[owner]                       # R(q) . base translation
    translation[moved] += rotate(q[moved], base_translation[owner[moved]])
    turned = np.array([a.has(LOCALIZED) for a in animations])[owner]
    q[turned] = multiply(LOCALIZED_TURN_QUATERNION, q[turned])
    translation[turned] = rotate(LOCALIZED_TURN_QUATERNION, translation[turned])
    q[:, 1:] = np.linalg.det(axes) * q[:, 1:] @ axes.T               # the change of basis
    q = multiply(q, matrix_quaternions(held_rotation)[owner])
    location = scale * translation @ axes.T

    ends = np.cumsum([a.frames for a in animations])
    q = continuous(q, ends - [a.frames for a in animations])
    return [Transforms(location[end - a.frames:end], q[end - a.frames:end],
                       held_scale[owner[end - a.frames:end]], float(errors[i]))
            for i, (a, end) in enumerate(zip(animations, ends))]


def decompose(matrices):
    """Any (n, 4, 4) affine matrices -> the nearest location, rotation and scale."""
    rotation, scale, error = split_rotation_scale(matrices[:, :3, :3])
    return Transforms(matrices[:, :3, 3].copy(), continuous(matrix_quaternions(rotation)), scale, error)


def split_rotation_scale(matrices, per_matrix=False):
    """(n, 3, 3) ~ rotation . diag(scale): exact for a rotation times an axis-aligned scale.

    Returns (rotations, scales (n, 3), relative error: the largest, or each matrix's);
    a mirror gives negative scales; a zero column gives a zero scale.
    """
    scale = np.linalg.norm(matrices, axis=1)
    scale[np.linalg.det(matrices) < 0] *= -1.0
    u, _, vt = np.linalg.svd(matrices / np.where(scale == 0.0, 1.0, scale)[:, None, :])
    improper = np.linalg.det(u @ vt) < 0  # only for degenerate input: keep proper rotations
    u[improper, :, -1] *= -1.0
    rotation = u @ vt
    deviation = np.abs(rotation * scale[:, None, :] - matrices).max(axis=(1, 2))
    error = deviation / np.maximum(np.abs(matrices).max(axis=(1, 2)), 1e-30)
    return rotation, scale, error if per_matrix else float(error.max())


def multiply(a, b):
    """Hamilton products of (..., 4) quaternions w x y z."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, np.float64), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def rotate(q, v):
    """Vectors (..., 3) turned by unit quaternions (..., 4)."""
    w, u = np.asarray(q)[..., :1], np.asarray(q)[..., 1:]
    twice = 2.0 * np.cross(u, v)
    return v + w * twice + np.cross(u, twice)


def quaternion_matrices(q):
    """(n, 4) unit quaternions w x y z -> (n, 3, 3) rotations."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def quaternions(rotation):
    """(n, 3, 3) rotations -> (n, 4) Blender quaternions (w, x, y, z), signs continuous."""
    return continuous(matrix_quaternions(rotation))


def continuous(q, starts=(0,)):
    """Signs flipped so that each quaternion is on the near side of the one before; each
    run from one of `starts` to the next begins with w >= 0."""
    starts = np.asarray(starts)
    flip = np.zeros(len(q), np.int64)
    flip[1:] = (q[1:] * q[:-1]).sum(axis=1) < 0.0
    flip[starts] = q[starts, 0] < 0.0
    flips = np.cumsum(flip)
    flips -= np.repeat(flips[starts] - flip[starts], np.diff(np.append(starts, len(q))))
    return np.where((flips % 2 == 1)[:, None], -q, q)


def matrix_quaternions(rotation):
    """(n, 3, 3) rotations -> (n, 4) unit quaternions w x y z (each on its own)."""
    m = rotation
    trace_terms = np.stack([
        1.0 + m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2],
        1.0 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2],
        1.0 - m[:, 0, 0] + m[:, 1, 1] - m[:, 2, 2],
        1.0 - m[:, 0, 0] - m[:, 1, 1] + m[:, 2, 2],
    ], axis=1)
    largest = np.argmax(trace_terms, axis=1)
    big = 0.5 * np.sqrt(np.maximum(trace_terms[np.arange(len(m)), largest], 0.0))
    d21, d02, d10 = m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]
    s01, s02, s12 = m[:, 0, 1] + m[:, 1, 0], m[:, 0, 2] + m[:, 2, 0], m[:, 1, 2] + m[:, 2, 1]
    candidates = np.stack([
        np.stack([4 * big * big, d21, d02, d10], axis=1),   # w largest
        np.stack([d21, 4 * big * big, s01, s02], axis=1),   # x largest
        np.stack([d02, s01, 4 * big * big, s12], axis=1),   # y largest
        np.stack([d10, s02, s12, 4 * big * big], axis=1),   # z largest
    ], axis=1)
    return candidates[np.arange(len(m)), largest] / (4.0 * big)[:, None]


EULER_AXES = {"XYZ": (0, 1, 2), "XZY": (0, 2, 1), "YXZ": (1, 0, 2),
              "YZX": (1, 2, 0), "ZXY": (2, 0, 1), "ZYX": (2, 1, 0)}


def eulers(rotation, order):
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
    """Pick, frame by frame, the equivalent Euler triple (also (a+pi, pi-b, c+pi)) and
    the multiples of 2 pi closest to the previous frame."""
    i, j, k = axes_order
    flipped = angles.copy()
    flipped[:, i] += np.pi
    flipped[:, j] = np.pi - flipped[:, j]
    flipped[:, k] += np.pi
    two_pi = 2.0 * np.pi
    out = angles.tolist()
    alternative = flipped.tolist()
    previous = out[0]
    for n in range(1, len(out)):
        best = None
        for candidate in (out[n], alternative[n]):
            moved = [c + two_pi * round((p - c) / two_pi) for c, p in zip(candidate, previous)]
            distance = sum(abs(a - b) for a, b in zip(moved, previous))
            if best is None or distance < best[0]:
                best = (distance, moved)
        previous = out[n] = best[1]
    return np.array(out).reshape(-1, 3)
