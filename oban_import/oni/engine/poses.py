"""A character's pose at every frame (docs/characters.md, "The engine's math", cited below as
"math N"): each part's rotation, the root motion and every part's world matrix, all frames at once.

A TRAM and a body are read by their attributes only: tram.frames, key_size, flags, used_parts,
replaced_parts, heights, velocities and tracks[p].frames / .values; body.parents and
body.translations. Quaternions are the engine's stored (x, y, z, w) (docs/engine.md 1); matrices
are 4x4 for column vectors (p' = M.p), in Oni's axes and units.
"""

import functools

import numpy as np

from .frames import run_starts, sample_many
from .rotations import rotation_matrices

OVERLAY = 0x2000                        # TRAM flag (docs/characters.md 2)
ANGLE_PER_CODE = 2.0 * np.pi / 65535.0  # a 6-byte key's u16 code -> radians, in [0, 2pi) (math 1)
STORED_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def key_quaternions(values, key_size: int) -> np.ndarray:
    """(k, 4) float64 stored quaternions of keys as stored: 6-byte keys (k, 3) u16 codes -> the
    engine's MUrXYZrEulerToQuat, (x, y, z, -w) of the Hamilton product qx(a0).qy(a1).qz(a2);
    16-byte keys (k, 4) x y z w as they are (not normalised) (math 1)."""
    if key_size == 16:
        return np.array(values, np.float64).reshape(-1, 4)
    if key_size != 6:
        raise ValueError(f"key size {key_size}: only 6- and 16-byte keys are read")
    codes = np.asarray(values).reshape(-1, 3).astype(np.intp).T
    cos, sin = _half_turns()
    w, x, y, z = _euler_product(*(table[axis] for axis in codes for table in (cos, sin)))
    return np.stack([x, y, z, -w], axis=-1)


def euler_hamilton(code_x, code_y, code_z) -> tuple:
    """Hamilton w, x, y, z of qx(a0).qy(a1).qz(a2), a = code . 2pi / 65535, for arrays of codes
    (any numbers) that broadcast together."""
    half = ANGLE_PER_CODE / 2.0
    return _euler_product(*(f(half * np.asarray(code, np.float64)) for code in (code_x, code_y, code_z)
                            for f in (np.cos, np.sin)))


@functools.cache
def _half_turns():
    """cos and sin of half of every u16 code's angle: what a 6-byte key's decoding looks up."""
    half = ANGLE_PER_CODE / 2.0 * np.arange(65536, dtype=np.float64)
    return np.cos(half), np.sin(half)


def _euler_product(cx, sx, cy, sy, cz, sz):
    """The Hamilton product qx.qy.qz from the cosines and sines of the half angles, written out."""
    cycz, sysz, cysz, sycz = cy * cz, sy * sz, cy * sz, sy * cz
    return cx * cycz - sx * sysz, sx * cycz + cx * sysz, cx * sycz - sx * cysz, cx * cysz + sx * sycz


def part_rotations(tram) -> np.ndarray:
    """(F, P, 4) unit stored quaternions of every part at every frame (math 2): on a key's
    frame the key (normalised), between keys the engine's MUrQuat_Lerp (shorter-arc flip, lerp,
    normalise). An overlay on its own turns only its used | replaced parts (math 3)."""
    frames, tracks = int(tram.frames), tram.tracks
    key_counts = np.array([len(track.frames) for track in tracks], np.int64)
    key_frames = np.concatenate([track.frames for track in tracks]).astype(np.int64)
    _check_key_frames(key_frames, key_counts, frames)
    table = key_quaternions(np.concatenate([track.values for track in tracks]), tram.key_size)
    sampled = sample_many(np.full(len(tracks), frames), key_counts, key_frames, table)
    rotations = np.ascontiguousarray(sampled.T.reshape(4, len(tracks), frames).T)
    if tram.flags & OVERLAY:
        rotations[:, ~part_mask(tram.used_parts | tram.replaced_parts, len(tracks))] = STORED_IDENTITY
    return rotations


def part_mask(bits: int, parts: int) -> np.ndarray:
    """(parts,) bool: bit p of a used / replaced mask is part p (docs/characters.md 2)."""
    return (int(bits) >> np.arange(parts)) & 1 == 1


def root_motion(tram, facing: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Location (F, 3) and height (F,) of the animation on its own (math 4): location[f]
    = the sum of velocities[0 .. f-1] as (x, 0, z) turned by RotY(facing) (radians, the engine's
    MUrPoint_RotateYAxis: x' = x cos + z sin, z' = z cos - x sin); height[f] as stored, of frame
    f. An overlay has none: zeros."""
    frames = int(tram.frames)
    location, heights = np.zeros((frames, 3)), np.zeros(frames)
    if tram.flags & OVERLAY:
        return location, heights
    cos, sin = np.cos(facing), np.sin(facing)
    location[1:, ::2] = summed_velocities([frames], tram.velocities)[1:] @ np.array([[cos, -sin], [sin, cos]])
    heights[:] = tram.heights
    return location, heights


def summed_velocities(frame_counts, velocities) -> np.ndarray:
    """(N, 2) float64: for animations of these frame counts, their velocities (N, 2) end to
    end, each frame's sum of its own animation's velocities before it (0 on its first frame):
    root_motion's x and z, unturned, for many animations at once. Each animation's velocities
    are summed on their own, in order (the bits of np.cumsum of them alone): no other
    animation's values change them. Animations within a factor of 2 in length are summed side
    by side, each padded to the longest of them."""
    counts = np.asarray(frame_counts, np.int64)
    order = np.argsort(counts, kind="stable")
    lengths = counts[order] - 1                    # the velocities summed: those before frames 1 .. F - 1
    groups = np.flatnonzero(np.diff(np.frexp(counts[order])[1], prepend=-1))   # 2^(e-1) <= F < 2^e
    members = np.diff(np.append(groups, len(order)))
    widths = np.repeat(lengths[groups + members - 1], members)                 # its group's longest
    padded_firsts = run_starts(widths)
    at = np.arange(lengths.sum()) - np.repeat(run_starts(lengths), lengths)
    before = np.repeat(run_starts(counts)[order], lengths) + at
    padded_at = np.repeat(padded_firsts, lengths) + at
    pairs = np.ascontiguousarray(velocities, np.float64).reshape(-1, 2).view(np.complex128)[:, 0]   # x, z as one
    padded = np.zeros(widths.sum(), np.complex128)                            # item: moved whole, faster
    padded[padded_at] = pairs[before]
    for first, count, width in zip(padded_firsts[groups].tolist(), members.tolist(), widths[groups].tolist()):
        group = padded[first:first + count * width].view(np.float64).reshape(count, width, 2)
        np.cumsum(group, axis=1, out=group)
    summed = np.zeros(len(pairs), np.complex128)
    summed[before + 1] = padded[padded_at]
    return summed.view(np.float64).reshape(-1, 2)


def character_matrices(location, heights, facing: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """(F, 4, 4) C[f] = T(location[f]) . RotY(facing) . S(scale) . T(0, height[f], 0)
    (ONrCharacter_BuildMatricies, math 5)."""
    heights = np.asarray(heights, np.float64)
    cos, sin = np.cos(facing), np.sin(facing)
    matrices = np.zeros((len(heights), 4, 4))
    matrices[:, :3, :3] = scale * np.array([[cos, 0.0, sin], [0.0, 1.0, 0.0], [-sin, 0.0, cos]])
    matrices[:, :3, 3] = location
    matrices[:, 1, 3] += scale * heights     # RotY keeps y
    matrices[:, 3, 3] = 1.0
    return matrices


def world_matrices(parents, translations, rotations, location, heights, facing: float = 0.0,
                   scale: float = 1.0) -> np.ndarray:
    """(F, P, 4, 4) every part's matrix at every frame (math 5): W[p] = W[parent(p)] .
    T(translations[p]) . R(rotations[:, p]), a root's parent being C[f] (character_matrices).

    parents (P,), -1 for a root, each parent before its children; translations (P, 3);
    rotations (F, P, 4) stored quaternions (any length: R(q) divides by it); location (F, 3).
    """
    parents = np.asarray(parents, np.int64)
    rotations = np.asarray(rotations, np.float64)
    _check_parents(parents, rotations.shape[1])
    local = np.zeros(rotations.shape[:2] + (4, 4))
    local[..., :3, :3] = rotation_matrices(rotations)
    local[..., :3, 3] = translations
    local[..., 3, 3] = 1.0
    character = character_matrices(location, heights, facing, scale)
    world = np.empty_like(local)
    for part, parent in enumerate(parents):   # down the tree: a parent is done before its children
        np.matmul(character if parent < 0 else world[:, parent], local[:, part], out=world[:, part])
    return world


def animation_matrices(body, tram, facing: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """(F, P, 4, 4) world_matrices of a TRAM played on its own on a body."""
    location, heights = root_motion(tram, facing)
    return world_matrices(body.parents, body.translations, part_rotations(tram), location, heights, facing, scale)


def _check_key_frames(key_frames: np.ndarray, key_counts: np.ndarray, frames: int) -> None:
    """Each track's keys rise strictly from frame 0 to frame F - 1 (docs/characters.md 3), as the
    sampler needs."""
    if frames < 1 or not len(key_counts) or (key_counts < 1).any():
        raise ValueError("an animation needs at least one frame, one track and a key per track")
    firsts = run_starts(key_counts)
    lasts = firsts + key_counts - 1
    steps = np.diff(key_frames)
    steps[lasts[:-1]] = 1                     # from one track's last key to the next track's first
    if (key_frames[firsts] != 0).any() or (key_frames[lasts] != frames - 1).any() or (steps < 1).any():
        raise ValueError(f"a track's key frames do not rise from 0 to {frames - 1}")


def _check_parents(parents: np.ndarray, parts: int) -> None:
    if len(parents) != parts:
        raise ValueError(f"{parts} rotations per frame for a body of {len(parents)} parts")
    late = np.flatnonzero((parents >= np.arange(len(parents))) | (parents < -1))
    if len(late):
        raise ValueError(f"part {late[0]}'s parent {parents[late[0]]} does not come before it")
