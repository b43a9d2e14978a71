"""Oni frames -> Blender location / rotation / scale (spec 5), all frames at once.

`axes` is the 3x3 change of basis from Oni to Blender axes (the default maps
(x, y, z) to (x, -z, y)); `scale` multiplies translations.
"""

from dataclasses import dataclass

import numpy as np

from .animation import matrix_from_columns
from .engine import frame_parts

DEFAULT_AXES = np.array([[1.0, 0.0, 0.0],
                         [0.0, 0.0, -1.0],
                         [0.0, 1.0, 0.0]])
BASE_TOLERANCE = 1e-5  # relative; a base matrix held less exactly than this is reported


@dataclass
class Transforms:
    location: np.ndarray     # (n, 3)
    rotation: np.ndarray     # (n, 3, 3) pure rotations
    scale: np.ndarray        # (n, 3)
    error: float             # max |held - exact| / max |exact| of the 3x3 parts

    def matrices(self):
        """(n, 4, 4) matrices these transforms give in Blender."""
        m = np.zeros((len(self.location), 4, 4))
        m[:, :3, :3] = self.rotation * self.scale[:, None, :]
        m[:, :3, 3] = self.location
        m[:, 3, 3] = 1.0
        return m

    def take(self, frames):
        """The transforms at these frame indices, in this order."""
        return Transforms(self.location[frames], self.rotation[frames], self.scale[frames], self.error)


def object_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = [sA] M [sA]^-1: for empties and objects whose data lives in converted axes."""
    axes = np.asarray(axes, np.float64)
    return _transforms(animation, axes, axes @ _base3(animation) @ np.linalg.inv(axes), scale)


def camera_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = T(sAt) . A . L: a Blender camera looks where the Oni camera looked."""
    axes = np.asarray(axes, np.float64)
    return _transforms(animation, axes, axes @ _base3(animation), scale)


def decompose(matrices):
    """Any (n, 4, 4) affine matrices -> the nearest location, rotation and scale."""
    rotation, scale, error = split_rotation_scale(matrices[:, :3, :3])
    return Transforms(matrices[:, :3, 3].copy(), rotation, scale, error)


def _base3(animation):
    return matrix_from_columns(animation.base_matrix)[:3, :3]


def _transforms(animation, axes, constant, scale):
    """Per-frame rotation A.R(f).A^-1 times the constant part, split as rotation . diag(scale)."""
    rotation, translation = frame_parts(animation)
    held_rotation, held_scale, error = split_rotation_scale(constant[None])
    moving = axes @ rotation @ np.linalg.inv(axes)
    return Transforms(
        location=scale * translation @ axes.T,
        rotation=moving @ held_rotation,
        scale=np.repeat(held_scale, len(rotation), axis=0),
        error=error,
    )


def split_rotation_scale(matrices):
    """(n, 3, 3) ~ rotation . diag(scale): exact for a rotation times an axis-aligned scale.

    Returns (rotations, scales (n, 3), largest relative error); a mirror gives negative scales.
    """
    scale = np.linalg.norm(matrices, axis=1)
    scale[np.linalg.det(matrices) < 0] *= -1.0
    u, _, vt = np.linalg.svd(matrices / scale[:, None, :])
    improper = np.linalg.det(u @ vt) < 0  # only for degenerate input: keep proper rotations
    u[improper, :, -1] *= -1.0
    rotation = u @ vt
    error = np.abs(rotation * scale[:, None, :] - matrices).max() / max(np.abs(matrices).max(), 1e-30)
    return rotation, scale, float(error)


def quaternions(rotation):
    """(n, 3, 3) rotations -> (n, 4) Blender quaternions (w, x, y, z), signs continuous."""
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
    q = candidates[np.arange(len(m)), largest] / (4.0 * big)[:, None]
    q[0] *= np.sign(q[0, 0]) or 1.0
    flips = np.sign((q[1:] * q[:-1]).sum(axis=1))
    flips[flips == 0] = 1.0
    q[1:] *= np.cumprod(flips)[:, None]
    return q


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
