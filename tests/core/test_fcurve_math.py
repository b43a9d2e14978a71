"""core/fcurve_math.py without Blender: Blender's rules of a key's value, its interpolations and
extrapolations worked by hand; a Bezier segment against its curve solved independently (bisection
in float64), its handles pulled in where they reach past the other key; the transform matrices
against rotations built from quaternion products; bones' pose matrices against their chains
multiplied out. (tests/blender/test_fcurve_values.py and test_pose_values.py hold them against
Blender's own evaluation.)"""

import numpy as np
import pytest

from oban_import.core.fcurve_math import BEZIER, CONSTANT, LINEAR, basis_matrices, fcurve_values, pose_matrices

POINTS = np.array([[0, 0], [10, 5], [20, -5], [30, 1]], np.float32)
LEFTS = POINTS - [[2, 4], [3, 0], [3, 3], [5, -1]]
RIGHTS = POINTS + [[3, 3], [3, 0], [3, -3], [4, 2]]
MODES = np.array([LINEAR, CONSTANT, BEZIER, BEZIER])


@pytest.mark.parametrize("linear", [False, True])
def test_keys_segments_and_ends_by_blenders_rules(linear):
    times = [-10, 0, 5, 9.99995, 10.00009, 15, 19.9999, 30, 40]
    got = fcurve_values(POINTS, LEFTS, RIGHTS, MODES, linear, times)
    before = -5 if linear else 0        # a LINEAR first key: the line to the next key
    after = 1 + 10 * 2 / 4 if linear else 1   # any other last key: the line through its right handle
    np.testing.assert_allclose(got, [before, 0, 2.5, 5, 5, 5, -5, 1, after], rtol=0, atol=1e-6)


def test_a_constant_or_lone_key_extrapolates_flat_and_a_bezier_first_key_along_its_handle():
    one = fcurve_values(POINTS[:1], LEFTS[:1], RIGHTS[:1], [LINEAR], True, [-5, 5])
    np.testing.assert_array_equal(one, [0, 0])
    flat = fcurve_values(POINTS[1:], LEFTS[1:], RIGHTS[1:], MODES[1:], True, [0])
    np.testing.assert_array_equal(flat, [5])
    bezier = fcurve_values(POINTS[2:], LEFTS[2:], RIGHTS[2:], MODES[2:], True, [10])
    np.testing.assert_allclose(bezier, [-5 - 3 * 10 / 3], rtol=1e-6)


def solved(v1, v2, v3, v4, t):
    """y of the Bezier segment at x = t: its parameter found by bisection (x rising)."""
    low, high = np.zeros(len(t)), np.ones(len(t))
    cubic = [lambda u, k=k: (1 - u) ** 3 * v1[:, k] + 3 * (1 - u) ** 2 * u * v2[:, k] + 3 * (1 - u) * u * u * v3[:, k]
             + u ** 3 * v4[:, k] for k in (0, 1)]
    for _ in range(60):
        middle = (low + high) / 2
        below = cubic[0](middle) < t
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return cubic[1]((low + high) / 2)


@pytest.mark.parametrize("reach", ["within", "past the other key"])
def test_bezier_segments_are_their_curves_with_handles_pulled_in(reach):
    rng = np.random.default_rng(7)
    n = 2000
    v1 = np.stack([rng.uniform(-50, 50, n), rng.uniform(-3, 3, n)], 1).astype(np.float32)
    span = rng.uniform(0.5, 20, n).astype(np.float32)
    v4 = np.stack([v1[:, 0] + span, rng.uniform(-3, 3, n)], 1).astype(np.float32)
    scale = rng.uniform(0.05, 1, n) if reach == "within" else rng.uniform(1.2, 30, n)
    v2 = (v1 + np.stack([scale * span, rng.normal(size=n) * 3], 1)).astype(np.float32)
    v3 = (v4 - np.stack([rng.uniform(0.05, 1, n) * span, rng.normal(size=n) * 3], 1)).astype(np.float32)
    t = (v1[:, 0] + rng.uniform(0.001, 0.999, n) * span).astype(np.float32)
    pulled = v2.astype(np.float64)
    if reach != "within":   # the handle shortened along itself to reach exactly the other key's frame
        pulled = v1 + (v2 - v1) / scale[:, None]
    want = solved(v1.astype(np.float64), pulled, v3.astype(np.float64), v4.astype(np.float64), t.astype(np.float64))
    got = np.array([fcurve_values(np.stack([v1[k], v4[k]]), np.stack([v1[k], v3[k]]), np.stack([v2[k], v4[k]]),
                                  [BEZIER, BEZIER], False, t[k:k + 1])[0] for k in range(n)])
    # frames near 50 are float32's 4e-6 apart; a steep segment makes that up to 1.4e-5 in value here
    assert np.abs(got - want).max() <= 3e-5 and np.median(np.abs(got - want)) <= 3e-7


def test_a_flat_bezier_segment_is_its_value():
    points = np.array([[0, 2], [10, 2]], np.float32)
    got = fcurve_values(points, points, points + [[3, 0], [3, 0]], [BEZIER, BEZIER], False, [2.5, 7])
    np.testing.assert_array_equal(got, [2, 2])


def quaternion_product(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quaternion_matrix(q):
    """The rotation of q (normalised), its columns the turned axes: q v q*."""
    q = q / np.linalg.norm(q)
    conjugate = q * [1, -1, -1, -1]
    return np.stack([quaternion_product(quaternion_product(q, [0, *axis]), conjugate)[1:] for axis in np.eye(3)], 1)


def about(axis, angle):
    return np.array([np.cos(angle / 2), *(np.sin(angle / 2) * np.asarray(axis, float))])


@pytest.mark.parametrize("mode", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "QUATERNION", "AXIS_ANGLE"])
def test_matrices_are_translation_rotation_scale(mode):
    rng = np.random.default_rng(len(mode) + ord(mode[0]))
    n = 50
    location, scale = rng.uniform(-5, 5, (n, 3)), rng.uniform(0.2, 3, (n, 3))
    rotation = rng.uniform(-4, 4, (n, 4 if mode in ("QUATERNION", "AXIS_ANGLE") else 3))
    got = basis_matrices(location, rotation, scale, mode)
    for m, loc, r, s in zip(got, location.astype(np.float32), rotation.astype(np.float32), scale.astype(np.float32)):
        if mode == "QUATERNION":
            q = r
        elif mode == "AXIS_ANGLE":
            q = about(r[1:] / np.linalg.norm(r[1:]), r[0])
        else:   # the first named axis turns first: its quaternion on the right
            q = np.array([1.0, 0, 0, 0])
            for axis in mode:
                q = quaternion_product(about(np.eye(3)["XYZ".index(axis)], r["XYZ".index(axis)]), q)
        np.testing.assert_allclose(m[:3, :3], quaternion_matrix(q) * s, rtol=0, atol=1e-6 * np.abs(s).max())
        np.testing.assert_allclose(m[:3, 3], loc, rtol=1e-7)
        np.testing.assert_array_equal(m[3], [0, 0, 0, 1])


def test_a_zero_quaternion_is_a_half_turn_about_x_and_a_zero_axis_no_turn():
    zero = np.zeros((1, 4))
    np.testing.assert_array_equal(basis_matrices(np.zeros((1, 3)), zero, np.ones((1, 3)), "QUATERNION")[0, :3, :3],
                                  np.diag([1, -1, -1]))
    axis_angle = np.array([[1.5, 0, 0, 0]])
    np.testing.assert_array_equal(basis_matrices(np.zeros((1, 3)), axis_angle, np.ones((1, 3)), "AXIS_ANGLE")[0],
                                  np.eye(4))


def test_pose_matrices_chain_each_bone_on_its_parent_in_any_order():
    """A tree listed children first: each bone's pose its parent's . its offset . its basis."""
    rng = np.random.default_rng(3)
    parents = np.array([3, 3, 0, -1, 1, -1, 4])
    offsets, basis = rng.normal(size=(7, 4, 4)), rng.normal(size=(5, 7, 4, 4))

    def pose(p):
        own = offsets[p] @ basis[:, p]
        return own if parents[p] < 0 else pose(parents[p]) @ own
    np.testing.assert_allclose(pose_matrices(offsets, parents, basis), np.stack([pose(p) for p in range(7)], 1),
                               rtol=1e-12)
