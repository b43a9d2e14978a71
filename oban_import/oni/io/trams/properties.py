"""A TRAM's description on a Blender action (docs/characters.md, "In Blender"): every stored
field, losslessly, as custom properties and pose markers, and back. Plain mappings and
(name, frame) pairs in and out, so no bpy here.

- Pose markers, one per timed event, the export's source for them: `footstep: Left` on its
  frame; `sound: <name>` on its frame; `particle: <name>, <part>, to <last frame>` on its
  first frame (with `, pad <n>` where the stored pad is not 0).
- Custom properties `tram_<field>` for everything else: the header's fields, the other raw
  arrays (lists of dicts, one a record; u32 fields as the int32 of the same bits), and the
  motion as read (the tracks, heights and velocities), so that an unedited animation is
  written back bit for bit. Each non-empty array's bytes as read stay beside it (`tram_<name>_bytes`):
  where its dicts still say the same values (a NaN the same as any NaN), the bytes are
  written, so a float's NaN payload or a pad's garbage survives; an edited one is rebuilt.
  The same for the events: where the markers are still those the bytes as read give, the
  bytes are written (a name's bytes after its end, or past what a marker holds, survive).
"""

import functools
import math
import operator
import re
import struct
import types

import numpy as np

from ....core.id_properties import signed32, unsigned32
from .tram import (ATTACK_DTYPE, EXTENT_DTYPE, EXTENT_INFO_DTYPE, FOOTSTEP_DTYPE, MOTION_BLUR_DTYPE, PARTICLE_DTYPE,
                   PLAIN_FIELDS, POSITION_DTYPE, SELF_DAMAGE_DTYPE, SHORTCUT_DTYPE, SOUND_DTYPE, THROW_DTYPE, Tracks,
                   Tram)

PREFIX = "tram_"
NAME = PREFIX + "name"
MASKS = ("flags", "used_parts", "replaced_parts")        # u32: kept as the int32 of the same bits
PLAIN_KEYS = tuple(PREFIX + key for key in PLAIN_FIELDS)
MASK_KEYS = tuple(PREFIX + key for key in MASKS)
RECORDS = {"attacks": ATTACK_DTYPE, "self_damage": SELF_DAMAGE_DTYPE, "motion_blur": MOTION_BLUR_DTYPE,
           "shortcuts": SHORTCUT_DTYPE, "throw": THROW_DTYPE, "extents": EXTENT_DTYPE}
FOOTSTEP_TYPES = {0: "None", 1: "Left", 2: "Right", 3: "Both"}
FOOTSTEP, SOUND, PARTICLE = "footstep", "sound", "particle"
EVENTS = ("footsteps", "sounds", "particles")   # the arrays markers hold, in the order _events gives them
EVENT_DTYPES = dict(zip(EVENTS, (FOOTSTEP_DTYPE, SOUND_DTYPE, PARTICLE_DTYPE)))   # each as stored
BYTES_KEPT = (*RECORDS, *EVENTS, "extent_info")  # the arrays whose bytes as read are kept beside them
MARKER_BYTES = 63                                # a pose marker's name: char[64], NUL included
PARTICLE_TEXT = re.compile(r"(?P<name>.*), (?P<part>[^,]+), to (?P<last>\d+)(?:, pad (?P<pad>\d+))?")


def tram_properties(tram: Tram) -> dict:
    """The custom properties of a TRAM's action: every field but the timed events."""
    described = dict(zip(PLAIN_KEYS, map(int, _plain_fields(tram))))
    for key in MASK_KEYS:
        described[key] = signed32(described[key])
    described |= {NAME: tram.name, PREFIX + "frames": tram.frames, PREFIX + "key_size": tram.key_size,
                  PREFIX + "final_rotation": float(tram.final_rotation),
                  PREFIX + "direct_animations": list(tram.direct_animations),
                  PREFIX + "impact": tram.impact_name, PREFIX + "extent_info": _records(tram.extent_info),
                  PREFIX + "positions": np.asarray(tram.positions).view("<i2").astype(np.int32)}
    if bytes(tram.impact) != tram.impact_name.encode("latin-1").ljust(16, b"\0"):
        described[PREFIX + "impact_bytes"] = bytes(tram.impact)
    for name in RECORDS:
        described[PREFIX + name] = _records(getattr(tram, name))
    for name in BYTES_KEPT:   # an empty array's bytes say nothing more than its dicts
        array = getattr(tram, name)
        if array.size:
            described[PREFIX + name + "_bytes"] = array.tobytes()
    return described | _motion(tram)


def tram_markers(tram, part_names: list) -> list[tuple[str, int]]:
    """(marker name, frame) of every timed event: footsteps, sounds, particles (names cut to
    what a Blender marker holds, MARKER_BYTES of UTF-8, as Blender would cut them)."""
    markers = [(f"{FOOTSTEP}: {FOOTSTEP_TYPES.get(int(f['type']), int(f['type']))}", int(f["frame"]))
               for f in tram.footsteps]
    markers += [(f"{SOUND}: {_text(s['name'])}", int(s["frame"])) for s in tram.sounds]
    for p in tram.particles:
        part = int(p["part"])
        text = f"{PARTICLE}: {_text(p['name'])}, {part_names[part] if part < len(part_names) else part}, " \
               f"to {int(p['last_frame'])}"
        markers.append((text + (f", pad {int(p['pad'])}" if p["pad"] else ""), int(p["first_frame"])))
    return [(_marker_name(text), frame) for text, frame in markers]


def tram_from_properties(described, markers, part_names: list, tracks=None, heights=None, velocities=None) -> Tram:
    """The Tram that tram_properties and tram_markers describe (`described` a mapping,
    `markers` (name, frame) pairs in any order); the motion as read unless `tracks`,
    `heights` and `velocities` are given. ValueError naming what does not parse."""
    get = described.__getitem__
    tram = Tram(name=get(NAME), frames=int(get(PREFIX + "frames")), key_size=int(get(PREFIX + "key_size")),
                flags=0, used_parts=0, replaced_parts=0,
                heights=np.array(get(PREFIX + "heights") if heights is None else heights, np.float32),
                velocities=np.array(get(PREFIX + "velocities") if velocities is None else velocities,
                                    np.float32).reshape(-1, 2),
                tracks=_tracks(described) if tracks is None else tracks)
    for field, key in zip(PLAIN_FIELDS, PLAIN_KEYS):
        setattr(tram, field, unsigned32(get(key)) if key in MASK_KEYS else int(get(key)))
    tram.final_rotation = np.float32(get(PREFIX + "final_rotation"))
    tram.direct_animations = tuple(str(name) for name in get(PREFIX + "direct_animations"))
    tram.impact = bytes(described.get(PREFIX + "impact_bytes") or _fixed(get(PREFIX + "impact"), 16))
    tram.extent_info = _as_read(described, "extent_info", [get(PREFIX + "extent_info")], EXTENT_INFO_DTYPE)[0].copy()
    tram.positions = np.array(get(PREFIX + "positions"), "<i2").view(POSITION_DTYPE).copy()
    for name, dtype in RECORDS.items():
        setattr(tram, name, _as_read(described, name, get(PREFIX + name), dtype))
    events = _events(markers, part_names)
    for name, array in zip(EVENTS, _events_as_read(described, events, part_names)):
        setattr(tram, name, array)
    return tram


def _motion(tram):
    """The motion as read: the tracks flat (frames, values, each part's key count), heights,
    velocities (numpy arrays: Blender keeps them as arrays without a list in between)."""
    tracks = tram.tracks
    return {PREFIX + "key_counts": tracks.counts.astype(np.int32),
            PREFIX + "key_frames": tracks.frames.astype(np.int32),
            PREFIX + "key_values": tracks.values.astype(np.float64).ravel(),
            PREFIX + "heights": np.asarray(tram.heights, np.float64),
            PREFIX + "velocities": np.asarray(tram.velocities, np.float64).ravel()}


def _tracks(described):
    """The Tracks of _motion's key counts, frames and values."""
    width, dtype = (3, np.uint16) if int(described[PREFIX + "key_size"]) == 6 else (4, np.float32)
    counts = np.array(described[PREFIX + "key_counts"], np.int64)
    frames = np.array(described[PREFIX + "key_frames"], np.int64)
    values = np.array(described[PREFIX + "key_values"], np.float64).reshape(-1, width).astype(dtype)
    if counts.sum() != len(frames) or len(frames) != len(values):
        raise ValueError(f"{PREFIX}key_counts sum to {counts.sum()} for {len(frames)} key frames and "
                         f"{len(values)} key values")
    return Tracks(counts, frames, values)


def _events(markers, part_names):
    """footsteps, sounds and particles (structured arrays, in the markers' order) from markers."""
    footsteps, sounds, particles = [], [], []
    names = {FOOTSTEP: footsteps, SOUND: sounds, PARTICLE: particles}
    types = {text: code for code, text in FOOTSTEP_TYPES.items()}
    for text, frame in markers:   # in their order: an unedited import's are the file's
        kind, colon, rest = text.partition(": ")
        if kind not in names or not colon:
            continue   # a marker of the user's own
        if kind == FOOTSTEP:
            footsteps.append((frame, types[rest] if rest in types else _number(rest, text)))
        elif kind == SOUND:
            sounds.append((_fixed(rest, 32), frame))
        else:
            match = PARTICLE_TEXT.fullmatch(rest)
            if match is None:
                raise ValueError(f"marker {text!r}: not 'particle: <name>, <part>, to <last frame>'")
            part = match["part"]
            index = part_names.index(part) if part in part_names else _number(part, text)
            particles.append((frame, int(match["last"]), index, int(match["pad"] or 0), _fixed(match["name"], 16)))
    return (np.array(footsteps, FOOTSTEP_DTYPE), np.array(sounds, SOUND_DTYPE), np.array(particles, PARTICLE_DTYPE))


def markers_as_read(described, part_names) -> list:
    """The (marker name, frame) of the events as read (their bytes kept in `described`); an
    event array whose bytes are not whole records gives none."""
    stored = {name: np.zeros(0, EVENT_DTYPES[name]) if array is None else array
              for name, array in _stored_events(described).items()}
    return tram_markers(types.SimpleNamespace(**stored), part_names)


def _stored_events(described) -> dict:
    """{event kind: its array as read (the bytes kept), or None where they are not whole records}."""
    found = {}
    for name, dtype in EVENT_DTYPES.items():
        data = bytes(described.get(PREFIX + name + "_bytes", b""))
        found[name] = np.frombuffer(data, dtype).copy() if len(data) % dtype.itemsize == 0 else None
    return found


def _events_as_read(described, events, part_names):
    """Each event array as read where the markers are still those its bytes give, else as the
    markers say."""
    stored = _stored_events(described)
    if any(array is None for array in stored.values()):
        return events
    read = list(stored.values())
    expected = _events(tram_markers(types.SimpleNamespace(**stored), part_names), part_names)
    return [as_read if np.array_equal(e.view(np.uint8), got.view(np.uint8)) else got
            for as_read, e, got in zip(read, expected, events)]


def _as_read(described, name, records, dtype) -> np.ndarray:
    """The array the dicts describe: as read (its bytes) where they still say the same values."""
    rebuilt = _array(records, dtype)
    raw = described.get(PREFIX + name + "_bytes")
    if raw is not None and len(bytes(raw)) == rebuilt.nbytes:
        read = np.frombuffer(bytes(raw), dtype).copy()
        if _same_values(read, rebuilt):
            return read
    return rebuilt


def _same_values(a, b) -> bool:
    """Field by field equal, a NaN equal to any NaN."""
    for name in a.dtype.names:
        x, y = a[name], b[name]
        if a.dtype[name].names:
            if not _same_values(x, y):
                return False
        elif not (np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)):
            return False
    return True


_plain_fields = operator.attrgetter(*PLAIN_FIELDS)


def _records(array):
    """Numpy records (an array of them, or a 0-d one: a dict) -> dicts of plain values (sub-records
    nested, sub-arrays as lists; u32 as the int32 of the same bits, which an IDProperty holds)."""
    array = np.asarray(array)
    if not array.size:
        return []   # most arrays of most TRAMs: nothing to unpack
    layout, named = _unpacker(array.dtype)
    rows = [named(values) for values in layout.iter_unpack(array.tobytes())]
    return rows[0] if array.ndim == 0 else rows


@functools.cache
def _unpacker(dtype):
    """A record's struct (its values end to end, a u32 as the int32 of the same bits) and _namer:
    one unpack of its bytes takes a fraction of numpy's tolist (whose sub-arrays are arrays)."""
    layout = struct.Struct("<" + "".join(_formats(dtype)))
    assert layout.size == dtype.itemsize, dtype   # packed records of numbers
    return layout, _namer(dtype)


def _formats(dtype):
    """Each value's struct format, sub-records' and sub-arrays' end to end."""
    for name in dtype.names:
        kind = dtype[name]
        if kind.names:
            yield from _formats(kind)
        else:
            yield ("i" if kind.base.char == "I" else kind.base.char) * _count(kind)


def _count(kind) -> int:
    """How many values a field holds end to end."""
    return sum(_count(kind[name]) for name in kind.names) if kind.names else math.prod(kind.shape)


@functools.cache
def _namer(dtype):
    """A record's values (flat, as _unpacker's struct gives them) -> its dict: a sub-record's a
    dict too, a sub-array's a list."""
    names = dtype.names
    records = [(name, _namer(dtype[name])) for name in names if dtype[name].names]
    arrays = [name for name in names if dtype[name].shape]
    at, end = [], 0
    for name in names:
        count = _count(dtype[name])
        at.append(slice(end, end + count) if dtype[name].names or dtype[name].shape else end)
        end += count
    pick = operator.itemgetter(*at) if len(at) > 1 else lambda values: (values[at[0]],)

    def named(values):
        record = dict(zip(names, pick(values)))
        for name, inner in records:
            record[name] = inner(record[name])
        for name in arrays:
            record[name] = list(record[name])
        return record
    return named


def _array(records, dtype) -> np.ndarray:
    """Dicts (as _record makes them, or an IDProperty group's) -> a structured array."""
    out = np.zeros(len(records), dtype)
    for row, record in zip(out, records):
        _fill(row, record)
    return out


def _fill(row, record):
    for name in row.dtype.names:
        value = record[name]
        kind = row.dtype[name]
        if kind.names:
            _fill(row[name], value)
            continue
        value = np.asarray(value.to_list() if hasattr(value, "to_list") else value)
        if kind.base.kind == "u":
            value = value.astype(np.int64) & ((1 << (8 * kind.base.itemsize)) - 1)
        row[name] = value


def _text(raw) -> str:
    return bytes(raw).split(b"\0", 1)[0].decode("latin-1")


def _fixed(text, size) -> bytes:
    """A name as a char[size] field: latin-1, cut to fit."""
    return str(text).encode("latin-1", "replace")[:size].ljust(size, b"\0")


def _marker_name(text) -> str:
    """`text` as a Blender marker keeps it: control characters as '?', at most MARKER_BYTES of
    UTF-8, cut on a character."""
    text = re.sub(r"[\x00-\x1f\x7f]", "?", text)
    while len(text.encode("utf-8")) > MARKER_BYTES:
        text = text[:-1]
    return text


def _number(text, marker) -> int:
    if not text.isdigit():
        raise ValueError(f"marker {marker!r}: {text!r} is neither a known name nor a number")
    return int(text)
