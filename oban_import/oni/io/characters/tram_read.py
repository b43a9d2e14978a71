"""Reading TRAMs from a container (a .oni's raw table or a level's .raw; docs/characters.md
2-3, 8): the record, its raw arrays and its rotation tracks, every count, offset and track
checked against the instance and the raw data before anything is allocated from it."""

from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ..container.container import TRAM_TAG
from .tram import (ENGINE_ONLY_KEY_SIZES, EXTENT_DTYPE, KEY_SIZES, MAX_PARTS, PLAIN_FIELDS, RAW_ARRAYS, RECORD_DTYPE,
                   SCALAR_STRUCT, SCALARS, Track, Tracks, Tram, flat_tracks)


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
