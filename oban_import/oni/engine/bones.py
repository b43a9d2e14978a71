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

from ...core.runs import bounded_runs
from . import poses
from .frames import run_starts, sample_many
from .rotations import continuous, matrix_quaternions, quaternion_matrices

CHILD_OF_CHAIN = 0.5   # a bone with no child: this share of its parent's length, along it
KEY_BLOCK = 1 << 14    # keys decoded and turned together at most: what bounds _turned_keys' temporaries


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
    root motion (docs/characters.md). Each TRAM's keys are its own: no other TRAM changes them.

    A TRAM is read by attribute: frames, key_size, flags, used_parts, replaced_parts, heights,
    velocities, and its tracks as tracks.counts, .frames and .values (every part's keys end to
    end, tram.Tracks); each track's key frames rising from 0 to F - 1 (docs/characters.md 3: a
    key, then (gap, key) pairs, no gap 0, the gaps summing to F - 1), as the reader checks."""
    if not trams:
        return []
    keyed = sorted((_Keyed.of(index, tram) for index, tram in enumerate(trams)), key=lambda one: one.key_size)
    turns, root_turn = _bone_turns(rest_rotations, axes, scale)
    curve_sizes, values = _pose_keys(keyed, turns, every_frame)
    frame_times = _frame_times(trams, start)
    times = None if every_frame else np.concatenate([one.frames for one in keyed]) + start
    made, sizes, first_curve, first_row = [None] * len(trams), curve_sizes.tolist(), 0, 0
    for one, root in zip(keyed, _root_locations(keyed, root_turn, frame_times)):   # their curves and rows in turn
        own = sizes[first_curve:first_curve + len(one.parts)]
        end = first_row + sum(own)
        rows = (_every_frame_rows(values[first_row:end], len(own), frame_times) if every_frame else
                _curve_rows(times[first_row:end], values[first_row:end]))
        made[one.index] = BoneKeys(one.parts, own * 4, rows, root)
        first_curve, first_row = first_curve + len(own), end
    return made


@dataclass(slots=True)
class _Keyed:
    """One TRAM's keys on the bones it keys: its keyed parts (keyed_parts) and their keys as
    stored, part after part; `index`, its place among the TRAMs given."""
    index: int
    tram: object
    key_size: int
    parts: np.ndarray      # (n,) the parts keyed
    counts: np.ndarray     # (n,) int64: their key counts
    frames: np.ndarray     # (k,) int64: each key's frame
    values: np.ndarray     # (k, 3) u16 codes or (k, 4) float32: each key as stored

    @classmethod
    def of(cls, index, tram):
        tracks, parts = tram.tracks, keyed_parts(tram)
        counts, frames, values = tracks.counts, tracks.frames, tracks.values
        if len(parts) < len(counts):
            kept = np.zeros(len(counts), bool)
            kept[parts] = True
            kept = np.repeat(kept, counts)
            counts, frames, values = counts[parts], frames[kept], values[kept]
        return cls(index, tram, int(tram.key_size), parts, counts, frames, values)


def _pose_keys(keyed, turns, every_frame):
    """(each curve's key count, (K, 4) their keys): the keyed parts' pose quaternions
    (_turned_keys), their own keys or (every_frame) the engine's blend of them at every
    frame, part after part, their signs continuous along each part's curves (w >= 0 first)."""
    values = _turned_keys(keyed, turns)
    counts = np.concatenate([one.counts for one in keyed])
    if every_frame:
        sizes = np.repeat([int(one.tram.frames) for one in keyed], [len(one.parts) for one in keyed])
        values, counts = sample_many(sizes, counts, np.concatenate([one.frames for one in keyed]), values), sizes
    return counts, continuous(values, run_starts(counts))


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


def _turned_keys(keyed, turns):
    """(K, 4) pose quaternions (_in_bone_terms) of every _Keyed's keys, in order, `turns` (P,
    3, 3) each bone's (_bone_turns): decoded in runs of one key size of at most KEY_BLOCK keys."""
    turned = np.empty((sum(len(one.values) for one in keyed), 4))
    key = 0
    for run in bounded_runs([len(one.values) for one in keyed], KEY_BLOCK, [one.key_size for one in keyed]):
        block = keyed[run]
        counts = np.concatenate([one.counts for one in block])
        stored = poses.key_quaternions(np.concatenate([one.values for one in block]), block[0].key_size)
        parts = np.concatenate([one.parts for one in block])
        _in_bone_terms(stored, turns[parts], counts, turned[key:key + len(stored)])
        key += len(stored)
    return turned


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


def _root_locations(keyed, turn, frame_times):
    """Each _Keyed's root location curves, (3F, 2) float32 rows x, y, z, a key every frame:
    R_b^-1 . s.A (summed velocities + (0, height, 0)), each TRAM's velocities summed on their
    own as poses.root_motion sums them (poses.summed_velocities); None for an overlay."""
    moving = [one for one in keyed if not one.tram.flags & poses.OVERLAY]
    if not moving:
        return [None] * len(keyed)
    frames = [int(one.tram.frames) for one in moving]
    location = np.empty((sum(frames), 3))
    location[:, ::2] = poses.summed_velocities(frames, np.concatenate([one.tram.velocities for one in moving]))
    location[:, 1] = np.concatenate([one.tram.heights for one in moving])
    turned = location @ turn                                   # R_b^T . s.A . v for each row v
    ends = np.cumsum(frames).tolist()
    rows = iter([_curve_rows(frame_times[:end - first], turned[first:end]) for first, end in zip([0] + ends, ends)])
    return [None if one.tram.flags & poses.OVERLAY else next(rows) for one in keyed]
