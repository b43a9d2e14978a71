"""Keys from wanted matrices: round trips through the engine, fewest keys on smooth, noisy
and sparse motion, tolerance, the search's work on long motions, and what an OBAN cannot hold."""

import math
import os

import numpy as np
import pytest
from oban_generate import BASES, camera_on_a_circle, non_unit_keys, plain_keys, random_animation, rotation_about
from paths import DATA
from reference_engine import matrix_at

from oban_import.core.errors import ObanError
from oban_import.oni.engine.fit_keys import animation_from_matrices, engine_keys_from_matrices, fewest_keys
from oban_import.oni.engine.frames import frame_matrices
from oban_import.oni.engine.furthest_reach import Tally, furthest_reach_keys
from oban_import.oni.engine.rotations import LOCALIZED_TURN, relative_errors
from oban_import.oni.io.oban.read import read_file
from oban_import.oni.io.oban.record import IDENTITY, LOCALIZED, LOOP, matrix_from_columns, stored_columns


def generated(count, seed, max_angle=None):
    rng = np.random.default_rng(seed)
    for i in range(count):
        yield random_animation(
            rng, name=f"gen{i}", frames=int(rng.integers(2, 300)),
            key_count=10_000 if i % 3 == 0 else None,  # dense, else sparse or dense at random
            flags=i % 32, base=BASES[i % len(BASES)],
            max_angle=max_angle or math.radians(rng.uniform(1, 150)))


def plain_errors(matrices, wanted):
    """The plain measure: max|dM| / max(1, max|M|) per frame."""
    return (np.abs(matrices - wanted).max(axis=(1, 2))
            / np.maximum(1.0, np.abs(wanted).max(axis=(1, 2))))


def door_swing(frames=100):
    """A door opening a quarter turn at a steady pace, Localized (Oni doors are)."""
    m = rotation_about(2, np.linspace(0, np.pi / 2, frames))
    m[:, :3, 3] = [30.0, 0.0, 10.0]
    turn = np.eye(4)
    turn[:3, :3] = LOCALIZED_TURN
    return turn @ m


# ---- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_generated_animations_rebuild_within_tolerance_in_both_engines(seed):
    for original in generated(40, seed):
        wanted = frame_matrices(original)
        animation, report = animation_from_matrices(original.name, wanted, original.base_matrix,
                                                    original.flags)
        assert animation.warnings == [] and report.frames == original.frames
        assert (animation.flags, animation.frames, animation.base_matrix.tobytes()) == \
               (original.flags, original.frames, original.base_matrix.tobytes())
        assert animation.keys["frame"][0] == 0 and animation.keys["frame"][-1] == original.frames - 1
        assert animation.start_matrix.tobytes() == stored_columns(wanted[0]).tobytes()
        got = frame_matrices(animation)
        assert relative_errors(got, wanted).max() == report.worst_error <= 1e-4
        assert plain_errors(got, wanted).max() <= 1e-4
        keys, base = plain_keys(animation), [float(v) for v in animation.base_matrix]
        plain = np.array([matrix_at(keys, base, animation.has(LOCALIZED), f) for f in range(animation.frames)])
        assert relative_errors(plain, wanted).max() <= 1e-4


def test_keys_are_in_the_engine_convention():
    # the spec example: key 1 turns 90 degrees about y; the engine's matrix is the transposed one
    example = read_file(os.path.join(DATA, "oni", "OBANspec_example.oni"))[0]
    quaternions, positions, errors = engine_keys_from_matrices(frame_matrices(example), example.base_matrix, False)
    np.testing.assert_allclose(quaternions[[0, 3]], example.keys["rotation"], atol=1e-7)
    np.testing.assert_allclose(positions[[0, 3]], example.keys["position"], atol=1e-5)
    assert errors.max() < 1e-15
    dots = (quaternions[1:] * quaternions[:-1]).sum(axis=1)
    assert (dots > 0).all()


def test_localized_door_sample_rebuilds_from_its_matrices():
    door = read_file(os.path.join(DATA, "raw", "00010-door_swing.OBAN"))[0]
    wanted = frame_matrices(door)
    animation, report = animation_from_matrices("door_swing", wanted, door.base_matrix, door.flags,
                                                door_open_frame=door.door_open_frame)
    assert report.worst_error <= 1e-4 and animation.has(LOCALIZED) and animation.door_open_frame == 50
    np.testing.assert_allclose(animation.start_matrix, door.start_matrix, atol=1e-7)  # cos(pi/2) there
    assert tuple(animation.keys[0]["rotation"]) == (0.0, 0.0, 0.0, 1.0)
    assert report.keys <= len(door.keys)


def test_sparse_originals_keep_about_their_key_count():
    original_keys = rebuilt_keys = 0
    for original in generated(60, 7, max_angle=math.radians(120)):
        if len(original.keys) == original.frames:
            continue
        # non-unit keys pace the engine's lerp unevenly, which unit keys cannot copy
        original.keys["rotation"] /= np.linalg.norm(original.keys["rotation"], axis=1, keepdims=True)
        _, report = animation_from_matrices("sparse", frame_matrices(original), original.base_matrix)
        assert report.worst_error <= 1e-4
        original_keys += len(original.keys)
        rebuilt_keys += report.keys
    assert original_keys > 300
    assert rebuilt_keys <= 1.05 * original_keys


# ---- fewest keys --------------------------------------------------------------------------

def test_smooth_motion_needs_several_times_fewer_keys():
    _, report = animation_from_matrices("camera", camera_on_a_circle(2000))
    assert report.worst_error <= 1e-4 and report.frames / report.keys >= 8
    _, report = animation_from_matrices("door", door_swing(), flags=LOCALIZED)
    assert report.worst_error <= 1e-4 and report.frames / report.keys >= 4


def test_noisy_motion_keeps_nearly_every_frame():
    wanted = camera_on_a_circle(1000)
    wanted[:, :3, 3] += np.random.default_rng(3).normal(0, 0.5, (1000, 3))
    _, report = animation_from_matrices("shaky", wanted)
    assert report.worst_error <= 1e-4 and report.keys >= 0.9 * report.frames


def test_a_finer_tolerance_is_kept_with_more_keys():
    wanted = camera_on_a_circle(2000)
    counts = []
    for tolerance in (1e-3, 1e-4, 1e-5, 1e-6):
        _, report = animation_from_matrices("camera", wanted, tolerance=tolerance)
        assert report.worst_error <= tolerance
        counts.append(report.keys)
    assert counts == sorted(counts) and counts[-1] > 4 * counts[1]


def test_a_tolerance_below_float32_keeps_every_frame_and_warns():
    animation, report = animation_from_matrices("camera", camera_on_a_circle(50), tolerance=1e-12)
    assert report.keys == 50
    assert any("more than the tolerance" in w for w in animation.warnings)


def test_rotation_error_is_not_hidden_by_a_far_position():
    # a camera far out panning with an ease: max|dM| / max(1, max|M|) would let its
    # rotation be off by 0.1 (about 6 degrees); the measure used holds the rotation to 1e-4
    pace = np.linspace(0.0, 1.0, 400)
    wanted = rotation_about(1, np.pi / 2 * pace * pace * (3 - 2 * pace))
    wanted[:, :3, 3] = [1000.0, 20.0, -800.0]
    animation, report = animation_from_matrices("camera", wanted)
    assert report.worst_error <= 1e-4
    assert np.abs(frame_matrices(animation)[:, :3, :3] - wanted[:, :3, :3]).max() <= 1e-4


def test_fewest_keys_ends_at_both_ends():
    for frames in (1, 2, 3, 17):
        quaternions, positions, _ = engine_keys_from_matrices(camera_on_a_circle(frames), IDENTITY, False)
        chosen = fewest_keys(quaternions, positions)
        assert chosen[0] == 0 and chosen[-1] == frames - 1 and (np.diff(chosen) > 0).all()


@pytest.mark.parametrize("noise, segments, frames", [(0.0, 1.5, 20.0), (0.5, 15.0, 75.0)])
def test_ten_thousand_frames_take_a_few_measurements_a_frame(noise, segments, frames):
    """The search's work grows with the frames, not their square: per frame, the segments it
    probes and the frames it replays stay within about twice what it takes (smooth: 0.75 and 10;
    noisy, a key on nearly every frame: 7.3 and 36)."""
    wanted = camera_on_a_circle(10_000)
    wanted[:, :3, 3] += np.random.default_rng(4).normal(0, noise, (10_000, 3))
    quaternions, positions, _ = engine_keys_from_matrices(wanted, IDENTITY, False)
    tally = Tally()
    chosen = fewest_keys(quaternions, positions, tally=tally)
    assert len(chosen) - 1 <= tally.segments <= segments * 10_000       # a probe at least from every key
    assert 5 * tally.segments <= tally.frames <= frames * 10_000           # five frames screen every probe
    _, report = animation_from_matrices("long", wanted)
    assert report.keys == len(chosen) and report.worst_error <= 1e-4


# ---- the search both exporters share ------------------------------------------------------

@pytest.mark.parametrize("reach, max_gap", [(1, None), (3, None), (37, None), (300, None), (37, 20), (300, 255)])
def test_the_search_reaches_exactly_as_far_as_segments_pass(reach, max_gap):
    """Segments pass up to `reach` frames long: every key is that far (or max_gap) past the one before."""
    tally = Tally()
    chosen = furthest_reach_keys(1000, np.array([999]), lambda starts, ends: ends - starts <= reach, max_gap,
                                 tally=tally)
    step = reach if max_gap is None else min(reach, max_gap)
    np.testing.assert_array_equal(chosen, np.append(np.arange(0, 999, step), 999))
    assert len(chosen) - 1 <= tally.segments


def test_the_search_steps_around_a_dead_end_to_a_kink_when_asked():
    """From 0 segments pass up to frame 12, from the kink at 10 to the end, from elsewhere one
    frame on: the furthest end, 12, leads to a key on every frame; the kink to one more key."""
    def passes(starts, ends):
        return ends <= np.select([starts == 0, starts == 10], [12, 30], starts + 1)
    kinks = np.array([10, 20, 30])
    assert furthest_reach_keys(31, kinks, passes).tolist() == [0] + list(range(12, 31))
    assert furthest_reach_keys(31, kinks, passes, dead_ends=True).tolist() == [0, 10, 30]


# ---- what an OBAN cannot hold --------------------------------------------------------------

def test_more_frames_than_an_oban_holds_is_refused():
    with pytest.raises(ObanError) as caught:
        animation_from_matrices("long_camera", np.tile(np.eye(4), (65_536, 1, 1)))
    assert str(caught.value) == ("long_camera: 65536 frames: an OBAN holds 1 to 65535 "
                                 "(frame 65535 and later cannot be stored)")
    animation, report = animation_from_matrices("longest", np.tile(np.eye(4), (65_535, 1, 1)))
    assert report.keys == 2 and animation.frames == 65_535


def test_non_finite_matrix_and_singular_base_are_refused():
    wanted = camera_on_a_circle(10)
    wanted[7, 1, 2] = np.nan
    with pytest.raises(ObanError, match=r"^cam: frame 7: non-finite matrix$"):
        animation_from_matrices("cam", wanted)
    with pytest.raises(ObanError, match="base matrix is not invertible"):
        animation_from_matrices("cam", camera_on_a_circle(10), base_matrix=np.zeros(12))
    with pytest.raises(ObanError, match="door open frame 70000 out of range"):
        animation_from_matrices("cam", camera_on_a_circle(10), door_open_frame=70_000)


def test_shear_and_a_changing_scale_are_reported_with_their_frame():
    wanted = camera_on_a_circle(30)
    wanted[12, 0, 1] += 0.3                       # shear at frame 12
    animation, report = animation_from_matrices("cam", wanted)
    assert report.rotation_frame == 12 and report.rotation_error > 0.1
    assert report.worst_frame == 12 and report.worst_error > 0.1
    assert animation.warnings[0].startswith("frame 12: not a rotation times the base matrix")

    base = stored_columns(np.diag([2.0, 1.0, 1.0, 1.0]))   # the base's stretch, then another one
    wanted = camera_on_a_circle(30) @ matrix_from_columns(base)
    wanted[20:] = wanted[20:] @ np.diag([1.0, 1.5, 1.0, 1.0])
    _, report = animation_from_matrices("cam", wanted, base, LOOP)
    assert report.rotation_frame >= 20 and report.rotation_error > 0.1
    _, report = animation_from_matrices("cam", wanted[:20], base, LOOP)
    assert report.rotation_error < 1e-12 and report.worst_error <= 1e-4
    _, report = animation_from_matrices("cam", wanted[:20], IDENTITY, LOOP)   # the wrong base
    assert report.rotation_error > 0.4                                       # every frame

    wanted = camera_on_a_circle(30)
    wanted[3:, :, 0] *= -1.0                       # mirrored from frame 3 on
    _, report = animation_from_matrices("cam", wanted)
    assert report.rotation_frame >= 3 and report.rotation_error > 0.5


# ---- key lengths: the engine blends stored, possibly non-unit, quaternions ----------------

@pytest.mark.parametrize("seed", range(5))
def test_non_unit_keys_export_to_as_many_keys(seed):
    animation = non_unit_keys(seed)
    wanted = frame_matrices(animation)
    rebuilt, report = animation_from_matrices("lengths", wanted)
    assert report.keys == 5 and report.worst_error <= 1e-4
    np.testing.assert_array_equal(rebuilt.keys["frame"], animation.keys["frame"])
    assert plain_errors(frame_matrices(rebuilt), wanted).max() <= 1e-4
    quaternions, positions, _ = engine_keys_from_matrices(wanted, IDENTITY, False)
    assert len(fewest_keys(quaternions, positions, fit_lengths=False)) > 20   # unit keys cannot


def test_fitted_lengths_reduce_the_keys_of_an_eased_door():
    eased = np.pi / 2 * (3 * np.linspace(0, 1, 100) ** 2 - 2 * np.linspace(0, 1, 100) ** 3)   # smoothstep
    door = rotation_about(2, eased)
    quaternions, positions, _ = engine_keys_from_matrices(door, IDENTITY, False)
    fitted = len(fewest_keys(quaternions, positions))
    unit = len(fewest_keys(quaternions, positions, fit_lengths=False))
    print(f"eased door: {unit} keys with unit quaternions, {fitted} with fitted lengths")
    assert fitted < unit
    _, report = animation_from_matrices("door", door)
    assert report.keys == fitted and report.worst_error <= 1e-4
