"""The object setup array (OBOA, docs/objects.md 3): a level's placed objects as stored."""

import numpy as np

from ....core.errors import ObanError

OBOA_COUNT_OFFSET, OBOA_OBJECTS_OFFSET = 0x16, 0x18
MAX_SETUPS = 0xFFFF          # an OBOA counts its setups in 16 bits
OBJECT_DTYPE = np.dtype([   # docs/objects.md 3
    ("geometry", "<u4"), ("animation", "<u4"), ("particles", "<u4"), ("flags", "<u4"),
    ("door_gunk_id", "<i4"), ("door_id", "<i4"), ("physics", "<u4"), ("script_id", "<i4"),
    ("position", "<f4", 3), ("rotation", "<f4", 4), ("scale", "<f4"), ("origin", "<f4", 12),
    ("name", "S64"), ("padding", "V64"),
])
assert OBJECT_DTYPE.itemsize == 240


def parse_oboa(data: bytes, path: str, label: str) -> np.ndarray:
    """The OBJECT_DTYPE records of an OBOA instance's data, the count checked first."""
    if len(data) < OBOA_OBJECTS_OFFSET:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for an OBOA")
    count = int.from_bytes(data[OBOA_COUNT_OFFSET:OBOA_COUNT_OFFSET + 2], "little")
    room = (len(data) - OBOA_OBJECTS_OFFSET) // OBJECT_DTYPE.itemsize
    if count > room:
        raise ObanError(path, f"{label}: object count says {count} but only {room} fit in the instance")
    return np.frombuffer(data, OBJECT_DTYPE, count=count, offset=OBOA_OBJECTS_OFFSET)
