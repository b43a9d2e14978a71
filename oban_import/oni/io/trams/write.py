"""A Tram back to bytes (docs/characters.md 6): its 0x180-byte record with the raw arrays laid
out as OniSplit lays them out, and a VR32 .oni (container/instance_file.py), so that an unedited
read -> write gives the bytes OniSplit wrote. Counts, track offsets and raw pointers
are computed from the arrays, so an edited Tram is written consistently; a Tram that cannot be
stored (a count past its field, a track that misses the last frame, ...) is a ValueError.
"""

import numpy as np

from ..container.container import LINK_FLAG, TRAM_TAG
from ..container.instance_file import instance_file_bytes, instance_name
from .tram import (ENGINE_ONLY_KEY_SIZES, EXTENT_DTYPE, KEY_SIZES, MAX_PARTS, PLAIN_FIELDS, RAW_ALIGN, RAW_ARRAYS,
                   RECORD_DTYPE, Tracks, Tram)

U8_COUNTS = {"attacks": "attack_count", "self_damage": "self_damage_count", "motion_blur": "motion_blur_count",
             "shortcuts": "shortcut_count", "footsteps": "footstep_count", "particles": "particle_count"}


def tram_oni_bytes(tram: Tram) -> bytes:
    """A VR32 .oni holding the TRAM (descriptor 0) and a placeholder for each direct animation,
    as OniSplit writes one; a name no such file can hold is an ObanError (instance_name)."""
    full = instance_name("TRAM", tram.name)
    instances, links = [(TRAM_TAG, full, None)], []
    for name in tram.direct_animations:
        if name:
            instances.append((TRAM_TAG, instance_name("TRAM", name), None))
        links.append(((len(instances) - 1) << 8 | LINK_FLAG) if name else 0)
    raw = bytearray(RAW_ALIGN)
    instances[0] = (TRAM_TAG, full, tram_instance_bytes(tram, raw, links))
    return instance_file_bytes(instances, raw)


def tram_instance_bytes(tram: Tram, raw: bytearray, direct_links=(0, 0)) -> bytes:
    """The TRAM's 0x180 bytes of instance data; its raw arrays are appended to `raw` (each at a
    32-byte boundary, in OniSplit's order: the pointers' order, then the extents) and the
    pointers point into it. `direct_links` are the link values of the two direct animations."""
    frames, key_size = checked(tram)
    record = np.zeros((), RECORD_DTYPE)
    for name, dtype, _ in RAW_ARRAYS:
        data = rotation_bytes(tram.tracks, key_size) if name == "rotations" else _array_bytes(tram, name, dtype)
        record[name + "_at"] = _append(raw, data)
    record["extents_at"] = _append(raw, _array_bytes(tram, "extents", EXTENT_DTYPE))
    for key in PLAIN_FIELDS:
        record[key] = getattr(tram, key)
    record["final_rotation"] = tram.final_rotation
    record["impact"] = np.void(bytes(tram.impact).ljust(16, b"\0"))
    record["direct_animations"] = direct_links
    record["extent_info"] = tram.extent_info
    record["extent_count"], record["sound_count"] = len(tram.extents), len(tram.sounds)
    for name, count in U8_COUNTS.items():
        record[count] = len(getattr(tram, name))
    record["key_size"], record["parts"], record["frames"] = key_size, len(tram.tracks), frames
    return record.tobytes()


def rotation_bytes(tracks: Tracks, key_size: int) -> bytes:
    """The rotation data (docs/characters.md 3): a u16 offset per part, then the tracks in part
    order, each key followed by its gap to the next (none after the last)."""
    stride = key_size + 1
    sizes = tracks.counts * stride - 1
    offsets = 2 * len(sizes) + np.cumsum(sizes) - sizes
    if offsets[-1] > 0xFFFF:
        raise ValueError(f"track {len(sizes) - 1} would start at byte {offsets[-1]} of the rotation data, "
                         "past what a u16 offset reaches")
    keys = np.zeros((len(tracks.frames), stride), np.uint8)
    values = np.ascontiguousarray(tracks.values, "<u2" if key_size == 6 else "<f4")
    keys[:, :key_size] = values.reshape(len(keys), -1).view(np.uint8)
    keys[:-1, key_size] = np.diff(tracks.frames) & 0xFF   # after a track's last key: dropped below
    lasts = np.cumsum(tracks.counts) - 1
    return offsets.astype("<u2").tobytes() + np.delete(keys.reshape(-1), lasts * stride + key_size).tobytes()


def checked(tram):
    """(frames, key size) of a Tram that can be stored; ValueError saying why not."""
    frames, key_size = int(tram.frames), int(tram.key_size)
    if not 1 <= frames <= 0xFFFF:
        raise ValueError(f"TRAM{tram.name}: {frames} frames (1 to 65535 can be stored)")
    if key_size not in KEY_SIZES:
        why = "not supported" if key_size in ENGINE_ONLY_KEY_SIZES else "not one the engine reads"
        raise ValueError(f"TRAM{tram.name}: key size {key_size} is {why} (6 or 16)")
    if not 1 <= len(tram.tracks) <= MAX_PARTS:
        raise ValueError(f"TRAM{tram.name}: {len(tram.tracks)} tracks (1 to {MAX_PARTS} parts)")
    for name, expected in (("heights", (frames,)), ("velocities", (frames, 2))):
        if np.shape(getattr(tram, name)) != expected:
            raise ValueError(f"TRAM{tram.name}: {name} of shape {np.shape(getattr(tram, name))}, not {expected}")
    if len(tram.positions) not in (0, frames):
        raise ValueError(f"TRAM{tram.name}: {len(tram.positions)} position points for {frames} frames")
    if len(tram.throw) > 1:
        raise ValueError(f"TRAM{tram.name}: {len(tram.throw)} throws (one or none)")
    for name in U8_COUNTS:
        if len(getattr(tram, name)) > 0xFF:
            raise ValueError(f"TRAM{tram.name}: {len(getattr(tram, name))} {name} (at most 255)")
    for part, track in enumerate(tram.tracks):
        _check_track(track, frames, key_size, f"TRAM{tram.name}: part {part}'s track")
    return frames, key_size


def _check_track(track, frames, key_size, where):
    keys = np.asarray(track.frames, np.int64)
    gaps = np.diff(keys)
    if len(keys) == 0 or keys[0] != 0 or keys[-1] != frames - 1:
        raise ValueError(f"{where}: keys must run from frame 0 to the last frame {frames - 1}")
    if gaps.size and (gaps.min() < 1 or gaps.max() > 0xFF):
        raise ValueError(f"{where}: gaps between keys must be 1 to 255 frames")
    if np.shape(track.values) != (len(keys), 3 if key_size == 6 else 4):
        raise ValueError(f"{where}: values of shape {np.shape(track.values)} for {len(keys)} {key_size}-byte keys")


def _array_bytes(tram, name, dtype):
    return np.ascontiguousarray(getattr(tram, name), dtype.base if dtype.shape else dtype).tobytes()


def _append(raw, data):
    """Appends `data` to `raw` at a 32-byte boundary; its offset, or 0 (absent) for no data."""
    if not data:
        return 0
    raw += bytes(-len(raw) % RAW_ALIGN)
    at = len(raw)
    raw += data
    return at
