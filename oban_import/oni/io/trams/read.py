"""Reading TRAMs from a container (a .oni's raw table or a level's .raw; docs/characters.md
2-3, 8): the record, its raw arrays and its rotation tracks, every count, offset and track
checked against the instance and the raw data before anything is allocated from it."""

from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ....core.runs import bounded_runs
from ..container.container import TRAM_TAG
from .tram import (ENGINE_ONLY_KEY_SIZES, EXTENT_DTYPE, KEY_SIZES, MAX_PARTS, PLAIN_FIELDS, RAW_ARRAYS, RECORD_DTYPE,
                   SCALAR_STRUCT, SCALARS, Track, Tracks, Tram)

# The lengths the import derives (docs/characters.md 8) keep their squares float32: a 16-byte key's
# squared length is at least the smallest normal float32 and, like the square of a height, of a
# frame's summed velocities and of a part's translations added up from the root, at most its largest.
MAX_SQUARE = float(np.finfo(np.float32).max)
MIN_KEY_SQUARE = float(np.finfo(np.float32).tiny)


def read_tram_instances(instances) -> list[Tram]:
    """The TRAM at each (container, index) (container.Container), every count, offset and track
    checked (docs/characters.md 2-3, 8; ObanError naming the file, the instance and the fault),
    in order, all of them together: their tracks
    decoded at once, their records and values looked at as one array each (numpy's cost per
    call paid once for the lot rather than once a TRAM)."""
    stored = [_stored(c, index) for c, index in instances]
    if not stored:
        return []
    tracks = _all_tracks(stored)
    if any(t is None for t in tracks) or not _all_sound(stored, tracks):
        for s, t in zip(stored, tracks):   # the first TRAM at fault says what it is
            t = t if t is not None else _walked_alone(s)
            _check_finite(s, t)
            check_motion(s.c.path, s.label, s.key_size, s.arrays["heights"], s.arrays["velocities"], t)
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
    c = s.c
    return Tram(
        name=c.short_name(s.index), frames=s.frames, key_size=s.key_size,
        heights=s.arrays.pop("heights"), velocities=s.arrays.pop("velocities"), tracks=tracks, **s.arrays,
        extent_info=extent_info, impact=impact, final_rotation=final_rotation, source=c.path,
        direct_animations=tuple(_direct_name(c, s.index, value, n) if value else ""
                                for n, value in enumerate(direct_animations)),
        **{key: s.fields[key] for key in PLAIN_FIELDS})


def _walked_alone(s):
    """A _Stored's Tracks walked one by one: the first one at fault raises, saying what it is."""
    return Tracks.joined([_track(s.blob, int(start), s.frames, s.key_size, s.c.path,
                                 f"{s.label}: part {part}'s track") for part, start in enumerate(s.offsets)],
                         s.key_size)


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


TRACK_CELLS = 1 << 21   # track-frames decoded together at most: what bounds a run's arrays


def _all_tracks(stored):
    """Each _Stored's Tracks, or None for one with a track at fault: by key size, shortest
    first, in runs of at most TRACK_CELLS track-frames (_run_tracks)."""
    order = sorted(range(len(stored)), key=lambda i: (stored[i].key_size, stored[i].frames))
    found = [None] * len(stored)
    cells = [len(stored[i].offsets) * stored[i].frames for i in order]
    for run in bounded_runs(cells, TRACK_CELLS, [stored[i].key_size for i in order]):
        for i, tracks in zip(order[run], _run_tracks([stored[i] for i in order[run]])):
            found[i] = tracks
    return found


@dataclass
class _Run:
    """The tracks of TRAMs of one key size, their rotation data end to end (docs/characters.md
    3): where each track starts, where its TRAM's data ends, the frame it must reach."""
    key_size: int
    blob: np.ndarray          # uint8: the TRAMs' rotation data (each from its offsets on), end to end
    parts: np.ndarray         # (n,) each TRAM's track count
    starts: np.ndarray        # (T,) int64: each track's first key in blob
    ends: np.ndarray          # (T,) int64: where its TRAM's data ends in blob
    last_frames: np.ndarray   # (T,) F - 1 of its TRAM

    @classmethod
    def of(cls, stored):
        bases = np.cumsum([0] + [len(s.blob) for s in stored])
        parts = np.array([len(s.offsets) for s in stored])
        return cls(key_size=stored[0].key_size,
                   blob=np.concatenate([s.blob for s in stored]) if len(stored) > 1 else stored[0].blob,
                   parts=parts, starts=np.concatenate([s.offsets for s in stored]) + np.repeat(bases[:-1], parts),
                   ends=np.repeat(bases[1:], parts), last_frames=np.repeat([s.frames - 1 for s in stored], parts))

    @property
    def stride(self) -> int:   # a key and the gap byte after it
        return self.key_size + 1


@dataclass
class _Found:
    """Keys a step of the walk found: `taken` more keys for each of `tracks`, which had
    `before` keys, at these frames (theirs end to end)."""
    tracks: np.ndarray
    before: np.ndarray
    taken: np.ndarray
    frames: np.ndarray


def _run_tracks(stored):
    """The Tracks of TRAMs of one key size (None for one with a track at fault), every track
    at once. A track must be (docs/characters.md 3) a key at its u16 offset from the start of
    the rotation data, then (u8 gap, key) pairs, no gap 0, the gaps summing to F - 1 within
    the raw data: what the engine's walk reads. Its steps: the tracks' keys found (_walk),
    their frames placed (_key_frames), their bytes gathered (_key_values)."""
    run = _Run.of(stored)
    counts, bad, found = _walk(run)
    firsts = np.cumsum(counts) - counts
    frames = _key_frames(counts, firsts, bad, found)
    del found
    values = _key_values(run, counts, firsts)
    first_key = np.append(firsts, len(frames)).tolist()          # each track's, then the end
    first_track = np.cumsum(np.append(0, run.parts)).tolist()    # each TRAM's, then the end
    at_fault = np.logical_or.reduceat(bad, first_track[:-1]).tolist()
    return [None if at_fault[t] else
            Tracks(counts[a:b], frames[first_key[a]:first_key[b]], values[first_key[a]:first_key[b]])
            for t, (a, b) in enumerate(zip(first_track, first_track[1:]))]


def _walk(run):
    """(each track's key count, 0 for one at fault; whether it is at fault; the keys found
    after each track's first, as _Found steps). The tracks laid end to end are read whole
    (_end_to_end); the others walked, all those short of their last frame at once
    (_walk_steps); a track whose keys run past its TRAM's data is at fault."""
    counts, bad = np.ones(len(run.starts), np.int64), np.zeros(len(run.starts), bool)
    walking = np.flatnonzero(run.last_frames > 0)
    whole = _end_to_end(run, walking)
    counts[whole.tracks] += whole.taken
    found = [whole] + _walk_steps(run, np.setdiff1d(walking, whole.tracks, assume_unique=True), counts, bad)
    bad |= run.starts + counts * run.stride - 1 > run.ends
    counts[bad] = 0
    return counts, bad, found


def _end_to_end(run, walking):
    """The tracks of `walking` laid end to end, as files lay them. A track (docs/characters.md
    3: at its u16 offset from the rotation data's start, a key then (u8 gap, key) pairs, no
    gap 0, the gaps summing to F - 1) whose keys fill the bytes up to the next track's start
    (or its TRAM's data's end) is read whole, its gaps checked as a walk checks them (no key
    more or less). A _Found of those tracks' keys after the first."""
    stride, starts = run.stride, run.starts[walking]
    following = np.sort(run.starts)
    next_start = np.minimum(np.append(following, len(run.blob))[np.searchsorted(following, starts, side="right")],
                            run.ends[walking])
    length = next_start - starts + 1                      # the track's bytes and a gap byte after them
    taken = length // stride - 1                          # the gaps there is room for
    tried = (length % stride == 0) & (taken >= 1) & (taken <= run.last_frames[walking])
    tracks, taken = walking[tried], taken[tried]
    if not len(tracks):
        return _Found(tracks, np.ones(0, np.int64), taken, np.zeros(0, np.int64))
    first = np.cumsum(taken) - taken
    gaps = run.blob[np.repeat(run.starts[tracks] + run.key_size - stride * first, taken)
                    + stride * np.arange(taken.sum())]
    frames = np.cumsum(gaps, dtype=np.int64)
    frames -= np.repeat(frames[first] - gaps[first], taken)
    whole = (np.minimum.reduceat(gaps, first) > 0) & (frames[first + taken - 1] == run.last_frames[tracks])
    return _Found(tracks[whole], np.ones(whole.sum(), np.int64), taken[whole], frames[np.repeat(whole, taken)])


def _walk_steps(run, walking, counts, bad):
    """The keys of the tracks of `walking` as the engine's walk finds them, every track short
    of its last frame taking its next 1, 2, 4, ... gaps in one step (every stride-th byte
    after a key, none past its TRAM's data: 0 there, a fault), whose running sum finds the
    key that reaches the last frame; a gap of 0, or gaps passing the last frame, put a track
    at fault (`bad`). Adds the keys to `counts`; the _Found of each step."""
    stride, found, width = run.stride, [], 1
    reached = np.zeros(len(run.starts), np.int32)
    gap_at = (run.starts[walking] + run.key_size).astype(np.int32)
    while len(walking):
        at = gap_at[:, None] + np.arange(0, stride * width, stride, dtype=np.int32)
        inside = at < run.ends[walking, None]
        gaps = run.blob[np.where(inside, at, 0)] * inside
        now = reached[walking, None] + np.cumsum(gaps, axis=1, dtype=np.int32)
        stop = (gaps == 0) | (now >= run.last_frames[walking, None])
        ending = stop.any(axis=1)
        taken = np.where(ending, stop.argmax(axis=1) + 1, width)
        row = np.arange(len(walking))
        final = now[row, taken - 1]
        bad[walking[ending & ((gaps[row, taken - 1] == 0) | (final > run.last_frames[walking]))]] = True
        found.append(_Found(walking, counts[walking], taken, now[np.arange(width) < taken[:, None]]))
        reached[walking], counts[walking] = final, counts[walking] + taken
        walking, gap_at, width = walking[~ending], gap_at[~ending] + stride * width, 2 * width
    return found


def _key_frames(counts, firsts, bad, found):
    """(K,) int64 every key's frame, track after track: each track's first at 0, the others
    as found (a track at fault has none)."""
    total = int(counts.sum())
    frames = np.zeros(total + 1, np.int64)   # the last: where the keys of tracks at fault go
    for step in found:
        place = (np.repeat(firsts[step.tracks] + step.before - (np.cumsum(step.taken) - step.taken), step.taken)
                 + np.arange(len(step.frames)))
        if bad[step.tracks].any():
            place[np.repeat(bad[step.tracks], step.taken)] = total
        frames[place] = step.frames
    return frames[:total]


def _key_values(run, counts, firsts):
    """(K, 3) uint16 or (K, 4) float32: every key as stored, track after track."""
    stride, total = run.stride, int(counts.sum())
    key_at = (np.repeat(run.starts - stride * firsts, counts) + stride * np.arange(total)).astype(np.int32)
    keys = np.empty((total, run.key_size), np.uint8)
    for byte in range(run.key_size):
        keys[:, byte] = run.blob[key_at + byte]
    return keys.view("<u2" if run.key_size == 6 else "<f4")


def _track(blob, start, frames, key_size, path, where):
    """One track walked key by key from byte `start` as the engine walks it (docs/characters.md
    3); ObanError naming `where` and what is at fault."""
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


def _all_sound(stored, tracks) -> bool:
    """Whether the heights, the velocities and the 16-byte keys of all of them are finite and
    what the import makes of them keeps to MAX_SQUARE (check_motion): each key's squared length,
    each height's square, and (a bound on every frame's summed velocities) the square of all
    the velocities' magnitudes added up."""
    heights = np.concatenate([s.arrays["heights"] for s in stored])
    velocities = np.concatenate([s.arrays["velocities"] for s in stored])
    keys = [t.values for s, t in zip(stored, tracks) if s.key_size == 16]
    keys = np.concatenate(keys) if keys else np.ones((0, 4), np.float32)
    if not (np.isfinite(heights).all() and np.isfinite(velocities).all() and np.isfinite(keys).all()):
        return False
    squares = np.square(keys, dtype=np.float64).sum(axis=1)
    return bool(((squares >= MIN_KEY_SQUARE) & (squares <= MAX_SQUARE)).all()
                and np.square(heights, dtype=np.float64).max() <= MAX_SQUARE
                and np.abs(velocities).sum(dtype=np.float64) ** 2 <= MAX_SQUARE)


def _check_finite(s, tracks):
    for name in ("heights", "velocities"):
        if not np.isfinite(s.arrays[name]).all():
            raise ObanError(s.c.path, f"{s.label}: non-finite value in its {name}")
    if s.key_size == 16:
        bad = np.flatnonzero(~np.isfinite(tracks.values).all(axis=1))
        if len(bad):
            part = int(np.searchsorted(np.cumsum(tracks.counts), bad[0], side="right"))
            raise ObanError(s.c.path, f"{s.label}: non-finite value in part {part}'s quaternion keys")


def check_motion(path, label, key_size, heights, velocities, tracks) -> None:
    """ObanError naming the part, key and frame, or the frame, where a TRAM's motion (its
    heights (F,), velocities (F, 2) and Tracks, all finite) holds a length the engine or
    Blender cannot square in float32 (docs/characters.md 8): a 16-byte key of length 0 (a
    zero quaternion: the engine's R(q) divides by its squared length on the key's frame) or
    whose square is not a normal float32; a height, or the summed velocities of a frame
    (poses.root_motion's location), whose square passes MAX_SQUARE."""
    if key_size == 16:
        squares = np.square(tracks.values, dtype=np.float64).sum(axis=1)
        bad = np.flatnonzero((squares < MIN_KEY_SQUARE) | (squares > MAX_SQUARE))
        if len(bad):
            key = int(bad[0])
            part = int(np.searchsorted(np.cumsum(tracks.counts), key, side="right"))
            what = "a zero quaternion" if squares[key] == 0 else \
                f"a quaternion of length {np.sqrt(squares[key]):.3g}, whose square leaves float32's range"
            raise ObanError(path, f"{label}: part {part}'s key {key - int(tracks.counts[:part].sum())} "
                                  f"(frame {tracks.frames[key]}) is {what}")
    high = np.flatnonzero(np.square(heights, dtype=np.float64) > MAX_SQUARE)
    if len(high):
        raise ObanError(path, f"{label}: its height at frame {high[0]} is {heights[high[0]]:.3g} units, a distance "
                              f"whose square leaves float32's range")
    squares = np.square(np.cumsum(velocities[:-1], axis=0, dtype=np.float64)).sum(axis=1)   # frames 1 .. F - 1
    far = np.flatnonzero(squares > MAX_SQUARE)
    if len(far):
        raise ObanError(path, f"{label}: its root motion at frame {far[0] + 1} (summed velocities) lies "
                              f"{np.sqrt(squares[far[0]]):.3g} units from its start, a distance whose square "
                              f"leaves float32's range")


def _direct_name(c, index, value, n):
    target = c.link(value, TRAM_TAG, index, f"direct animation {n}")
    return "" if target is None else c.short_name(target)
