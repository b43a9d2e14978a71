"""Oni's instance files (docs/formats.md, containers): OniSplit .oni (VR32) and level
.dat (VR31) headers, descriptors and names; every file constant lives here.

Counts and offsets are checked against the file size before anything is read or
allocated from them. A container is read piecewise: the header, the descriptors,
the name table, then only the instances asked for, never the whole data table.
"""

import os

import numpy as np

from ..errors import ObanError
from .oban import Animation, parse_record

PC_CHECKSUM = 0x0003BCDF33DC271F
CHECKSUMS = {PC_CHECKSUM: "PC", 0x0003BCDF23C13061: "Mac/demo"}
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
UNNAMED, PLACEHOLDER, SHARED = 1, 2, 8
OBAN_TAG = b"NABO"
MAX_NAME = 255  # bytes: longer than any Oni name (and Blender's); bounds the work per descriptor


def tag_bytes(tag: str) -> bytes:
    """'OBAN' -> b'NABO', as descriptors store it."""
    return tag.encode("ascii")[::-1]


def looks_like_container(head: bytes) -> bool:
    return len(head) >= 12 and int.from_bytes(head[:8], "little") in CHECKSUMS and head[8:12] in VERSIONS


class Container:
    """An open .oni or level .dat: header, descriptors and name table read and checked;
    instance records read on demand."""

    def __init__(self, f, path: str, size: int):
        self.f, self.path, self.size = f, path, size
        header = self.header = _read_header(f, path, size)
        self.version = VERSIONS[bytes(header["version"])]
        count = int(header["instance_count"])
        self.descriptors = np.frombuffer(
            self.read_at(64, count * DESCRIPTOR_DTYPE.itemsize, f"{count} instance descriptors"), DESCRIPTOR_DTYPE)
        self.data_start, data_size = int(header["data_offset"]), int(header["data_size"])
        self.check_range(self.data_start, data_size, "data table")
        self.names = self.read_at(int(header["name_offset"]), int(header["name_size"]), "name table")
        self.starts, self.ends = _record_ranges(path, self.descriptors, data_size)

    def check_range(self, offset: int, length: int, what: str) -> None:
        if offset + length > self.size:
            raise ObanError(self.path, f"{what} at byte {offset} ({length} bytes) lies outside the file "
                                       f"({self.size} bytes)")

    def read_at(self, offset: int, length: int, what: str) -> bytes:
        self.check_range(offset, length, what)
        self.f.seek(offset)
        return self.f.read(length)

    def indices(self, tag: bytes) -> np.ndarray:
        """Descriptor indices of every instance with this (stored, reversed) tag."""
        return np.flatnonzero(self.descriptors["tag"] == tag)

    def is_placeholder(self, index: int) -> bool:
        """A descriptor with a name and no data here: the instance lives in another file."""
        return self.ends[index] == self.starts[index]

    def is_unnamed(self, index: int) -> bool:
        return bool(self.descriptors[index]["flags"] & UNNAMED)

    def full_name(self, index: int) -> str:
        """The name table's name, tag included ('OBANdoor'); '' for an unnamed instance."""
        if self.is_unnamed(index):
            return ""
        offset = int(self.descriptors[index]["name_offset"])
        if offset >= len(self.names):
            raise ObanError(self.path, f"descriptor {index}: name offset {offset} is outside the name table")
        end = self.names.find(b"\0", offset, offset + MAX_NAME + 1)
        if end < 0:
            raise ObanError(self.path, f"descriptor {index}: name at offset {offset} is unterminated "
                                       f"or longer than {MAX_NAME} bytes")
        return self.names[offset:end].decode("latin-1")

    def record(self, index: int) -> tuple[bytes, int]:
        """(the instance's 8-byte record header and data, its file offset)."""
        offset = self.data_start + int(self.starts[index])
        return self.read_at(offset, int(self.ends[index] - self.starts[index]), f"record of instance {index}"), offset


def read_container(f, path: str, size: int, name_filter=None) -> list[Animation]:
    """Every OBAN of an .oni or level .dat file open as `f` (`size` bytes), in descriptor order.

    `name_filter(name) -> bool` picks instances by name before their records are read.
    """
    container = Container(f, path, size)
    fallback = onisplit_name(path)
    animations = []
    for i in container.indices(OBAN_TAG):
        full = container.full_name(i)
        name = full[4:] if full.startswith("OBAN") else full or fallback
        if name_filter and not name_filter(name):
            continue
        if container.is_placeholder(i):
            continue
        record, offset = container.record(i)
        animations.append(parse_record(record, path, name, file_offset=offset))
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


def onisplit_name(path: str) -> str:
    """'OBANdoor.oni' or 'OBANdoor.xml' -> 'door': the file name, as OniSplit names the main instance."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[4:] if stem.startswith("OBAN") and len(stem) > 4 else stem
