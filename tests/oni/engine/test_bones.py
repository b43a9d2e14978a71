"""A character's pose as Blender bones (oni/engine/bones.py): Blender's own evaluation of
the keys, written out plainly here (LINEAR F-curves, the quaternion normalised, each pose
bone composed as P[parent] . B[parent]^-1 . B[p] . L[p]), gives every part the engine's
matrix (poses.world_matrices, in Blender's terms) at every frame, for the file's keys and
for a key on every frame, with bones resting in any orientation (a part's frame being its
bone's pose matrix turned back by the bone's rest rotation)."""

import types

import numpy as np
import pytest
from test_poses import MAX_SQUARE, farthest_kept

from oban_import.core.runs import bounded_runs
from oban_import.oni.engine import bones, poses
from oban_import.oni.engine.rotations import quaternion_matrices
from oban_import.oni.engine.to_blender import DEFAULT_AXES, axes_matrix
from oban_import.oni.io.trams import read as tram_read
from oban_import.oni.io.trams.tram import Track, Tram

PARENTS = np.array([-1, 0, 1, 2, 0, 4, 5, 0, 7, 8, 9, 8, 11, 12, 13, 8, 15, 16, 17])


def random_tram(rng, frames=40, key_size=6, flags=0, used=0, replaced=0):
    """A Tram with each part's keys at random frames."""
    tracks = []
    for _ in PARENTS:
        inner = np.sort(rng.choice(np.arange(1, frames - 1), size=min(frames - 2, int(rng.integers(0, 6))),
                                   replace=False)) if frames > 2 else np.array([], np.int64)
        key_frames = np.unique(np.concatenate([[0], inner, [frames - 1]])).astype(np.int64)
        if key_size == 6:
            values = rng.integers(0, 65536, size=(len(key_frames), 3)).astype(np.uint16)
        else:
            values = (rng.normal(size=(len(key_frames), 4)) * rng.uniform(0.3, 1.7)).astype(np.float32)
        tracks.append(Track(frames=key_frames, values=values))
    return Tram(name="random", frames=frames, key_size=key_size, flags=flags, used_parts=used, replaced_parts=replaced,
                tracks=tracks, heights=rng.uniform(10, 20, frames).astype(np.float32),
                velocities=rng.uniform(-2, 2, (frames, 2)).astype(np.float32))


def rest_matrices(rng, heads, tilt):
    """Armature-space rest matrices: at each head, turned by a random rotation (tilt > 0) or
    none."""
    matrices = np.tile(np.eye(4), (len(heads), 1, 1))
    matrices[:, :3, 3] = heads
    if tilt:
        q = rng.normal(size=(len(heads), 4))
        matrices[:, :3, :3] = quaternion_matrices(q / np.linalg.norm(q, axis=1)[:, None])
    return matrices


def curves(rows, counts):
    """The (times, values) of each curve laid end to end in `rows`."""
    return np.split(rows, np.cumsum(counts)[:-1])


def blender_pose(keys, rest, tram):
    """Armature-space pose matrices (F, P, 4, 4) as Blender evaluates the keys: each F-curve
    LINEAR between its keys (held at the ends), the quaternion normalised, no key: the rest."""
    frames, count = tram.frames, len(rest)
    local = np.tile(np.eye(4), (frames, count, 1, 1))
    f = np.arange(frames)
    rotation, n = curves(keys.rotations, keys.counts), len(keys.parts)   # every part's w, then x, y, z
    for i, part in enumerate(keys.parts):
        q = np.stack([np.interp(f, *rotation[c * n + i].T) for c in range(4)], axis=1)
        local[:, part, :3, :3] = quaternion_matrices(q / np.linalg.norm(q, axis=1)[:, None])
    if keys.root_location is not None:
        local[:, 0, :3, 3] = np.stack([np.interp(f, *curve.T) for curve in curves(keys.root_location, [frames] * 3)],
                                      axis=1)
    pose = np.empty_like(local)
    for part, parent in enumerate(PARENTS):
        offset = rest[part] if parent < 0 else np.linalg.inv(rest[parent]) @ rest[part]
        pose[:, part] = (offset if parent < 0 else pose[:, parent] @ offset) @ local[:, part]
    return pose


def engine_in_blender(tram, translations, axes, scale):
    """poses.world_matrices of the TRAM in Blender's terms: [sA] W [sA]^-1."""
    c = np.eye(4)
    c[:3, :3] = scale * axes
    world = poses.animation_matrices(types.SimpleNamespace(parents=PARENTS, translations=translations), tram)
    return c @ world @ np.linalg.inv(c)


def worst(got, wanted):
    """(rotation, translation) errors, each against its own size."""
    rotation = np.abs(got[..., :3, :3] - wanted[..., :3, :3]).max()
    translation = np.abs(got[..., :3, 3] - wanted[..., :3, 3]).max() / max(1.0, np.abs(wanted[..., :3, 3]).max())
    return rotation, translation


@pytest.mark.parametrize("every_frame", [False, True], ids=["file keys", "every frame"])
@pytest.mark.parametrize("key_size", [6, 16])
@pytest.mark.parametrize("tilt", [False, True], ids=["upright bones", "bones at any angle"])
@pytest.mark.parametrize("orientation", [("-Z", "Y"), ("Y", "Z")])
def test_the_bones_give_the_engine_matrices_at_every_frame(every_frame, key_size, tilt, orientation):
    rng = np.random.default_rng(key_size + 2 * tilt + 4 * every_frame)
    axes, scale = axes_matrix(*orientation), 0.1
    translations = rng.uniform(-7, 7, (len(PARENTS), 3))
    tram = random_tram(rng, key_size=key_size)
    heads = bones.rest_heads(PARENTS, translations, axes, scale)
    rest = rest_matrices(rng, heads, tilt)
    others = [random_tram(rng, frames=f, key_size=k, flags=o, used=0b101) for f, k, o in
              ((1, 6, 0), (17, 16, poses.OVERLAY), (300, 6, 0))]
    every = bones.bone_keys([others[0], tram] + others[1:], rest[:, :3, :3], axes, scale, every_frame=every_frame)
    unturned = np.eye(4)[None].repeat(len(rest), 0)
    unturned[:, :3, :3] = np.swapaxes(rest[:, :3, :3], 1, 2)   # a part's frame is its bone's turned back by R_b
    for one, keys in zip([others[0], tram] + others[1:], every):    # worked out together, each its own
        if not every_frame:   # one key per key of the file, on the frames of the file
            assert keys.counts == [len(one.tracks[p].frames) for _ in range(4) for p in keys.parts]
            assert [c[:, 0].tolist() for c in curves(keys.rotations, keys.counts)] == \
                [one.tracks[p].frames.tolist() for _ in range(4) for p in keys.parts]
        parts = blender_pose(keys, rest, one) @ unturned     # an overlay: the parts it does not key at rest
        rotation, translation = worst(parts, engine_in_blender(one, translations, axes, scale))
        assert rotation < 2e-6 and translation < 2e-6, (rotation, translation)   # float32, as F-curves keep them


def test_an_overlay_keys_only_its_parts_and_no_root_motion():
    rng = np.random.default_rng(3)
    used, replaced = 0b1011, 0b100000000
    tram = random_tram(rng, key_size=16, flags=poses.OVERLAY, used=used, replaced=replaced)
    (keys,) = bones.bone_keys([tram], np.tile(np.eye(3), (len(PARENTS), 1, 1)), DEFAULT_AXES, 1.0)
    assert keys.parts.tolist() == [0, 1, 3, 8] and keys.root_location is None


def test_rest_heads_sum_the_translations_and_tails_point_down_the_chain():
    translations = np.zeros((len(PARENTS), 3))
    translations[1:, 1] = -1.0           # every part one unit below its parent (Oni's y up)
    translations[7] = (0, 3, 0)          # the spine goes up, farther than the thighs
    heads = bones.rest_heads(PARENTS, translations, DEFAULT_AXES, 0.5)
    assert np.allclose(heads[3], [0, 0, -1.5])       # foot: three parts down, y -> Blender z, times 0.5
    tails = bones.rest_tails(PARENTS, heads, (0, 0, 1))
    assert np.allclose(tails[0], heads[7])           # the pelvis points at the spine, its farthest child
    assert np.allclose(tails[3] - heads[3], 0.5 * (tails[2] - heads[2]))   # a leaf follows its parent


def same_keys(a, b):
    """Whether two BoneKeys are the same, array bytes and all."""
    return (a.parts.tobytes() == b.parts.tobytes() and a.counts == b.counts
            and a.rotations.tobytes() == b.rotations.tobytes()
            and (a.root_location is None) == (b.root_location is None)
            and (a.root_location is None or a.root_location.tobytes() == b.root_location.tobytes()))


@pytest.mark.parametrize("every_frame", [False, True], ids=["file keys", "every frame"])
def test_one_trams_data_never_changes_another_trams_keys(every_frame):
    """A character's TRAMs worked out together: changing one TRAM (its velocities; one of them
    made huge but finite; its keys and heights) leaves every other TRAM's BoneKeys bit for bit
    as they were, and as that TRAM alone gives them; a TRAM's root curves are its own
    velocities summed from 0, frame by frame, in float64."""
    rng = np.random.default_rng(11)
    rest = np.tile(np.eye(3), (len(PARENTS), 1, 1))
    axes, scale = axes_matrix("-Z", "Y"), 0.1
    trams = [random_tram(rng, frames=f, key_size=k, flags=o, used=0b1101) for f, k, o in
             ((40, 6, 0), (300, 6, 0), (17, 16, poses.OVERLAY), (1, 6, 0), (70, 16, 0), (129, 6, 0))]
    before = bones.bone_keys(trams, rest, axes, scale, every_frame)
    for tram, keys in zip(trams, before):
        (alone,) = bones.bone_keys([tram], rest, axes, scale, every_frame)
        assert same_keys(alone, keys)
        if keys.root_location is not None:   # with R_b = I: x, y, z = s.A (sum of velocities before f, height, 0)
            summed = np.zeros((tram.frames, 3))
            summed[1:, ::2] = np.cumsum(tram.velocities[:-1].astype(np.float64), axis=0)
            summed[:, 1] = tram.heights
            x, y, z = np.split(keys.root_location[:, 1], 3)
            assert np.array_equal(np.stack([x, y, z], axis=1), (summed @ (scale * axes).T).astype(np.float32))
    changed = 1
    edits = {"velocities": rng.normal(0, 5, (300, 2)).astype(np.float32),
             "huge velocity": np.where(np.arange(300)[:, None] == 3, np.float32(3e38), trams[changed].velocities),
             "keys and heights": None}
    for edit, velocities in edits.items():
        other = random_tram(np.random.default_rng(99), frames=300)
        edited = Tram(**{**trams[changed].__dict__, **({"velocities": velocities} if velocities is not None else
                                                       {"tracks": other.tracks, "heights": other.heights})})
        after = bones.bone_keys(trams[:changed] + [edited] + trams[changed + 1:], rest, axes, scale, every_frame)
        assert not same_keys(after[changed], before[changed]), edit
        assert all(same_keys(a, b) for n, (a, b) in enumerate(zip(after, before)) if n != changed), edit


@pytest.mark.parametrize("every_frame", [False, True], ids=["file keys", "every frame"])
@pytest.mark.parametrize("scale", [0.1, 1.0, 1e6])
def test_the_farthest_the_reader_keeps_gives_float32_keys_and_bones(every_frame, scale):
    """At the reader's limits (docs/characters.md 8), bones at any angle: every key and head a
    finite float32 at any scale the import offers; up to scale 1, every bone's length squares
    within float32 too (Blender finds a bone's length and direction through its square)."""
    kept, body = farthest_kept(PARENTS)
    tram = Tram(name="farthest", tracks=[Track(track.frames, track.values) for track in kept.tracks],
                **{key: getattr(kept, key) for key in ("frames", "key_size", "flags", "used_parts", "replaced_parts",
                                                       "heights", "velocities")})
    tram_read.check_motion("TRAMfarthest.oni", "instance 0", tram.key_size, tram.heights, tram.velocities,
                           tram.tracks)   # kept: no ObanError
    axes = axes_matrix("-Z", "Y")
    heads = bones.rest_heads(PARENTS, body.translations, axes, scale)
    tails = bones.rest_tails(PARENTS, heads, (0, 0, scale))
    rest = rest_matrices(np.random.default_rng(5), heads, tilt=True)
    (keys,) = bones.bone_keys([tram], rest[:, :3, :3], axes, scale, every_frame=every_frame)
    assert np.isfinite(keys.rotations).all() and np.isfinite(keys.root_location).all()
    assert np.isfinite(heads.astype(np.float32)).all() and np.isfinite(tails.astype(np.float32)).all()
    if scale <= 1.0:
        assert (np.square(tails - heads).sum(axis=1) <= MAX_SQUARE).all()


def test_bounded_runs_are_the_greedy_runs():
    """core.runs.bounded_runs (which cuts bone_keys' keys into KEY_BLOCK runs of one key size)
    gives the runs a plain greedy walk makes: an item joins the run unless its key differs or
    the run's sum would pass the limit."""
    rng = np.random.default_rng(4)
    for _ in range(2000):
        sizes = rng.choice([0, 1, 2, 5, 9, 20], int(rng.integers(0, 12))).tolist()
        keys = rng.integers(0, 3, len(sizes)).tolist() if rng.random() < 0.5 else None
        limit = int(rng.integers(0, 26))
        runs, start, total = [], 0, 0
        for i, size in enumerate(sizes):
            if i > start and ((keys is not None and keys[i] != keys[i - 1]) or total + size > limit):
                runs.append(slice(start, i))
                start, total = i, 0
            total += size
        runs += [slice(start, len(sizes))] if sizes else []
        assert bounded_runs(sizes, limit, keys) == runs, (sizes, limit, keys)
