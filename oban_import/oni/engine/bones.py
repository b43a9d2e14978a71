"""A character's parts as Blender bones (docs/characters.md, "In Blender"): where each bone
rests, and a TRAM's pose in Blender's terms, so that every bone's armature-space matrix
equals the engine's part matrix (poses.py) at every frame.

Blender poses a bone as P[p] = P[parent] . (B[parent]^-1 . B[p]) . L[p], B the rest matrices
(armature space), L the pose (location, rotation). A bone rests at its part's rest position
(heads: the TRTA translations summed down the tree, in Blender's axes) with a rotation R_b
of its own (its head-to-tail direction and roll); with P[p] = Wb[p] . R_b[p], Wb being the
engine's matrix in Blender's terms, L[p]'s rotation is R_b^-1 . (A.R(q).A^-1) . R_b and the
root's location R_b^-1 . s.A.(location + height). Both are linear maps of the stored
quaternions, so LINEAR quaternion keys, blended as Blender blends them, are the engine's
normalised lerp (docs/engine.md 4): the file's own keys are exact at every frame.
"""

from dataclasses import dataclass

import numpy as np

from ..io.characters.tram import flat_tracks
from . import poses
from .frames import run_starts, sample_many
from .rotations import continuous, matrix_quaternions, quaternion_matrices

CHILD_OF_CHAIN = 0.5   # a bone with no child: this share of its parent's length, along it
KEY_BLOCK = 1 << 14    # keys decoded and turned at a time, about (_key_blocks)


@dataclass
class BoneKeys:
    """One TRAM on an armature, in Blender's terms: its F-curves' keys as (scene frame, value)
    float32 rows, curve after curve, the F-curves' own type."""
    parts: np.ndarray         # (n,) the parts keyed (an overlay's used | replaced, else all)
    counts: list              # (4n) keys of each rotation curve: every part's w, then x, y, z
    rotations: np.ndarray     # (sum counts, 2) float32 rows in that order; each part's signs continuous
    root_location: np.ndarray | None   # (3F, 2) float32: the root bone's x, y, z curves, a key every
                                       # frame; None: no root motion


def rest_heads(parents, translations, axes, scale) -> np.ndarray:
    """(P, 3) each bone's head in armature space: its part's rest position, s.A times the
    TRTA translations summed from the root (parents before children)."""
    offsets = scale * np.asarray(translations, np.float64) @ np.asarray(axes, np.float64).T
    heads = np.empty_like(offsets)
    for part, parent in enumerate(np.asarray(parents).tolist()):
        heads[part] = offsets[part] + (heads[parent] if parent >= 0 else 0.0)
    return heads


def rest_tails(parents, heads, up) -> np.ndarray:
    """(P, 3) each bone's tail: the head of its child farthest from it (a chain's next part:
    the spine for the pelvis, the neck for the chest); for a part with no child, or none
    apart from it, CHILD_OF_CHAIN of its parent's bone along it (the root: along `up`)."""
    parents = np.asarray(parents)
    tails = heads + np.asarray(up, np.float64)
    reach = np.zeros(len(parents))
    for part, parent in enumerate(parents.tolist()):
        distance = np.linalg.norm(heads[part] - heads[parent]) if parent >= 0 else 0.0
        if parent >= 0 and distance > reach[parent]:
            reach[parent], tails[parent] = distance, heads[part]
    for part, parent in enumerate(parents.tolist()):   # parents first: a leaf follows a bone already set
        if reach[part] == 0.0 and parent >= 0:
            tails[part] = heads[part] + CHILD_OF_CHAIN * (tails[parent] - heads[parent])
    return tails


def bone_keys(trams, rest_rotations, axes, scale, every_frame=False, start=0) -> list:
    """Each TRAM's pose as Blender bone keys (a BoneKeys each), all worked out together, the
    TRAMs' frame 0 at scene frame `start`. `rest_rotations` (P, 3, 3): each bone's rest
    rotation R_b in armature space (as Blender made it from head, tail and roll). With
    `every_frame`, every part is keyed on every frame with the engine's blend (poses.py); else
    with the file's own keys. An overlay keys only its used and replaced parts, and has no
    root motion (docs/characters.md).

    The keys are turned into Blender's terms before the blend: the map is an isometry of the
    quaternions, which the blend (shorter arc, lerp, normalise) commutes with. The TRAMs are
    worked on by key size (decoded in blocks of one size), and given back in their order."""
    if not trams:
        return []
    order = sorted(range(len(trams)), key=lambda i: int(trams[i].key_size))
    trams = [trams[i] for i in order]
    turns, root_turn = _bone_turns(rest_rotations, axes, scale)
    chosen = [keyed_parts(tram) for tram in trams]
    keyed = [_keyed_keys(tram, parts) for tram, parts in zip(trams, chosen)]
    key_counts = np.concatenate([counts for counts, _, _ in keyed])
    key_frames = np.concatenate([frames for _, frames, _ in keyed])
    turned = _turned_keys(trams, keyed, turns[np.concatenate(chosen)])
    if every_frame:
        frame_counts = np.repeat([int(tram.frames) for tram in trams], [len(parts) for parts in chosen])
        values, sizes = sample_many(frame_counts, key_counts, key_frames, turned), frame_counts
    else:
        values, sizes = turned, key_counts
    values = continuous(values, run_starts(sizes))
    part_firsts, sizes = run_starts([len(parts) for parts in chosen]).tolist(), sizes.tolist()
    per_tram = [sizes[first:first + len(parts)] for first, parts in zip(part_firsts, chosen)]
    bounds = np.cumsum([0] + [sum(s) for s in per_tram]).tolist()
    frame_times = _frame_times(trams, start)
    if every_frame:
        rows = [_every_frame_rows(values[a:b], len(parts), frame_times)
                for a, b, parts in zip(bounds, bounds[1:], chosen)]
    else:
        times = key_frames + start
        rows = [_curve_rows(times[a:b], values[a:b]) for a, b in zip(bounds, bounds[1:])]
    roots = _root_locations(trams, root_turn, frame_times)
    made = [BoneKeys(parts, track_sizes * 4, block, root)
            for parts, track_sizes, block, root in zip(chosen, per_tram, rows, roots)]
    return [made[i] for i in np.argsort(order).tolist()]


def _bone_turns(rest_rotations, axes, scale):
    """Per bone, the 3x3 map (on row vectors) of a stored quaternion's vector part to its pose
    quaternion's: R_b^-1 . (A.R(q).A^-1) . R_b keeps w and turns the vector part by
    R_b^T . det(A).A (a vector part is a pseudovector); and the root's location map, R_b^T . s.A."""
    axes = np.asarray(axes, np.float64)
    rest = quaternion_matrices(matrix_quaternions(np.asarray(rest_rotations, np.float64)))   # orthonormal R_b
    return (np.linalg.det(axes) * axes).T @ rest, scale * axes.T @ rest[0]


def keyed_parts(tram):
    """(n,) the parts a TRAM keys: an overlay's used and replaced ones, else all."""
    parts = np.arange(len(tram.tracks))
    if tram.flags & poses.OVERLAY:
        parts = parts[poses.part_mask(tram.used_parts | tram.replaced_parts, len(tram.tracks))]
    return parts


def _keyed_keys(tram, parts):
    """(counts, frames, values) of the keys of these parts of a TRAM, part after part."""
    counts, frames, values = flat_tracks(tram.tracks)
    if len(parts) == len(counts):
        return counts, frames, values
    kept = np.zeros(len(counts), bool)
    kept[parts] = True
    kept = np.repeat(kept, counts)
    return counts[parts], frames[kept], values[kept]


def _turned_keys(trams, keyed, turns):
    """(K, 4) pose quaternions (_in_bone_terms) of the keys of every TRAM's keyed parts, in
    order, `turns` (n, 3, 3) those of its keyed parts: a block of TRAMs at a time (_key_blocks)."""
    turned = np.empty((sum(len(values) for _, _, values in keyed), 4))
    key = part = 0
    for size, block in _key_blocks(trams, keyed):
        counts = np.concatenate([counts for counts, _, _ in block])
        stored = poses.key_quaternions(np.concatenate([values for _, _, values in block]), size)
        _in_bone_terms(stored, turns[part:part + len(counts)], counts, turned[key:key + len(stored)])
        key, part = key + len(stored), part + len(counts)
    return turned


def _key_blocks(trams, keyed):
    """(key size, [keyed keys]) of TRAMs in a row of one key size, at most KEY_BLOCK keys a
    block (or one TRAM's): each block decoded in one go, its temporaries small enough to stay
    in the cache (and off fresh pages)."""
    block, size, keys = [], None, 0
    for tram, found in zip(trams, keyed):
        if block and (int(tram.key_size) != size or keys + len(found[2]) > KEY_BLOCK):
            yield size, block
            block, keys = [], 0
        block.append(found)
        size, keys = int(tram.key_size), keys + len(found[2])
    if block:
        yield size, block


def _frame_times(trams, start):
    """Scene frames start, start + 1, ... as far as the longest TRAM goes, float32 (as the rows
    keep them)."""
    return np.arange(start, start + max(int(tram.frames) for tram in trams)).astype(np.float32)


def _curve_rows(times, values):
    """(Cn, 2) float32 rows of n keys (n times, (n, C) values): a curve of each of the C values,
    one after another (a TRAM's keys part after part: the w curves of every part, then the x,
    y and z curves)."""
    rows = np.empty((values.shape[1], len(times), 2), np.float32)
    rows[..., 0] = times
    rows[..., 1] = values.T
    return rows.reshape(-1, 2)


def _every_frame_rows(values, parts, frame_times):
    """(4 . parts . F, 2) float32 rows of one TRAM's (parts . F, 4) values, a key every frame:
    the w curves of every part, then the x, y and z curves."""
    frames = len(values) // max(parts, 1)
    rows = np.empty((4, parts, frames, 2), np.float32)
    rows[..., 0] = frame_times[:frames]
    rows[..., 1] = values.reshape(parts, frames, 4).transpose(2, 0, 1)
    return rows.reshape(-1, 2)


def _in_bone_terms(stored, turns, counts, out):
    """Stored engine quaternions (n, 4) -> pose quaternions w x y z, unnormalised, into `out`
    (n, 4): w as it is (the stored -w), the vector part by a turn (_bone_turns) for each run of
    `counts` rows. Each entry adds its three products to 0 in turn: the bits of einsum
    "ki,kij->kj", without a (n, 3, 3) of turns."""
    np.negative(stored[:, 3], out=out[:, 0])
    out[:, 1:] = 0.0
    term = np.empty(len(stored))
    for j in range(3):
        for i in range(3):
            np.multiply(stored[:, i], np.repeat(turns[:, i, j], counts), out=term)
            out[:, 1 + j] += term


def _root_locations(trams, turn, frame_times):
    """Each TRAM's root location curves, (3F, 2) float32 rows x, y, z, a key every frame:
    R_b^-1 . s.A (summed velocities + (0, height, 0)), as poses.root_motion sums them (to
    float64 rounding: one running sum for all the TRAMs, less its value at each one's start);
    None for an overlay."""
    moving = [tram for tram in trams if not tram.flags & poses.OVERLAY]
    if not moving:
        return [None] * len(trams)
    frames = np.array([int(tram.frames) for tram in moving])
    steps = np.concatenate([tram.velocities for tram in moving], dtype=np.float64).reshape(-1, 2)
    summed = np.cumsum(steps, axis=0) - steps                 # each frame: the steps before it
    location = np.empty((len(steps), 3))
    location[:, ::2] = summed - np.repeat(summed[run_starts(frames)], frames, axis=0)   # ... in its TRAM
    location[:, 1] = np.concatenate([tram.heights for tram in moving])
    turned = location @ turn                                   # R_b^T . s.A . v for each row v
    bounds = np.cumsum(np.append(0, frames)).tolist()
    rows = iter([_curve_rows(frame_times[:b - a], turned[a:b]) for a, b in zip(bounds, bounds[1:])])
    return [None if tram.flags & poses.OVERLAY else next(rows) for tram in trams]
