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
    finite = np.isfinite(keys["rotation"]).all(axis=1) & np.isfinite(keys["position"]).all(axis=1)
    if not finite.all():
        raise ObanError(path, f"'{animation.name}': non-finite value in key {int(np.argmin(finite))}")
    zero = ~keys["rotation"].any(axis=1)
    if zero.any():
        raise ObanError(path, f"'{animation.name}': key {int(np.argmax(zero))} has a zero quaternion")
    steps = np.diff(keys["frame"].astype(np.int64))
    if (steps <= 0).any():
        i = int(np.argmax(steps <= 0)) + 1
        raise ObanError(path, f"'{animation.name}': key frames not increasing at key {i} "
                              f"(frame {keys['frame'][i]} after {keys['frame'][i - 1]})")
    first, last = int(keys["frame"][0]), int(keys["frame"][-1])
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
        "oban_start_matrix": [float(v) for v in animation.start_matrix],
        "oban_base_matrix": [float(v) for v in animation.base_matrix],
    }


def stored_data(animation):
    """With properties(), enough to write the instance back bit for bit (kept on the action)."""
    return {
        "oban_record_header": [signed32(v) for v in animation.record_header],
        "oban_keys": keys_property(animation.keys),
    }


def keys_property(keys):
    """Keys as a flat list of floats, 8 per key (rotation, position, frame), exact."""
    flat = np.empty((len(keys), 8))
    flat[:, :4], flat[:, 4:7], flat[:, 7] = keys["rotation"], keys["position"], keys["frame"]
    return flat.ravel().tolist()


def keys_from_property(values):
    flat = np.asarray(values, np.float64).reshape(-1, 8)
    keys = np.zeros(len(flat), KEY_DTYPE)
    keys["rotation"], keys["position"], keys["frame"] = flat[:, :4], flat[:, 4:7], flat[:, 7]
    return keys
