"""Rotation conventions in one place (docs/engine.md 1): the engine's stored quaternion
(x, y, z, w) against the usual Hamilton one (w, x, y, z), quaternion algebra, the
nearest rotation of a matrix, the Localized quarter turn, and the relative error
every comparison of matrices uses."""

import numpy as np

TINY = np.finfo(np.float64).tiny
# Rx(+pi/2): y -> z. Localized (door) animations are turned by it (docs/engine.md 2, step 5).
LOCALIZED_TURN = np.array([[1.0, 0.0, 0.0],
                           [0.0, 0.0, -1.0],
                           [0.0, 1.0, 0.0]])
LOCALIZED_TURN_QUATERNION = np.array([np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0])  # the same, w x y z
IDENTITY_QUATERNION = np.array([1.0, 0.0, 0.0, 0.0])  # w x y z
NEAR_ROTATION = 1e-3   # max |X^T X - I| from which nearest_rotations' POLAR_STEPS reach rounding
POLAR_STEPS = 3


def hamilton_from_stored(q) -> np.ndarray:
    """(..., 4) stored x y z w -> the usual w x y z of the same rotation: (-w, x, y, z)."""
    q = np.asarray(q, np.float64)
    return np.concatenate([-q[..., 3:], q[..., :3]], axis=-1)


def stored_from_hamilton(q) -> np.ndarray:
    """(..., 4) usual w x y z -> stored x y z w of the same rotation: (x, y, z, -w), given
    here negated, (-x, -y, -z, w), so that a w >= 0 stays >= 0."""
    q = np.asarray(q, np.float64)
    return np.concatenate([-q[..., 1:], q[..., :1]], axis=-1)


def rotation_matrices(quaternions) -> np.ndarray:
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


def multiply(a, b, axis=-1) -> np.ndarray:
    """Hamilton products of quaternions w x y z, their components along `axis` ((..., 4);
    0: (4, n), one row a component)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, np.float64), axis, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, np.float64), axis, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=axis)


def rotate(q, v) -> np.ndarray:
    """Vectors (..., 3) turned by unit quaternions (..., 4) w x y z: v + w.t + u x t, t = 2 u x v."""
    w, x, y, z = np.moveaxis(np.asarray(q, np.float64), -1, 0)
    vx, vy, vz = np.moveaxis(np.asarray(v, np.float64), -1, 0)
    tx, ty, tz = 2.0 * (y * vz - z * vy), 2.0 * (z * vx - x * vz), 2.0 * (x * vy - y * vx)
    return np.stack([vx + w * tx + (y * tz - z * ty),
                     vy + w * ty + (z * tx - x * tz),
                     vz + w * tz + (x * ty - y * tx)], axis=-1)


def quaternion_matrices(q) -> np.ndarray:
    """(n, 4) unit quaternions w x y z -> (n, 3, 3) rotations."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def quaternions(rotation) -> np.ndarray:
    """(n, 3, 3) rotations -> (n, 4) Hamilton quaternions (w, x, y, z), signs continuous."""
    return continuous(matrix_quaternions(rotation))


def continuous(q, starts=(0,)) -> np.ndarray:
    """Signs flipped so that each quaternion is on the near side of the one before; each
    run from one of `starts` to the next begins with w >= 0."""
    starts = np.asarray(starts)
    flip = np.empty(len(q), np.uint8)
    flip[1:] = np.einsum("ij,ij->i", q[1:], q[:-1]) < 0.0
    flip[starts] = q[starts, 0] < 0.0
    odd = np.bitwise_xor.accumulate(flip)   # flips so far, counted from the first run's start
    odd ^= np.repeat(odd[starts] ^ flip[starts], np.diff(np.append(starts, len(q))))
    return q * (1.0 - 2.0 * odd)[:, None]


def matrix_quaternions(rotation) -> np.ndarray:
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


def nearest_rotations(matrices) -> np.ndarray:
    """(n, 3, 3) -> the nearest proper rotations (a mirror has none: its nearest proper one).

    A matrix already near a rotation (a rotation in float32, most bases and exported frames)
    takes Newton-Schulz steps X <- X (3I - X^T X) / 2 towards the polar factor the SVD gives,
    each about squaring how far X^T X is from I (1e-3 -> rounding in three), at half the
    SVD's cost; the others take the SVD.
    """
    matrices = np.asarray(matrices, np.float64)
    gram = np.swapaxes(matrices, 1, 2) @ matrices
    near = (np.abs(gram - np.eye(3)).max(axis=(1, 2)) <= NEAR_ROTATION) & (np.linalg.det(matrices) > 0.0)
    rotations = np.empty_like(matrices)
    x, gram = matrices[near], gram[near]
    for step in range(POLAR_STEPS):
        x = x @ (1.5 * np.eye(3) - 0.5 * (gram if step == 0 else np.swapaxes(x, 1, 2) @ x))
    rotations[near] = x
    if not near.all():
        u, _, vt = np.linalg.svd(matrices[~near])
        u[np.linalg.det(u @ vt) < 0, :, -1] *= -1.0
        rotations[~near] = u @ vt
    return rotations


def split_rotation_scale(matrices: np.ndarray, per_matrix: bool = False) -> tuple[np.ndarray, np.ndarray, object]:
    """(n, 3, 3) ~ rotation . diag(scale): exact for a rotation times an axis-aligned scale.

    Returns (rotations, scales (n, 3), relative error: the largest, or each matrix's);
    a mirror gives negative scales; a zero column gives a zero scale.
    """
    scale = np.linalg.norm(matrices, axis=1)
    scale[np.linalg.det(matrices) < 0] *= -1.0
    rotation = nearest_rotations(matrices / np.where(scale == 0.0, 1.0, scale)[:, None, :])
    error = relative_linear_errors(rotation * scale[:, None, :], matrices)
    return rotation, scale, error if per_matrix else float(error.max())


def relative_linear_errors(got, wanted) -> np.ndarray:
    """Per matrix, max|got - wanted| / max|wanted| of (n, 3, 3) parts (|.| the largest entry)."""
    return (np.abs(got - wanted).max(axis=(1, 2))
            / np.maximum(np.abs(wanted).max(axis=(1, 2)), TINY))


def relative_errors(got, wanted) -> np.ndarray:
    """Per frame, how far `got` is from `wanted` ((n, 4, 4) or (n, 3, 4)): the larger of
    max|d(3x3)| / max|wanted 3x3|   (the linear part against its own size: about radians) and
    max|d(translation)| / max(1, max|wanted translation|),
    |.| the largest absolute entry. It bounds the plain max|dM| / max(1, max|M|) from above,
    and a signed permutation of rows (the Localized turn) does not change it.
    """
    linear = relative_linear_errors(got[:, :3, :3], wanted[:, :3, :3])
    translation = (np.abs(got[:, :3, 3] - wanted[:, :3, 3]).max(axis=1)
                   / np.maximum(np.abs(wanted[:, :3, 3]).max(axis=1), 1.0))
    return np.maximum(linear, translation)
