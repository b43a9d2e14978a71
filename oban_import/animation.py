"""One OBAN instance as stored (spec sections 1-2), independent of its container."""

from dataclasses import dataclass, field

import numpy as np

from .errors import ObanError

LOOP = 0x01
PINGPONG = 0x02
RANDOM_START = 0x04
AUTOSTART = 0x08
LOCALIZED = 0x10
KNOWN_FLAGS = LOOP | PINGPONG | RANDOM_START | AUTOSTART | LOCALIZED

FLAG_NAMES = {  # engine names, used for properties and tables
    LOOP: "Loop",
    PINGPONG: "PingPong",
    RANDOM_START: "RandomStart",
    AUTOSTART: "AutoStart",
    LOCALIZED: "Localized",
}

KEY_DTYPE = np.dtype([
    ("rotation", "<f4", (4,)),   # x, y, z, w as stored (engine convention, spec 3)
    ("position", "<f4", (3,)),
    ("frame", "<u4"),
])
assert KEY_DTYPE.itemsize == 32


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

    def has(self, flag):
        return bool(self.flags & flag)

    def flag_text(self):
        """'Loop Localized', '-' for none, unknown bits in hex."""
        words = [text for bit, text in FLAG_NAMES.items() if self.flags & bit]
        unknown = self.flags & ~KNOWN_FLAGS
        if unknown:
            words.append(f"0x{unknown:x}")
        return " ".join(words) or "-"


def matrix_from_columns(stored):
    """12 stored floats (3x4 by columns) -> 4x4 float64 affine matrix."""
    m = np.eye(4)
    m[:3, :4] = np.asarray(stored, dtype=np.float64).reshape(4, 3).T
    return m


def check(animation, path):
    """Raise ObanError for what the engine cannot play (spec 4, 8); warn about the rest."""
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
    first, last = int(frame[0]), int(frame[-1])
    if first > 0:
        animation.warnings.append(f"first key is at frame {first}, not 0: frames before it hold it")
    if last != frames - 1:
        animation.warnings.append(f"last key is at frame {last}, not {frames - 1} (frame count - 1)")
    unknown = animation.flags & ~KNOWN_FLAGS
    if unknown:
        animation.warnings.append(f"unknown flag bits 0x{unknown:x} kept")


def signed32(value):
    """A u32 (flags, ids) -> the signed 32-bit int an IDProperty can hold, same bits."""
    return value - (1 << 32) if value >= 1 << 31 else value


def unsigned32(value):
    """The inverse of signed32."""
    return value & 0xFFFFFFFF


def properties(animation):
    """The custom properties that describe `animation` fully enough to write it back."""
    return {
        "oban_name": animation.name,
        "oban_flags": signed32(animation.flags),
        "oban_loop": animation.has(LOOP),
        "oban_pingpong": animation.has(PINGPONG),
        "oban_random_start": animation.has(RANDOM_START),
        "oban_autostart": animation.has(AUTOSTART),
        "oban_localized": animation.has(LOCALIZED),
        "oban_frames": animation.frames,
        "oban_ticks_per_frame": animation.ticks_per_frame,
        "oban_door_open_frame": animation.door_open_frame,
        "oban_start_matrix": animation.start_matrix.tolist(),
        "oban_base_matrix": animation.base_matrix.tolist(),
    }


def stored_data(animation):
    """With properties(), enough to write the instance back bit for bit (kept on the action)."""
    return {
        "oban_record_header": [signed32(v) for v in animation.record_header],
        "oban_keys": keys_property(animation.keys),
    }


def keys_property(keys):
    """Keys as a flat float64 array, 8 per key (rotation, position, frame), exact; an
    IDProperty takes it as a double array without a Python float per value."""
    flat = np.ascontiguousarray(keys).view("<f4").reshape(-1, 8).astype(np.float64)
    flat[:, 7] = keys["frame"]
    return flat.ravel()


def keys_from_property(values):
    flat = np.asarray(values, np.float64).reshape(-1, 8)
    keys = np.zeros(len(flat), KEY_DTYPE)
    keys["rotation"], keys["position"], keys["frame"] = flat[:, :4], flat[:, 4:7], flat[:, 7]
    return keys
