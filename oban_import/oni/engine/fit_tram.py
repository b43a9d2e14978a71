"""docs/characters.md "The engine's math" in reverse ("Writing a motion back"): a TRAM's tracks and root
motion from a motion, every part's rotation at every frame and the root's location.

Each part gets the fewest keys (first at frame 0, last at F - 1, gaps of 1 to 255) whose replay by
the engine, from the values as they will be stored (6-byte codes decoded as the engine decodes
them, 16-byte float32), stays within a tolerance at every frame. Errors are measured as the
project measures matrices: `relative_linear_errors` of each part's rotation, or, given the body,
`relative_errors` of every part's world matrix (poses.world_matrices). Quaternions are the
engine's stored (x, y, z, w) (docs/engine.md 1), of any sign.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..io.trams.tram import Track
from .fit_keys import key_lengths, length_ratios
from .frames import run_starts, sample_many
from .furthest_reach import furthest_reach_keys, kinks, stands_out
from .poses import ANGLE_PER_CODE, euler_hamilton, key_quaternions, part_rotations, world_matrices
from .rotations import (TINY, hamilton_from_stored, quaternions, relative_linear_errors, rotation_matrices,
                        stored_from_hamilton)

MAX_GAP = 255         # a track's gaps are u8, at least 1 (docs/characters.md 3)
CODES_PER_TURN = 65535
OFF_PLANE = 1e-6      # a quaternion this far off its neighbours' plane breaks it (float32 input: 1e-7)


def codes_from_quaternions(quaternions) -> np.ndarray:
    """(n, 3) uint16: the 6-byte key nearest each stored quaternion (n, 4) (any length or sign).

    The engine's key is Rx(a0) . Ry(a1) . Rz(a2), a = code . 2pi / 65535 (docs/characters.md "The
    engine's math" 1). Both
    XYZ Euler solutions (a, b, c) and (a + pi, pi - b, c + pi) are found; of the 16 code triples
    that round their angles down or up, the one nearest the rotation (the shortest distance
    between the unit quaternions, on the nearer sign: the smallest angle) wins. Codes are taken
    modulo 65535 (an angle of 2pi is 0).
    """
    q = np.asarray(quaternions, np.float64).reshape(-1, 4)
    lower = np.floor(np.mod(_euler_solutions(rotation_matrices(q)), 2.0 * np.pi) / ANGLE_PER_CODE)
    codes = np.mod(lower[:, :, None] + np.array([0.0, 1.0])[:, None], CODES_PER_TURN)  # (2, 3 axes, 2 roundings, n)
    keys = _euler_keys(codes)
    unit = (hamilton_from_stored(q) / np.linalg.norm(q, axis=1, keepdims=True)).T
    sign = np.where(sum(k * u for k, u in zip(keys, unit)) < 0.0, -1.0, 1.0)
    best = sum((k - sign * u) ** 2 for k, u in zip(keys, unit)).reshape(16, -1).argmin(axis=0)
    triples = np.stack(np.broadcast_arrays(codes[:, 0, :, None, None], codes[:, 1, None, :, None],
                                           codes[:, 2, None, None, :])).reshape(3, 16, -1)
    return triples[:, best, np.arange(len(q))].T.astype(np.uint16)


def fit_tracks(rotations, key_size: int, tolerance: float, parents=None, translations=None,
               locations=None, still=None) -> list:
    """[Track] one per part: the fewest keys that replay `rotations` (F, P, 4) within `tolerance`.

    Without a body, each part's rotation (`relative_linear_errors`). With `parents` (P,) and
    `translations` (P, 3) (as poses.world_matrices takes them), every part's world matrix
    (`relative_errors`), the character placed by `locations` (F, 3), the root's (x, height, z)
    as root_motion_from takes them (default: at the origin, height 0): parts fitted parents
    first, each to its world rotation and its children's origins (`_fit_body`). A tolerance
    finer than the keys can hold gives a key on every frame.
    `still` (P,) bool, with a body: parts the engine keeps at rest whatever their keys (an
    overlay's unused parts): their tracks hold rest keys, and the parts below them make up for them.
    """
    rotations = _unit(rotations)
    if parents is None:
        return [_Part(rotations[:, p], key_size, _Local(rotation_matrices(rotations[:, p]), tolerance)).fit()
                for p in range(rotations.shape[1])]
    still = np.zeros(rotations.shape[1], bool) if still is None else np.asarray(still, bool)
    return _fit_body(rotations, key_size, tolerance, np.asarray(parents, np.int64),
                     np.asarray(translations, np.float64), _placement(locations, len(rotations)), still)


def root_motion_from(locations) -> tuple[np.ndarray, np.ndarray]:
    """Heights (F,) float32 and velocities (F, 2) float32 from the root's location (F, 3) at every
    frame, (x, height, z) in the character's own frame (facing 0, scale 1): poses.root_motion of
    them gives location[f] - location[0] as (x, 0, z), and the heights.

    The velocities are the steps between the locations rounded to a grid (a power of two) fine
    enough that every step is a float32 and their sums are exact: the replay is within half
    that grid (at most 2^-24 of the largest step) of every location. The last frame's velocity,
    which moves no frame, repeats the one before (the motion keeps its pace); 0 for one frame.
    """
    locations = np.asarray(locations, np.float64).reshape(-1, 3)
    if not len(locations) or not np.isfinite(locations).all():
        raise ValueError("root motion needs at least one frame of finite locations")
    planar = locations[:, ::2] - locations[0, ::2]
    largest = np.abs(np.diff(planar, axis=0)).max(initial=0.0)
    grid = 2.0 ** max(np.ceil(np.log2(largest / (2 ** 24 - 1))), -149) if largest else 1.0
    velocities = np.zeros((len(locations), 2), np.float32)
    velocities[:-1] = np.diff(np.round(planar / grid) * grid, axis=0)
    velocities[-1] = velocities[-2] if len(locations) > 1 else 0.0
    return locations[:, 1].astype(np.float32), velocities


def _unit(rotations):
    """(F, P, 4) unit quaternions; ValueError for another shape, or a quaternion zero or not finite."""
    rotations = np.asarray(rotations, np.float64)
    if rotations.ndim != 3 or rotations.shape[-1] != 4 or not rotations.size:
        raise ValueError(f"rotations of shape {rotations.shape}, not (frames, parts, 4)")
    lengths = np.linalg.norm(rotations, axis=-1, keepdims=True)
    if not (np.isfinite(lengths) & (lengths > 0.0)).all():
        raise ValueError("a rotation is zero or not finite")
    return rotations / lengths


def _placement(locations, frames):
    """(x, 0, z) locations and heights from (x, height, z) (zeros for None)."""
    locations = np.zeros((frames, 3)) if locations is None else np.asarray(locations, np.float64)
    return locations * [1.0, 0.0, 1.0], locations[:, 1]


def _fit_body(rotations, key_size, tolerance, parents, translations, placement, still):
    """Parts in order, parents first, each fitted to its world matrix given its parent's replay.

    A part's world rotation is its parent's replayed one times its own: fitting the part to
    the world rotation wanted (its target the parent's replay undone) keeps errors from adding
    up down the tree. A part's origin is off by the sum, over its ancestors, of each one's
    world rotation error times the translation of the next part down: each part's keys must
    also keep its children's origins within their budgets (`_origin_budgets`).
    """
    wanted = world_matrices(parents, translations, rotations, *placement)
    turns, budgets = wanted[..., :3, :3], _origin_budgets(parents, translations, wanted[..., :3, 3], tolerance)
    replayed, origin_errors, tracks = np.empty_like(turns), np.zeros(turns.shape[:-1]), []
    for part, parent in enumerate(parents):
        above = np.broadcast_to(np.eye(3), turns[:, part].shape) if parent < 0 else replayed[:, parent]
        if still[part]:     # turns as its parent does: the parent's check held its descendants' origins
            tracks.append(_rest_track(len(turns), key_size))
            replayed[:, part] = above
            continue
        target = stored_from_hamilton(quaternions(np.swapaxes(above, 1, 2) @ turns[:, part]))
        below, links = _held(part, parents, translations, still)
        check = _World(above, turns[:, part], tolerance, origin_errors[:, part], links, budgets[:, below])
        tracks.append(_Part(target, key_size, check).fit())
        replayed[:, part] = above @ rotation_matrices(part_rotations(_Played(len(turns), key_size, tracks[-1:]))[:, 0])
        origin_errors[:, below] = check.origin_errors(replayed[:, part])
    return tracks


def _held(part, parents, translations, still):
    """The parts whose origins a part's rotation moves directly: its children, and through a
    still child (turning as the part does) that child's, and so on; with each one's offset
    from the part's origin in the part's frame (the translations summed down)."""
    below, links, reach = [], [], [(part, np.zeros(3))]
    while reach:
        at, offset = reach.pop()
        for child in np.flatnonzero(parents == at):
            below.append(child)
            links.append(offset + translations[child])
            if still[child]:
                reach.append((child, links[-1]))
    return np.array(below, np.int64), np.array(links, np.float64).reshape(-1, 3)


def _rest_track(frames, key_size):
    """Keys of no turn on the first and last frames."""
    ends = np.unique([0, frames - 1])
    rest = np.zeros((len(ends), 3), np.uint16) if key_size == 6 else np.tile(np.float32([0, 0, 0, 1]), (len(ends), 1))
    return Track(ends, rest)


def _origin_budgets(parents, translations, origins, tolerance):
    """(F, P): how far each part's origin may be off at each frame: for every part p below it
    (and itself), its share of p's tolerance, tolerance . max(1, max|origin of p|), in
    proportion to the lengths of the translations from the root to it against those to p."""
    lengths = np.zeros(len(parents))
    for part, parent in enumerate(parents):
        if parent >= 0:
            lengths[part] = lengths[parent] + np.linalg.norm(translations[part])
    with np.errstate(divide="ignore"):
        room = np.maximum(np.abs(origins).max(axis=-1), 1.0) / lengths    # (F, P); inf where nothing moves it
    for part in range(len(parents) - 1, -1, -1):                          # up the tree
        if parents[part] >= 0:
            np.minimum(room[:, parents[part]], room[:, part], out=room[:, parents[part]])
    return tolerance * np.where(lengths > 0.0, lengths * room, 0.0)


@dataclass
class _Played:
    """What poses.part_rotations reads of a TRAM: fitted tracks, no overlay."""
    frames: int
    key_size: int
    tracks: list
    flags: int = 0
    used_parts: int = 0
    replaced_parts: int = 0


class _Local:
    """A part's own rotation within tolerance."""

    def __init__(self, target, tolerance):
        self.target, self.tolerance = target, tolerance

    def excess(self, frames, rotations):
        """Per frame, how far past the tolerance the replayed rotations (n, 3, 3) are (<= 0: within)."""
        return relative_linear_errors(rotations, self.target[frames]) - self.tolerance


class _World:
    """A part's world rotation within tolerance, its children's origins within their budgets."""

    def __init__(self, above, wanted, tolerance, origin_error, links, budgets):
        self.above, self.wanted, self.tolerance = above, wanted, tolerance
        self.origin_error, self.links, self.budgets = origin_error, links, budgets

    def excess(self, frames, rotations):
        turns = self.above[frames] @ rotations
        excess = relative_linear_errors(turns, self.wanted[frames]) - self.tolerance
        if len(self.links):
            off = np.abs(self._origin_errors(turns, frames)).max(axis=-1) - self.budgets[frames]
            excess = np.maximum(excess, off.max(axis=1))
        return excess

    def origin_errors(self, turns):
        """(F, children, 3): the children's origin errors under the part's replayed world rotations."""
        return self._origin_errors(turns, slice(None))

    def _origin_errors(self, turns, frames):
        return self.origin_error[frames][:, None] + np.einsum("nij,kj->nki", turns - self.wanted[frames], self.links)


class _Part:
    """One part's per-frame keys, as they will be stored, and the segments between them,
    replayed as poses.part_rotations plays them (frames.sample_many) and judged by `check`."""

    def __init__(self, target: np.ndarray, key_size: int, check):
        self.target, self.key_size, self.check = target, key_size, check
        if key_size == 6:
            self.values = codes_from_quaternions(target)
        elif key_size == 16:
            self.values = target.astype(np.float32)
        else:
            raise ValueError(f"key size {key_size}: only 6- and 16-byte keys are written")
        self.keys = key_quaternions(self.values, key_size)
        self.kinks = _kinks(target, rotation_matrices(target))

    def fit(self) -> Track:
        """The fewest keys within the check; 16-byte keys of the lengths that replay each
        segment's middle frame (fit_keys.length_ratios), unit where they compound too far."""
        chosen = self._fewest_keys(self.key_size == 16)
        if self.key_size == 6:
            return Track(frames=chosen, values=self.values[chosen])
        lengths = key_lengths(self.target, chosen)
        if lengths is None:
            chosen = self._fewest_keys(False)
            lengths = np.ones(len(chosen))
        return Track(frames=chosen, values=(self.target[chosen] * lengths[:, None]).astype(np.float32))

    def _fewest_keys(self, fit_lengths):
        """furthest_reach's keys, at most MAX_GAP apart, wary of dead ends past the motion's own keys."""
        passes = partial(self._passes, fit_lengths=fit_lengths)
        return furthest_reach_keys(len(self.target), self.kinks, passes, MAX_GAP, dead_ends=True)

    def _passes(self, starts, ends, fit_lengths):
        """Whether each segment, replayed from keys at its ends, passes the check at every frame."""
        lengths = ends - starts
        ratios = length_ratios(self.target, starts, ends) if fit_lengths else np.ones(len(ends))
        table = np.zeros((2 * len(ends), 7))   # frames.py's key table: no position, then x y z w
        table[0::2, 3:], table[1::2, 3:] = self.keys[starts], self.keys[ends] * ratios[:, None]
        key_frames = np.stack([np.zeros_like(lengths), lengths], axis=1).ravel()
        replayed = sample_many(lengths + 1, np.full(len(ends), 2), key_frames, table)[:, 3:]
        offsets = run_starts(lengths + 1)
        frames = np.arange(len(replayed)) + np.repeat(starts - offsets, lengths + 1)
        return np.maximum.reduceat(self.check.excess(frames, rotation_matrices(replayed)), offsets) <= 0.0


def _euler_solutions(m):
    """(2, 3, n): both XYZ Euler solutions of rotations (n, 3, 3), m = Rx(a) . Ry(b) . Rz(c).
    c is solved after a, so any split of a and c at gimbal lock gives the rotation."""
    a = np.arctan2(-m[:, 1, 2], m[:, 2, 2])
    b = np.arctan2(m[:, 0, 2], np.hypot(m[:, 0, 0], m[:, 0, 1]))
    cos, sin = np.cos(a), np.sin(a)
    c = np.arctan2(cos * m[:, 1, 0] + sin * m[:, 2, 0], cos * m[:, 1, 1] + sin * m[:, 2, 1])
    return np.stack([np.stack([a, b, c]), np.stack([a + np.pi, np.pi - b, c + np.pi])])


def _euler_keys(codes):
    """Hamilton w, x, y, z of qx(a0) . qy(a1) . qz(a2) (MUrXYZrEulerToQuat, as poses.key_quaternions)
    for codes (2 solutions, 3 axes, 2 roundings, n): each (2, 2, 2, 2, n), a solution and the
    rounding of each axis, all 8 combinations."""
    x, y, z = np.moveaxis(codes, 1, 0)
    return euler_hamilton(x[:, :, None, None], y[:, None, :, None], z[:, None, None])


def _kinks(quaternions, matrices):
    """Frames where the motion breaks much more than at one of its neighbours (keys of its own,
    likely), and the last frame. Two breaks: the rotation bends (its matrix off the mean of its
    neighbours'), or the quaternion leaves the plane (through 0) of the two before it, which the
    nlerp between two keys never leaves (by more than OFF_PLANE)."""
    def breaks():
        bend = relative_linear_errors((matrices[:-2] + matrices[2:]) / 2, matrices[1:-1])
        before, at, after = quaternions[:-2], quaternions[1:-1], quaternions[2:]
        at = at * np.where(np.einsum("ij,ij->i", before, at) < 0, -1.0, 1.0)[:, None]
        across = at - np.einsum("ij,ij->i", at, before)[:, None] * before
        across /= np.maximum(np.linalg.norm(across, axis=1, keepdims=True), TINY)
        leave = after - np.einsum("ij,ij->i", after, before)[:, None] * before
        leave = np.linalg.norm(leave - np.einsum("ij,ij->i", leave, across)[:, None] * across, axis=1)
        return stands_out(bend) | (stands_out(leave) & (leave > OFF_PLANE))
    return kinks(len(matrices), breaks)
