"""One OBAN instance as stored (docs/formats.md, OBAN 1-2), independent of its container:
the flag table, the record's bytes, the checks, and the 3x4 stored matrix layout."""

import os
import re
import struct
from dataclasses import dataclass, field

import numpy as np

from ....core.errors import ObanError


@dataclass(frozen=True)
class Flag:
    bit: int
    name: str          # the engine's name: tables, messages
    xml: str           # OniSplit XML's name
    key: str           # custom property oban_<key>, panel property <key>
    label: str
    description: str


FLAGS = (
    Flag(0x01, "Loop", "NormalLoop", "loop", "Loop", "At the end, go back to frame 0"),
    Flag(0x02, "PingPong", "BackToBackLoop", "pingpong", "Ping-Pong",
         "At the end, play backwards; at 0, forwards again"),
    Flag(0x04, "RandomStart", "RandomStartFrame", "random_start", "Random Start", "Start at a random frame"),
    Flag(0x08, "AutoStart", "Autostart", "autostart", "Auto Start", "Starts by itself"),
    Flag(0x10, "Localized", "ZAxisUp", "localized", "Localized",
         "Door: turned a quarter about x, played relative to its placement"),
)
LOOP, PINGPONG, RANDOM_START, AUTOSTART, LOCALIZED = (flag.bit for flag in FLAGS)
KNOWN_FLAGS = LOOP | PINGPONG | RANDOM_START | AUTOSTART | LOCALIZED

KEY_DTYPE = np.dtype([
    ("rotation", "<f4", (4,)),   # x, y, z, w as stored (engine convention, docs/engine.md 1)
    ("position", "<f4", (3,)),
    ("frame", "<u4"),
])
assert KEY_DTYPE.itemsize == 32
RECORD_DTYPE = np.dtype([
    ("instance_id", "<u4"),
    ("level_id", "<u4"),
    ("padding", "V12"),
    ("flags", "<u4"),
    ("start_matrix", "<f4", (12,)),
    ("base_matrix", "<f4", (12,)),
    ("ticks_per_frame", "<u2"),
    ("frames", "<u2"),
    ("door_open_frame", "<u2"),
    ("key_count", "<u2"),
])
assert RECORD_DTYPE.itemsize == 8 + 0x78
RECORD_FIELDS = struct.Struct("<II12xI96x4H")  # RECORD_DTYPE's integers, read in one call
assert RECORD_FIELDS.size == RECORD_DTYPE.itemsize
MATRICES_OFFSET = RECORD_DTYPE.fields["start_matrix"][1]
MAX_COUNT = 0xFFFF        # frames and keys are u16
MAX_RECORD = RECORD_DTYPE.itemsize + MAX_COUNT * KEY_DTYPE.itemsize  # the longest OBAN record
SCREENED_FROM = 8        # check_all: fewer animations are check()ed one by one, quicker than a screening
SCREENED_AT_ONCE = 1024  # check_all: more are screened in groups of this many
RAW_NAME = re.compile(r"\d+-(.+)")  # the instance number OniSplit puts before the name


@dataclass
class Animation:
    name: str
    flags: int
    start_matrix: np.ndarray      # 12 float32, 3x4 by columns, as stored
    base_matrix: np.ndarray       # 12 float32, 3x4 by columns, as stored
    ticks_per_frame: int
    frames: int
    door_open_frame: int
    keys: np.ndarray              # KEY_DTYPE records, frames strictly increasing
    warnings: list = field(default_factory=list)
    record_header: tuple = (1, 0)  # instance id, file/level id: the 8 bytes before the data

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    def flag_text(self) -> str:
        """'Loop Localized', '-' for none, unknown bits in hex."""
        return flag_text(self.flags)


def flag_text(flags: int) -> str:
    words = [flag.name for flag in FLAGS if flags & flag.bit]
    if flags & ~KNOWN_FLAGS:
        words.append(f"0x{flags & ~KNOWN_FLAGS:x}")
    return " ".join(words) or "-"


def matrix_from_columns(stored) -> np.ndarray:
    """12 stored floats (3x4 by columns) -> 4x4 float64 affine matrix; (..., 12) -> (..., 4, 4)."""
    stored = np.asarray(stored, dtype=np.float64)
    m = np.zeros(stored.shape[:-1] + (4, 4))
    m[..., :3, :4] = np.swapaxes(stored.reshape(stored.shape[:-1] + (4, 3)), -1, -2)
    m[..., 3, 3] = 1.0
    return m


def stored_columns(matrix) -> np.ndarray:
    """A 4x4 (or 3x4) affine matrix -> its 12 stored float32 values (3x4 by columns)."""
    return np.asarray(matrix, np.float64)[:3, :4].T.astype(np.float32).ravel()


IDENTITY = stored_columns(np.eye(4))


def check(animation: Animation, path: str) -> None:
    """Raise ObanError for what the engine cannot play (docs/engine.md 2, docs/bad_input.md);
    warn about the rest."""
    keys, frames = animation.keys, animation.frames
    if frames == 0:
        raise ObanError(path, f"'{animation.name}': frame count is 0")
    if len(keys) == 0:
        raise ObanError(path, f"'{animation.name}': no keys")
    for label, values in (("start matrix", animation.start_matrix),
                          ("base matrix", animation.base_matrix)):
        if not np.isfinite(values).all():
            raise ObanError(path, f"'{animation.name}': non-finite value in the {label}")
    values = np.ascontiguousarray(keys).view("<f4").reshape(-1, 8)[:, :7]  # rotation, position
    finite = np.isfinite(values)
    if not finite.all():
        raise ObanError(path, f"'{animation.name}': non-finite value in key {int(np.argmin(finite.all(axis=1)))}")
    nonzero = values[:, :4].any(axis=1)
    if not nonzero.all():
        raise ObanError(path, f"'{animation.name}': key {int(np.argmin(nonzero))} has a zero quaternion")
    frame = keys["frame"]
    increasing = frame[1:] > frame[:-1]
    if not increasing.all():
        i = int(np.argmin(increasing)) + 1
        raise ObanError(path, f"'{animation.name}': key frames not increasing at key {i} "
                              f"(frame {frame[i]} after {frame[i - 1]})")
    _warn(animation, int(frame[0]), int(frame[-1]))


def check_all(animations: list[Animation], paths) -> list[ObanError | None]:
    """check() of every animation (`paths`: one path for all, or one each), screened
    together in one pass over all their keys; check() itself runs only on those the pass
    finds bad, for its message. Returns each one's ObanError, or None where it plays."""
    count = len(animations)
    paths = [paths] * count if isinstance(paths, str) else list(paths)
    if count < SCREENED_FROM:
        return [_refusal(animation, path) for animation, path in zip(animations, paths)]
    if count > SCREENED_AT_ONCE:   # the screening's arrays stay small beside what was read
        groups = [slice(start, start + SCREENED_AT_ONCE) for start in range(0, count, SCREENED_AT_ONCE)]
        return [error for group in groups for error in check_all(animations[group], paths[group])]
    key_counts = np.fromiter((len(a.keys) for a in animations), np.int64, count)
    frames = np.fromiter((a.frames for a in animations), np.int64, count)
    starts = np.cumsum(key_counts) - key_counts
    matrices = np.concatenate([np.array([a.start_matrix for a in animations], np.float32),
                               np.array([a.base_matrix for a in animations], np.float32)], axis=1)
    keys = all_keys(animations)
    bad = (frames == 0) | (key_counts == 0) | ~np.isfinite(matrices).all(axis=1)
    values = keys.view("<f4").reshape(-1, 8)   # rotation, position, and the frame's bits
    frame = keys["frame"].astype(np.int64)
    increasing = np.ones(len(keys), bool)
    increasing[1:] = frame[1:] > frame[:-1]
    increasing[starts[key_counts > 0]] = True    # an animation's first key follows none of its own
    # a key's sum is finite where all its values are, and its quaternion's squared length
    # zero where the quaternion is; in float32, a sum that overflows, squares that underflow
    # or a frame whose bits are no finite float only send the animation to check(), which decides
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        bad_key = (~np.isfinite(values @ np.ones(8, np.float32))
                   | (np.square(values[:, :4]) @ np.ones(4, np.float32) == 0.0) | ~increasing)
    bad[np.repeat(np.arange(count), key_counts)[bad_key]] = True
    errors = [None] * count
    for i in np.flatnonzero(bad).tolist():
        errors[i] = _refusal(animations[i], paths[i])
    good = np.flatnonzero(~bad)
    firsts, lasts = frame[starts[good]], frame[starts[good] + key_counts[good] - 1]
    flags = np.fromiter((a.flags for a in animations), np.int64, count)[good]
    warned = (firsts > 0) | (lasts != frames[good] - 1) | ((flags & ~KNOWN_FLAGS) != 0)
    for i, first, last in zip(good[warned].tolist(), firsts[warned].tolist(), lasts[warned].tolist()):
        _warn(animations[i], first, last)
    return errors


def all_keys(animations: list[Animation]) -> np.ndarray:
    """The keys of several animations, one after another, in one (read-only) array."""
    return np.frombuffer(b"".join([np.asarray(a.keys, KEY_DTYPE).tobytes() for a in animations]), KEY_DTYPE)


def _refusal(animation, path):
    try:
        check(animation, path)
    except ObanError as error:
        return error
    return None


def _warn(animation: Animation, first: int, last: int) -> None:
    """check()'s warnings, given the first and last key frames."""
    if first > 0:
        animation.warnings.append(f"first key is at frame {first}, not 0: frames before it hold it")
    if last != animation.frames - 1:
        animation.warnings.append(f"last key is at frame {last}, not {animation.frames - 1} (frame count - 1)")
    unknown = animation.flags & ~KNOWN_FLAGS
    if unknown:
        animation.warnings.append(f"unknown flag bits 0x{unknown:x} kept")


def parse_record(data: bytes, path: str, name: str, file_offset: int = 0, size: int | None = None) -> Animation:
    """One OBAN record (8-byte header + instance data) from `data` -> Animation, not yet
    check()ed (readers check a file's animations together).

    `file_offset` is where `data` starts in the file, for messages. With `size`, the
    length of the file `data` starts, bytes past the keys are reported as a warning.
    """
    label = f"'{name}'"
    if len(data) < RECORD_DTYPE.itemsize:
        raise ObanError(path, f"{label}: truncated at byte {file_offset + len(data)}: "
                              f"an OBAN record needs {RECORD_DTYPE.itemsize} bytes before its keys")
    instance_id, level_id, flags, ticks_per_frame, frames, door_open_frame, declared = \
        RECORD_FIELDS.unpack_from(data)
    room = (len(data) - RECORD_DTYPE.itemsize) // KEY_DTYPE.itemsize
    if declared > room:
        raise ObanError(path, f"{label}: key count says {declared} but only {room} fit "
                              f"(truncated at byte {file_offset + len(data)})")
    matrices = np.frombuffer(data, "<f4", count=24, offset=MATRICES_OFFSET)  # start, then base
    keys = np.empty(declared, KEY_DTYPE)   # filled as bytes: numpy copies a structured array field by field
    keys.view(np.uint8)[:] = np.frombuffer(data, np.uint8, count=keys.nbytes, offset=RECORD_DTYPE.itemsize)
    animation = Animation(
        name=name,
        flags=flags,
        start_matrix=matrices[:12].copy(),
        base_matrix=matrices[12:].copy(),
        ticks_per_frame=ticks_per_frame,
        frames=frames,
        door_open_frame=door_open_frame,
        keys=keys,
        record_header=(instance_id, level_id),
    )
    if size is not None:
        _note_extra_bytes(animation, size - RECORD_DTYPE.itemsize - declared * KEY_DTYPE.itemsize)
    return animation


def _note_extra_bytes(animation: Animation, extra: int) -> None:
    if extra:
        animation.warnings.append(f"{extra} bytes after the last key ignored")


def record_bytes(animation: Animation, instance_id: int = 1, level_id: int = 0) -> bytes:
    """The 8-byte record header, the instance data and the keys."""
    head = np.zeros(1, RECORD_DTYPE)
    head["instance_id"], head["level_id"] = instance_id, level_id
    head["flags"] = animation.flags
    head["start_matrix"] = animation.start_matrix
    head["base_matrix"] = animation.base_matrix
    head["ticks_per_frame"] = animation.ticks_per_frame
    head["frames"] = animation.frames
    head["door_open_frame"] = animation.door_open_frame
    head["key_count"] = len(animation.keys)
    return head.tobytes() + np.asarray(animation.keys, KEY_DTYPE).tobytes()


def raw_name(path: str) -> str:
    """'00134-Blackvan_FB.OBAN' -> 'Blackvan_FB'; 'door.oban' -> 'door'."""
    stem = os.path.splitext(os.path.basename(path))[0]
    match = RAW_NAME.fullmatch(stem)
    return match.group(1) if match else stem


def onisplit_name(path: str) -> str:
    """'OBANdoor.oni' or 'OBANdoor.xml' -> 'door': the file name, as OniSplit names the main instance."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[4:] if stem.startswith("OBAN") and len(stem) > 4 else stem


def read_raw(data: bytes, path: str, size: int) -> list[Animation]:
    """The one OBAN of a raw instance file (docs/formats.md, containers 1) of `size` bytes,
    from its first min(size, MAX_RECORD) bytes (all a record can use), unchecked."""
    if not data:
        raise ObanError(path, "empty file")
    return [parse_record(data, path, raw_name(path), size=size)]


def read_raw_many(heads: list[tuple[bytes, int]], paths: list[str]) -> list:
    """read_raw() of several raw instance files, given as (their first min(size,
    MAX_RECORD) bytes, size): each file's [Animation], or the ObanError that refuses it.
    The records that fit are parsed together: their headers in one array, their keys
    copied once (each animation's keys and matrices are views of those); read_raw() gives
    the others' messages."""
    out = [None] * len(heads)
    record = RECORD_DTYPE.itemsize
    lengths = np.fromiter((len(data) for data, _ in heads), np.int64, len(heads))
    long_enough = np.flatnonzero(lengths >= record)
    records = np.frombuffer(b"".join([heads[i][0][:record] for i in long_enough.tolist()]), RECORD_DTYPE)
    ends = record + KEY_DTYPE.itemsize * records["key_count"].astype(np.int64)   # of the keys
    fits = ends <= lengths[long_enough]
    fitting = np.zeros(len(heads), bool)
    fitting[long_enough[fits]] = True
    for index in np.flatnonzero(~fitting).tolist():
        try:
            out[index] = read_raw(heads[index][0], paths[index], heads[index][1])
        except ObanError as error:
            out[index] = error
    if not fits.any():
        return out
    records, ends, whole = records[fits], ends[fits].tolist(), np.flatnonzero(fitting).tolist()
    stops = np.cumsum(records["key_count"], dtype=np.int64).tolist()   # where each record's keys end in `keys`
    # one writable copy of every record's keys, bytes as bytes (numpy copies fields one by one)
    keys = np.frombuffer(bytearray().join([memoryview(heads[i][0])[record:end] for i, end in zip(whole, ends)]),
                         KEY_DTYPE)
    matrices = np.concatenate([records["start_matrix"], records["base_matrix"]], axis=1)   # start, then base
    for i, m, flags, ticks, frames, door, header, start, stop, end in zip(
            whole, matrices, records["flags"].tolist(), records["ticks_per_frame"].tolist(),
            records["frames"].tolist(), records["door_open_frame"].tolist(),
            zip(records["instance_id"].tolist(), records["level_id"].tolist()), [0] + stops, stops, ends):
        animation = Animation(raw_name(paths[i]), flags, m[:12], m[12:], ticks, frames, door, keys[start:stop], [],
                              header)
        _note_extra_bytes(animation, heads[i][1] - end)
        out[i] = [animation]
    return out
