"""Binary containers (spec 7.1-7.3): raw instance files, OniSplit .oni and level .dat.

Counts and offsets are checked against the file size before anything is read or
allocated from them. Containers are read piecewise: the header, the descriptors,
the name table and each OBAN record, never the whole data table.
"""

import os
import re
import struct

import numpy as np

from .animation import KEY_DTYPE, Animation, check
from .errors import ObanError

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

CHECKSUMS = {0x0003BCDF33DC271F: "PC", 0x0003BCDF23C13061: "Mac/demo"}
VERSIONS = {b"13RV": "VR31", b"23RV": "VR32"}
SIGNATURE = 0x0008001000140040
HEADER_DTYPE = np.dtype([
    ("checksum", "<u8"),
    ("version", "S4"),
    ("signature", "<u8"),
    ("instance_count", "<u4"),
    ("name_count", "<u4"),
    ("template_count", "<u4"),
    ("data_offset", "<u4"),
    ("data_size", "<u4"),
    ("name_offset", "<u4"),
    ("name_size", "<u4"),
    ("raw_offset", "<u4"),
    ("raw_size", "<u4"),
    ("padding", "V8"),
])
assert HEADER_DTYPE.itemsize == 64
DESCRIPTOR_DTYPE = np.dtype([
    ("tag", "S4"),            # reversed: b"NABO" is OBAN
    ("data_offset", "<u4"),   # relative to the data table, past the 8-byte record header
    ("name_offset", "<u4"),
    ("data_size", "<u4"),     # including the record header
    ("flags", "<u4"),
])
UNNAMED, PLACEHOLDER = 1, 2
OBAN_TAG = b"NABO"
MAX_RECORD = RECORD_DTYPE.itemsize + 0xFFFF * KEY_DTYPE.itemsize  # 0xFFFF keys: the longest OBAN record
RAW_NAME = re.compile(r"\d+-(.+)")  # the instance number OniSplit puts before the name
MAX_NAME = 255  # bytes: longer than any Oni name (and Blender's); bounds the work per descriptor


def parse_record(data, path, name, file_offset=0, size=None):
    """One OBAN record (8-byte header + instance data) from `data` -> Animation.

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
    animation = Animation(
        name=name,
        flags=flags,
        start_matrix=matrices[:12].copy(),
        base_matrix=matrices[12:].copy(),
        ticks_per_frame=ticks_per_frame,
        frames=frames,
        door_open_frame=door_open_frame,
        keys=np.frombuffer(data, KEY_DTYPE, count=declared, offset=RECORD_DTYPE.itemsize).copy(),
        record_header=(instance_id, level_id),
    )
    check(animation, path)
    extra = (size or 0) - RECORD_DTYPE.itemsize - declared * KEY_DTYPE.itemsize
    if size is not None and extra:
        animation.warnings.append(f"{extra} bytes after the last key ignored")
    return animation


def raw_name(path):
    """'00134-Blackvan_FB.OBAN' -> 'Blackvan_FB'; 'door.oban' -> 'door'."""
    stem = os.path.splitext(os.path.basename(path))[0]
    match = RAW_NAME.fullmatch(stem)
    return match.group(1) if match else stem


def read_raw(f, path, size):
    """The one OBAN of a raw instance file (spec 7.1), open as `f` (`size` bytes)."""
    data = f.read(min(size, MAX_RECORD))  # never more than a record can use, however big the file
    if not data:
        raise ObanError(path, "empty file")
    return [parse_record(data, path, raw_name(path), size=size)]


def looks_like_container(head):
    return len(head) >= 12 and int.from_bytes(head[:8], "little") in CHECKSUMS and head[8:12] in VERSIONS


def read_container(f, path, size, name_filter=None):
    """Every OBAN of an .oni or level .dat file open as `f` (`size` bytes), in descriptor order.

    `name_filter(name) -> bool` picks instances by name before their records are read.
    """
    header = _read_header(f, path, size)
    count = int(header["instance_count"])
    descriptors = np.frombuffer(_read_at(f, path, size, 64, count * DESCRIPTOR_DTYPE.itemsize,
                                         f"{count} instance descriptors"), DESCRIPTOR_DTYPE)
    data_start, data_size = int(header["data_offset"]), int(header["data_size"])
    _check_range(path, size, data_start, data_size, "data table")
    names = _read_at(f, path, size, int(header["name_offset"]), int(header["name_size"]), "name table")
    starts, ends = _record_ranges(path, descriptors, data_size)

    fallback = onisplit_name(path)
    animations = []
    for i in np.flatnonzero(descriptors["tag"] == OBAN_TAG):
        d = descriptors[i]
        name = fallback if d["flags"] & UNNAMED else _name_at(path, names, int(d["name_offset"]), i)
        if name_filter and not name_filter(name):
            continue
        if ends[i] == starts[i]:
            continue  # placeholder: the instance lives in another file
        record = _read_at(f, path, size, data_start + int(starts[i]),
                          int(ends[i] - starts[i]), f"record of instance {i}")
        animations.append(parse_record(record, path, name, file_offset=data_start + int(starts[i])))
    return animations


def _read_header(f, path, size):
    raw = f.read(64)
    if len(raw) < 64:
        if not raw:
            raise ObanError(path, "empty file")
        raise ObanError(path, f"truncated at byte {len(raw)}: an Oni file header needs 64 bytes")
    header = np.frombuffer(raw, HEADER_DTYPE, count=1)[0]
    checksum = int(header["checksum"])
    if checksum not in CHECKSUMS:
        raise ObanError(path, f"not an Oni file (template checksum 0x{checksum:016x})")
    if bytes(header["version"]) not in VERSIONS:
        raise ObanError(path, f"unknown version {bytes(header['version'])[::-1]!r} (VR31 and VR32 are known)")
    if int(header["signature"]) != SIGNATURE:
        raise ObanError(path, f"bad header signature 0x{int(header['signature']):016x}")
    return header


def _check_range(path, size, offset, length, what):
    if offset + length > size:
        raise ObanError(path, f"{what} at byte {offset} ({length} bytes) lies outside the file ({size} bytes)")


def _read_at(f, path, size, offset, length, what):
    _check_range(path, size, offset, length, what)
    f.seek(offset)
    return f.read(length)


def _record_ranges(path, descriptors, data_size):
    """Start and end of each record inside the data table; placeholders get start == end."""
    offset = descriptors["data_offset"].astype(np.int64)
    length = descriptors["data_size"].astype(np.int64)
    empty = (offset == 0) | ((descriptors["flags"] & PLACEHOLDER) != 0)
    starts = np.where(empty, 0, offset - 8)
    ends = np.where(empty, 0, starts + length)
    bad = ~empty & ((offset < 8) | (length < 8) | (ends > data_size))
    if bad.any():
        i = int(np.argmax(bad))
        raise ObanError(path, f"descriptor {i} points outside the data table "
                              f"(offset {offset[i]}, size {length[i]}, table {data_size} bytes)")
    order = np.argsort(starts[~empty], kind="stable")
    index = np.flatnonzero(~empty)[order]
    overlap = ends[index[:-1]] > starts[index[1:]]
    if overlap.any():
        j = int(np.argmax(overlap))
        raise ObanError(path, f"descriptors {index[j]} and {index[j + 1]} overlap in the data table")
    return starts, ends


def _name_at(path, names, offset, index):
    if offset >= len(names):
        raise ObanError(path, f"descriptor {index}: name offset {offset} is outside the name table")
    end = names.find(b"\0", offset, offset + MAX_NAME + 1)
    if end < 0:
        raise ObanError(path, f"descriptor {index}: name at offset {offset} is unterminated "
                              f"or longer than {MAX_NAME} bytes")
    name = names[offset:end].decode("latin-1")
    return name[4:] if name.startswith("OBAN") else name


def onisplit_name(path):
    """'OBANdoor.oni' or 'OBANdoor.xml' -> 'door': the file name, as OniSplit names the main instance."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[4:] if stem.startswith("OBAN") and len(stem) > 4 else stem

