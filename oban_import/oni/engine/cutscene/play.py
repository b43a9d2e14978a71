"""The timeline played: the frame each animation shows on each tick, and from them the
camera's, each character's and each object's matrix at every tick (docs/cutscenes.md 2-4),
vectorised over ticks. Matrices are Oni's (4x4, column vectors). No bpy."""

import functools

import numpy as np

from ...io.oban.record import LOOP, PINGPONG
from ..playback import engine_frames

# RotX(+90°), the turn chr_envanim gives a box OBAN's matrix (docs/cutscenes.md 3)
ENVANIM_TURN = np.array([[1.0, 0.0, 0.0, 0.0],
                         [0.0, 0.0, -1.0, 0.0],
                         [0.0, 1.0, 0.0, 0.0],
                         [0.0, 0.0, 0.0, 1.0]])


def shown_frames(ticks: int, frames: int, flags: int = 0) -> np.ndarray:
    """The OBAN frame shown on each of `ticks` ticks from the one it is started on: frame 1
    first (the same tick's update advances it), then one a tick; a loop goes round, a
    ping-pong turns, anything else holds its last frame."""
    sequence, period = _played(frames, flags & (LOOP | PINGPONG))
    step = np.arange(1, ticks + 1)
    return sequence[step % period] if period else sequence[np.minimum(step, len(sequence) - 1)]


@functools.lru_cache(maxsize=256)
def _played(frames, flags):
    sequence, period = engine_frames(frames, flags)
    sequence = np.asarray(sequence)
    sequence.flags.writeable = False
    return sequence, period


def envanim_frames(ticks: int, frames: int) -> np.ndarray:
    """The box OBAN frame a character's base takes on each tick from chr_envanim's: frame 1
    first, one a tick, ended on the tick frame frames - 1 would show, the last shown held."""
    return np.minimum(np.arange(1, ticks + 1), max(frames - 2, 0))


def spans(ticks: np.ndarray, length: int) -> list:
    """(start, end) of each event's span: to the next event's tick or `length`."""
    ends = np.append(ticks[1:], length)
    return list(zip(ticks.tolist(), np.minimum(ends, length).tolist()))


def view_vectors(matrices: np.ndarray):
    """(position, view direction, up) of camera matrices: M's translation, M.(0,0,-1), M.(0,1,0)."""
    return matrices[..., :3, 3], -matrices[..., :3, 2], matrices[..., :3, 1]


def level_up(direction: np.ndarray) -> np.ndarray:
    """The up of a view with no roll: v x (v.z, 0, -v.x), normalised."""
    v = np.asarray(direction, np.float64)
    side = np.stack([v[..., 2], np.zeros(v.shape[:-1]), -v[..., 0]], axis=-1)
    up = np.cross(v, side)
    return up / np.linalg.norm(up, axis=-1, keepdims=True)


def view_matrices(position, direction, up) -> np.ndarray:
    """Camera matrices looking along `direction` (normalised) with `up` (made square to it)."""
    z = -direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    x = np.cross(up, z)
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    m = np.zeros(np.shape(position)[:-1] + (4, 4))
    m[..., :3, 0], m[..., :3, 1], m[..., :3, 2] = x, np.cross(z, x), z
    m[..., :3, 3] = position
    m[..., 3, 3] = 1.0
    return m


def interpolation(start_view, target: np.ndarray, ticks: int, span: int) -> np.ndarray:
    """cm_interpolate over max(ticks, 1) ticks from `start_view` (position, direction, up) to the
    camera matrix `target` (its up made level), shown on each of `span` ticks from its start:
    k = 1 on the first, a = (sin(k/N.pi - pi/2) + 1)/2, the position and direction lerped,
    the direction normalised, the up rebuilt level; after N ticks the target holds."""
    n = max(ticks, 1)
    k = np.minimum(np.arange(1, span + 1), n)
    a = ((np.sin(k / n * np.pi - np.pi / 2) + 1) / 2)[:, None]
    p0, v0, _ = start_view
    p1, v1, _ = view_vectors(target)
    v0 = v0 / np.linalg.norm(v0)
    v1 = v1 / np.linalg.norm(v1)
    position = p0 + (p1 - p0) * a
    direction = v0 + (v1 - v0) * a
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return view_matrices(position, direction, level_up(direction))


def camera_track(events: list, length: int, oban_matrices) -> tuple[np.ndarray, np.ndarray]:
    """((length, 4, 4) the camera's matrix on each tick, (length,) bool: held where no known
    animation places it: before its first event, after cm_reset (the game's camera), and
    through a shot whose OBAN the level lacks — each holding the view before)."""
    track = np.tile(np.eye(4), (length, 1, 1))
    held = np.ones(length, bool)
    last = last_on_tick(events, length)
    view = None
    for event, (start, end) in zip(last, spans(np.array([e.tick for e in last], int), length)):
        matrices = oban_matrices(event.oban) if event.kind != "reset" else None
        if matrices is None or end <= start:
            continue
        if event.kind == "anim":
            track[start:end] = matrices[shown_frames(end - start, len(matrices))]
        else:
            first = view if view is not None else view_vectors(matrices[0])
            track[start:end] = interpolation(first, matrices[0], event.ticks, end - start)
        held[start:end] = False
        view = view_vectors(track[end - 1])
    return track[held_over(held)], held


def last_on_tick(events: list, length: int) -> list:
    """The events before `length` (in tick order), of several on one tick the last (whose shows)."""
    events = [e for e in events if e.tick < length]
    return [e for i, e in enumerate(events) if i + 1 == len(events) or events[i + 1].tick != e.tick]


def held_over(held: np.ndarray) -> np.ndarray:
    """For each tick, the tick whose value it shows: itself, or where `held`, the last tick
    before it that is not (the first that is not, before any)."""
    ticks = np.arange(len(held))
    known = np.maximum.accumulate(np.where(held, -1, ticks))
    first = np.argmin(held) if not held.all() else 0
    return np.where(known < 0, first, known)
