"""Oni's character animations (TRAM, docs/characters.md 2-4): the 0x180-byte record, its raw
arrays and its rotation tracks, as oni/io/trams/read.py reads them and oni/io/trams/write.py writes them.

Every header field and every raw array is kept as stored (numpy structured arrays keep their
bytes, floats stay float32), so that the same bytes can be written back.
"""

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

OVERLAY, REAL_WORLD = 0x2000, 0x20000   # flags (docs/characters.md 2)
KEY_SIZES = (6, 16)                     # what the game's files use (docs/characters.md 3)
ENGINE_ONLY_KEY_SIZES = (3, 4, 8)       # read by the engine, in no known file: refused
PART_NAMES = ("Pelvis", "LeftThigh", "LeftCalf", "LeftFoot", "RightThigh", "RightCalf", "RightFoot", "Mid",
              "Chest", "Neck", "Head", "LeftShoulder", "LeftArm", "LeftWrist", "LeftFist", "RightShoulder",
              "RightArm", "RightWrist", "RightFist")   # the engine's body part enum (docs/characters.md 1)
MAX_PARTS = 32                          # the engine's TRcMaxParts: part masks are 32 bits
RAW_ALIGN = 32

ATTACK_DTYPE = np.dtype([
    ("parts", "<u4"), ("knockback", "<f4"), ("flags", "<u4"), ("damage", "<u2"), ("first_frame", "<u2"),
    ("last_frame", "<u2"), ("hit_type", "<u2"), ("hit_stun", "<u2"), ("block_stun", "<u2"), ("stagger", "<u2"),
    ("precedence", "<u2"), ("extent_index", "<u2"), ("pad", "<u2"),
])
SELF_DAMAGE_DTYPE = np.dtype([("damage", "<u2"), ("frame", "<u2")])
MOTION_BLUR_DTYPE = np.dtype([("parts", "<u4"), ("first_frame", "<u2"), ("last_frame", "<u2"), ("quantity", "u1"),
                              ("amount", "u1"), ("skip", "u1"), ("pad", "u1")])
SHORTCUT_DTYPE = np.dtype([("state", "<u2"), ("length", "<u2"), ("flags", "<u4")])
THROW_DTYPE = np.dtype([("offset", "<f4", (3,)), ("relative_facing", "<f4"), ("distance", "<f4"), ("type", "<u2")])
FOOTSTEP_DTYPE = np.dtype([("frame", "<u2"), ("type", "<u2")])
PARTICLE_DTYPE = np.dtype([("first_frame", "<u2"), ("last_frame", "<u2"), ("part", "<u2"), ("pad", "<u2"),
                           ("name", "S16")])
POSITION_DTYPE = np.dtype([("x", "<i2"), ("z", "<i2"), ("height", "<u2"), ("y_offset", "<i2")])  # x 0.01
SOUND_DTYPE = np.dtype([("name", "S32"), ("frame", "<u2")])
EXTENT_DTYPE = np.dtype([("frame", "<u2"), ("angle", "<u2"), ("distance", "<u2"), ("pad", "<u2"),
                         ("min_y", "<i2"), ("max_y", "<i2")])
ATTACK_BOUND_DTYPE = np.dtype([
    ("frame", "<u2"), ("attack", "u1"), ("extent", "u1"), ("position", "<f4", (3,)), ("distance", "<f4"),
    ("min_height", "<f4"), ("max_height", "<f4"), ("angle", "<f4"),
])
EXTENT_INFO_DTYPE = np.dtype([   # 0x50 .. 0x12F; the extent count and raw pointer follow it
    ("max_distance", "<f4"), ("min_height", "<f4"), ("max_height", "<f4"), ("ring", "<f4", (36,)),
    ("first_attack", ATTACK_BOUND_DTYPE), ("max_attack", ATTACK_BOUND_DTYPE), ("direction", "<u4"),
])
# The raw arrays in the order of their pointers at 0x04..0x30 (throw at 0x1C is one record or none),
# then the extents (0x134): name, dtype, where its count is ("frames", a header field, or None).
RAW_ARRAYS = (
    ("heights", np.dtype("<f4"), "frames"), ("velocities", np.dtype(("<f4", (2,))), "frames"),
    ("attacks", ATTACK_DTYPE, "attack_count"), ("self_damage", SELF_DAMAGE_DTYPE, "self_damage_count"),
    ("motion_blur", MOTION_BLUR_DTYPE, "motion_blur_count"), ("shortcuts", SHORTCUT_DTYPE, "shortcut_count"),
    ("throw", THROW_DTYPE, None), ("footsteps", FOOTSTEP_DTYPE, "footstep_count"),
    ("particles", PARTICLE_DTYPE, "particle_count"), ("positions", POSITION_DTYPE, "frames"),
    ("rotations", None, None), ("sounds", SOUND_DTYPE, "sound_count"),
)
RECORD_DTYPE = np.dtype([
    ("name_pointer", "<u4"),                                   # 0x00, filled at run time
    *[(name + "_at", "<u4") for name, _, _ in RAW_ARRAYS],     # 0x04 .. 0x30
    ("flags", "<u4"), ("direct_animations", "<u4", (2,)), ("used_parts", "<u4"), ("replaced_parts", "<u4"),
    ("final_rotation", "<f4"), ("move_direction", "<u2"), ("vocalization", "<u2"),
    ("extent_info", EXTENT_INFO_DTYPE), ("extent_count", "<u4"), ("extents_at", "<u4"),
    ("impact", "V16"), ("hard_pause", "<u2"), ("soft_pause", "<u2"), ("sound_count", "<u4"),
    ("sound_name_pointer", "<u4"), ("sound_frame", "<u2"),     # 0x150, 0x154: filled at run time
    ("fps", "<u2"), ("key_size", "<u2"), ("type", "<u2"), ("aiming_type", "<u2"), ("from_state", "<u2"),
    ("to_state", "<u2"), ("parts", "<u2"), ("frames", "<u2"), ("duration", "<u2"), ("varient", "<u2"),
    ("varient_end", "<u2"), ("atomic_start", "<u2"), ("atomic_end", "<u2"), ("interpolation_end", "<u2"),
    ("interpolation_max", "<u2"), ("action_frame", "<i2"), ("first_level", "<u2"), ("invulnerable_start", "u1"),
    ("invulnerable_length", "u1"), ("attack_count", "u1"), ("self_damage_count", "u1"),
    ("motion_blur_count", "u1"), ("shortcut_count", "u1"), ("footstep_count", "u1"), ("particle_count", "u1"),
])
assert RECORD_DTYPE.itemsize == 0x180 and RECORD_DTYPE.fields["extent_count"][1] == 0x130
# The record's scalar fields (the counts, pointers and PLAIN_FIELDS) as Python values in one
# struct unpack, which skips what a numpy record's item() would unpack too (the extent info's 60 values)
SCALARS = [name for name in RECORD_DTYPE.names if not RECORD_DTYPE[name].shape and RECORD_DTYPE[name].kind in "uif"]
SCALAR_STRUCT = struct.Struct("<" + "".join(
    RECORD_DTYPE[name].char if name in SCALARS else f"{RECORD_DTYPE[name].itemsize}x" for name in RECORD_DTYPE.names))
assert SCALAR_STRUCT.size == RECORD_DTYPE.itemsize
# Header fields a Tram keeps under the same name, as they are (final_rotation stays float32).
PLAIN_FIELDS = ("flags", "used_parts", "replaced_parts", "move_direction", "vocalization", "hard_pause",
                "soft_pause", "fps", "type", "aiming_type", "from_state", "to_state", "duration", "varient",
                "varient_end", "atomic_start", "atomic_end", "interpolation_end", "interpolation_max",
                "action_frame", "first_level", "invulnerable_start", "invulnerable_length", "name_pointer",
                "sound_name_pointer", "sound_frame")


@dataclass
class Track:                 # one body part's rotation keys
    frames: np.ndarray       # (k,) int64: each key's frame; 0 first, F-1 last (the gaps summed)
    values: np.ndarray       # 6-byte keys: (k, 3) uint16 codes as stored; 16-byte keys: (k, 4) float32 x y z w


class Tracks(Sequence):
    """A TRAM's tracks, the one form a Tram holds them in (docs/characters.md 3): every part's
    keys end to end, as one array each (what the reader decodes, and what the bone keys and
    the properties take whole); part p's Track is a view of them, made when asked for."""

    def __init__(self, counts, frames, values):
        self.counts = counts     # (P,) int64: each part's key count
        self.frames = frames     # (K,) int64: every key's frame, part after part
        self.values = values     # (K, 3) uint16 or (K, 4) float32: every key as stored
        self._ends = None        # each part's end in them, worked out when a part is asked for

    @classmethod
    def joined(cls, tracks, key_size: int) -> "Tracks":
        """Parts' tracks (each with .frames and .values, such as Track) end to end."""
        counts = np.array([len(track.frames) for track in tracks], np.int64)
        if not len(counts):
            width, dtype = (3, np.uint16) if key_size == 6 else (4, np.float32)
            return cls(counts, np.zeros(0, np.int64), np.zeros((0, width), dtype))
        values = [np.asarray(track.values) for track in tracks]
        uneven = np.flatnonzero(counts != [len(value) for value in values])
        if len(uneven):
            raise ValueError(f"part {uneven[0]}'s track has {counts[uneven[0]]} key frames and "
                             f"{len(values[uneven[0]])} key values")
        return cls(counts, np.concatenate([track.frames for track in tracks]).astype(np.int64), np.concatenate(values))

    def __len__(self):
        return len(self.counts)

    def __getitem__(self, part):
        if isinstance(part, slice):
            return [self[p] for p in range(len(self))[part]]
        part = range(len(self))[part]
        if self._ends is None:
            self._ends = np.cumsum(self.counts).tolist()
        start, end = self._ends[part - 1] if part else 0, self._ends[part]
        return Track(frames=self.frames[start:end], values=self.values[start:end])


def _none(dtype):
    return field(default_factory=lambda: np.zeros(0, dtype))


@dataclass
class Tram:
    name: str                # the instance name without 'TRAM'
    frames: int              # F >= 1
    key_size: int            # 6 or 16
    flags: int               # 0x2000 Overlay, 0x20000 RealWorld, the rest as stored
    used_parts: int          # bit p = part p (overlays)
    replaced_parts: int
    heights: np.ndarray      # (F,) float32
    velocities: np.ndarray   # (F, 2) float32
    tracks: Tracks           # every part's keys, in part order (a list of Track is joined: Tracks.joined)
    # the other raw arrays, as stored (docs/characters.md 2); positions is (F,) or (0,) when absent
    positions: np.ndarray = _none(POSITION_DTYPE)
    attacks: np.ndarray = _none(ATTACK_DTYPE)
    self_damage: np.ndarray = _none(SELF_DAMAGE_DTYPE)
    motion_blur: np.ndarray = _none(MOTION_BLUR_DTYPE)
    shortcuts: np.ndarray = _none(SHORTCUT_DTYPE)
    throw: np.ndarray = _none(THROW_DTYPE)          # one record or none
    footsteps: np.ndarray = _none(FOOTSTEP_DTYPE)
    particles: np.ndarray = _none(PARTICLE_DTYPE)
    sounds: np.ndarray = _none(SOUND_DTYPE)
    extents: np.ndarray = _none(EXTENT_DTYPE)
    extent_info: np.ndarray = field(default_factory=lambda: np.zeros((), EXTENT_INFO_DTYPE))  # 0-d record
    # the other header fields, as stored
    direct_animations: tuple = ("", "")   # the two TRAM links' names without 'TRAM', "" for none
    final_rotation: np.float32 = np.float32(0)   # radians
    impact: bytes = bytes(16)             # char[16] as stored (impact_name: up to the first NUL)
    move_direction: int = 0
    vocalization: int = 0
    hard_pause: int = 0
    soft_pause: int = 0
    fps: int = 60
    type: int = 0
    aiming_type: int = 0
    from_state: int = 0
    to_state: int = 0
    duration: int = 0
    varient: int = 0
    varient_end: int = 0
    atomic_start: int = 0
    atomic_end: int = 0
    interpolation_end: int = 0
    interpolation_max: int = 0
    action_frame: int = 0                 # i16
    first_level: int = 0
    invulnerable_start: int = 0
    invulnerable_length: int = 0          # OniSplit's XML "End"; the engine adds it to the start
    name_pointer: int = 0                 # 0x00, 0x150, 0x154: the engine fills them at run time (0 in files)
    sound_name_pointer: int = 0
    sound_frame: int = 0
    source: str = field(default="", compare=False)   # the file it was read from ("" for one made): not content

    def __post_init__(self):
        if not isinstance(self.tracks, Tracks):
            self.tracks = Tracks.joined(self.tracks, self.key_size)

    @property
    def parts(self) -> int:
        return len(self.tracks)

    @property
    def impact_name(self) -> str:
        return self.impact.split(b"\0", 1)[0].decode("latin-1")

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)


def tram_flag_text(flags: int) -> str:
    """'Overlay RealWorld', the other bits in hex, '-' for none."""
    words = [name for bit, name in ((OVERLAY, "Overlay"), (REAL_WORLD, "RealWorld")) if flags & bit]
    if flags & ~(OVERLAY | REAL_WORLD):
        words.append(f"0x{flags & ~(OVERLAY | REAL_WORLD):x}")
    return " ".join(words) or "-"
