"""Oni -> Blender transforms (docs/engine.md 4) against the matrices they must produce."""

import math

import numpy as np
import pytest
from matrix_errors import ENGINE_TOLERANCE, matrix_errors
from oban_generate import BASES, plain_keys, random_animation
from reference_engine import matrix_at

from oban_import.oni.engine.rotations import (NEAR_ROTATION, continuous, matrix_quaternions, nearest_rotations,
                                              quaternion_matrices, split_rotation_scale)
from oban_import.oni.engine.to_blender import BASE_TOLERANCE, DEFAULT_AXES, EULER_AXES, eulers, transforms_many
from oban_import.oni.io.oban.record import LOCALIZED

# a few of the orientation helper's conversions, as matrices (det +1 and -1)
OTHER_AXES = [np.eye(3), np.array([[0, 0, 1.0], [1, 0, 0], [0, 1, 0]]), np.diag([1.0, 1.0, -1.0])]


def object_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = [sA] M [sA]^-1 of one animation: for empties and objects whose data lives in converted axes."""
    return next(transforms_many([animation], axes, scale))


def camera_transforms(animation, axes=DEFAULT_AXES, scale=1.0):
    """W = T(sAt) . A . L of one animation: a Blender camera looks where the Oni camera looked."""
    return next(transforms_many([animation], axes, scale, camera=True))


def conjugated(m, axes, scale):
    c = np.eye(4)
    c[:3, :3] = scale * axes
    return c @ m @ np.linalg.inv(c)


def camera_world(m, axes, scale):
    """docs/engine.md 4 for cameras: T(s.A.t) . A . L."""
    expected = np.zeros_like(m)
    expected[:, :3, :3] = axes @ m[:, :3, :3]
    expected[:, :3, 3] = scale * m[:, :3, 3] @ axes.T
    expected[:, 3, 3] = 1.0
    return expected


def reference_matrices(animation):
    """M(f) at every frame from the plain reference (tests/fixtures/reference_engine.py)."""
    keys, base = plain_keys(animation), [float(v) for v in animation.base_matrix]
    return np.array([matrix_at(keys, base, animation.has(LOCALIZED), f) for f in range(animation.frames)])


def assert_close(got, expected, label=None):
    """Rotation and translation, measured apart, each to the engine's tolerance (docs/engine.md 2)."""
    rotation, translation = matrix_errors(got, expected)
    assert rotation < ENGINE_TOLERANCE and translation < ENGINE_TOLERANCE, (label, rotation, translation)


def animations(count, seed):
    rng = np.random.default_rng(seed)
    return [random_animation(rng, flags=i % 32, base=BASES[i % len(BASES)], frames=int(rng.integers(2, 120)))
            for i in range(count)]


def test_default_axes_map_oni_y_up_to_blender_z_up():
    np.testing.assert_array_equal(DEFAULT_AXES @ [1, 2, 3], [1, -3, 2])


@pytest.mark.parametrize("axes", [DEFAULT_AXES] + OTHER_AXES)
@pytest.mark.parametrize("scale", [1.0, 0.1, 3.5])
def test_object_transforms_give_the_conjugated_engine_matrix(axes, scale):
    for animation in animations(25, int(scale * 10)):
        t = object_transforms(animation, axes, scale)
        assert t.error < BASE_TOLERANCE
        assert_close(t.matrices(), conjugated(reference_matrices(animation), axes, scale), animation.name)
        r = quaternion_matrices(t.quaternion)
        np.testing.assert_allclose(r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), r.shape), atol=1e-9)


def test_camera_transforms_keep_the_view_direction():
    for animation in animations(25, 11):
        m = reference_matrices(animation)
        t = camera_transforms(animation, DEFAULT_AXES, 0.1)
        assert_close(t.matrices(), camera_world(m, DEFAULT_AXES, 0.1), animation.name)
        # the Blender camera's -Z is where Oni's camera -Z looked, in Blender axes
        view = t.matrices()[:, :3, :3] @ [0, 0, -1]
        np.testing.assert_allclose(view, (m[:, :3, :3] @ [0, 0, -1]) @ DEFAULT_AXES.T, atol=1e-6)


def test_nearest_rotations_are_the_polar_factor_the_svd_gives():
    """Rotations rounded to float32, near ones (as far as the Newton-Schulz steps are
    taken from), a little further, any matrices, mirrors and zeros, mixed: each gets the
    nearest proper rotation, U V^T of its SVD (a mirror's sign moved to the smallest
    singular value), orthonormal to rounding."""
    rng = np.random.default_rng(41)
    q = rng.normal(size=(600, 4))
    rotations = quaternion_matrices(q / np.linalg.norm(q, axis=1)[:, None])
    off = rng.uniform(-1.0, 1.0, (600, 3, 3)) * rng.choice([0.0, NEAR_ROTATION / 7, NEAR_ROTATION / 2.5], (600, 1, 1))
    matrices = np.concatenate([rotations.astype(np.float32), rotations + off, rotations + 10 * off,
                               rng.normal(size=(100, 3, 3)), -rotations[:100], np.zeros((3, 3, 3))])
    matrices = matrices[rng.permutation(len(matrices))]
    u, _, vt = np.linalg.svd(matrices)
    u[np.linalg.det(u @ vt) < 0, :, -1] *= -1.0
    got = nearest_rotations(matrices)
    np.testing.assert_allclose(got, u @ vt, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(got, 1, 2) @ got, np.broadcast_to(np.eye(3), got.shape), atol=1e-13)
    assert (np.linalg.det(got) > 0).all()
    assert nearest_rotations(np.zeros((0, 3, 3))).shape == (0, 3, 3)


def test_a_scale_along_rotated_axes_is_measured_not_hidden():
    shear = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    _, _, error = split_rotation_scale(shear[None])
    assert error > 0.1
    squash = np.diag([1.0, 2.0, 3.0])
    tilt = np.array([[math.cos(0.5), -math.sin(0.5), 0], [math.sin(0.5), math.cos(0.5), 0], [0, 0, 1]])
    rotation, scale, error = split_rotation_scale((tilt @ squash)[None])  # rotation after scale: exact
    assert error < 1e-12
    np.testing.assert_allclose(scale, [[1, 2, 3]])
    _, _, error = split_rotation_scale((squash @ tilt)[None])      # scale after rotation: not
    assert error > 0.05
    rotation, scale, error = split_rotation_scale((-2 * tilt)[None])  # a mirror: negative scale
    assert error < 1e-12 and np.linalg.det(rotation[0]) > 0 and (scale < 0).all()


@pytest.mark.parametrize("camera", [False, True])
def test_a_batch_matches_the_plain_reference_at_every_frame(camera):
    """transforms_many blends keys already turned into Blender's axes; the plain
    reference blends the stored keys and is turned afterwards, frame by frame."""
    rng = np.random.default_rng(31 + camera)
    axes, scale = OTHER_AXES[1] if camera else DEFAULT_AXES, 0.25
    batch = [random_animation(rng, name=f"a{i}", flags=i % 32, base=BASES[i % len(BASES)],
                              frames=int(rng.integers(2, 300)), key_count=10_000 if i % 3 == 0 else None,
                              max_angle=math.radians(rng.uniform(1, 150)))
             for i in range(200)]
    for animation in batch[4::5]:  # keys starting late and ending early: the ends hold
        animation.keys["frame"] += 7
    for animation, t in zip(batch, transforms_many(batch, axes, scale, camera=camera, chunk_frames=500)):
        m = reference_matrices(animation)
        assert_close(t.matrices(), camera_world(m, axes, scale) if camera else conjugated(m, axes, scale),
                     animation.name)


def test_quaternions_reproduce_the_rotations_with_continuous_signs():
    rng = np.random.default_rng(21)
    for animation in animations(40, 21):
        r = quaternion_matrices(object_transforms(animation).quaternion)
        q = continuous(matrix_quaternions(r) * rng.choice([-1.0, 1.0], (len(r), 1)))  # any signs in
        np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1, atol=1e-12)
        assert ((q[1:] * q[:-1]).sum(axis=1) >= 0).all()
        w, x, y, z = q.T
        back = np.stack([
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)
        np.testing.assert_allclose(back, r, atol=1e-12)


def test_no_animations_give_no_transforms():
    assert list(transforms_many([])) == []


@pytest.mark.parametrize("chunk_frames", [1, 97, 1 << 14])
def test_many_animations_at_once_give_what_each_gives_alone(chunk_frames):
    batch = animations(60, 22)
    for camera in (False, True):
        together = list(transforms_many(batch, DEFAULT_AXES, 0.5, camera=camera, chunk_frames=chunk_frames))
        assert len(together) == len(batch)
        rule = camera_transforms if camera else object_transforms
        for animation, t in zip(batch, together):
            alone = rule(animation, DEFAULT_AXES, 0.5)
            np.testing.assert_allclose(t.matrices(), alone.matrices(), atol=1e-12)
            assert t.error == alone.error


def test_every_animation_turns_continuously_from_a_quaternion_with_w_positive():
    batch = animations(120, 24)  # keys up to 150 degrees apart, stored with random signs
    for camera in (False, True):
        for t in transforms_many(batch, DEFAULT_AXES, 1.0, camera=camera):
            q = t.quaternion
            assert q[0, 0] >= 0
            assert (np.einsum("ij,ij->i", q[1:], q[:-1]) >= 0).all()


def test_a_zero_base_gives_a_zero_scale_not_nan():
    animation = animations(1, 23)[0]
    animation.base_matrix[:] = 0
    t = object_transforms(animation)
    assert np.isfinite(t.quaternion).all() and (t.scale == 0).all()


def euler_matrix(angles, order):
    """Blender's convention: order 'XYZ' applies x first, R = Rz . Ry . Rx."""
    def about(axis, a):
        c, s = np.cos(a), np.sin(a)
        m = np.zeros(a.shape + (3, 3))
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        m[..., axis, axis] = 1
        m[..., i, i], m[..., i, j], m[..., j, i], m[..., j, j] = c, -s, s, c
        return m
    result = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3))
    for axis in EULER_AXES[order]:
        result = about(axis, angles[..., axis]) @ result
    return result


def nearest_triples(angles, order):
    """The Euler triples picked one frame at a time, as the rule reads (the reference)."""
    i, j, k = EULER_AXES[order]
    out, previous = [], None
    for a in angles.tolist():
        flipped = list(a)
        flipped[i], flipped[j], flipped[k] = a[i] + math.pi, math.pi - a[j], a[k] + math.pi
        best = None
        for candidate in ([a] if previous is None else [a, flipped]):
            moved = candidate if previous is None else [
                c + 2 * math.pi * round((p - c) / (2 * math.pi)) for c, p in zip(candidate, previous)]
            distance = 0.0 if previous is None else sum(abs(m - p) for m, p in zip(moved, previous))
            if best is None or distance < best[0]:
                best = (distance, moved)
        previous = best[1]
        out.append(previous)
    return np.array(out)


@pytest.mark.parametrize("order", list(EULER_AXES))
def test_eulers_pick_the_nearest_triple_as_one_frame_after_another_would(order):
    rng = np.random.default_rng(len(order) + sum(map(ord, order)))
    for steps in (0.05, 0.5, 2.0):   # smooth, fast, and wild turning (every kind of rule in play)
        raw = np.cumsum(rng.normal(0.0, steps, (400, 3)), axis=0)
        rotations = euler_matrix(raw, order)
        np.testing.assert_allclose(eulers(rotations, order), nearest_triples(_principal(rotations, order), order),
                                   atol=1e-9)


def _principal(rotations, order):
    """Each frame's triple as eulers() finds it before any continuity (one frame at a time)."""
    return np.concatenate([eulers(r[None], order) for r in rotations])


@pytest.mark.parametrize("order", list(EULER_AXES))
def test_eulers_reproduce_the_rotations_and_stay_continuous(order):
    for animation in animations(20, 31):
        r = quaternion_matrices(object_transforms(animation).quaternion)
        e = eulers(r, order)
        np.testing.assert_allclose(euler_matrix(e, order), r, atol=1e-9)
    # a steady spin over several turns, through gimbal lock, never jumps
    t = np.linspace(0, 6 * math.pi, 600)
    angles = np.stack([0.3 + 0 * t, t / 3, t], axis=1)
    spin = euler_matrix(angles, order)
    e = eulers(spin, order)
    np.testing.assert_allclose(euler_matrix(e, order), spin, atol=1e-9)
    assert np.abs(np.diff(e, axis=0)).max() < 0.2
