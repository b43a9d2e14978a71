"""The custom properties that describe an imported OBAN (README, "What you get"): their
names, `properties()` to write them and `from_properties()` to read them back. Plain
mappings in and out (a Blender ID's properties are one), so no bpy here."""

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ....core.id_properties import signed32, unsigned32
from ....core.runs import bounded_runs
from .record import FLAGS, KEY_DTYPE, Animation, all_keys

PREFIX = "oban_"
NAME = "oban_name"
FLAG_BITS = "oban_flags"
FRAMES = "oban_frames"
TICKS_PER_FRAME = "oban_ticks_per_frame"
DOOR_OPEN_FRAME = "oban_door_open_frame"
START_MATRIX = "oban_start_matrix"
BASE_MATRIX = "oban_base_matrix"
RECORD_HEADER = "oban_record_header"   # on the action
KEYS = "oban_keys"                     # on the action
PLACEMENT = "oban_placement"           # a selected object's matrix before its first Localized import
PIVOT = "oban_pivot"                   # on a pivot Empty: the name of the animation its child plays
FIELDS = (  # (key, property, label, description): the integer fields the panel edits
    ("frames", FRAMES, "Frames", "Frame count"),
    ("ticks_per_frame", TICKS_PER_FRAME, "Ticks per Frame", "Stored, ignored by the engine (it plays one frame a tick)"),
    ("door_open_frame", DOOR_OPEN_FRAME, "Door Open Frame", "Where a door stops when it opens"),
)
DEFAULT_TICKS_PER_FRAME = 80
CHUNK_KEYS = 1 << 16   # descriptions(): keys turned into properties at a time


FLAG_PROPERTIES = tuple((PREFIX + flag.key, flag.bit) for flag in FLAGS)   # (property, bit) of each known flag


def flag_properties(flags: int) -> dict:
    """oban_flags and one boolean per known flag, in step."""
    return _flag_properties(flags).copy()


@functools.lru_cache(maxsize=64)   # a few flag values recur over a level's animations
def _flag_properties(flags):
    return {FLAG_BITS: signed32(flags)} | {name: bool(flags & bit) for name, bit in FLAG_PROPERTIES}


def properties(animation: Animation) -> dict:
    """What describes `animation` on its object and action."""
    return {
        NAME: animation.name,
        **_flag_properties(animation.flags),
        FRAMES: animation.frames,
        TICKS_PER_FRAME: animation.ticks_per_frame,
        DOOR_OPEN_FRAME: animation.door_open_frame,
        START_MATRIX: animation.start_matrix.tolist(),
        BASE_MATRIX: animation.base_matrix.tolist(),
    }


def stored_data(animation: Animation, keys: np.ndarray | None = None) -> dict:
    """With properties(), enough to write the instance back bit for bit (kept on the
    action). `keys`: keys_property() of its keys, when made already."""
    return {
        RECORD_HEADER: [signed32(v) for v in animation.record_header],
        KEYS: keys_property(animation.keys) if keys is None else keys,
    }


def descriptions(animations: list[Animation]) -> Iterator[tuple[dict, dict]]:
    """Yields, for each animation in order, what describes it on its object, properties(),
    and on its action, properties() | stored_data(); the keys of several animations (at most
    CHUNK_KEYS at a time, core.runs.bounded_runs) are made properties together, in a few array operations."""
    for run in bounded_runs([len(a.keys) for a in animations], CHUNK_KEYS):
        flat = keys_property(all_keys(animations[run]))
        start = 0
        for animation in animations[run]:
            stop = start + len(animation.keys)
            described = properties(animation)
            yield described, described | stored_data(animation, flat[8 * start:8 * stop])
            start = stop


def keys_property(keys: np.ndarray) -> np.ndarray:
    """Keys as a flat float64 array, 8 per key (rotation, position, frame), exact; an
    IDProperty takes it as a double array without a Python float per value."""
    flat = np.ascontiguousarray(keys).view("<f4").reshape(-1, 8).astype(np.float64)
    flat[:, 7] = keys["frame"]
    return flat.ravel()


def keys_from_property(values) -> np.ndarray:
    flat = np.asarray(values, np.float64).reshape(-1, 8)
    keys = np.zeros(len(flat), KEY_DTYPE)
    keys["rotation"], keys["position"], keys["frame"] = flat[:, :4], flat[:, 4:7], flat[:, 7]
    return keys


@dataclass
class Described:
    """What an object's (and its action's) custom properties say; None where absent."""
    name: str | None
    flags: int | None
    frames: int | None
    ticks_per_frame: int
    door_open_frame: int
    start_matrix: np.ndarray | None
    base_matrix: np.ndarray | None
    keys: np.ndarray | None
    record_header: tuple

    def animation(self) -> Animation | None:
        """The animation as the importer read it, or None when a part is missing."""
        parts = (self.name, self.flags, self.frames, self.start_matrix, self.base_matrix, self.keys)
        if any(part is None for part in parts):
            return None
        return Animation(name=self.name, flags=self.flags, start_matrix=self.start_matrix,
                         base_matrix=self.base_matrix, ticks_per_frame=self.ticks_per_frame,
                         frames=self.frames, door_open_frame=self.door_open_frame, keys=self.keys,
                         record_header=self.record_header)


def from_properties(owner, action=None) -> Described:
    """Read properties() (from `owner`, an object's properties) and stored_data() (from
    `action`'s, when given); anything absent is None or its default."""
    def matrix(key):
        return np.array(owner[key], np.float32) if key in owner else None
    stored = action if action is not None and KEYS in action else {}
    return Described(
        name=owner.get(NAME),
        flags=unsigned32(owner[FLAG_BITS]) if FLAG_BITS in owner else None,
        frames=int(owner[FRAMES]) if FRAMES in owner else None,
        ticks_per_frame=int(owner.get(TICKS_PER_FRAME, DEFAULT_TICKS_PER_FRAME)),
        door_open_frame=int(owner.get(DOOR_OPEN_FRAME, 0)),
        start_matrix=matrix(START_MATRIX),
        base_matrix=matrix(BASE_MATRIX),
        keys=keys_from_property(stored[KEYS]) if stored else None,
        record_header=tuple(unsigned32(v) for v in stored.get(RECORD_HEADER, (1, 0))) if stored else (1, 0),
    )
