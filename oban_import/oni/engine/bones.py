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

from ..io.tram import flat_tracks
from . import poses
from .frames import run_starts, sample_many
from .rotations import continuous, matrix_quaternions, quaternion_matrices

CHILD_OF_CHAIN = 0.5   # a bone with no child: this share of its parent's length, along it


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
    worked on by key size (each size decoded in one go), and given back in their order."""
    if not trams:
        return []
    order = sorted(range(len(trams)), key=lambda i: int(trams[i].key_size))
    trams = [trams[i] for i in order]
    turns, root_turn = _bone_turns(rest_rotations, axes, scale)
    chosen = [keyed_parts(tram) for tram in trams]
    keyed = [_keyed_keys(tram, parts) for tram, parts in zip(trams, chosen)]
    key_counts = np.concatenate([counts for counts, _, _ in keyed])
    key_frames = np.concatenate([frames for _, frames, _ in keyed])
    turned = _in_bone_terms(_stored_keys(trams, keyed), turns[np.repeat(np.concatenate(chosen), key_counts)])
    if every_frame:
        frame_counts = np.repeat([int(tram.frames) for tram in trams], [len(parts) for parts in chosen])
        values, sizes = sample_many(frame_counts, key_counts, key_frames, turned), frame_counts
    else:
        values, sizes = turned, key_counts
    values = continuous(values, run_starts(sizes))
    part_firsts, sizes = run_starts([len(parts) for parts in chosen]).tolist(), sizes.tolist()
    per_tram = [sizes[first:first + len(parts)] for first, parts in zip(part_firsts, chosen)]
    bounds = np.cumsum([0] + [sum(s) for s in per_tram]).tolist()
    if every_frame:
        rows = [_every_frame_rows(values[a:b], len(parts), start) for a, b, parts in zip(bounds, bounds[1:], chosen)]
    else:
        times = key_frames + start
        rows = [_key_rows(times[a:b], values[a:b]) for a, b in zip(bounds, bounds[1:])]
    roots = _root_locations(trams, root_turn, start)
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
    kept = np.repeat(np.isin(np.arange(len(counts)), parts), counts)
    return counts[parts], frames[kept], values[kept]


def _stored_keys(trams, keyed):
    """(K, 4) stored quaternions of the keys of every TRAM's keyed parts, in order (the TRAMs
    come grouped by key size: each size decoded at once)."""
    by_size = {}
    for tram, (_, _, values) in zip(trams, keyed):
        by_size.setdefault(int(tram.key_size), []).append(values)
    return np.concatenate([poses.key_quaternions(np.concatenate(chunks), size) for size, chunks in by_size.items()])


def _key_rows(times, values):
    """(4n, 2) float32 rows of one TRAM's keys (n times, (n, 4) values, part after part): the
    w curves of every part, then the x, y and z curves."""
    rows = np.empty((4, len(times), 2), np.float32)
    rows[..., 0] = times
    rows[..., 1] = values.T
    return rows.reshape(-1, 2)


def _every_frame_rows(values, parts, start):
    """(4 . parts . F, 2) float32 rows of one TRAM's (parts . F, 4) values, a key every frame:
    the w curves of every part, then the x, y and z curves."""
    frames = len(values) // max(parts, 1)
    rows = np.empty((4, parts, frames, 2), np.float32)
    rows[..., 0] = np.arange(start, start + frames)
    rows[..., 1] = values.reshape(parts, frames, 4).transpose(2, 0, 1)
    return rows.reshape(-1, 2)


def _in_bone_terms(stored, turns):
    """Stored engine quaternions (n, 4) -> pose quaternions w x y z, unnormalised: w as it is
    (the stored -w), the vector part by each row's turn (_bone_turns)."""
    out = np.empty_like(stored)
    out[:, 0] = -stored[:, 3]
    out[:, 1:] = np.einsum("ki,kij->kj", stored[:, :3], turns)
    return out


def _root_locations(trams, turn, start):
    """Each TRAM's root location curves, (3F, 2) float32 rows x, y, z, a key every frame:
    R_b^-1 . s.A (summed velocities + (0, height, 0)), as poses.root_motion sums them (to
    float64 rounding: one running sum for all the TRAMs, less its value at each one's start);
    None for an overlay."""
    moving = [tram for tram in trams if not tram.flags & poses.OVERLAY]
    if not moving:
        return [None] * len(trams)
    frames = np.array([int(tram.frames) for tram in moving])
    steps = np.concatenate([np.asarray(tram.velocities, np.float64).reshape(-1, 2) for tram in moving])
    summed = np.cumsum(steps, axis=0) - steps                 # each frame: the steps before it
    location = np.empty((len(steps), 3))
    location[:, ::2] = summed - np.repeat(summed[run_starts(frames)], frames, axis=0)   # ... in its TRAM
    location[:, 1] = np.concatenate([np.asarray(tram.heights, np.float64) for tram in moving])
    turned = location @ turn                                   # R_b^T . s.A . v for each row v
    bounds = np.cumsum(np.append(0, frames)).tolist()
    found = iter(zip(bounds, bounds[1:]))
    return [None if tram.flags & poses.OVERLAY else _location_rows(turned[slice(*next(found))], start)
            for tram in trams]


def _location_rows(location, start):
    rows = np.empty((3, len(location), 2), np.float32)
    rows[..., 0] = np.arange(start, start + len(location))
    rows[..., 1] = location.T
    return rows.reshape(-1, 2)
