"""Door leaves and object placement (oni/engine/doors.py) against the rules written out plainly,
one matrix at a time in pure Python (docs/level.md, "Doors")."""

import math

import numpy as np
import pytest
from door_reference import chain, plain_keys, rotation, spec_origins, translation
from oban_generate import random_animation, random_unit_quaternion
from reference_engine import matrix_at

from oban_import.oni.engine.doors import builder_origins, euler_rotations, flipped, leaf_flips, placements
from oban_import.oni.io.oban.record import KEY_DTYPE, LOCALIZED, Animation, stored_columns


def test_a_quarter_turn_about_each_axis_moves_the_axes_the_right_hand_way():
    turns = euler_rotations([[90, 0, 0], [0, 90, 0], [0, 0, 90]])
    np.testing.assert_allclose(turns[0] @ [0, 1, 0], [0, 0, 1], atol=1e-15)   # x: y -> z
    np.testing.assert_allclose(turns[1] @ [0, 0, 1], [1, 0, 0], atol=1e-15)   # y: z -> x
    np.testing.assert_allclose(turns[2] @ [1, 0, 0], [0, 1, 0], atol=1e-15)   # z: x -> y


def test_euler_rotations_are_rz_ry_rx_of_degrees():
    rng = np.random.default_rng(4)
    angles = rng.uniform(-360, 360, (50, 3))
    positions = rng.normal(0, 100, (50, 3))
    got = placements(positions, angles)
    for angle, position, matrix in zip(angles, positions, got):
        wanted = chain(translation(position), rotation(2, angle[2]), rotation(1, angle[1]), rotation(0, angle[0]))
        np.testing.assert_allclose(matrix, wanted, atol=1e-12)


@pytest.mark.parametrize("localized", [False, True])
def test_a_flipped_leaf_plays_the_matrix_turned_half_about_x_after_the_base(localized):
    rng = np.random.default_rng(5)
    animation = random_animation(rng, "door", frames=60, key_count=6, flags=LOCALIZED if localized else 0,
                                 base="rotated_diagonal")
    turned = flipped(animation)
    assert turned.base_matrix.dtype == np.float32 and animation.base_matrix is not turned.base_matrix
    half_turn = rotation(0, 180)
    for f in range(animation.frames):
        before = matrix_at(plain_keys(animation), list(map(float, animation.base_matrix)), localized, f)
        after = matrix_at(plain_keys(turned), list(map(float, turned.base_matrix)), localized, f)
        np.testing.assert_allclose(after, chain(before, half_turn), atol=1e-9)


def test_which_leaf_turns():
    assert leaf_flips(False, 1) == [False] and leaf_flips(True, 1) == [True]
    assert leaf_flips(False, 2) == [False, True] and leaf_flips(True, 2) == [True, False]


@pytest.mark.parametrize("double", [False, True])
@pytest.mark.parametrize("mirror", [False, True])
def test_builder_origins_follow_the_rule(double, mirror):
    rng = np.random.default_rng(6 + 2 * double + mirror)
    for _ in range(10):
        points = rng.normal(0, 10, (20, 3)) + rng.normal(0, 5, 3)
        position, degrees = rng.normal(0, 100, 3), rng.uniform(-180, 180, 3)
        origins, gunk = builder_origins(placements([position], [degrees])[0], points, double, mirror)
        wanted_origins, wanted_gunk = spec_origins(position, degrees, points.tolist(), double, mirror)
        np.testing.assert_allclose(origins, wanted_origins, atol=1e-9)
        np.testing.assert_allclose(gunk, wanted_gunk, atol=1e-9)


@pytest.mark.parametrize("double", [False, True])
@pytest.mark.parametrize("mirror", [False, True])
def test_at_frame_0_each_leaf_stands_on_its_gunk(double, mirror):
    """With key 0 a -90 degree turn about x at the origin and Base = I, O . X . A(0) . flip is
    the closed door's gunk frame G, for either leaf, mirrored or not."""
    rng = np.random.default_rng(9)
    keys = np.zeros(2, KEY_DTYPE)
    keys["rotation"] = [[-math.sqrt(0.5), 0, 0, -math.sqrt(0.5)], random_unit_quaternion(rng)]
    keys["frame"] = [0, 30]
    door = Animation("door", LOCALIZED, np.zeros(12, np.float32), stored_columns(np.eye(4)), 80, 31, 15, keys)
    placement = placements([rng.normal(0, 50, 3)], [[0, rng.uniform(-180, 180), 0]])[0]
    origins, gunk = builder_origins(placement, rng.normal(0, 10, (12, 3)), double, mirror)
    for origin, frame, flip in zip(origins, gunk, leaf_flips(mirror, len(origins))):
        played = flipped(door) if flip else door
        at_0 = matrix_at(plain_keys(played), list(map(float, played.base_matrix)), True, 0)
        np.testing.assert_allclose(origin @ np.array(at_0), frame, atol=1e-6)
