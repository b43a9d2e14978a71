"""Oni's character animations (TRAM, docs/characters.md 2-4): the 0x180-byte record, its raw
arrays and its rotation tracks, read from a container (a .oni's raw table or a level's .raw).

Every header field and every raw array is kept as stored (numpy structured arrays keep their
bytes, floats stay float32), so that tram_writer.py can write the same bytes back. Counts and
offsets are checked against the instance and the raw data before anything is allocated.
"""

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import ObanError
from .container import TRAM_TAG

OVERLAY, REAL_WORLD = 0x2000, 0x20000   # flags (spec CHARACTERS.md 2, 4)
KEY_SIZES = (6, 16)                     # what the game's files use (docs/characters.md 3)
ENGINE_ONLY_KEY_SIZES = (3, 4, 8)       # read by the engine, in no known file: refused
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
# unpack: 2 us, where a numpy record's item() takes 14 (its extent info alone has 60 values)
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
    """A TRAM's tracks as the reader decodes them: every part's keys end to end, as one
    array each (what the bone keys and the properties take whole); a part's Track is a view
    of them, made when asked for."""

    def __init__(self, counts, frames, values):
        self.counts = counts     # (P,) int64: each part's key count
        self.frames = frames     # (K,) int64: every key's frame, part after part
        self.values = values     # (K, 3) uint16 or (K, 4) float32: every key as stored
        self._ends = None        # each part's end in them, worked out when a part is asked for

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


def flat_tracks(tracks) -> tuple:
    """(counts (P,) int64, frames (K,) int64, values (K, 3 or 4)) of tracks end to end: as the
    reader keeps them (Tracks), else joined."""
    if isinstance(tracks, Tracks):
        return tracks.counts, tracks.frames, tracks.values
    return (np.array([len(track.frames) for track in tracks], np.int64),
            np.concatenate([track.frames for track in tracks]).astype(np.int64),
            np.concatenate([track.values for track in tracks]))


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
    tracks: list             # [Track], one per part, in part order
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


def read_tram(c, index: int) -> Tram:
    """The TRAM at descriptor `index` of container `c` (container.Container), every count, offset
    and track checked (docs/characters.md 2-3, 8); ObanError naming the file, the instance and
    the fault."""
    return read_tram_instances([(c, index)])[0]


def read_tram_instances(instances) -> list[Tram]:
    """read_tram of each (container, index), in order, all of them together: their tracks
    decoded at once, their records and finite values looked at as one array each (numpy's
    cost per call paid once for the lot rather than once a TRAM)."""
    stored = [_stored(c, index) for c, index in instances]
    tracks = _all_tracks(stored)
    if any(t is None for t in tracks) or not _all_finite(stored, tracks):
        for s, t in zip(stored, tracks):   # the first TRAM at fault says what it is
            _check_finite(s, t if t is not None else _tracks_at_fault(s))
    if not stored:
        return []
    records = np.frombuffer(b"".join(s.record for s in stored), RECORD_DTYPE)
    infos, impacts = records["extent_info"].copy(), records["impact"].tobytes()
    directs, finals = records["direct_animations"].tolist(), records["final_rotation"].copy()
    return [_tram(s, t, infos[i, ...], impacts[16 * i:16 * i + 16], directs[i], finals[i])
            for i, (s, t) in enumerate(zip(stored, tracks))]


@dataclass
class _Stored:               # a TRAM's record and raw data as read, before its tracks are decoded
    c: object
    index: int
    label: str
    record: bytes            # its 0x180 bytes
    fields: dict             # the record's scalar fields as Python values
    frames: int
    key_size: int
    arrays: dict             # the raw arrays but the rotations, by name
    offsets: np.ndarray      # (parts,) int64: each track's start in `blob`
    blob: np.ndarray         # uint8: the rotation data, from its offsets on


# Each raw array but the rotations: (name, dtype, the field of its count or None, its pointer's field)
RAW_READS = tuple((name, dtype, count, name + "_at") for name, dtype, count in RAW_ARRAYS if dtype is not None) + (
    ("extents", EXTENT_DTYPE, "extent_count", "extents_at"),)
EMPTY = {name: np.zeros(0, dtype) for name, dtype, _, _ in RAW_READS}   # shared: no record to change in them


def _stored(c, index):
    data, _ = c.instance(index, TRAM_TAG)
    label = c.label(index)
    if len(data) < RECORD_DTYPE.itemsize:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for a TRAM (0x180)")
    fields = dict(zip(SCALARS, SCALAR_STRUCT.unpack_from(data)))
    frames, parts, key_size = _checked_sizes(fields, c.path, label)
    arrays = {name: _raw_array(c, label, fields, name, dtype, count) if fields[count or at] else EMPTY[name]
              for name, dtype, count, at in RAW_READS}
    at = fields["rotations_at"]
    if not at:
        raise ObanError(c.path, f"{label}: no rotation data (raw pointer 0)")
    offsets = np.frombuffer(c.raw(at, 2 * parts, f"{label}'s rotation offsets"), "<u2").astype(np.int64)
    if offsets.min() != 2 * parts:
        raise ObanError(c.path, f"{label}: its part count ({parts}) differs from its rotation data, whose first "
                                f"track starts at byte {offsets.min()}, not after {parts} offsets")
    longest = frames * (key_size + 1) - 1   # a key on every frame
    length = min(int(offsets.max()) + longest, c.raw_size(f"{label}'s rotations") - at)
    blob = np.frombuffer(c.raw(at, length, f"{label}'s rotations"), np.uint8)
    return _Stored(c, index, label, data[:RECORD_DTYPE.itemsize], fields, frames, key_size, arrays, offsets, blob)


def _tram(s, tracks, extent_info, impact, direct_animations, final_rotation):
    """The Tram of a _Stored, its tracks and the record's fields that are no plain value."""
    c, name = s.c, s.c.full_name(s.index)
    return Tram(
        name=name[4:] if name.startswith("TRAM") else name, frames=s.frames, key_size=s.key_size,
        heights=s.arrays.pop("heights"), velocities=s.arrays.pop("velocities"), tracks=tracks, **s.arrays,
        extent_info=extent_info, impact=impact, final_rotation=final_rotation,
        direct_animations=tuple(_direct_name(c, s.index, value, n) if value else ""
                                for n, value in enumerate(direct_animations)),
        **{key: s.fields[key] for key in PLAIN_FIELDS})


def _tracks_at_fault(s):
    """A _Stored's tracks one by one: the first one at fault raises, saying what it is."""
    return [_track(s.blob, int(start), s.frames, s.key_size, s.c.path, f"{s.label}: part {part}'s track")
            for part, start in enumerate(s.offsets)]


def _checked_sizes(fields, path, label):
    frames, parts, key_size = fields["frames"], fields["parts"], fields["key_size"]
    if frames < 1:
        raise ObanError(path, f"{label}: 0 frames (at least 1 needed)")
    if key_size in ENGINE_ONLY_KEY_SIZES:
        raise ObanError(path, f"{label}: {key_size}-byte rotation keys: the engine reads them, but no known file "
                              f"uses them and they are not supported (6 and 16 are)")
    if key_size not in KEY_SIZES:
        raise ObanError(path, f"{label}: rotation key size {key_size} is not one the engine reads (6 or 16)")
    if not 1 <= parts <= MAX_PARTS:
        raise ObanError(path, f"{label}: {parts} body parts (1 to {MAX_PARTS} can be animated)")
    return frames, parts, key_size


def _raw_array(c, label, fields, name, dtype, count_field):
    """A raw array at its pointer; its count from `count_field` (None: one record if the pointer is set)."""
    at = fields[name + "_at"]
    count = 1 if count_field is None else fields[count_field]
    if at == 0 and name == "positions":   # position points may be absent
        return EMPTY[name]
    what = name.replace("_", " ")
    if at == 0:
        raise ObanError(c.path, f"{label}: {count} {what} but no raw data for them (raw pointer 0)")
    return np.frombuffer(c.raw(at, count * dtype.itemsize, f"{label}'s {what}"), dtype, count).copy()


TRACK_CELLS = 1 << 21   # track-frames walked together at most (what bounds a run's arrays)


def _all_tracks(stored):
    """Each _Stored's tracks (docs/characters.md 3: u16 offsets from the rotation data's start,
    each track a key then (u8 gap, key) pairs until the gaps reach F - 1), or None for one
    with a track at fault: by key size, shortest first, in runs of at most TRACK_CELLS."""
    found = [None] * len(stored)
    order = sorted(range(len(stored)), key=lambda i: (stored[i].key_size, stored[i].frames))
    run, rows = [], 0
    for i in order:
        s = stored[i]
        if run and (s.key_size != stored[run[0]].key_size or (rows + len(s.offsets)) * s.frames > TRACK_CELLS):
            found = _put(found, run, _sound_tracks([stored[j] for j in run]))
            run, rows = [], 0
        run.append(i)
        rows += len(s.offsets)
    return _put(found, run, _sound_tracks([stored[j] for j in run])) if run else found


def _put(found, at, values):
    for i, value in zip(at, values):
        found[i] = value
    return found


def _sound_tracks(stored):
    """The tracks of TRAMs of one key size (a list of Tracks each, or None where one of its
    tracks is at fault), every track at once: their blobs end to end. Tracks laid end to end
    (_end_to_end) are read whole; the others walked, all those still short of their last frame
    together, in steps of 1, 2, 4, ... keys (a handful of steps; the gap bytes read at most
    twice the keys there are, not F - 1 a track)."""
    key_size = stored[0].key_size
    stride = key_size + 1
    bases = np.cumsum([0] + [len(s.blob) for s in stored])
    blob = np.concatenate([s.blob for s in stored]) if len(stored) > 1 else stored[0].blob
    parts = np.array([len(s.offsets) for s in stored])
    offsets = np.concatenate([s.offsets for s in stored]) + np.repeat(bases[:-1], parts)
    ends = np.repeat(bases[1:], parts)                                    # each track's blob end
    last_frame = np.repeat([s.frames - 1 for s in stored], parts)
    tracks = len(offsets)
    reached, counts, bad = np.zeros(tracks, np.int32), np.ones(tracks, np.int64), np.zeros(tracks, bool)
    walking, width = np.flatnonzero(last_frame > 0), 1
    whole, taken, frames = _end_to_end(blob, offsets, ends, last_frame, walking, key_size)
    taken_keys = [(whole, counts[whole], taken, frames)]   # per step: the tracks walked, their keys
    counts[whole] += taken                                  # before it, the keys taken, their frames
    walking = np.setdiff1d(walking, whole, assume_unique=True)
    gap_at = (offsets[walking] + key_size).astype(np.int32)
    while len(walking):
        at = gap_at[:, None] + np.arange(0, stride * width, stride, dtype=np.int32)
        inside = at < ends[walking, None]
        gaps = blob[np.where(inside, at, 0)] * inside                     # past the raw data: 0, a fault
        now = reached[walking, None] + np.cumsum(gaps, axis=1, dtype=np.int32)
        stop = (gaps == 0) | (now >= last_frame[walking, None])
        ending = stop.any(axis=1)
        taken = np.where(ending, stop.argmax(axis=1) + 1, width)
        row = np.arange(len(walking))
        final = now[row, taken - 1]
        bad[walking[ending & ((gaps[row, taken - 1] == 0) | (final > last_frame[walking]))]] = True
        taken_keys.append((walking, counts[walking], taken, now[np.arange(width) < taken[:, None]]))
        reached[walking], counts[walking] = final, counts[walking] + taken
        walking, gap_at, width = walking[~ending], gap_at[~ending] + stride * width, 2 * width
    bad |= offsets + counts * stride - 1 > ends                           # its keys run past the raw data
    counts[bad] = 0
    firsts = np.cumsum(counts) - counts
    total = int(counts.sum())
    key_frames = np.zeros(total + 1, np.int64)        # each track's first key at frame 0; the last: where
    for walked, before, taken, frames in taken_keys:  # the keys of tracks at fault go
        place = np.repeat(firsts[walked] + before - (np.cumsum(taken) - taken), taken) + np.arange(len(frames))
        if bad[walked].any():
            place[np.repeat(bad[walked], taken)] = total
        key_frames[place] = frames
    del taken_keys
    key_frames = key_frames[:total]
    key_at = (np.repeat(offsets - stride * firsts, counts) + stride * np.arange(total)).astype(np.int32)
    keys = np.empty((total, key_size), np.uint8)
    for byte in range(key_size):
        keys[:, byte] = blob[key_at + byte]
    values = keys.view("<u2" if key_size == 6 else "<f4")
    bounds = np.append(firsts, total).tolist()
    rows = np.cumsum(np.append(0, parts)).tolist()
    bad_tram = np.logical_or.reduceat(bad, rows[:-1]).tolist()
    return [None if bad_tram[t] else
            Tracks(counts[rows[t]:rows[t + 1]], key_frames[bounds[rows[t]]:bounds[rows[t + 1]]],
                   values[bounds[rows[t]]:bounds[rows[t + 1]]])
            for t in range(len(stored))]


def _end_to_end(blob, offsets, ends, last_frame, walking, key_size):
    """The tracks of `walking` laid end to end, as files have them: keys filling the bytes up
    to the next track's start (or the blob's end), their gaps, none 0, summing to the last
    frame (what a walk would take, no key more or less). (Those tracks, how many keys each has
    after its first, those keys' frames.)"""
    stride = key_size + 1
    starts = np.sort(offsets)
    next_start = np.minimum(np.append(starts, len(blob))[np.searchsorted(starts, offsets[walking], side="right")],
                            ends[walking])
    length = next_start - offsets[walking] + 1
    taken = length // stride - 1                          # the gaps there are room for
    tried = (length % stride == 0) & (taken >= 1) & (taken <= last_frame[walking])
    tracks, taken = walking[tried], taken[tried]
    if not len(tracks):
        return tracks, taken, np.zeros(0, np.int64)
    first = np.cumsum(taken) - taken
    gaps = blob[np.repeat(offsets[tracks] + key_size - stride * first, taken) + stride * np.arange(taken.sum())]
    frames = np.cumsum(gaps, dtype=np.int64)
    frames -= np.repeat(frames[first] - gaps[first], taken)
    whole = (np.minimum.reduceat(gaps, first) > 0) & (frames[first + taken - 1] == last_frame[tracks])
    return tracks[whole], taken[whole], frames[np.repeat(whole, taken)]


def _track(blob, start, frames, key_size, path, where):
    stride = key_size + 1
    if start + key_size > len(blob):
        raise ObanError(path, f"{where}: its first key at byte {start} lies past the end of the raw data")
    reached = np.zeros(0, np.int64)
    if frames > 1:
        gaps = blob[start + key_size::stride][:frames - 1]
        reached = np.cumsum(gaps, dtype=np.int64)
        last = int(np.searchsorted(reached, frames - 1))   # the key that reaches F - 1
        zero = np.flatnonzero(gaps[:last + 1] == 0)
        if zero.size:
            raise ObanError(path, f"{where}: key {zero[0] + 1} has a gap of 0 frames")
        if last == len(gaps):
            raise ObanError(path, f"{where}: its gaps reach frame {reached[-1] if len(gaps) else 0} where the raw "
                                  f"data ends, not the last frame {frames - 1}")
        if reached[last] > frames - 1:
            raise ObanError(path, f"{where}: its gaps pass the last frame {frames - 1} (key {last + 1} at frame "
                                  f"{reached[last]})")
        reached = reached[:last + 1]
    count = len(reached) + 1
    if start + count * stride - 1 > len(blob):
        raise ObanError(path, f"{where}: its {count} keys at byte {start} run past the end of the raw data")
    keys = np.zeros((count, stride), np.uint8)
    keys.reshape(-1)[:-1] = blob[start:start + count * stride - 1]
    values = keys[:, :key_size].copy().view("<u2" if key_size == 6 else "<f4")
    return Track(frames=np.concatenate([[0], reached]).astype(np.int64), values=values)


def _all_finite(stored, tracks) -> bool:
    """Whether the heights, the velocities and the 16-byte keys of all of them are finite."""
    values = [s.arrays[name].ravel() for s in stored for name in ("heights", "velocities")]
    values += [t.values.ravel() for s, t in zip(stored, tracks) if s.key_size == 16]
    return bool(np.isfinite(np.concatenate(values)).all()) if values else True


def _check_finite(s, tracks):
    for name in ("heights", "velocities"):
        if not np.isfinite(s.arrays[name]).all():
            raise ObanError(s.c.path, f"{s.label}: non-finite value in its {name}")
    if s.key_size == 16:
        counts, _, values = flat_tracks(tracks)
        bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
        if len(bad):
            part = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
            raise ObanError(s.c.path, f"{s.label}: non-finite value in part {part}'s quaternion keys")


def _direct_name(c, index, value, n):
    target = c.link(value, TRAM_TAG, index, f"direct animation {n}")
    name = "" if target is None else c.full_name(target)
    return name[4:] if name.startswith("TRAM") else name
