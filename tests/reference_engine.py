"""A deliberately plain re-implementation of spec section 4, one frame at a time,
in pure Python (no numpy), to check the project's vectorised engine against."""

import math


def quaternion_to_matrix(x, y, z, w):
    """Spec 3, written out column by column (rows returned)."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    column0 = (1 - s * (y * y + z * z), s * (x * y) - s * (w * z), s * (x * z) + s * (w * y))
    column1 = (s * (x * y) + s * (w * z), 1 - s * (x * x + z * z), s * (y * z) - s * (w * x))
    column2 = (s * (x * z) - s * (w * y), s * (y * z) + s * (w * x), 1 - s * (x * x + y * y))
    return [[column0[r], column1[r], column2[r]] for r in range(3)]


def multiply(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(4)) for c in range(4)] for r in range(4)]


def from_columns(twelve):
    rows = [[twelve[3 * c + r] for c in range(4)] for r in range(3)]
    return rows + [[0.0, 0.0, 0.0, 1.0]]


def lerp_quaternion(a, b, t):
    """MUrQuat_Lerp: shorter arc, linear blend, normalise; zero becomes identity."""
    if sum(p * q for p, q in zip(a, b)) < 0:
        b = [-v for v in b]
    q = [(1 - t) * p + t * r for p, r in zip(a, b)]
    length = math.sqrt(sum(v * v for v in q))
    if length == 0:
        return [0.0, 0.0, 0.0, 1.0]
    return [v / length for v in q]


def matrix_at(keys, base, localized, f):
    """keys: list of (quaternion xyzw, position xyz, frame); base: 12 floats by columns."""
    quaternion = position = None
    for i, (q, p, frame) in enumerate(keys):
        if frame == f:
            quaternion, position = list(q), list(p)
            break
        if frame > f:
            if i == 0:                         # before the first key: hold it
                quaternion, position = list(q), list(p)
            else:
                q0, p0, frame0 = keys[i - 1]
                t = (f - frame0) / (frame - frame0)
                position = [a + t * (b - a) for a, b in zip(p0, p)]
                quaternion = lerp_quaternion(q0, q, t)
            break
    if quaternion is None:                     # after the last key: hold it
        quaternion, position = list(keys[-1][0]), list(keys[-1][1])
    rotation = quaternion_to_matrix(*quaternion)
    m = [rotation[r] + [position[r]] for r in range(3)] + [[0.0, 0.0, 0.0, 1.0]]
    m = multiply(m, from_columns(base))
    if localized:
        turn = [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
        m = multiply(turn, m)
    return m
