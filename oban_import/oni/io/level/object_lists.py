"""The object lists (BINACJBO, docs/level.md 1): a BINA's raw list checked, its objects
walked once by their sizes, their common fields gathered with numpy, and the DOOR and FURN
objects read whole. Classes and textures are found by read.py; here they are names."""

import numpy as np

from ....core.errors import ObanError
from ..container.container import BINA_TAG, Container
from .arrays import first_bad, text
from .model import EVENT_TYPES, Door, DoorEvent, Furniture, ObjectList

LIST_PREFIX = "BINACJBO"   # the full name of an object list's BINA: this and its type ('Door', 'Patrol_Path')
LIST_MAGIC, LIST_VERSION, LIST_HEADER = b"CJBO", 39, 12
KNOWN_TYPES = ("CHAR", "CMBT", "CONS", "DOOR", "FLAG", "FURN", "MELE", "NEUT", "PART", "PATR", "PWRU", "SNDG",
               "TRGV", "TRIG", "TURR", "WEAP")
# Offsets from an object's first byte (past its size n).
HEADER_DTYPE = np.dtype([("type", "V4"), ("id", "<u4"), ("flags", "<u4"), ("position", "<f4", 3),
                         ("rotation", "<f4", 3)])
DOOR_DTYPE = np.dtype({"names": ["class_name", "door_id", "key_id", "door_flags", "frame_position", "radius_squared",
                                 "texture1", "texture2", "event_count"],
                       "formats": ["S63", "<u2", "<u2", "<u2", ("<f4", 3), "<f4", "S63", "S63", "<u2"],
                       "offsets": [0x24, 0x63, 0x65, 0x67, 0x69, 0x75, 0x79, 0xB8, 0xF7], "itemsize": 0xF9})
FURN_DTYPE = np.dtype({"names": ["class_name", "particle"], "formats": ["S32", "S48"], "offsets": [0x24, 0x44],
                       "itemsize": 0x74})
SCRIPT_EVENT, SCRIPT_LENGTH = 1, 32
assert HEADER_DTYPE.itemsize == 0x24


def is_object_list(c: Container, index: int) -> bool:
    return c.tag_of(index) == BINA_TAG and c.full_name(index).startswith(LIST_PREFIX)


def read_object_list(c: Container, index: int) -> tuple[ObjectList, list]:
    """(the list of the BINA at descriptor `index`, its warnings); ObanError on a fault."""
    data, _ = c.instance(index, BINA_TAG)
    label = c.label(index)
    if len(data) < 8:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for a BINA (8)")
    size, offset = (int(v) for v in np.frombuffer(data, "<u4", 2))
    raw = c.raw(offset, size, label)
    if size < LIST_HEADER:
        raise ObanError(c.path, f"{label}: its list of {size} bytes is too short for its header ({LIST_HEADER})")
    if raw[:4] != LIST_MAGIC:
        raise ObanError(c.path, f"{label}: its list starts with {raw[:4]!r}, not CJBO")
    stated, version = (int(v) for v in np.frombuffer(raw, "<u4", 2, 4))
    if stated != size - 8:
        raise ObanError(c.path, f"{label}: its list says {stated} bytes follow its size, the BINA {size - 8}")
    if version != LIST_VERSION:
        raise ObanError(c.path, f"{label}: object list version {version} (only {LIST_VERSION} is known)")
    starts, sizes = _walk(raw, c.path, label)
    return _objects(raw, starts, sizes, c.full_name(index)[len(LIST_PREFIX):], c.path, label)


def _walk(raw, path, label):
    """Each object's start (past its size) and size n, in order: the chain of sizes walked
    once (each start follows from the one before) up to the 0 that ends it."""
    starts, sizes, at = [], [], LIST_HEADER
    while True:
        if at + 4 > len(raw):
            raise ObanError(path, f"{label}: its list ends at byte {at} without the 0 that ends it")
        n = int.from_bytes(raw[at:at + 4], "little")
        if n == 0:
            return np.array(starts, np.int64), np.array(sizes, np.int64)
        fault = "under 0x24" if n < HEADER_DTYPE.itemsize else "not a multiple of 4" if n % 4 else \
            f"past the list's {len(raw)} bytes" if at + 4 + n > len(raw) else None
        if fault:
            raise ObanError(path, f"{label}: object {len(starts)} (at byte {at}) has size {n}, {fault}")
        starts.append(at + 4)
        sizes.append(n)
        at += 4 + n


def _gather(buffer, starts, dtype):
    """Records of `dtype` at each start of `buffer` (a uint8 array), gathered in one take."""
    rows = buffer[starts[:, None] + np.arange(dtype.itemsize)]
    return np.ascontiguousarray(rows).view(dtype).reshape(len(starts))


def _objects(raw, starts, sizes, name, path, label):
    buffer = np.frombuffer(raw, np.uint8)
    headers = _gather(buffer, starts, HEADER_DTYPE)
    letters = buffer[starts[:, None] + np.arange(3, -1, -1)]       # the four letters, reversed as stored
    types = np.ascontiguousarray(letters.astype("<u4")).view("<U4").reshape(len(starts))
    known = np.isin(types, KNOWN_TYPES)
    warnings = [f"{LIST_PREFIX}{name}: {int((types == kind).sum())} object(s) of unknown type {str(kind)!r} skipped "
                f"(the first, id {int(headers['id'][types == kind][0])})" for kind in dict.fromkeys(types[~known])]
    for field in ("position", "rotation"):
        bad = first_bad(~np.isfinite(headers[field]) & known[:, None])
        if bad is not None:
            raise ObanError(path, f"{label}: object {bad} (id {int(headers['id'][bad])}): non-finite value in its "
                                  f"{field}")
    kept = headers[known]
    payloads = [raw[start + HEADER_DTYPE.itemsize:start + size]
                for start, size in zip(starts[known].tolist(), sizes[known].tolist())]
    objects = ObjectList(name=name, types=types[known].copy(), ids=kept["id"].copy(), flags=kept["flags"].copy(),
                         positions=kept["position"].copy(), rotations=kept["rotation"].copy(), payloads=payloads)
    objects.doors = _doors(buffer, headers, starts, sizes, np.flatnonzero(types == "DOOR"), path, label)
    objects.furniture = _furniture(buffer, headers, starts, sizes, np.flatnonzero(types == "FURN"), path, label)
    return objects, warnings


def _too_short(sizes, picked, headers, least, kind, path, label):
    bad = first_bad(sizes[picked] < least)
    if bad is not None:
        k = int(picked[bad])
        raise ObanError(path, f"{label}: object {k} (id {int(headers['id'][k])}): a {kind} of {int(sizes[k])} bytes, "
                              f"shorter than 0x{least:x}")


def _doors(buffer, headers, starts, sizes, picked, path, label) -> list:
    _too_short(sizes, picked, headers, DOOR_DTYPE.itemsize, "DOOR", path, label)
    records = _gather(buffer, starts[picked], DOOR_DTYPE)
    for field in ("frame_position", "radius_squared"):
        bad = first_bad(~np.isfinite(records[field]))
        if bad is not None:
            raise ObanError(path, f"{label}: object {int(picked[bad])} (id {int(headers['id'][picked[bad]])}): "
                                  f"non-finite value in its door's {field.replace('_', ' ')}")
    doors = []
    for k, record in zip(picked.tolist(), records):
        header = headers[k]
        events = _events(buffer, int(starts[k]), int(sizes[k]), int(record["event_count"]), path,
                         f"{label}: object {k} (id {int(header['id'])})")
        doors.append(Door(
            id=int(header["id"]), flags=int(header["flags"]), position=header["position"].copy(),
            rotation=header["rotation"].copy(), class_name=text(record["class_name"]), door_id=int(record["door_id"]),
            key_id=int(record["key_id"]), door_flags=int(record["door_flags"]),
            frame_position=record["frame_position"].copy(), activation_radius_squared=float(record["radius_squared"]),
            texture_names=(text(record["texture1"]), text(record["texture2"])), textures=(None, None),
            events=events, door_class=None))
    return doors


def _events(buffer, start, size, count, path, where) -> list:
    """A door's events from 0xF9: u16 type, then a script's name (char[32]) or a target id (u16)."""
    events, at, end = [], start + DOOR_DTYPE.itemsize, start + size
    for k in range(count):
        if at + 2 > end:
            raise ObanError(path, f"{where}: door event {k} of {count} lies past the object's {size} bytes")
        kind = int(buffer[at]) | int(buffer[at + 1]) << 8
        if kind >= len(EVENT_TYPES):
            raise ObanError(path, f"{where}: door event {k} has type {kind} (0 to {len(EVENT_TYPES) - 1} are known)")
        length = SCRIPT_LENGTH if kind == SCRIPT_EVENT else 2 if kind else 0
        if at + 2 + length > end:
            raise ObanError(path, f"{where}: door event {k} of {count} lies past the object's {size} bytes")
        value = buffer[at + 2:at + 2 + length].tobytes()
        events.append(DoorEvent(kind, script=text(value)) if kind == SCRIPT_EVENT else
                      DoorEvent(kind, target=int.from_bytes(value, "little")) if kind else DoorEvent(kind))
        at += 2 + length
    return events


def _furniture(buffer, headers, starts, sizes, picked, path, label) -> list:
    _too_short(sizes, picked, headers, FURN_DTYPE.itemsize, "FURN", path, label)
    records = _gather(buffer, starts[picked], FURN_DTYPE)
    return [Furniture(id=int(headers[k]["id"]), flags=int(headers[k]["flags"]), position=headers[k]["position"].copy(),
                      rotation=headers[k]["rotation"].copy(), class_name=text(record["class_name"]),
                      particle=text(record["particle"]), geometry=None)
            for k, record in zip(picked.tolist(), records)]
