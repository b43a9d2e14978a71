"""Bytes for an Animation in each binary container (spec 7.1, 7.2)."""

import numpy as np

from .animation import KEY_DTYPE
from .binary import DESCRIPTOR_DTYPE, HEADER_DTYPE, OBAN_TAG, RECORD_DTYPE, SIGNATURE

PC_CHECKSUM = 0x0003BCDF33DC271F


def record_bytes(animation, instance_id=1, level_id=0):
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


def raw_file_bytes(animation):
    return record_bytes(animation)


def oni_file_bytes(animation):
    """An OniSplit-style VR32 .oni file holding one named OBAN."""
    name = b"OBAN" + animation.name.encode("latin-1") + b"\0"
    record = record_bytes(animation)
    name_offset = _align(64 + DESCRIPTOR_DTYPE.itemsize, 32)
    data_offset = _align(name_offset + len(name), 32)
    header = np.zeros(1, HEADER_DTYPE)
    header["checksum"], header["version"], header["signature"] = PC_CHECKSUM, b"23RV", SIGNATURE
    header["instance_count"] = 1
    header["data_offset"], header["data_size"] = data_offset, len(record)
    header["name_offset"], header["name_size"] = name_offset, len(name)
    descriptor = np.zeros(1, DESCRIPTOR_DTYPE)
    descriptor["tag"], descriptor["data_offset"], descriptor["data_size"] = OBAN_TAG, 8, len(record)
    out = bytearray(data_offset + len(record))
    out[:64 + DESCRIPTOR_DTYPE.itemsize] = header.tobytes() + descriptor.tobytes()
    out[name_offset:name_offset + len(name)] = name
    out[data_offset:] = record
    return bytes(out)


def _align(n, to):
    return (n + to - 1) // to * to
