"""Dialogue sounds (docs/stage.md 4): `sound_dialog_play NAME` names an impulse sound, the OSBD
`NAME.imp`; it names a group (`GROUP.grp`), whose permutations name the sound data (SNDD) that
holds the samples and their stored duration in ticks. OniSplit: Oni.Metadata/OniPcMetadata.cs
and OniMacMetadata.cs (osbd, sndd), Oni.Sound/OsbdXmlExporter.cs (the OSBD chunks and their
versions), Oni.Sound/SoundData.cs, Oni/InstanceFileWriter.cs (ConvertSNDDHack: the PC layout)."""

import numpy as np

from ....core.errors import ObanError
from ..container.container import CHECKSUMS, Container, counted
from ..level.arrays import text
from .model import OSBD_TAG, SNDD_TAG, SoundData

IMPULSE, GROUP = b"mISO", b"rGSO"    # an OSBD chunk's tag, as stored (OSIm, OSGr)
GROUP_NAME = slice(0x0C, 0x2C)       # an impulse's group name, past tag, size and version
# A group's permutation count by its version (the fields before it: volume from 2, pitch from 3, flags from 6)
GROUP_COUNT = {1: 0x10, 2: 0x14, 3: 0x18, 4: 0x18, 5: 0x18, 6: 0x1C}
PERMUTATION_DTYPE = np.dtype([("weight", "<i4"), ("volume", "<f4", 2), ("pitch", "<f4", 2), ("sound", "S32")])
PC_SNDD = np.dtype({"names": ["format", "channels", "rate", "duration", "size", "offset"],
                    "formats": ["<i2", "<i2", "<i4", "<i2", "<i4", "<u4"],
                    "offsets": [0x04, 0x06, 0x08, 0x36, 0x38, 0x3C], "itemsize": 0x40})
MAC_SNDD = np.dtype([("flags", "<i4"), ("duration", "<i4"), ("size", "<i4"), ("offset", "<u4")])
MAC_RATE = 22050                     # OniSplit's SoundData.Read: a Mac SNDD is 22050 Hz
assert PERMUTATION_DTYPE.itemsize == 0x34


def chunk(c: Container, index: int) -> bytes:
    """An OSBD's chunk (tag, size, version, body) from its raw data, its sizes checked."""
    data, _ = c.instance(index, OSBD_TAG)
    label = c.label(index)
    if len(data) < 8:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for an OSBD (8)")
    size, offset = (int(v) for v in np.frombuffer(data, "<u4", 2))
    if size < 12:
        raise ObanError(c.path, f"{label}: its sound chunk of {size} bytes is too short for its header (12)")
    raw = c.raw(offset, size, label)
    stated = int.from_bytes(raw[4:8], "little")
    if stated != size - 8:
        raise ObanError(c.path, f"{label}: its sound chunk says {stated} bytes follow its size, the OSBD {size - 8}")
    return raw


def impulse_group(c: Container, index: int) -> str:
    """The group an impulse sound (OSBD NAME.imp) plays."""
    raw = chunk(c, index)
    if raw[:4] != IMPULSE:
        raise ObanError(c.path, f"{c.label(index)}: a {raw[:4][::-1].decode('latin-1')!r} sound, not an impulse "
                                f"(OSIm)")
    if len(raw) < GROUP_NAME.stop:
        raise ObanError(c.path, f"{c.label(index)}: its impulse of {len(raw)} bytes is too short for its group name")
    return text(raw[GROUP_NAME])


def group_sounds(c: Container, index: int) -> list:
    """The sound names of a group's (OSBD GROUP.grp) permutations, in order."""
    raw, label = chunk(c, index), c.label(index)
    if raw[:4] != GROUP:
        raise ObanError(c.path, f"{label}: a {raw[:4][::-1].decode('latin-1')!r} sound, not a group (OSGr)")
    version = int.from_bytes(raw[8:12], "little")
    if version not in GROUP_COUNT:
        raise ObanError(c.path, f"{label}: sound group version {version} (1 to 6 are known)")
    return [text(p["sound"]) for p in counted(raw, PERMUTATION_DTYPE, c.path, label, "permutation",
                                              GROUP_COUNT[version])]


def sound_data_at(c: Container, index: int) -> SoundData:
    """A SNDD's format and stored duration: the PC layout, or the Mac one in a file of the Mac
    template checksum (OniSplit's IsMacFile); its sample data's range checked, not read."""
    data, _ = c.instance(index, SNDD_TAG)
    label = c.label(index)
    mac = CHECKSUMS.get(c.header["checksum"]) != "PC"
    dtype = MAC_SNDD if mac else PC_SNDD
    if len(data) < dtype.itemsize:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for a {'Mac' if mac else 'PC'} SNDD "
                                f"(0x{dtype.itemsize:x})")
    r = np.frombuffer(data, dtype, count=1)[0]
    channels, rate = ((int(r["flags"]) >> 1) + 1, MAC_RATE) if mac else (int(r["channels"]), int(r["rate"]))
    if channels not in (1, 2) or rate <= 0:
        raise ObanError(c.path, f"{label}: {channels} channels at {rate} Hz (1 or 2 channels, a positive rate)")
    if r["duration"] < 0 or r["size"] < 0:
        raise ObanError(c.path, f"{label}: duration {int(r['duration'])} ticks, {int(r['size'])} bytes of samples")
    size, offset = int(r["size"]), int(r["offset"])
    if offset + size > c.raw_size(label):
        c.raw(offset, size, label)   # raises, naming the raw data
    return SoundData(name=c.short_name(index), channels=channels, sample_rate=rate, data_size=size,
                     duration_ticks=int(r["duration"]))
