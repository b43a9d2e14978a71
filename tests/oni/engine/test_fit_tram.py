"""A motion written back as TRAM keys and root motion (engine/fit_tram.py): generated TRAMs refitted,
authored motions (key counts and errors as measured, docs/characters.md "Writing a motion back"), the
6-byte quantisation, the root motion's inverse, and tolerances finer than the keys can hold."""

import json
import os
from dataclasses import dataclass

import numpy as np
import pytest
from characters_generate import SPECIAL_CODES, every_tram
from paths import DATA

from oban_import.oni.engine.fit_tram import MAX_GAP, codes_from_quaternions, fit_tracks, root_motion_from
from oban_import.oni.engine.poses import ANGLE_PER_CODE, key_quaternions, part_rotations, root_motion, world_matrices
from oban_import.oni.engine.rotations import multiply, relative_errors, relative_linear_errors, rotation_matrices
from oban_import.oni.io.trams.files import read_tram_file
from oban_import.oni.io.trams.tram import Tram
from oban_import.oni.io.trams.write import tram_oni_bytes

with open(os.path.join(DATA, "characters", "manifest.json")) as manifest:
    ONI_BODY = json.load(manifest)["bodies"][0]
PARENTS, TRANSLATIONS = np.array(ONI_BODY["parent"]), np.array(ONI_BODY["trta"], np.float64)
HALF_CODE = ANGLE_PER_CODE / 2   # the most a rounded angle is off


def euler(angles):
    """Stored quaternions of Rx(a) . Ry(b) . Rz(c) for angles (..., 3) in radians."""
    half = np.asarray(angles, np.float64) / 2
    zero = np.zeros(half.shape[:-1])
    x, y, z = ([np.cos(half[..., k])] + [np.sin(half[..., k]) if j == k else zero for j in range(3)] for k in range(3))
    w, *xyz = np.moveaxis(multiply(multiply(np.stack(x, -1), np.stack(y, -1)), np.stack(z, -1)), -1, 0)
    return np.stack(xyz + [-w], -1)


def written(tracks, key_size, locations=None):
    """The Tram an exporter writes for these tracks (root motion from `locations`, else none)."""
    frames = int(tracks[0].frames[-1]) + 1
    heights, velocities = root_motion_from(np.zeros((frames, 3)) if locations is None else locations)
    return Tram(name="fitted", frames=frames, key_size=key_size, flags=0, used_parts=0, replaced_parts=0,
                heights=heights, velocities=velocities, tracks=tracks)


@dataclass
class TrackReport:
    keys: int                # all parts' keys
    worst_error: float       # the replay's, against the wanted motion
    worst_part: int
    worst_frame: int


def replay_report(tram, rotations, parents=None, translations=None, locations=None) -> TrackReport:
    """How far a TRAM (what will be written, read as poses reads it) replays from the wanted
    `rotations` (F, P, 4): per part and frame the rotation's `relative_linear_errors`, or, with
    a body, the world matrix's `relative_errors`: the wanted ones placed by `locations` (F, 3),
    (x, height, z), the replayed ones by the TRAM's own root motion (both by the TRAM's when no
    `locations` are given)."""
    replayed = part_rotations(tram)
    rotations = np.asarray(rotations, np.float64)
    if parents is None:
        errors = relative_linear_errors(rotation_matrices(replayed.reshape(-1, 4)),
                                        rotation_matrices(rotations.reshape(-1, 4)))
    else:
        location, heights = root_motion(tram)
        if locations is None:
            wanted_location, wanted_heights = location, heights
        else:
            locations = np.asarray(locations, np.float64)
            wanted_location, wanted_heights = locations * [1.0, 0.0, 1.0], locations[:, 1]
        wanted = world_matrices(parents, translations, rotations, wanted_location, wanted_heights)
        got = world_matrices(parents, translations, replayed, location, heights)
        errors = relative_errors(got.reshape(-1, 4, 4), wanted.reshape(-1, 4, 4))
    errors = errors.reshape(rotations.shape[:2])
    frame, part = np.unravel_index(int(errors.argmax()), errors.shape)
    return TrackReport(sum(len(track.frames) for track in tram.tracks), float(errors.max()), int(part), int(frame))


def assert_storable(tracks, frames, key_size):
    for track in tracks:
        gaps = np.diff(track.frames)
        assert track.frames.dtype == np.int64 and track.frames[0] == 0 and track.frames[-1] == frames - 1
        assert ((gaps >= 1) & (gaps <= MAX_GAP)).all()
        assert track.values.shape == (len(track.frames), 3 if key_size == 6 else 4)
        assert track.values.dtype == (np.uint16 if key_size == 6 else np.float32)


# --- generated TRAMs refitted ----------------------------------------------------------------------

@pytest.mark.parametrize("seed, body", [(0, False), (1, False), (2, True)])
def test_a_trams_own_motion_is_refitted_on_its_own_keys(seed, body):
    """Every case of every_tram: no part gets more keys than it had, every key falls on one of its
    own, and the replay is within tolerance (to rounding: the same keys)."""
    fitted = original = 0
    for name, tram in every_tram(np.random.default_rng(seed)).items():
        if body and len(tram.tracks) != len(PARENTS):
            continue
        wanted = part_rotations(tram)
        location, heights = root_motion(tram)
        placed = location + np.outer(heights, [0, 1, 0]) if body else None
        tolerance = 1e-3 if tram.key_size == 6 else 1e-4
        tracks = fit_tracks(wanted, tram.key_size, tolerance, *((PARENTS, TRANSLATIONS, placed) if body else ()))
        assert_storable(tracks, tram.frames, tram.key_size)
        for new, old in zip(tracks, tram.tracks):
            assert len(new.frames) <= len(old.frames) and np.isin(new.frames, old.frames).all(), name
        report = replay_report(written(tracks, tram.key_size, placed), wanted,
                               *((PARENTS, TRANSLATIONS, placed) if body else ()))
        assert report.worst_error <= 5e-7, name   # float32 rounding of 16-byte keys and of the steps
        fitted, original = fitted + report.keys, original + sum(len(track.frames) for track in tram.tracks)
    assert fitted < original


def test_written_keys_read_back_replay_as_fitted(tmp_path):
    rng = np.random.default_rng(3)
    wanted = euler(rng.normal(0, 0.2, (90, 19, 3)).cumsum(axis=0))
    for key_size in (6, 16):
        tram = written(fit_tracks(wanted, key_size, 1e-2), key_size)
        path = tmp_path / f"TRAMfitted{key_size}.oni"
        path.write_bytes(tram_oni_bytes(tram))
        back = read_tram_file(path)
        np.testing.assert_array_equal(part_rotations(back), part_rotations(tram))
        assert replay_report(back, wanted).worst_error <= 1e-2


# --- authored motions ------------------------------------------------------------------------------

def smoothstep(t):
    return t * t * (3 - 2 * t)


def along(frames, degrees, pace=lambda t: t):
    """One part turning by Euler angles `degrees` (3,) over `frames`, at `pace` (0 .. 1 -> 0 .. 1)."""
    return euler(np.outer(pace(np.linspace(0, 1, frames)), np.radians(degrees)))[:, None]


def walk_cycle(frames=120, period=60, seed=0):
    """19 parts swinging by sines, 5 to 30 degrees, out of phase; the root walks 0.45 units a frame
    with a sway and a bob around a height of 16."""
    rng = np.random.default_rng(seed)
    f = np.arange(frames)[:, None, None]
    amplitudes, phases = np.radians(rng.uniform(5, 30, (19, 3))), rng.uniform(0, 2 * np.pi, (19, 3))
    swing = amplitudes * np.sin(2 * np.pi * f / period + phases)
    turn = 2 * np.pi * f[:, 0, 0] / period
    locations = np.stack([0.02 * np.sin(turn), 16 + 0.3 * np.sin(2 * turn), 0.45 * f[:, 0, 0]], -1)
    return euler(swing), locations


def crossing_gimbal_lock(frames=80):
    """y from 60 to 120 degrees (through the lock at 90) while x swings and z turns."""
    t = np.linspace(0, 1, frames)
    return euler(np.stack([np.radians(30) * np.sin(6 * t), np.radians(60 + 60 * t), np.radians(40) * t], -1))[:, None]


def at_gimbal_lock(frames=80):
    """y held at 90 degrees, x and z turning: only x + z shows, a turn of 20 degrees about one axis."""
    t = np.linspace(0, 1, frames)
    return euler(np.stack([np.radians(50) * t, np.full(frames, np.pi / 2), np.radians(-70) * t], -1))[:, None]


def half_turn_flip():
    """Still for 10 frames, then turned 180 degrees about x for 10."""
    return euler(np.radians([[0, 0, 0]] * 10 + [[180, 0, 0]] * 10))[:, None]


def long_and_slow():
    """600 frames: one part turning 45 degrees about y, one held still."""
    return np.concatenate([along(600, [0, 45, 0]), euler(np.full((600, 1, 3), 0.3))], axis=1)


AUTHORED = {   # motion, key size, tolerance: keys of each part, worst error (measured)
    "eased 90":          (lambda: along(60, [0, 90, 0], smoothstep), 6, 1e-3, [32], 9.85e-4),
    "eased 90, 16":      (lambda: along(60, [0, 90, 0], smoothstep), 16, 1e-3, [10], 9.50e-4),
    "eased 90, 16 fine": (lambda: along(60, [0, 90, 0], smoothstep), 16, 1e-4, [21], 8.41e-5),
    "steady 360":        (lambda: along(60, [0, 0, 360]), 6, 1e-3, [12], 9.98e-4),
    "steady 360, 16":    (lambda: along(60, [0, 0, 360]), 16, 1e-3, [12], 9.81e-4),
    "steady 180":        (lambda: along(90, [180, 0, 0]), 6, 1e-3, [7], 9.88e-4),
    "steady 180, 16":    (lambda: along(90, [180, 0, 0]), 16, 1e-4, [13], 8.79e-5),
    "flip 180":          (half_turn_flip, 6, 1e-3, [4], 4.79e-5),
    "flip 180, 16":      (half_turn_flip, 16, 1e-4, [4], 0.0),
    "through the lock":  (crossing_gimbal_lock, 6, 1e-3, [58], 9.88e-4),
    "through the lock, 16": (crossing_gimbal_lock, 16, 1e-3, [38], 9.67e-4),
    "at the lock":       (at_gimbal_lock, 6, 1e-3, [2], 1.76e-4),
    "one frame":         (lambda: euler(np.radians([[[10, 20, 30]]])), 6, 1e-3, [1], 4.06e-5),
    "one frame, 16":     (lambda: euler(np.radians([[[10, 20, 30]]])), 16, 1e-3, [1], 1.98e-8),
    "600 frames":        (long_and_slow, 6, 1e-3, [4, 4], 1.58e-4),
}


@pytest.mark.parametrize("name", AUTHORED)
def test_authored_motions_take_the_keys_measured(name):
    motion, key_size, tolerance, keys, error = AUTHORED[name]
    wanted = motion()
    tracks = fit_tracks(wanted, key_size, tolerance)
    assert_storable(tracks, len(wanted), key_size)
    report = replay_report(written(tracks, key_size), wanted)
    assert [len(track.frames) for track in tracks] == keys
    assert report.worst_error <= tolerance
    assert report.worst_error == pytest.approx(error, rel=0.01, abs=1e-12)


def test_keys_land_where_the_motion_breaks_and_long_stretches_are_split():
    assert fit_tracks(half_turn_flip(), 6, 1e-3)[0].frames.tolist() == [0, 9, 10, 19]
    for key_size in (6, 16):
        assert [track.frames.tolist() for track in fit_tracks(long_and_slow(), key_size, 1e-3)] == \
            [[0, 255, 510, 599]] * 2


@pytest.mark.parametrize("key_size, tolerance, keys, local_keys", [(6, 1e-2, 666, 543), (16, 1e-2, 589, 498),
                                                                   (6, 3e-3, 1246, 1044), (16, 1e-3, 2011, 1993)])
def test_a_walk_holds_the_tolerance_for_every_part_in_the_world(key_size, tolerance, keys, local_keys):
    """Fitted to each part's own rotation, the errors add up down the body (the feet, low and far
    from the pelvis, 8 times the tolerance); fitted to the world matrices, every part is within."""
    wanted, locations = walk_cycle()
    body = PARENTS, TRANSLATIONS, locations
    world = written(fit_tracks(wanted, key_size, tolerance, *body), key_size, locations)
    local = written(fit_tracks(wanted, key_size, tolerance), key_size, locations)
    assert replay_report(world, wanted, *body).worst_error <= tolerance
    assert replay_report(local, wanted).worst_error <= tolerance < replay_report(local, wanted, *body).worst_error / 5
    assert (replay_report(world, wanted).keys, replay_report(local, wanted).keys) == (keys, local_keys)


def test_a_random_body_holds_the_tolerance_in_the_world():
    rng = np.random.default_rng(11)
    parents = [-1, 0, 0, 0, 1, 1, 3, 6, 7]
    translations = rng.uniform(-8, 8, (len(parents), 3))
    wanted = euler(np.radians(rng.normal(0, 2, (150, len(parents), 3))).cumsum(axis=0))
    locations = np.column_stack([np.linspace(0, 30, 150), np.full(150, 12.0), np.zeros(150)])
    for key_size in (6, 16):
        tram = written(fit_tracks(wanted, key_size, 3e-3, parents, translations, locations), key_size, locations)
        assert replay_report(tram, wanted, parents, translations, locations).worst_error <= 3e-3


@pytest.mark.parametrize("key_size", [6, 16])
def test_an_overlays_still_parts_rest_and_the_parts_below_make_up_for_them(key_size):
    """The engine plays an overlay's unused parts at rest: fitted as still, they get rest keys
    and the used parts below them make up for their parents' errors."""
    rng = np.random.default_rng(12)
    parents = [-1, 0, 1, 2, 3, 0, 5, 6]
    translations = rng.uniform(-8, 8, (len(parents), 3))
    still = np.array([True, False, True, True, False, True, False, False])
    t = np.linspace(0, 2 * np.pi, 120)[:, None, None]
    wanted = euler(rng.uniform(0.2, 1.0, (len(parents), 3)) * np.sin(t * rng.uniform(0.5, 2, (len(parents), 3))))
    wanted[:, still] = [0.0, 0.0, 0.0, 1.0]
    tracks = fit_tracks(wanted, key_size, 1e-3, parents, translations, still=still)
    assert_storable(tracks, 120, key_size)
    tram = written(tracks, key_size)
    tram.flags, tram.used_parts = 0x2000, int(sum(1 << p for p in np.flatnonzero(~still)))
    assert replay_report(tram, wanted, parents, translations).worst_error <= 1e-3
    assert all(len(tracks[p].frames) == 2 and not key_quaternions(tracks[p].values, key_size)[:, :3].any()
               for p in np.flatnonzero(still))


# --- 6-byte quantisation ---------------------------------------------------------------------------

def decoded_errors(wanted, codes):
    """(element error, angle) of each code triple's rotation against each wanted quaternion."""
    got = key_quaternions(codes, 6)
    dots = np.abs(np.einsum("ij,ij->i", got, wanted)) / np.linalg.norm(wanted, axis=1)
    return (relative_linear_errors(rotation_matrices(got), rotation_matrices(wanted)),
            2 * np.arccos(np.minimum(dots, 1.0)))


def test_six_byte_codes_are_within_half_a_code_of_any_rotation():
    rng = np.random.default_rng(1)
    wanted = rng.normal(size=(200_000, 4))
    codes = codes_from_quaternions(wanted)
    elements, angles = decoded_errors(wanted, codes)
    assert elements.max() < 6.9e-5 and angles.max() < 1.2 * HALF_CODE     # measured 6.81e-5, 1.13 half codes
    # rounding the first Euler solution's angles on their own is never nearer (measured: up to 2.2 half codes)
    plain = np.round(np.mod(np.column_stack(euler_angles(wanted)), 2 * np.pi) / ANGLE_PER_CODE) % 65535
    assert (angles <= decoded_errors(wanted, plain.astype(np.uint16))[1] + 1e-12).all()
    np.testing.assert_array_equal(codes_from_quaternions(-2.5 * wanted), codes)   # any sign and length


def euler_angles(q):
    """The XYZ Euler angles of stored quaternions, y in [-90, 90] degrees (away from the lock)."""
    m = rotation_matrices(q)
    return (np.arctan2(-m[:, 1, 2], m[:, 2, 2]), np.arcsin(np.clip(m[:, 0, 2], -1, 1)),
            np.arctan2(-m[:, 0, 1], m[:, 0, 0]))


def test_six_byte_codes_at_gimbal_lock():
    """y at +-90 degrees (and a hair off), where only x +- z counts: as near as anywhere."""
    rng = np.random.default_rng(2)
    angles = rng.uniform(0, 2 * np.pi, (100_000, 3))
    angles[:, 1] = rng.choice([np.pi / 2, -np.pi / 2], len(angles)) + rng.normal(0, 1e-6, len(angles)) * (
        rng.random(len(angles)) < 0.5)
    wanted = euler(angles)
    elements, turned = decoded_errors(wanted, codes_from_quaternions(wanted))
    assert elements.max() < 4.8e-5 and turned.max() < 1.2 * HALF_CODE      # measured 4.79e-5, 1.12 half codes


def test_decoded_codes_encode_to_the_same_codes():
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 65536, (100_000, 3))
    codes[:3000] = rng.choice(SPECIAL_CODES + (16383, 16384, 49151, 49152), (3000, 3))   # 0 / 360, 180, the lock
    back = codes_from_quaternions(key_quaternions(codes, 6))
    np.testing.assert_array_equal(back % 65535, codes % 65535)            # 65535 is 360 degrees: 0
    wanted = key_quaternions(codes, 6)
    assert decoded_errors(wanted, back)[0].max() < 1e-15


# --- root motion ----------------------------------------------------------------------------------

def replayed_locations(heights, velocities):
    tram = Tram(name="root", frames=len(heights), key_size=6, flags=0, used_parts=0, replaced_parts=0,
                heights=heights, velocities=velocities, tracks=[])
    location, replayed_heights = root_motion(tram)
    return location + np.outer(replayed_heights, [0, 1, 0])


def test_root_motion_replays_every_location_to_float32():
    rng = np.random.default_rng(5)
    steps = rng.normal(0, 0.5, (6000, 3)) + [0.4, 0, -0.3]
    locations = np.cumsum(steps, axis=0) + [1000.0, 0.0, -20.0]
    locations[:, 1] = 16 + rng.normal(0, 1, 6000)
    heights, velocities = root_motion_from(locations)
    assert heights.dtype == velocities.dtype == np.float32 and velocities.shape == (6000, 2)
    np.testing.assert_array_equal(heights, locations[:, 1].astype(np.float32))
    bound = 2.0 ** -24 * np.abs(np.diff(locations, axis=0)).max()
    off = np.abs(replayed_locations(heights, velocities)[:, ::2] - (locations - locations[0])[:, ::2]).max()
    assert off <= bound
    plain = np.zeros((6000, 2), np.float32)      # each step rounded on its own drifts further
    plain[:-1] = np.diff(locations[:, ::2], axis=0)
    assert np.abs(replayed_locations(heights, plain)[:, ::2] - (locations - locations[0])[:, ::2]).max() > 2 * bound
    np.testing.assert_array_equal(velocities[-1], velocities[-2])         # the last frame keeps the pace


def test_root_motion_of_a_tram_comes_back():
    tram = every_tram(np.random.default_rng(6))["walk"]
    location, heights = root_motion(tram)
    got_heights, velocities = root_motion_from(location + np.outer(heights, [0, 1, 0]))
    np.testing.assert_array_equal(got_heights, tram.heights)
    bound = 2.0 ** -24 * np.abs(tram.velocities).max()
    replayed = replayed_locations(got_heights, velocities)
    assert np.abs(replayed - replayed_locations(tram.heights, tram.velocities)).max() <= bound
    assert np.abs(velocities[:-1] - tram.velocities[:-1]).max() <= bound


def test_root_motion_of_one_frame_and_of_none():
    heights, velocities = root_motion_from([[3.0, 17.0, -4.0]])
    assert heights.tolist() == [17.0] and velocities.tolist() == [[0.0, 0.0]]
    heights, velocities = root_motion_from(np.tile([[3.0, 17.0, -4.0]], (5, 1)))
    assert not velocities.any()
    for bad in (np.zeros((0, 3)), [[0.0, np.nan, 0.0]]):
        with pytest.raises(ValueError, match="root motion"):
            root_motion_from(bad)


# --- tolerances finer than the keys ---------------------------------------------------------------

def test_a_tolerance_finer_than_six_byte_keys_keys_every_frame_and_reports_how_far():
    wanted, locations = walk_cycle(frames=40)
    tracks = fit_tracks(wanted, 6, 1e-7)
    assert all(len(track.frames) == 40 for track in tracks)
    floor = relative_linear_errors(rotation_matrices(key_quaternions(codes_from_quaternions(wanted.reshape(-1, 4)), 6)),
                                   rotation_matrices(wanted.reshape(-1, 4))).reshape(40, 19)
    report = replay_report(written(tracks, 6), wanted)
    assert report.worst_error == floor.max() > 1e-5
    assert (report.worst_frame, report.worst_part) == np.unravel_index(floor.argmax(), floor.shape)
    body = PARENTS, TRANSLATIONS, locations
    tracks = fit_tracks(wanted, 6, 1e-7, *body)
    assert all(len(track.frames) == 40 for track in tracks)
    assert 1e-5 < replay_report(written(tracks, 6, locations), wanted, *body).worst_error < 4e-4


def test_a_tolerance_finer_than_float32_keys_every_frame():
    wanted = along(30, [40, 0, 0], smoothstep)
    tracks = fit_tracks(wanted, 16, 1e-12)
    assert tracks[0].frames.tolist() == list(range(30))
    assert 0 < replay_report(written(tracks, 16), wanted).worst_error < 1e-7


# --- what cannot be fitted -------------------------------------------------------------------------

def test_bad_input_is_refused():
    wanted = along(10, [0, 30, 0])
    with pytest.raises(ValueError, match="key size 8"):
        fit_tracks(wanted, 8, 1e-3)
    for bad in (np.zeros((10, 1, 4)), np.full((10, 1, 4), np.nan), wanted[:, 0], np.zeros((0, 1, 4))):
        with pytest.raises(ValueError, match="rotation"):
            fit_tracks(bad, 6, 1e-3)
    with pytest.raises(ValueError, match="does not come before it"):
        fit_tracks(np.repeat(wanted, 2, axis=1), 6, 1e-3, [1, -1], np.ones((2, 3)))
