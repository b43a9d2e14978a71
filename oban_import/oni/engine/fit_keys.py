"""docs/engine.md 1-2 in reverse: engine keys for wanted matrices, and the fewest keys that replay them.

Wanted matrices M(f) are what docs/engine.md 2 must give at every frame (engine space, with
the Localized turn when that flag is set). Errors are measured per frame by
`relative_errors`; keys are checked as the float32 values that will be written,
replayed by the project's own engine (engine.frames).
"""

from dataclasses import dataclass

import numpy as np

from ...core.errors import ObanError
from ..io.oban.record import (IDENTITY, KEY_DTYPE, LOCALIZED, MAX_COUNT, Animation, check, matrix_from_columns,
                              stored_columns)
from .frames import frame_matrices, run_starts
from .furthest_reach import Tally, furthest_reach_keys, kinks, stands_out
from .rotations import (LOCALIZED_TURN, nearest_rotations, quaternions, relative_errors, relative_linear_errors,
                        rotation_matrices, stored_from_hamilton)

TOLERANCE = 1e-4          # relative: how far from the motion, at most, the keys replay it unless told
MAX_RATIO = 16.0          # a segment's fitted length ratio beyond this (or its inverse) is not believed
MAX_LENGTH = 2.0 ** 60    # a key's length, the ratios chained, beyond this (or its inverse): unit keys instead
RIGID = 1e-6             # float32 matrices are rotations times the base only to a few 1e-8: not shear


def engine_keys_from_matrices(matrices: np.ndarray, base_matrix: np.ndarray,
                              localized: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-frame keys that give the wanted matrices (n, 4, 4) under docs/engine.md 2.

    Undoes the Localized turn (if `localized`), then solves M = T(p) . R(q) . Base with
    `base_matrix` the 12 stored floats: R is the rotation nearest M3 . Base3^-1 and
    p = t - R . Base_t. Returns (quaternions (n, 4) as stored: x y z w in the engine's
    convention, i.e. the conjugate of the usual quaternion of R; unit length, signs
    continuous from frame to frame, w >= 0 at frame 0;
    positions (n, 3); errors (n,): per frame max|R . Base3 - M3| / max|M3|, 0 when
    M3 . Base3^-1 is a rotation; shear or a changed scale shows here).
    """
    m = np.asarray(matrices, np.float64)[:, :3, :4]
    if localized:
        m = LOCALIZED_TURN.T @ m
    base = matrix_from_columns(base_matrix)
    linear = m[:, :, :3]
    rotation = nearest_rotations(linear @ np.linalg.inv(base[:3, :3]))
    errors = relative_linear_errors(rotation @ base[:3, :3], linear)
    positions = m[:, :, 3] - rotation @ base[:3, 3]
    return stored_from_hamilton(quaternions(rotation)), positions, errors


def fewest_keys(quaternions: np.ndarray, positions: np.ndarray, tolerance: float = TOLERANCE,
                base_matrix: np.ndarray = IDENTITY, fit_lengths: bool = True, measure=None,
                tally: Tally | None = None) -> np.ndarray:
    """Sorted frame indices of a small key subset (first 0, last n - 1) whose replay by the
    engine (docs/engine.md 2, from the float32 keys that will be written) gives every frame within
    `tolerance` (`relative_errors`) of the matrices the per-frame keys give with `base_matrix`.

    The search is furthest_reach's, probing the kinks where the motion bends sharply. A segment
    passes only if every frame of it does (a screen of five frames first rejects most failing
    ones cheaply). The Localized turn is left out: it does not change the error. With
    `fit_lengths`, each segment's end key is lengthened as `length_ratios` says (key_lengths
    gives the keys). `measure` (left, right): the errors are those of left . M . right, 4x4 each
    (where the matrices end up, e.g. in Blender's world), else of M itself. `tally` is added
    what the search measures.
    """
    segments = _Segments(quaternions, positions, np.asarray(base_matrix, np.float32), tolerance, fit_lengths,
                         measure, tally)
    return furthest_reach_keys(len(segments.wanted), segments.kinks, segments.passes, tally=tally)


def length_ratios(quaternions: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per segment, the length of its end key's quaternion, its start key's being 1, that
    replays its middle frame exactly: the engine blends the stored, possibly non-unit,
    quaternions (docs/engine.md 2), so within a segment their ratio is free, and a motion
    keyed that way (Blender's LINEAR quaternion channels with non-unit values) is one
    segment. 1 where the fit is degenerate (equal ends, no middle) or out of bounds."""
    q = np.asarray(quaternions, np.float64)
    a, b = q[starts], q[ends]
    middle = (starts + ends) // 2
    t = (middle - starts) / np.maximum(ends - starts, 1)
    c = np.einsum("ij,ij->i", a, b)
    b = b * np.where(c < 0, -1.0, 1.0)[:, None]        # the engine's shorter-arc flip
    c = np.abs(c)
    m = q[middle] * np.where(np.einsum("ij,ij->i", a, q[middle]) < 0, -1.0, 1.0)[:, None]
    am, bm = np.einsum("ij,ij->i", a, m), np.einsum("ij,ij->i", b, m)
    det = 1.0 - c * c                                   # m = alpha a + beta b, least squares
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha, beta = (am - c * bm) / det, (bm - c * am) / det
        ratio = (1.0 - t) * beta / (t * alpha)
    good = (det > 1e-12) & (alpha > 0) & (beta > 0) & (t > 0) & (ratio < MAX_RATIO) & (ratio > 1.0 / MAX_RATIO)
    return np.where(good, ratio, 1.0)


def key_lengths(quaternions: np.ndarray, chosen: np.ndarray) -> np.ndarray | None:
    """The lengths of the chosen keys' quaternions, each segment's ratio chained from 1;
    None when the chain leaves [1 / MAX_LENGTH, MAX_LENGTH]."""
    lengths = np.cumprod(np.concatenate([[1.0], length_ratios(quaternions, chosen[:-1], chosen[1:])]))
    return lengths if ((lengths < MAX_LENGTH) & (lengths > 1.0 / MAX_LENGTH)).all() else None


class _Segments:
    """Segments of the per-frame keys, replayed from keys at their ends by the engine."""

    def __init__(self, quaternions, positions, base, tolerance, fit_lengths, measure, tally):
        quaternions = np.asarray(quaternions, np.float64)
        self.quaternions, self.fit_lengths = quaternions, fit_lengths
        self.keys = np.zeros(len(quaternions), KEY_DTYPE)      # float32, as written
        self.keys["rotation"], self.keys["position"] = quaternions, positions
        self.base, self.tolerance = base, tolerance
        base4 = matrix_from_columns(base)
        rotation = rotation_matrices(quaternions)
        self.wanted = np.concatenate([rotation @ base4[:3, :3],
                                      (rotation @ base4[:3, 3] + positions)[:, :, None]], axis=2)
        self.kinks = _kinks(self.wanted)
        self.measure, self.tally = measure, tally
        self.target = self.wanted if measure is None else measured(self.wanted, measure)

    def errors(self, starts, ends, segment, step, ratios):
        """Errors at frames starts[segment] + step, each segment replayed from keys at its
        ends, the end key lengthened by its ratio."""
        lengths = ends - starts
        offsets = run_starts(lengths + 1)       # the segments side by side on one time line
        pairs = np.empty(2 * len(ends), KEY_DTYPE)
        pairs[0::2], pairs[1::2] = self.keys[starts], self.keys[ends]
        pairs["rotation"][1::2] *= ratios[:, None]
        pairs["frame"][0::2], pairs["frame"][1::2] = offsets, offsets + lengths
        replay = Animation(name="segments", flags=0, start_matrix=IDENTITY, base_matrix=self.base,
                           ticks_per_frame=0, frames=int(offsets[-1] + lengths[-1] + 1), door_open_frame=0,
                           keys=pairs)
        got = frame_matrices(replay, offsets[segment] + step)
        if self.tally is not None:
            self.tally.frames += len(got)
        return relative_errors(got if self.measure is None else measured(got, self.measure),
                               self.target[starts[segment] + step])

    def passes(self, starts, ends):
        """Whether each segment replays all its frames within tolerance."""
        lengths = ends - starts
        ratios = length_ratios(self.quaternions, starts, ends) if self.fit_lengths else np.ones(len(ends))
        screen = np.stack([np.ones_like(lengths), lengths // 4, lengths // 2, 3 * lengths // 4, lengths - 1])
        errors = self.errors(starts, ends, np.repeat(np.arange(len(ends)), 5), screen.T.ravel(), ratios)
        ok = errors.reshape(-1, 5).max(axis=1) <= self.tolerance
        if ok.any():
            starts, ends, lengths, ratios = starts[ok], ends[ok], lengths[ok], ratios[ok]
            segment = np.repeat(np.arange(len(ends)), lengths + 1)
            step = np.arange(segment.size) - run_starts(lengths + 1)[segment]
            errors = self.errors(starts, ends, segment, step, ratios)
            ok[ok] = np.maximum.reduceat(errors, np.flatnonzero(step == 0)) <= self.tolerance
        return ok


def measured(matrices, measure):
    """left . M . right for (n, 3, 4) or (n, 4, 4) affine matrices M; (n, 4, 4)."""
    left, right = measure
    full = np.zeros(matrices.shape[:-2] + (4, 4))
    full[..., :3, :] = matrices[..., :3, :]
    full[..., 3, 3] = 1.0
    return left @ full @ right


def _kinks(wanted):
    """Frames where the motion bends much more than at one of its neighbours (keys of its
    own, likely), and the last frame."""
    return kinks(len(wanted), lambda: stands_out(relative_errors((wanted[:-2] + wanted[2:]) / 2, wanted[1:-1])))


@dataclass
class KeyReport:
    frames: int
    keys: int
    worst_error: float       # relative_errors of the built animation, replayed, against the wanted matrices
    worst_frame: int
    rotation_error: float    # how far M3 . Base3^-1 is from a rotation (engine_keys_from_matrices)
    rotation_frame: int


def animation_from_matrices(name: str, matrices: np.ndarray, base_matrix: np.ndarray = IDENTITY, flags: int = 0,
                            ticks_per_frame: int = 80, door_open_frame: int = 0, start_matrix: np.ndarray | None = None,
                            tolerance: float = TOLERANCE, measure=None) -> tuple[Animation, "KeyReport"]:
    """An Animation with the fewest keys that replays the wanted matrices (n, 4, 4, engine
    space) within `tolerance`, and a KeyReport measured by replaying it with the engine;
    `measure` (left, right): errors of left . M . right (see fewest_keys).

    `base_matrix` and `start_matrix` are 12 stored floats (see `stored_columns`); the start
    matrix defaults to the frame-0 matrix. Raises ObanError(name, ...) for what an OBAN
    cannot hold; matrices off by more than `tolerance` (not a rotation times the base, or
    not replayed within it) are warned about in animation.warnings, naming the worst frame.
    """
    matrices = np.asarray(matrices, np.float64)
    frames = len(matrices)
    if not 0 < frames <= MAX_COUNT:
        raise ObanError(name, f"{frames} frames: an OBAN holds 1 to {MAX_COUNT} "
                              f"(frame {MAX_COUNT} and later cannot be stored)")
    finite = np.isfinite(matrices).all(axis=(1, 2))
    if not finite.all():
        raise ObanError(name, f"frame {int(np.argmin(finite))}: non-finite matrix")
    for label, value, top in (("flags", flags, 0xFFFFFFFF), ("ticks per frame", ticks_per_frame, MAX_COUNT),
                              ("door open frame", door_open_frame, MAX_COUNT)):
        if not 0 <= value <= top:
            raise ObanError(name, f"{label} {value} out of range (0 to {top})")
    base = np.asarray(base_matrix, np.float32)
    base3 = matrix_from_columns(base)[:3, :3]
    if not np.isfinite(base).all() or abs(np.linalg.det(base3)) <= 1e-12 * np.abs(base3).max() ** 3:
        raise ObanError(name, "the base matrix is not invertible")

    quaternions, positions, rotation_errors = engine_keys_from_matrices(matrices, base, flags & LOCALIZED)
    unturned = measure   # the keys are fitted without the Localized turn: the measure takes it
    if measure is not None and flags & LOCALIZED:
        turn = np.eye(4)
        turn[:3, :3] = LOCALIZED_TURN
        unturned = (measure[0] @ turn, measure[1])
    chosen = fewest_keys(quaternions, positions, tolerance, base, measure=unturned)
    lengths = key_lengths(quaternions, chosen)
    if lengths is None:  # ratios that compound too far: unit keys, chosen again
        chosen = fewest_keys(quaternions, positions, tolerance, base, fit_lengths=False, measure=unturned)
        lengths = np.ones(len(chosen))
    keys = np.zeros(len(chosen), KEY_DTYPE)
    keys["rotation"], keys["position"] = quaternions[chosen] * lengths[:, None], positions[chosen]
    keys["frame"] = chosen
    start = stored_columns(matrices[0]) if start_matrix is None else np.asarray(start_matrix, np.float32)
    animation = Animation(name=name, flags=flags, start_matrix=start, base_matrix=base,
                          ticks_per_frame=ticks_per_frame, frames=frames, door_open_frame=door_open_frame,
                          keys=keys)
    check(animation, name)

    replayed = frame_matrices(animation)
    errors = relative_errors(*((replayed, matrices) if measure is None else
                               (measured(replayed, measure), measured(matrices, measure))))
    report = KeyReport(frames, len(keys), float(errors.max()), int(errors.argmax()),
                       float(rotation_errors.max()), int(rotation_errors.argmax()))
    if report.rotation_error > max(tolerance, RIGID):
        animation.warnings.append(
            f"frame {report.rotation_frame}: not a rotation times the base matrix (off by "
            f"{report.rotation_error:.3g}): shear or a scale other than the base's cannot be stored")
    if report.worst_error > tolerance:
        animation.warnings.append(f"frame {report.worst_frame}: replayed off by {report.worst_error:.3g}, "
                                  f"more than the tolerance {tolerance:g}")
    return animation, report
