"""The one writer of Oni's instance files: a VR32 .oni in OniSplit's layout (its
ImporterFile), so that an unedited read -> write gives the bytes OniSplit wrote
(docs/formats.md, containers 2)."""

import numpy as np

from ....core.errors import ObanError
from .container import DESCRIPTOR_DTYPE, HEADER_DTYPE, LINK_FLAG, PC_CHECKSUM, PLACEHOLDER, SIGNATURE, UNNAMED

ALIGN = 32   # records, the name table, the data table and the raw table start at this
# Characters of a full name, its tag included, that OniSplit v0.9.99.2 opens: its
# InstanceFile.ReadNames reads each name into a char[64] (a file holding a longer one is not opened).
MAX_NAME = 64


def instance_name(tag: str, name: str) -> str:
    """The full name `tag` + `name` of an instance to write, checked (checked_name); an empty
    `name` refused: an instance written on its own is named."""
    if not name:
        raise ObanError(tag, "an empty name: each instance written here is named (its file is named after it)")
    return checked_name(tag + name)


def checked_name(full: str) -> str:
    """`full`, an instance's name with its tag, where a file OniSplit opens can hold it: Latin-1,
    no NUL, at most MAX_NAME characters; ObanError naming it otherwise."""
    try:
        full.encode("latin-1")
    except UnicodeEncodeError:
        raise ObanError(full, "the name holds a character outside Latin-1, which Oni's names cannot hold") from None
    if "\0" in full:
        raise ObanError(full, "the name holds a NUL, which ends a name in Oni's files")
    if len(full) > MAX_NAME:
        raise ObanError(full, f"the name is {len(full)} characters with its tag: OniSplit opens no file holding a "
                              f"name of more than {MAX_NAME}")
    return full


def instance_file_bytes(instances: list, raw: bytes = bytes(ALIGN)) -> bytes:
    """A VR32 .oni: `instances` are (stored tag, full name or '', data past the record header
    or None for a placeholder), descriptor 0 the main one; `raw` is the raw table with its 32
    leading zero bytes, written only if it holds more. Every name is checked (checked_name)."""
    for _, name, _ in instances:
        if name:
            checked_name(name)
    count = len(instances)
    names = b"".join(name.encode("latin-1") + b"\0" for _, name, _ in instances if name)
    name_offset = align(64 + DESCRIPTOR_DTYPE.itemsize * count)
    data_offset = align(name_offset + len(names))
    descriptors, records, name_at, data_at = np.zeros(count, DESCRIPTOR_DTYPE), [], 0, 0
    for index, (tag, name, data) in enumerate(instances):
        flags = (0 if name else UNNAMED) | (PLACEHOLDER if data is None else 0)
        descriptors[index] = (tag, 0, name_at if name else 0, 0, flags)
        name_at += len(name) + 1 if name else 0
        if data is not None:
            descriptors["data_offset"][index], descriptors["data_size"][index] = data_at + 8, len(data) + 8
            records.append((data_at, (index << 8 | LINK_FLAG).to_bytes(4, "little") + bytes(4) + data))
            data_at += align(len(data) + 8)
    header = np.zeros((), HEADER_DTYPE)
    header["checksum"], header["version"], header["signature"] = PC_CHECKSUM, b"23RV", SIGNATURE
    header["instance_count"], header["data_offset"], header["data_size"] = count, data_offset, data_at
    header["name_offset"], header["name_size"] = name_offset, len(names)
    with_raw = len(raw) > ALIGN
    raw_offset = align(data_offset + data_at) if with_raw else 0
    header["raw_offset"], header["raw_size"] = raw_offset, len(raw) if with_raw else 0
    end = raw_offset + len(raw) if with_raw else data_offset + (records[-1][0] + len(records[-1][1]) if records else 0)
    out = bytearray(end)
    out[:64 + descriptors.nbytes] = header.tobytes() + descriptors.tobytes()
    out[name_offset:name_offset + len(names)] = names
    for at, record in records:
        out[data_offset + at:data_offset + at + len(record)] = record
    if with_raw:
        out[raw_offset:] = raw
    return bytes(out)


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN
