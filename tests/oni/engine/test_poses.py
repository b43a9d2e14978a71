"""A character's pose (engine/poses.py) against docs/characters.md "The engine's math" written out plainly, and
against OniSplit's Collada bakes of the sample animations (an independent answer key, with the differences that
section explains)."""

import json
import math
import os
import xml.etree.ElementTree as ET
from glob import glob
from types import SimpleNamespace

import character_reference
import collada
import numpy as np
import pytest
from paths import DATA

from oban_import.oni.engine.poses import (OVERLAY, animation_matrices, key_quaternions, part_rotations, root_motion,
                                          summed_velocities, world_matrices)
from oban_import.oni.engine.rotations import rotation_matrices

TOLERANCE = 1e-6
SAMPLES = os.path.join(DATA, "characters")
MANIFEST = json.load(open(os.path.join(SAMPLES, "manifest.json")))
SAMPLE_NAMES = [animation["name"] for animation in MANIFEST["animations"]]
PART_NAMES = ("Pelvis LeftThigh LeftCalf LeftFoot RightThigh RightCalf RightFoot Mid Chest Neck Head LeftShoulder "
              "LeftArm LeftWrist LeftFist RightShoulder RightArm RightWrist RightFist").split()   # docs/characters.md 1
# docs/characters.md "The engine's math" / the samples' README: OniSplit reads codes as signed; its bake is that
# far from the engine
SIGNED_READING_ROTATION, SIGNED_READING_TRANSLATION = 7.5e-4, 0.0083
# OniSplit's Collada holds angles and positions in float32: its own reading agrees to this (relative)
FLOAT32_BAKE = 3e-6
# the same / the samples' README: its Euler angles are wrong where |sin y| > 0.999: {animation: {part: frames}}
EULER_FAULTS = {"TRAMchar0_wrap03": {12: (7, 34)}}
SPECIAL_CODES = (0, 1, 32766, 32767, 32768, 32769, 65534, 65535)
ONI_PARENTS = MANIFEST["bodies"][0]["parent"]


# --- stand-ins for the reader's Track / Tram / Body (oni/io/trams/tram.py, model.py): attributes only

def make_track(frames, values):
    return SimpleNamespace(frames=np.asarray(frames, np.int64), values=values)


def make_tram(**fields):
    return SimpleNamespace(**fields)


def make_body(parents, translations):
    return SimpleNamespace(parents=np.asarray(parents, np.int64), translations=np.asarray(translations, np.float64))


# --- generated animations

def key_frames(rng, frames, max_gap):
    """0, then gaps of 1 .. max_gap (the first one max_gap), the last one cut to end on frames - 1."""
    if frames == 1:
        return np.array([0])
    gaps = rng.integers(1, max_gap + 1, size=frames)
    gaps[0] = max_gap
    ends = np.cumsum(gaps)
    return np.concatenate([[0], ends[ends < frames - 1], [frames - 1]])


def six_byte_values(rng, count, wrap):
    """u16 codes: anywhere, or (wrap) wandering across 0 / 360 degrees or +-180; some special codes."""
    if wrap:
        codes = rng.choice([0, 32768]) + rng.integers(-4000, 4000, size=(count, 3))
    else:
        codes = rng.integers(0, 65536, size=(count, 3))
    special = rng.random((count, 3)) < 0.2
    codes[special] = rng.choice(SPECIAL_CODES, size=special.sum())
    return (codes % 65536).astype(np.uint16)


def sixteen_byte_values(rng, count):
    """x y z w float32, not unit length (0.3 .. 1.7), neighbours on either side of the sphere."""
    q = rng.normal(size=(count, 4))
    q *= rng.uniform(0.3, 1.7, size=(count, 1)) / np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(np.float32)


def random_tram(rng, parts, frames, key_size, max_gap, flags=0, used=0, replaced=0, wrap=False):
    tracks = []
    for _ in range(parts):
        times = key_frames(rng, frames, max_gap)
        values = six_byte_values(rng, len(times), wrap) if key_size == 6 else sixteen_byte_values(rng, len(times))
        tracks.append(make_track(times, values))
    return make_tram(name="generated", frames=frames, key_size=key_size, flags=flags, used_parts=used,
                     replaced_parts=replaced, heights=rng.uniform(5, 20, frames).astype(np.float32),
                     velocities=rng.normal(0, 2, (frames, 2)).astype(np.float32), tracks=tracks)


def random_body(rng, oni):
    """Oni's 19-part tree, or a random one of 2 .. 8 parts; translations of 0.5 .. 8 units."""
    parents = ONI_PARENTS if oni else [-1] + [int(rng.integers(0, p)) for p in range(1, int(rng.integers(2, 9)))]
    return make_body(parents, rng.uniform(-8, 8, (len(parents), 3)))


def generated_cases(seed):
    """(label, tram, body, facing, scale): every case the spec names, with a random body and motion."""
    rng = np.random.default_rng(seed)
    cases = []
    for i, (frames, max_gap) in enumerate([(1, 1), (2, 1), (3, 2), (40, 8), (120, 30), (300, 255)]):
        for key_size in (6, 16):
            body = random_body(rng, oni=i % 2 == 0)
            parts = len(body.parents)
            overlay = dict(flags=OVERLAY | 0x10, used=int(rng.integers(0, 1 << parts)),
                           replaced=int(rng.integers(0, 1 << parts)))
            kinds = {"plain": {}, "wrap": dict(wrap=True), "overlay": overlay} if key_size == 6 else \
                {"plain": {}, "overlay": overlay}
            for kind, options in kinds.items():
                tram = random_tram(rng, parts, frames, key_size, max_gap, **options)
                facing, scale = rng.choice([0.0, 0.7, -2.5, math.pi]), rng.choice([1.0, 0.8886, 1.7])
                cases.append((f"{kind}{key_size} F{frames} facing{facing:.2f} scale{scale}", tram, body, facing, scale))
    return cases


def normalised(q):
    return np.asarray(q) / np.linalg.norm(q, axis=-1, keepdims=True)


def part_errors(got, expected):
    """(max|d linear| / max|linear|, max|d translation| / max|translation|) of (..., 4, 4) matrices:
    the linear and translation parts each against its own size."""
    linear = np.abs(got[..., :3, :3] - expected[..., :3, :3]).max() / np.abs(expected[..., :3, :3]).max()
    translation = np.abs(got[..., :3, 3] - expected[..., :3, 3]).max() / max(np.abs(expected[..., :3, 3]).max(),
                                                                             np.finfo(float).tiny)
    return linear, translation


@pytest.mark.parametrize("seed", range(3))
def test_every_part_at_every_frame_matches_the_plain_reference(seed):
    for label, tram, body, facing, scale in generated_cases(seed):
        expected_rotations = normalised(character_reference.rotations(tram))
        np.testing.assert_allclose(part_rotations(tram), expected_rotations, rtol=0, atol=TOLERANCE, err_msg=label)
        expected = np.array(character_reference.world_matrices(body.parents, body.translations, tram, facing, scale))
        got = animation_matrices(body, tram, facing, scale)
        assert got.shape == expected.shape == (tram.frames, len(body.parents), 4, 4), label
        assert max(part_errors(got, expected)) < TOLERANCE, label


def test_generated_cases_cover_what_the_spec_names():
    cases = [case for seed in range(3) for case in generated_cases(seed)]
    trams = [tram for _, tram, _, _, _ in cases]
    six = [t for t in trams if t.key_size == 6]
    codes = {int(c) for t in six for track in t.tracks for c in track.values.ravel()}
    assert set(SPECIAL_CODES) <= codes
    gaps = {int(g) for t in trams for track in t.tracks for g in np.diff(track.frames)}
    assert {1, 255} <= gaps and max(gaps) == 255
    assert {t.frames for t in trams} >= {1, 2, 300}
    lengths = np.concatenate([np.linalg.norm(track.values, axis=1) for t in trams if t.key_size == 16
                              for track in t.tracks])
    assert lengths.min() < 0.5 and lengths.max() > 1.5
    for key_size in (6, 16):   # neighbouring keys on opposite sides: the shorter-arc flip is used
        keys = [key_quaternions(track.values, key_size) for t in trams if t.key_size == key_size for track in t.tracks]
        assert any((np.einsum("ij,ij->i", q[:-1], q[1:]) < 0).any() for q in keys)
    # 6-byte neighbours on either side of 180 degrees (32767 | 32768) and of 0 / 360 (65535 | 0)
    pairs = np.concatenate([np.stack([track.values[:-1], track.values[1:]], -1).reshape(-1, 2) for t in six
                            for track in t.tracks])
    assert ((pairs.min(1) < 32768) & (pairs.max(1) >= 32768) & (np.ptp(pairs, 1) < 8000)).any()
    assert ((pairs.min(1) < 4000) & (pairs.max(1) > 61535)).any()
    overlays = [t for t in trams if t.flags & OVERLAY]
    assert {t.key_size for t in overlays} == {6, 16}
    assert any(t.used_parts & ~t.replaced_parts and t.replaced_parts & ~t.used_parts for t in overlays)
    assert {round(float(c[3]), 2) for c in cases} == {0.0, 0.7, -2.5, 3.14}
    assert {float(c[4]) for c in cases} == {1.0, 0.8886, 1.7}
    assert {len(c[2].parents) for c in cases} > {19}


def test_six_byte_keys_turn_by_rx_ry_rz_of_their_codes():
    codes = np.array([[0, 0, 0], [16384, 0, 0], [1, 32767, 65535], [32768, 65534, 32769], [12345, 54321, 777]],
                     np.uint16)
    angles = codes.astype(np.float64) * 2 * math.pi / 65535
    for code, (a, b, c), got in zip(codes, angles, rotation_matrices(key_quaternions(codes, 6))):
        expected = collada._turn(np.array([a]), 1, 2) @ collada._turn(np.array([b]), 2, 0) @ \
            collada._turn(np.array([c]), 0, 1)
        np.testing.assert_allclose(got, expected[0], rtol=0, atol=1e-14, err_msg=str(code))
    np.testing.assert_allclose(key_quaternions(codes[:1], 6), [[0.0, 0.0, 0.0, -1.0]])   # (x, y, z, -w)


def test_sixteen_byte_keys_are_kept_as_stored():
    values = np.array([[0.5, -1.25, 2.0, 0.75]], np.float32)
    np.testing.assert_array_equal(key_quaternions(values, 16), values.astype(np.float64))
    with pytest.raises(ValueError, match="key size 8"):
        key_quaternions(values, 8)


def test_between_keys_the_far_key_is_flipped_to_the_near_side():
    """Keys x y z w (0, 0, 0, 2) and (0, 0, -1, -1), dot < 0: frame 1 of 2 lerps the first and the
    second negated, as stored: (0, 0, 0.5, 1.5), normalised; on the keys' frames the keys."""
    track = make_track([0, 2], np.array([[0, 0, 0, 2], [0, 0, -1, -1]], np.float32))
    tram = make_tram(frames=3, key_size=16, flags=0, used_parts=0, replaced_parts=0, tracks=[track])
    np.testing.assert_allclose(part_rotations(tram)[:, 0], normalised([[0, 0, 0, 2], [0, 0, 0.5, 1.5], [0, 0, -1, -1]]),
                               rtol=0, atol=1e-15)


def test_root_motion_sums_the_steps_before_each_frame_turned_by_the_facing():
    """MUrPoint_RotateYAxis turns (1, 0, 0) by a quarter to (0, 0, -1)."""
    tram = make_tram(frames=3, flags=0, heights=np.array([1.0, 2.0, 3.0], np.float32),
                     velocities=np.array([[1.0, 0.0], [0.0, 2.0], [5.0, 5.0]], np.float32))
    location, heights = root_motion(tram, facing=math.pi / 2)
    np.testing.assert_allclose(location, [[0, 0, 0], [0, 0, -1], [2, 0, -1]], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(heights, [1.0, 2.0, 3.0])
    tram.flags = OVERLAY
    for array in root_motion(tram, facing=1.0):
        assert not array.any()


def test_summed_velocities_sum_each_animation_on_its_own():
    """Animations of 1 to 6000 frames (of every length class, in any order) end to end, with
    velocities of any size (one 3e38, one -0): each frame's sum is its own animation's
    velocities before it summed in order from 0, bit for bit as np.cumsum of them alone."""
    rng = np.random.default_rng(8)
    counts = np.concatenate([[1, 1, 2, 3, 4, 6000], rng.integers(1, 600, 200)])
    rng.shuffle(counts)
    velocities = (rng.normal(size=(counts.sum(), 2)) * 10.0 ** rng.integers(-20, 20, (counts.sum(), 2)))
    velocities = velocities.astype(np.float32)
    velocities[[7, 9]] = [3e38, -0.0]
    summed = summed_velocities(counts, velocities)
    first = 0
    for count in counts.tolist():
        alone = np.zeros((count, 2))
        alone[1:] = np.cumsum(velocities[first:first + count - 1].astype(np.float64), axis=0)
        assert summed[first:first + count].tobytes() == alone.tobytes()
        first += count
    assert summed_velocities([], np.zeros((0, 2))).shape == (0, 2)


# --- the farthest the reader keeps (docs/characters.md 8): lengths whose squares float32 holds

MAX_SQUARE = float(np.finfo(np.float32).max)


def longest_kept() -> float:
    """The longest float32 length whose square float32 holds."""
    length = np.float32(math.sqrt(MAX_SQUARE))
    while float(length) ** 2 > MAX_SQUARE:
        length = np.nextafter(length, np.float32(0))
    return float(length)


def farthest_kept(parents):
    """(tram, body) at the reader's limits: 16-byte keys of the longest and shortest (2^-63)
    lengths kept on every part, heights of the longest length, steps that put the root that far
    from its start, and translations whose lengths add up to 7/8 of it down the deepest chain."""
    longest = longest_kept()
    half = longest / 2
    values = np.array([(longest, 0, 0, 0), (0, 2.0 ** -63, 0, 0), (half, -half, half, half), (0, 0, 0, -longest)],
                      np.float32)
    tracks = [make_track([0, 1, 2, 3], np.roll(values, part, axis=0)) for part in range(len(parents))]
    tram = make_tram(frames=4, key_size=16, flags=0, used_parts=0, replaced_parts=0, tracks=tracks,
                     heights=np.array([longest, -longest, longest, -longest], np.float32),
                     velocities=np.array([(longest, 0), (-longest, longest), (0, -longest), (0, 0)], np.float32))
    directions = normalised(np.random.default_rng(4).normal(size=(len(parents), 3)))
    return tram, make_body(parents, directions * longest / 8)


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_the_farthest_the_reader_keeps_poses_within_float32(scale):
    """Unit rotations, and every part's matrix a float32 at every frame, at any scale the import offers."""
    tram, body = farthest_kept(ONI_PARENTS)
    rotations = part_rotations(tram)
    np.testing.assert_allclose(np.linalg.norm(rotations, axis=2), 1.0, rtol=0, atol=1e-12)
    location, heights = root_motion(tram, facing=0.7)
    assert (np.square(location).sum(axis=1) <= MAX_SQUARE).all()
    world = world_matrices(body.parents, body.translations, rotations, location, heights, 0.7, scale)
    assert np.isfinite(world.astype(np.float32)).all()


def test_world_matrices_refuse_a_parent_after_its_child_and_a_wrong_part_count():
    rotations = np.tile([0.0, 0.0, 0.0, 1.0], (2, 3, 1))
    location, heights = np.zeros((2, 3)), np.zeros(2)
    with pytest.raises(ValueError, match="part 1's parent 2"):
        world_matrices([-1, 2, 0], np.ones((3, 3)), rotations, location, heights)
    with pytest.raises(ValueError, match="3 rotations per frame for a body of 2 parts"):
        world_matrices([-1, 0], np.ones((2, 3)), rotations, location, heights)
    world = world_matrices([-1, 0, 1], np.ones((3, 3)), rotations, location, heights)
    np.testing.assert_array_equal(world[1, :, :3, 3], [[1, 1, 1], [2, 2, 2], [3, 3, 3]])


@pytest.mark.parametrize("frames", [[0, 3], [0, 1, 1, 4], [1, 4], []])
def test_part_rotations_refuse_keys_that_do_not_rise_from_0_to_the_last_frame(frames):
    tram = make_tram(frames=5, key_size=6, flags=0, used_parts=0, replaced_parts=0,
                     tracks=[make_track(frames, np.zeros((len(frames), 3), np.uint16))])
    with pytest.raises(ValueError):
        part_rotations(tram)


# --- OniSplit's XML and Collada of the samples (tests/data/characters, docs/characters.md 7, 9)

def onisplit_codes(degrees, onisplit_reading):
    """EKey degrees back to the stored u16 codes, inverting OniSplit's int16 . 180 / 32767.5 (docs/characters.md 9).
    With onisplit_reading, a code c >= 32768 becomes c - 1: OniSplit's angle of c, (c - 65536) . 2pi / 65535,
    is the engine's angle of c - 1 less 2pi, the same rotation (its quaternion negated)."""
    signed = np.asarray(degrees, np.float64) * 32767.5 / 180.0
    codes = np.round(signed)
    assert np.abs(signed - codes).max() < 0.01 and np.abs(codes).max() <= 32768
    codes = codes.astype(np.int64) % 65536
    if onisplit_reading:
        codes[codes >= 32768] -= 1
    return codes.astype(np.uint16)


def read_onisplit_xml(path, onisplit_reading=False):
    """A Tram stand-in from OniSplit's XML: Rotations (EKey / QKey: duration, values), Heights,
    Velocities, Flags (only Overlay matters here), Used / ReplacedBones."""
    animation = ET.parse(path).getroot().find("Animation")
    tracks, tags = [], set()
    for bone in animation.find("Rotations"):
        rows = [key.text.split() for key in bone]
        tags |= {key.tag for key in bone}
        durations = [int(row[0]) for row in rows]
        values = np.array([row[1:] for row in rows], np.float64)
        values = onisplit_codes(values, onisplit_reading) if bone[0].tag == "EKey" else values.astype(np.float32)
        tracks.append(make_track(np.concatenate([[0], np.cumsum(durations[:-1])]), values))
    assert len(tags) == 1, tags
    overlay = animation.find("Overlay")
    return make_tram(name=os.path.basename(path)[:-4], frames=len(animation.find("Heights")),
                     key_size=6 if tags == {"EKey"} else 16,
                     flags=OVERLAY if "Overlay" in (animation.find("Flags").text or "").split() else 0,
                     used_parts=part_bits(overlay.find("UsedBones").text),
                     replaced_parts=part_bits(overlay.find("ReplacedBones").text),
                     heights=np.array([h.text for h in animation.find("Heights")], np.float32),
                     velocities=np.array([v.text.split() for v in animation.find("Velocities")], np.float32),
                     tracks=tracks)


def part_bits(names):
    return sum(1 << PART_NAMES.index(name) for name in (names or "").split())


def sample_body():
    body = MANIFEST["bodies"][0]
    return make_body(body["parent"], body["trta"])


def sample_matrices(name, onisplit_reading=False):
    """(ours, OniSplit's Collada) world matrices (F, P, 4, 4) of a sample, and a mask of the (frame, part)
    pairs to compare: all but those the samples' README names and the parts below them."""
    tram = read_onisplit_xml(os.path.join(SAMPLES, "xml", f"{name}.xml"), onisplit_reading)
    baked = collada.read_animation(os.path.join(SAMPLES, "dae", f"{name}.dae"))
    ours, theirs = animation_matrices(sample_body(), tram), collada.world_matrices(baked)
    assert ours.shape == theirs.shape == (tram.frames, 19, 4, 4)
    compared = np.ones(ours.shape[:2], bool)
    for part, frames in EULER_FAULTS.get(name, {}).items():
        compared[np.ix_(frames, below(part))] = False
    return ours, theirs, compared


def below(part):
    """The part and every part under it in the sample body."""
    parents = sample_body().parents
    return [p for p in range(len(parents)) if part in ancestry(parents, p)]


def ancestry(parents, part):
    chain = [part]
    while parents[chain[-1]] >= 0:
        chain.append(int(parents[chain[-1]]))
    return chain


def test_the_samples_are_all_there_on_the_manifest_body():
    names = sorted(os.path.basename(path)[:-4] for path in glob(os.path.join(SAMPLES, "xml", "TRAM*.xml")))
    baked = sorted(os.path.basename(path)[:-4] for path in glob(os.path.join(SAMPLES, "dae", "TRAM*.dae")))
    assert names == baked == sorted(SAMPLE_NAMES) and len(names) == 6
    for name in names:
        animation = collada.read_animation(os.path.join(SAMPLES, "dae", f"{name}.dae"))
        np.testing.assert_array_equal(animation.parents, sample_body().parents)
        np.testing.assert_allclose(animation.translations, sample_body().translations, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_samples_match_onisplit_collada_within_its_signed_reading(name):
    ours, theirs, compared = sample_matrices(name)
    difference = np.abs(ours - theirs)[compared]
    assert difference[:, :3, :3].max() < SIGNED_READING_ROTATION
    assert difference[:, :3, 3].max() < SIGNED_READING_TRANSLATION


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_onisplit_reading_of_the_codes_explains_every_difference(name):
    ours, theirs, compared = sample_matrices(name, onisplit_reading=True)
    assert max(part_errors(ours[compared], theirs[compared])) < FLOAT32_BAKE


def test_onisplit_euler_angles_are_wrong_exactly_where_the_readme_says():
    baked = collada.read_animation(os.path.join(SAMPLES, "dae", "TRAMchar0_wrap03.dae"))
    tram = read_onisplit_xml(os.path.join(SAMPLES, "xml", "TRAMchar0_wrap03.xml"), onisplit_reading=True)
    error = np.abs(rotation_matrices(part_rotations(tram)) - collada.local_rotations(baked)).max(axis=(2, 3))
    wrong = {(int(frame), int(part)) for frame, part in np.argwhere(error > 1e-2)}
    assert wrong == {(frame, part) for part, frames in EULER_FAULTS["TRAMchar0_wrap03"].items() for frame in frames}
    assert np.delete(error.ravel(), [7 * 19 + 12, 34 * 19 + 12]).max() < FLOAT32_BAKE
