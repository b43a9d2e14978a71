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

from . import poses
from .rotations import continuous, hamilton_from_stored, matrix_quaternions, multiply, quaternion_matrices

CHILD_OF_CHAIN = 0.5   # a bone with no child: this share of its parent's length, along it


@dataclass
class BoneKeys:
    """One TRAM on an armature, in Blender's terms."""
    parts: np.ndarray         # (n,) the parts keyed (an overlay's used | replaced, else all)
    frames: list              # per keyed part, (k,) OBAN frames of its keys
    rotations: list           # per keyed part, (k, 4) quaternions w x y z, unnormalised, signs continuous
    root_location: np.ndarray | None   # (F, 3) the root bone's location at every frame; None: no root motion


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


def bone_keys(tram, rest_rotations, axes, scale, every_frame=False) -> BoneKeys:
    """The TRAM's pose as Blender bone keys. `rest_rotations` (P, 3, 3): each bone's rest
    rotation R_b in armature space (as Blender made it from head, tail and roll). With
    `every_frame`, every part is keyed on every frame with the engine's blend (poses.py);
    else with the file's own keys. An overlay keys only its used and replaced parts, and has
    no root motion (docs/characters.md)."""
    axes = np.asarray(axes, np.float64)
    rest = matrix_quaternions(np.asarray(rest_rotations, np.float64))
    count = len(tram.tracks)
    parts = np.arange(count)
    if tram.flags & poses.OVERLAY:
        parts = parts[poses.part_mask(tram.used_parts | tram.replaced_parts, count)]
    if every_frame:
        sampled = poses.part_rotations(tram)[:, parts]                     # (F, n, 4) stored
        frames = [np.arange(tram.frames)] * len(parts)
        stored = [sampled[:, i] for i in range(len(parts))]
    else:
        frames = [tram.tracks[p].frames for p in parts]
        stored = [poses.key_quaternions(tram.tracks[p].values, tram.key_size) for p in parts]
    sizes = np.array([len(f) for f in frames], np.int64)
    owner = np.repeat(parts, sizes)
    turned = _in_bone_terms(np.concatenate(stored), axes, rest[owner])
    starts = np.cumsum(sizes) - sizes
    turned = continuous(turned, starts)
    rotations = np.split(turned, np.cumsum(sizes)[:-1])
    return BoneKeys(parts, frames, rotations, _root_location(tram, rest[0], axes, scale))


def _in_bone_terms(stored, axes, rest):
    """Stored engine quaternions (n, 4) -> R_b^-1 . (A.R(q).A^-1) . R_b as w x y z, per row's
    rest quaternion, unnormalised (a linear map of each)."""
    q = hamilton_from_stored(stored)
    q[:, 1:] = q[:, 1:] @ (np.linalg.det(axes) * axes).T                  # the change of basis
    conjugate = rest * np.array([1.0, -1.0, -1.0, -1.0])
    return multiply(multiply(conjugate, q), rest)


def _root_location(tram, rest, axes, scale):
    """(F, 3) the root bone's location: R_b^-1 . s.A.(summed velocities + (0, height, 0))."""
    if tram.flags & poses.OVERLAY:
        return None
    location, heights = poses.root_motion(tram)
    location[:, 1] += heights
    return scale * location @ axes.T @ quaternion_matrices(rest[None])[0]   # R_b^T . v for each row v
