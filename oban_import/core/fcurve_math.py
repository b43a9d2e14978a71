"""Blender's arithmetic of an F-curve's value, of an object's transform matrix and of a bone's
pose matrix, on arrays: what setting the scene on each frame would give, without Blender. F-curves are evaluated in float32
step by step as Blender does (its cubic solved in float64), so values agree to its rounding."""

import numpy as np

F32 = np.float32
CONSTANT, LINEAR, BEZIER = 0, 1, 2   # Keyframe.interpolation's values: the modes evaluated here
ON_KEY = F32(1e-4)                   # a time this close to a key takes the key's value
SPACED = F32(1e-3)                   # keys at least this far apart: at most one is ON_KEY of a time
ROOT_LOW, ROOT_HIGH = F32(-1e-10), F32(1.000001)   # the Bezier parameters accepted
EPSILON = np.finfo(F32).eps                          # closer values: a flat Bezier segment


def fcurve_values(points, lefts, rights, modes, linear, times):
    """(N,) float32 values at `times` of an F-curve whose keys are `points` (K, 2) (frame, value),
    frames increasing at least SPACED apart, with handles `lefts`, `rights` (K, 2) and
    interpolation `modes` (K,) of CONSTANT, LINEAR, BEZIER, extrapolated linearly when `linear`
    (else constant). Blender's rules: a time on or before the first key (after the last) is
    extrapolated from it; one within ON_KEY of a key takes its value; else the segment's mode."""
    with np.errstate(over="ignore", invalid="ignore"):   # what overflows float32 is inf (the caller's to refuse)
        points, lefts, rights = (np.asarray(a, F32).reshape(-1, 2) for a in (points, lefts, rights))
        modes, times = np.asarray(modes), np.asarray(times, F32)
        x, y = points[:, 0], points[:, 1]
        out = np.empty(len(times), F32)
        first, last = times <= x[0], times >= x[-1]
        out[first] = _extrapolated(points, lefts[0], modes[0], linear, 0, times[first])
        last &= ~first
        out[last] = _extrapolated(points, rights[-1], modes[-1], linear, -1, times[last])
        inside = ~(first | last)
        t = times[inside]
        nxt = np.searchsorted(x, t, side="right")       # 1 .. K - 1: the key after t
        prev = nxt - 1
        begin, change, duration, time = y[prev], y[nxt] - y[prev], x[nxt] - x[prev], t - x[prev]
        value = np.where(modes[prev] == LINEAR, change * time / duration + begin, begin)
        bezier = modes[prev] == BEZIER
        if bezier.any():
            ends = prev[bezier], nxt[bezier]
            value[bezier] = _bezier(points[ends[0]], rights[ends[0]], lefts[ends[1]], points[ends[1]], t[bezier])
        value = np.where(t - x[prev] <= ON_KEY, begin, np.where(x[nxt] - t <= ON_KEY, y[nxt], value))
        out[inside] = value
        return out


def _extrapolated(points, handle, mode, linear, end, times):
    """The values before the first key (end 0, its left `handle`) or after the last (end -1,
    its right handle): its value, or along the line through its neighbour key (a LINEAR key)
    or its handle (any other) when extrapolated linearly."""
    x, y = points[end]
    if mode == CONSTANT or not linear or (mode == LINEAR and len(points) == 1):
        return np.full(len(times), y, F32)
    other = points[1 if end == 0 else -2] if mode == LINEAR else handle
    run = other[0] - x if mode == LINEAR else x - other[0]
    if run == 0:
        return np.full(len(times), y, F32)
    slope = (other[1] - y) / run if mode == LINEAR else (y - other[1]) / run
    return y - slope * (x - times)


def _bezier(v1, v2, v3, v4, t):
    """Bezier segments from key v1 (its right handle v2) to key v4 (its left handle v3), (n, 2)
    each, at times t: a flat one is its value; else the handles are pulled in where one reaches
    past the other key (keeping its direction), the cubic x(u) = t solved for the curve's
    parameter u (its first root in [ROOT_LOW, ROOT_HIGH], 0 where there is none) and y(u) taken."""
    v2, v3 = v2.copy(), v3.copy()
    flat = ((np.abs(v1[:, 1] - v4[:, 1]) < EPSILON) & (np.abs(v2[:, 1] - v3[:, 1]) < EPSILON)
            & (np.abs(v3[:, 1] - v4[:, 1]) < EPSILON))
    h1, h2 = v1 - v2, v4 - v3
    span = v4[:, 0] - v1[:, 0]
    for v, key, h in ((v2, v1, h1), (v3, v4, h2)):
        reach = np.abs(h[:, 0])
        fix = reach > span
        v[fix] = key[fix] - (span[fix] / reach[fix])[:, None] * h[fix]
    q0, q1, q2, q3 = v1[:, 0], v2[:, 0], v3[:, 0], v4[:, 0]
    three, two = F32(3), F32(2)
    u = _first_root(q0 - t, three * (q1 - q0), three * (q0 - two * q1 + q2), q3 - q0 + three * (q1 - q2))
    f1, f2, f3, f4 = v1[:, 1], v2[:, 1], v3[:, 1], v4[:, 1]
    c1, c2, c3 = three * (f2 - f1), three * (f1 - two * f2 + f3), f4 - f1 + three * (f2 - f3)
    value = f1 + u * c1 + u * u * c2 + u * u * u * c3
    return np.where(flat, f1, np.where(np.isnan(u), F32(0), value))


def _first_root(c0, c1, c2, c3):
    """(n,) float32: the first root of c0 + c1 u + c2 u² + c3 u³ (float64 arithmetic) in Blender's
    order that lies in [ROOT_LOW, ROOT_HIGH], NaN where none does. A cubic's by Cardano (one real
    root) or trigonometrically (three), else a quadratic's, else a line's."""
    c0, c1, c2, c3 = (np.asarray(c, np.float64) for c in (c0, c1, c2, c3))
    roots = np.full((len(c0), 3), np.nan)
    with np.errstate(all="ignore"):
        a, b, c = c2 / c3 / 3, c1 / c3, c0 / c3
        p = b / 3 - a * a
        q = (2 * a * a * a - a * b + c) / 2
        d = q * q + p * p * p
        cubic = c3 != 0
        one = cubic & (d > 0)
        t = np.sqrt(d)
        roots[one, 0] = (_cube_root(-q + t) + _cube_root(-q - t) - a)[one]
        double = cubic & (d == 0)
        t = _cube_root(-q)
        roots[double, 0], roots[double, 1] = (2 * t - a)[double], (-t - a)[double]
        three = cubic & (d < 0)
        phi = np.arccos(-q / np.sqrt(-(p * p * p)))
        t, cos = np.sqrt(-p), np.cos(phi / 3)
        sin = np.sqrt(3 - 3 * cos * cos)
        roots[three] = np.stack([2 * t * cos - a, -t * (cos + sin) - a, -t * (cos - sin) - a], axis=1)[three]
        a, b, c = c2, c1, c0
        p = b * b - 4 * a * c
        root = np.sqrt(p)
        quadratic = ~cubic & (a != 0)
        two = quadratic & (p > 0)
        roots[two, 0], roots[two, 1] = ((-b - root) / (2 * a))[two], ((-b + root) / (2 * a))[two]
        touching = quadratic & (p == 0)
        roots[touching, 0] = (-b / (2 * a))[touching]
        line = ~cubic & (a == 0) & (b != 0)
        roots[line, 0] = (-c / b)[line]
        roots[~cubic & (a == 0) & (b == 0) & (c == 0), 0] = 0
    roots = roots.astype(F32)
    valid = (roots >= ROOT_LOW) & (roots <= ROOT_HIGH)
    found = valid.any(axis=1)
    return np.where(found, roots[np.arange(len(roots)), np.argmax(valid, axis=1)], F32(np.nan))


def _cube_root(v):
    """The real cube root as Blender takes it: through exp and log."""
    return np.where(v == 0, 0.0, np.sign(v) * np.exp(np.log(np.abs(v)) / 3))


def basis_matrices(location, rotation, scale, rotation_mode):
    """(N, 4, 4) float64 matrices T(location) . R(rotation) . S(scale), as Blender composes an
    object's (no deltas), rounded to float32 as it keeps them: location and scale (N, 3),
    rotation (N, 3) Euler angles applied in the order `rotation_mode` names ('XYZ': X first,
    R = Rz.Ry.Rx), or (N, 4) w, x, y, z for 'QUATERNION' (normalised; a zero one is a half turn
    about X), or angle, x, y, z for 'AXIS_ANGLE' (a zero axis: no rotation)."""
    rotation = np.asarray(rotation, F32)
    if rotation_mode == "QUATERNION":
        turn = _quaternion_matrices(rotation)
    elif rotation_mode == "AXIS_ANGLE":
        turn = _axis_angle_matrices(rotation)
    else:
        turn = np.eye(3)
        for axis in rotation_mode:
            k = "XYZ".index(axis)
            turn = _axis_matrices(k, rotation[:, k].astype(np.float64)) @ turn
    out = np.zeros((len(rotation), 4, 4))
    out[:, :3, :3] = turn * np.asarray(scale, F32)[:, None, :]
    out[:, :3, 3] = np.asarray(location, F32)
    out[:, 3, 3] = 1
    return out.astype(F32).astype(np.float64)


def pose_matrices(offsets, parents, basis):
    """(F, P, 4, 4) float64 bones' pose matrices (armature space) as Blender makes those of bones
    that inherit their parent's rotation and scale in full and move along their own axes: a
    root's offsets[p] . basis[:, p], any other's its parent's pose . offsets[p] . basis[:, p].
    `offsets` (P, 4, 4): a root's rest matrix, another's rest within its parent's tail (its
    rotation, its head from there); `parents` (P,) each one's index, -1 for a root; `basis`
    (F, P, 4, 4) each one's T.R.S on each frame (basis_matrices)."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), int)
    for _ in range(len(parents)):   # a bone's depth is its parent's plus one: settled in P rounds
        depth = np.where(parents >= 0, depth[parents] + 1, 0)
    pose = np.asarray(offsets, np.float64) @ basis
    for level in range(1, depth.max(initial=0) + 1):
        at = np.flatnonzero(depth == level)
        pose[:, at] = pose[:, parents[at]] @ pose[:, at]
    return pose


def _axis_matrices(k, angles):
    """(N, 3, 3) rotations by `angles` about axis k (0 X, 1 Y, 2 Z)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = np.zeros((len(angles), 3, 3))
    out[:, k, k] = 1
    out[:, i, i] = out[:, j, j] = np.cos(angles)
    out[:, j, i] = np.sin(angles)
    out[:, i, j] = -out[:, j, i]
    return out


def _quaternion_matrices(q):
    """(N, 3, 3) from (N, 4) float32 w, x, y, z, normalised in float32 as Blender does."""
    length = np.sqrt(((q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1]) + q[:, 2] * q[:, 2]) + q[:, 3] * q[:, 3])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(length[:, None] != 0, q * (F32(1) / length)[:, None], F32([0, 1, 0, 0]))
    w, x, y, z = q.astype(np.float64).T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def _axis_angle_matrices(rotation):
    """(N, 3, 3) from (N, 4) float32 angle, x, y, z: cos I + sin [n]x + (1 - cos) n n^T, n the
    axis normalised in float32; identity where the axis has no length there."""
    angle, axis = rotation[:, 0].astype(np.float64), rotation[:, 1:]
    square = (axis[:, 0] * axis[:, 0] + axis[:, 1] * axis[:, 1]) + axis[:, 2] * axis[:, 2]
    some = square > F32(1e-35)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(some[:, None], axis / np.sqrt(square)[:, None], 0).astype(np.float64)
    cross = np.zeros((len(n), 3, 3))
    cross[:, 0, 1], cross[:, 0, 2], cross[:, 1, 2] = -n[:, 2], n[:, 1], -n[:, 0]
    cross = cross - cross.transpose(0, 2, 1)
    sin, cos = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    turn = cos * np.eye(3) + sin * cross + (1 - cos) * (n[:, :, None] * n[:, None, :])
    return np.where(some[:, None, None], turn, np.eye(3))
