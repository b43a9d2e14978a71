"""Oni's instance files (docs/formats.md, containers): OniSplit .oni (VR32) and level
.dat (VR31) headers, descriptors and names, links between instances and raw data
(docs/objects.md 1, 2); every file constant lives here.

Counts and offsets are checked against the file size before anything is read or
allocated from them. A container is read piecewise: the header, the descriptors,
the name table, then only the instances asked for, never the whole data table.
"""

import os
import struct

import numpy as np

from ....core.errors import ObanError
from ....core.files import open_regular

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
HEADER_STRUCT = struct.Struct("<Q4sQ9I8x")   # the same fields as Python values, read at every open
HEADER_FIELDS = HEADER_DTYPE.names[:-1]      # what it unpacks: all but the padding
assert HEADER_STRUCT.size == HEADER_DTYPE.itemsize and len(HEADER_STRUCT.unpack(bytes(64))) == len(HEADER_FIELDS)
DESCRIPTOR_DTYPE = np.dtype([
    ("tag", "S4"),            # reversed: b"NABO" is OBAN
    ("data_offset", "<u4"),   # relative to the data table, past the 8-byte record header
    ("name_offset", "<u4"),
    ("data_size", "<u4"),     # including the record header
    ("flags", "<u4"),
])
UNNAMED, PLACEHOLDER, SHARED = 1, 2, 8
# Tags as descriptors store them (reversed): "NABO" is OBAN.
OBAN_TAG, OBOA_TAG, ENVP_TAG = b"NABO", b"AOBO", b"PVNE"
M3GA_TAG, M3GM_TAG, TXMP_TAG = b"AG3M", b"MG3M", b"PMXT"
TXAN_TAG = b"NAXT"     # a TXMP's animation: the TXMPs of its frames
PNTA_TAG, VCRA_TAG, TXCA_TAG, IDXA_TAG = b"ATNP", b"ARCV", b"ACXT", b"AXDI"
# Characters (docs/characters.md): class, body set, body, its arrays, textures, animations.
ONCC_TAG, TRBS_TAG, TRCM_TAG, TRMA_TAG = b"CCNO", b"SBRT", b"MCRT", b"AMRT"
TRGA_TAG, TRTA_TAG, TRIA_TAG, TRAC_TAG, TRAM_TAG = b"AGRT", b"ATRT", b"AIRT", b"CART", b"MART"
# A level (docs/level.md): its root, environment and its arrays, object lists, classes.
ONLV_TAG, AKEV_TAG, ONOA_TAG, ONSK_TAG, CRSA_TAG = b"VLNO", b"VEKA", b"AONO", b"KSNO", b"ASRC"
BINA_TAG, DOOR_TAG, OFGA_TAG = b"ANIB", b"ROOD", b"AGFO"
CONS_TAG, TURR_TAG, TRIG_TAG, TRGE_TAG = b"SNOC", b"RRUT", b"GIRT", b"EGRT"   # console, turret, trigger classes
PLEA_TAG, AGQG_TAG, AGQR_TAG, AGQC_TAG, AGDB_TAG = b"AELP", b"GQGA", b"RQGA", b"CQGA", b"BDGA"
TXMA_TAG, AKVA_TAG, AKBA_TAG, AKBP_TAG = b"AMXT", b"AVKA", b"ABKA", b"PBKA"
ABNA_TAG, AKOT_TAG, AKAA_TAG, AKDA_TAG = b"ANBA", b"TOKA", b"AAKA", b"ADKA"
LINK_FLAG = 1          # a link is (descriptor index << 8) | 1; 0 is none
DATA_PADDING = 32      # OniSplit rounds a .oni's data-table size up to this and may not write the padding
COUNT_OFFSET = 0x14   # the u32 count of an array template; its items follow it
MAX_NAME = 255  # bytes: longer than any Oni name (and Blender's); bounds the work per descriptor


def looks_like_container(head: bytes) -> bool:
    return len(head) >= 12 and int.from_bytes(head[:8], "little") in CHECKSUMS and head[8:12] in VERSIONS


class Container:
    """An open .oni or level .dat: header, descriptors and name table read and checked;
    instance records read on demand."""

    def __init__(self, f, path: str, size: int):
        self._read_tables(f, path, size)
        _check_records([self])

    @classmethod
    def open_all(cls, files) -> list["Container"]:
        """Containers of several open files, (f, path, size) each: their records' ranges
        checked all at once, numpy's cost per call paid once for the lot."""
        containers = [cls.__new__(cls) for _ in files]
        for container, (f, path, size) in zip(containers, files):
            container._read_tables(f, path, size)
        return _check_records(containers)

    def _read_tables(self, f, path, size):
        """The header, the descriptors and the name table, read and checked."""
        self.f, self.path, self.size = f, path, size
        header = self.header = _read_header(f, path, size)
        self.version = VERSIONS[header["version"]]
        count = header["instance_count"]
        self.descriptors = np.frombuffer(
            self.read_at(64, count * DESCRIPTOR_DTYPE.itemsize, f"{count} instance descriptors"), DESCRIPTOR_DTYPE)
        self.data_start, self.data_size = header["data_offset"], header["data_size"]
        if 0 < self.data_start + self.data_size - size < DATA_PADDING and self.data_start <= size:
            self.data_size = size - self.data_start  # the unwritten padding at the end of the file
        self.check_range(self.data_start, self.data_size, "data table")
        self.names = self.read_at(header["name_offset"], header["name_size"], "name table")
        self.raw_file = None  # a level's .raw, opened on first use (raw())

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

    def with_data(self, tag: bytes) -> list[int]:
        """Descriptor indices of the instances with this tag whose data is in this file."""
        return [int(i) for i in self.indices(tag) if not self.is_placeholder(int(i))]

    def first(self, tag: bytes) -> int | None:
        """The first instance with this tag and data in this file, or None."""
        return next(iter(self.with_data(tag)), None)

    def tags_with_data(self) -> set:
        """The (stored, reversed) tags of the instances whose data is in this file."""
        return set(np.unique(self.descriptors["tag"][np.asarray(self.ends) != np.asarray(self.starts)]).tolist())

    def misnamed(self, tags) -> int | None:
        """The first named instance whose name begins with one of `tags` (stored, reversed) other
        than its own tag, or None: every name looked at together, each checked as full_name
        checks it (raising as it does for the first at fault)."""
        named = np.flatnonzero(self.descriptors["flags"] & UNNAMED == 0)
        offsets = self.descriptors["name_offset"][named].astype(np.int64)
        ends = np.flatnonzero(np.frombuffer(self.names, np.uint8) == 0)
        following = np.searchsorted(ends, offsets)      # each name's terminating NUL, if any
        length = np.append(ends, np.iinfo(np.int64).max)[following] - offsets
        faulty = (offsets >= len(self.names)) | (length > MAX_NAME)
        names = np.frombuffer(self.names + bytes(4), np.uint8)
        said = names[np.minimum(offsets, len(self.names))[:, None] + np.arange(4)][:, ::-1].copy().view("S4")[:, 0]
        wrong = np.isin(said, np.array(sorted(tags), "S4")) & (said != self.descriptors["tag"][named]) & ~faulty
        if not (faulty | wrong).any():
            return None
        first = int(named[np.argmax(faulty | wrong)])   # in descriptor order, as one by one
        self.full_name(first)                           # raises where the name is at fault
        return first

    def is_placeholder(self, index: int) -> bool:
        """A descriptor with a name and no data here: the instance lives in another file."""
        return self.ends[index] == self.starts[index]

    def is_unnamed(self, index: int) -> bool:
        return self._unnamed[index]

    def full_name(self, index: int) -> str:
        """The name table's name, tag included ('OBANdoor'); '' for an unnamed instance."""
        if self.is_unnamed(index):
            return ""
        offset = self._name_offsets[index]
        if offset >= len(self.names):
            raise ObanError(self.path, f"descriptor {index}: name offset {offset} is outside the name table")
        end = self.names.find(b"\0", offset, offset + MAX_NAME + 1)
        if end < 0:
            raise ObanError(self.path, f"descriptor {index}: name at offset {offset} is unterminated "
                                       f"or longer than {MAX_NAME} bytes")
        return self.names[offset:end].decode("latin-1")

    def short_name(self, index: int) -> str:
        """The name without its tag ('door' for 'OBANdoor'); '' for an unnamed instance."""
        return short_name(self.full_name(index), tag_name(self._tags[index]))

    def record(self, index: int) -> tuple[bytes, int]:
        """(the instance's 8-byte record header and data, its file offset)."""
        offset = self.data_start + int(self.starts[index])
        return self.read_at(offset, int(self.ends[index] - self.starts[index]), f"record of instance {index}"), offset

    def label(self, index: int) -> str:
        """How messages name an instance: 'instance 12 (M3GMbox)' or 'instance 12 (unnamed PNTA)'."""
        tag = tag_name(self._tags[index])
        name = self.full_name(index) if not self.is_unnamed(index) else ""
        return f"instance {index} ({name or 'unnamed ' + tag})"

    def tag_of(self, index: int) -> bytes:
        return self._tags[index]

    def instance(self, index: int, tag: bytes) -> tuple[bytes, int]:
        """(an instance's data past its 8-byte record header, its file offset); checks the tag."""
        if self.tag_of(index) != tag:
            raise ObanError(self.path, f"{self.label(index)} is not {_a(tag)}")
        record, offset = self.record(index)
        if len(record) < 8:
            raise ObanError(self.path, f"{self.label(index)} is a placeholder, not data")
        return record[8:], offset + 8

    def link(self, value: int, tag: bytes, owner: int, field: str) -> int | None:
        """The descriptor index a link in instance `owner` points to (None for 0), checked:
        in range, flagged as a link and of `tag` (reversed, as stored)."""
        if value == 0:
            return None
        index = value >> 8
        if value & 0xFF != LINK_FLAG or index >= len(self.descriptors):
            raise ObanError(self.path, f"{self.label(owner)}: {field} link 0x{value:08x} points outside the "
                                       f"{len(self.descriptors)} instances of the file")
        if self.tag_of(index) != tag:
            raise ObanError(self.path, f"{self.label(owner)}: {field} link points to {self.label(index)}, "
                                       f"not {_a(tag)}")
        return index

    def raw(self, offset: int, length: int, what: str) -> bytes:
        """`length` bytes of raw data at `offset`: in a level's .raw beside it (VR31) or in the
        .oni's own raw table (VR32). ObanError (naming `what`) outside it or without a .raw."""
        if self.version == "VR32":
            start, size = self.header["raw_offset"], self.header["raw_size"]
            if offset + length > size:
                raise ObanError(self.path, f"{what}: {length} bytes of raw data at {offset} lie outside the "
                                           f"raw table ({size} bytes)")
            return self.read_at(start + offset, length, f"{what}: raw data")
        if self.raw_file is None:
            self.raw_file = _open_raw(self.path, what)
        f, raw_path, size = self.raw_file
        if offset + length > size:
            raise ObanError(self.path, f"{what}: {length} bytes of raw data at {offset} lie outside "
                                       f"{os.path.basename(raw_path)} ({size} bytes)")
        f.seek(offset)
        data = f.read(length)
        if len(data) != length:
            raise ObanError(self.path, f"{what}: {os.path.basename(raw_path)} ends early")
        return data

    def raw_at(self, offset: int) -> tuple:
        """(file, byte) where raw data at `offset` is stored: the level's .raw (VR31), or the
        .oni itself, past its raw table's start (VR32)."""
        if self.version == "VR32":
            return self.path, self.header["raw_offset"] + offset
        return raw_path(self.path), offset

    def raw_size(self, what: str) -> int:
        """The bytes of raw data raw pointers can reach: a .oni's raw table, a level's .raw
        (ObanError, naming `what`, when it is missing)."""
        if self.version == "VR32":
            return self.header["raw_size"]
        if self.raw_file is None:
            self.raw_file = _open_raw(self.path, what)
        return self.raw_file[2]

    def close(self) -> None:
        if self.raw_file is not None:
            self.raw_file[0].close()
            self.raw_file = None


def _a(tag):
    """b'NABO' -> 'an OBAN', b'PMXT' -> 'a TXMP'."""
    name = tag_name(tag)
    return ("an " if name[:1] in "AEIOU" else "a ") + name


def tag_name(tag: bytes) -> str:
    """b"VEKA" -> 'AKEV': a tag as stored (reversed), read."""
    return tag[::-1].decode("latin-1")


def u32_at(data: bytes, at: int) -> int:
    """The little-endian u32 at byte `at` of `data` (a link, a count)."""
    return int.from_bytes(data[at:at + 4], "little")


def counted(data: bytes, dtype, path: str, label: str, what: str = "", offset: int = COUNT_OFFSET,
            count_size: int = 4) -> np.ndarray:
    """The items after the count (`count_size` bytes, little-endian) at `offset` of an
    instance's data, the count checked against the instance's size before anything is made of
    it (`what`: the items, as messages name them); a copy, so that the file's bytes can go. A
    subarray `dtype` gives items of its shape."""
    dtype, counted_as = np.dtype(dtype), f"its {what} count" if what else "its count"
    if len(data) < offset + count_size:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for {counted_as} at 0x{offset:x}")
    count = int.from_bytes(data[offset:offset + count_size], "little")
    room = (len(data) - offset - count_size) // dtype.itemsize
    if count > room:
        raise ObanError(path, f"{label}: {counted_as[4:]} says {count} but only {room} fit in the instance")
    return np.frombuffer(data, dtype, count=count, offset=offset + count_size).copy()


def raw_path(path: str) -> str:
    """'levelN_Final.dat' -> 'levelN_Final.raw', beside it ('.RAW' if only that exists)."""
    stem = os.path.splitext(path)[0]
    return stem + ".RAW" if not os.path.exists(stem + ".raw") and os.path.exists(stem + ".RAW") else stem + ".raw"


def _open_raw(path, what):
    name = raw_path(path)
    if not os.path.exists(name):
        raise ObanError(path, f"{what}: its raw data file {os.path.basename(name)} is missing")
    f, size = open_regular(name)
    return f, name, size


def _read_header(f, path, size):
    raw = f.read(64)
    if len(raw) < 64:
        if not raw:
            raise ObanError(path, "empty file")
        raise ObanError(path, f"truncated at byte {len(raw)}: an Oni file header needs 64 bytes")
    header = dict(zip(HEADER_FIELDS, HEADER_STRUCT.unpack(raw)))
    checksum = header["checksum"]
    if checksum not in CHECKSUMS:
        raise ObanError(path, f"not an Oni file (template checksum 0x{checksum:016x})")
    if header["version"] not in VERSIONS:
        raise ObanError(path, f"unknown version {header['version'][::-1]!r} (VR31 and VR32 are known)")
    if header["signature"] != SIGNATURE:
        raise ObanError(path, f"bad header signature 0x{header['signature']:016x}")
    return header


def _check_records(containers):
    """Each container's records' start and end in its data table (placeholders: start == end),
    and its descriptors' tags, unnamed flags and name offsets as Python values (asked for many
    times; a numpy field read is slow): the descriptors of all of them checked together."""
    if not containers:
        return []
    counts = [len(c.descriptors) for c in containers]
    descriptors = np.frombuffer(b"".join(c.descriptors.tobytes() for c in containers), DESCRIPTOR_DTYPE) \
        if len(containers) > 1 else containers[0].descriptors   # (numpy's concatenate promotes each record type)
    starts, ends = _record_ranges(containers, descriptors, counts)
    tags = descriptors["tag"].tolist()
    unnamed = (descriptors["flags"] & UNNAMED != 0).tolist()
    name_offsets = descriptors["name_offset"].tolist()
    bounds = np.cumsum([0] + counts).tolist()
    for c, a, b in zip(containers, bounds, bounds[1:]):
        c.starts, c.ends = starts[a:b], ends[a:b]
        c._tags, c._unnamed, c._name_offsets = tags[a:b], unnamed[a:b], name_offsets[a:b]
    return containers


def _record_ranges(containers, descriptors, counts):
    """Start and end of each record inside its container's data table, the descriptors of
    `containers` end to end (`counts` of each); placeholders get start == end. The first
    container at fault, in order, raises: a record outside its table, else two that overlap."""
    offset = descriptors["data_offset"].astype(np.int64)
    length = descriptors["data_size"].astype(np.int64)
    used = (offset != 0) & (descriptors["flags"] & PLACEHOLDER == 0)
    starts = (offset - 8) * used
    ends = (starts + length) * used
    owner = np.repeat(np.arange(len(counts)), counts)
    data_size = np.repeat([c.data_size for c in containers], counts)
    outside = np.flatnonzero(used & ((np.minimum(offset, length) < 8) | (ends > data_size)))[:1]
    index = np.flatnonzero(used)
    index = index[np.lexsort((starts[index], owner[index]))]
    overlap = np.flatnonzero((ends[index[:-1]] > starts[index[1:]]) & (owner[index[:-1]] == owner[index[1:]]))[:1]
    faults = [(owner[i], 0, i) for i in outside] + [(owner[index[j]], 1, j) for j in overlap]
    if faults:
        n, kind, at = min(faults)
        c, first = containers[n], sum(counts[:n])
        if kind == 0:
            raise ObanError(c.path, f"descriptor {at - first} points outside the data table "
                                    f"(offset {offset[at]}, size {length[at]}, table {c.data_size} bytes)")
        raise ObanError(c.path, f"descriptors {index[at] - first} and {index[at + 1] - first} overlap in the "
                                f"data table")
    return starts, ends


def short_name(full: str, tag: str) -> str:
    """'OBANdoor', 'OBAN' -> 'door': an instance's name without its tag, as the add-on names what it makes."""
    return full[len(tag):] if full.startswith(tag) else full


def level_of_raw_data(path: str) -> str | None:
    """The level .dat beside a .raw (`levelN_Final.raw`), whose raw data it is, else None:
    read with the level, never on its own."""
    stem, extension = os.path.splitext(os.fspath(path))
    if extension.lower() != ".raw":
        return None
    return next((stem + dat for dat in (".dat", ".DAT") if os.path.isfile(stem + dat)), None)
