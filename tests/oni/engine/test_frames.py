"""The vectorised engine against a plain re-implementation of docs/engine.md 1-2 and the samples'
published numbers."""

import math
import os

import numpy as np
import pytest
from matrix_errors import ENGINE_TOLERANCE, matrix_errors
from oban_generate import BASES, plain_keys, random_animation
from paths import DATA
from reference_engine import matrix_at

from oban_import.oni.engine.frames import frame_matrices, key_table, sample_keys, sample_many
from oban_import.oni.engine.rotations import rotation_matrices
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import LOCALIZED, all_keys, matrix_from_columns


def generated(count, seed):
    rng = np.random.default_rng(seed)
    for i in range(count):
        kind = i % 4  # sparse, dense, wide angles, every flag bit combination
        animation = random_animation(
            rng, name=f"gen{i}",
            frames=int(rng.integers(2, 300)),
            key_count=None if kind != 1 else 10_000,
            flags=i % 32,
            max_angle=math.radians(150) if kind == 2 else math.radians(rng.uniform(1, 150)),
            base=BASES[i % len(BASES)])
        if i % 5 == 4:  # keys starting late and ending early: both ends hold
            animation.keys["frame"] += 7
        yield animation


@pytest.mark.parametrize("seed", range(4))
def test_every_frame_matches_the_plain_reference(seed):
    checked = 0
    for animation in generated(60, seed):
        keys = plain_keys(animation)
        base = [float(v) for v in animation.base_matrix]
        localized = animation.has(LOCALIZED)
        # every frame, plus frames outside the keys (held ends)
        frames = list(range(animation.frames)) + [animation.frames, animation.frames + 7]
        expected = np.array([matrix_at(keys, base, localized, f) for f in frames])
        rotation, translation = matrix_errors(frame_matrices(animation, frames), expected)
        assert rotation < ENGINE_TOLERANCE and translation < ENGINE_TOLERANCE, (animation.name, rotation, translation)
        checked += 1
    assert checked == 60


def test_generated_animations_cover_what_they_claim():
    animations = [a for seed in range(4) for a in generated(60, seed)]
    assert len(animations) >= 200
    assert {a.flags for a in animations} == set(range(32))
    dense = [a for a in animations if len(a.keys) == a.frames]
    sparse = [a for a in animations if len(a.keys) < a.frames / 3]
    late = [a for a in animations if a.keys["frame"][0] > 0]
    assert dense and sparse and late
    flips = wide = 0
    for a in animations:
        q = a.keys["rotation"].astype(np.float64)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        dots = (q[1:] * q[:-1]).sum(axis=1)
        flips += int((dots < 0).sum())
        wide += int((np.degrees(2 * np.arccos(np.minimum(np.abs(dots), 1))) > 120).sum())
    assert flips > 100 and wide > 20


def test_between_keys_is_a_normalised_lerp_not_a_slerp():
    # spec sample: key 0 identity at frame 0, key 1 a 90 degree turn at frame 3, base 2 x identity
    animation = read_file(os.path.join(DATA, "oni", "OBANspec_example.oni"))[0]
    m = frame_matrices(animation)
    expected_rows = [
        [[2, 0, 0, 10], [0, 2, 0, 20], [0, 0, 2, 30]],
        [[1.744521, 0, -0.978083, 10], [0, 2, 0, 21.666667], [0.978083, 0, 1.744521, 30]],
        [[0.978083, 0, -1.744521, 10], [0, 2, 0, 23.333333], [1.744521, 0, 0.978083, 30]],
        [[0, 0, -2, 10], [0, 2, 0, 25], [2, 0, 0, 30]],
    ]
    np.testing.assert_allclose(m[:, :3, :], expected_rows, atol=2e-6)


def test_blackvan_start_matrix_is_the_frame_zero_matrix():
    animation = read_file(os.path.join(DATA, "raw", "00134-Blackvan_FB.OBAN"))[0]
    start = matrix_from_columns(animation.start_matrix)
    assert np.abs(frame_matrices(animation)[0] - start).max() < 1e-4
    np.testing.assert_allclose(start[:3, 3], [1188.8256, -54.9976, -109.0124], atol=1e-3)
    # the usual (Hamilton) formula turns the van the wrong way: off by about 3.64 units
    x, y, z, w = animation.keys["rotation"][0].astype(np.float64)
    usual = rotation_matrices([x, y, z, -w])
    assert abs(np.abs(usual @ matrix_from_columns(animation.base_matrix)[:3, :3] - start[:3, :3]).max() - 3.64) < 0.01


def test_quaternion_convention_is_the_transpose_of_the_usual_one():
    rng = np.random.default_rng(7)
    q = rng.normal(size=(50, 4)) * rng.uniform(0.1, 3, (50, 1))  # any length gives a rotation
    r = rotation_matrices(q)
    np.testing.assert_allclose(r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), r.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, atol=1e-12)
    x, y, z, w = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    usual_00_10 = 2 * (x * y + w * z)  # Hamilton R[1, 0]
    np.testing.assert_allclose(r[:, 0, 1], usual_00_10, atol=1e-12)


def test_opposite_key_signs_take_the_shorter_arc():
    rng = np.random.default_rng(3)
    animation = random_animation(rng, frames=11, key_count=2, flags=0, base="identity")
    animation.keys["rotation"][1] = -animation.keys["rotation"][1]
    flipped = frame_matrices(animation)
    animation.keys["rotation"][1] = -animation.keys["rotation"][1]
    np.testing.assert_allclose(flipped, frame_matrices(animation), atol=1e-12)


def test_localized_animations_get_the_quarter_turn_about_x():
    rng = np.random.default_rng(5)
    animation = random_animation(rng, frames=30, flags=0)
    plain = frame_matrices(animation)
    animation.flags = LOCALIZED
    turned = frame_matrices(animation)
    turn = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]])
    np.testing.assert_allclose(turned, turn @ plain, atol=1e-12)
    assert np.allclose(turn[:3, :3] @ [0, 1, 0], [0, 0, 1])  # y -> z


@pytest.mark.parametrize("folder, files, compared", [("raw", 5, 5), ("oni", 5, 4), ("level", 1, 4)])
def test_every_container_gives_the_same_matrices(folder, files, compared):
    """tests/data/raw's five animations against each folder's: `files` files, `compared` of their
    animations also in raw/ (spec_example is not; Blackvan_FB is only there)."""
    reference = {a.name: frame_matrices(a) for p in sorted(os.listdir(os.path.join(DATA, "raw")))
                 for a in read_file(os.path.join(DATA, "raw", p))}
    assert len(reference) == 5
    paths = [os.path.join(DATA, folder, p) for p in sorted(os.listdir(os.path.join(DATA, folder)))
             if not p.endswith(".raw")]
    assert len(paths) == files
    names, matched = set(), 0
    for path in paths:
        for animation in read_file(path):
            names.add(animation.name)
            if animation.name in reference:
                np.testing.assert_array_equal(frame_matrices(animation), reference[animation.name])
                matched += 1
    assert matched == compared
    assert {"door_swing", "fan_loop", "camera_flyby", "lift_pingpong"} <= names


@pytest.mark.parametrize("seed", range(20))
def test_many_animations_sampled_at_once_are_each_sampled_alone(seed):
    """sample_many (each frame's key found by the keys' spans) gives exactly what sample_keys
    (a search per frame) gives each animation: with single keys, keys starting late, keys
    past the frame count, and animations whose every key is past it."""
    rng = np.random.default_rng(seed)
    batch = []
    for i in range(int(rng.integers(1, 40))):
        animation = random_animation(rng, name=f"a{i}", frames=int(rng.integers(1, 60)))
        kind = i % 4
        if kind == 1:
            animation.keys["frame"] += np.uint32(rng.integers(1, 80))
        elif kind == 2:
            animation.keys = animation.keys[:1].copy()
        elif kind == 3:
            animation.keys["frame"] = animation.keys["frame"] * 3 + 1
        batch.append(animation)
    keys = all_keys(batch)
    frame_counts = np.array([a.frames for a in batch])
    values = sample_many(frame_counts, np.array([len(a.keys) for a in batch]), keys["frame"], key_table(keys))
    alone = np.concatenate([np.concatenate(sample_keys(a), axis=1) for a in batch])
    assert np.array_equal(values, alone)
