"""op2_art.prt: palettes, bitmap descriptions and animations (docs/outpost2.md 1).

`read_prt(path)` / `parse_prt(data, path)` give a `PrtFile` that keeps every stored
field, unknowns included, so `writer.prt_bytes` gives the same bytes back.
"""

from dataclasses import dataclass, field

import numpy as np

from ...core.errors import ObanError
from ...core.files import read_bytes

# docs/outpost2.md 1.1: one palette record, 1052 bytes
PALETTE_DTYPE = np.dtype([
    ("ppal", "S4"), ("ppal_length", "<u4"), ("head", "S4"), ("head_length", "<u4"),
    ("tags_left", "<u4"), ("data", "S4"), ("data_length", "<u4"), ("colors", "u1", (256, 4))])
PALETTE_TAGS = (("ppal", b"PPAL", "ppal_length", 1048), ("head", b"head", "head_length", 4),
                ("data", b"data", "data_length", 1024))
# docs/outpost2.md 1.2: ImageMeta, 20 bytes
BITMAP_DTYPE = np.dtype([("stride", "<u4"), ("offset", "<u4"), ("height", "<u4"), ("width", "<u4"),
                         ("type", "<u2"), ("palette", "<u2")])
# docs/outpost2.md 1.3
ANIMATION_HEADER_DTYPE = np.dtype([("animations", "<u4"), ("frames", "<u4"), ("subframes", "<u4"),
                                   ("optional_entries", "<u4")])
ANIMATION_DTYPE = np.dtype([("unknown", "<u4"), ("rect", "<i4", (4,)), ("displacement", "<i4", (2,)),
                            ("unknown2", "<u4"), ("frame_count", "<u4")])
SUBFRAME_DTYPE = np.dtype([("bitmap", "<u2"), ("unknown", "u1"), ("id", "u1"), ("x", "<i2"), ("y", "<i2")])
WINDOW_DTYPE = np.dtype(("<u4", (4,)))

TYPE_GAME = 0x01
TYPE_SHADOW = 0x04
TYPE_TRUCK_BED = 0x40


@dataclass
class Palette:
    colors: np.ndarray          # (256, 4) uint8 as stored: red, green, blue, x (docs/outpost2.md 1.1)
    tags_left: int = 1


@dataclass
class Bitmap:
    stride: int                 # bytes per stored row
    offset: int                 # from the .bmp's pixel data start (docs/outpost2.md 2)
    height: int
    width: int
    type: int
    palette: int

    @property
    def shadow(self) -> bool:
        return bool(self.type & TYPE_SHADOW)

    @property
    def row_bytes(self) -> int:
        """Bytes a row needs at least: 1 bit a pixel for shadows, else 1 byte."""
        return (self.width + 7) // 8 if self.shadow else self.width


@dataclass
class Frame:
    subframes: np.ndarray       # SUBFRAME_DTYPE records, drawn in order (docs/outpost2.md 3)
    unknown: int = 0            # bits 0-6 of the frame's second byte
    optional1: bytes | None = None   # 2 bytes announced by bit 7 of byte 0
    optional2: bytes | None = None   # 2 bytes announced by bit 7 of byte 1


@dataclass
class Animation:
    unknown: int = 0
    rect: tuple = (0, 0, 0, 0)          # selection rectangle as stored: left, top, right, bottom
    displacement: tuple = (0, 0)        # pixel displacement x, y
    unknown2: int = 0
    frames: list = field(default_factory=list)
    windows: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.uint32))


@dataclass
class PrtFile:
    palettes: list
    bitmaps: list
    animations: list
    optional_entries: int = 0           # the header's fourth count, meaning unknown
    trailing: bytes = b""               # bytes after the last animation, kept as they are


def read_prt(path) -> PrtFile:
    """Read op2_art.prt; ObanError for any bad input."""
    return parse_prt(read_bytes(path), path)


def parse_prt(data: bytes, path="op2_art.prt") -> PrtFile:
    """Parse the bytes of an op2_art.prt; ObanError naming the place for bad input."""
    data = bytes(data)
    reader = _Reader(data, path)
    palettes = _palettes(reader)
    bitmaps = _bitmaps(reader, len(palettes))
    header = reader.records(ANIMATION_HEADER_DTYPE, 1, "the animation header")[0]
    animations = _animations(reader, int(header["animations"]), len(bitmaps))
    frames = sum(len(a.frames) for a in animations)
    subframes = sum(len(f.subframes) for a in animations for f in a.frames)
    for name, actual in (("frames", frames), ("subframes", subframes)):
        if int(header[name]) != actual:
            raise ObanError(path, f"animation header (byte {reader.header_at + 4 * (1 + (name == 'subframes'))}) "
                                  f"says {int(header[name])} {name} in all but the animations hold {actual}")
    return PrtFile(palettes, bitmaps, animations, int(header["optional_entries"]), data[reader.pos:])


class _Reader:
    def __init__(self, data, path):
        self.data, self.path, self.pos, self.header_at = data, path, 0, 0

    def fail(self, problem):
        raise ObanError(self.path, problem)

    def u32(self, what):
        if self.pos + 4 > len(self.data):
            self.fail(f"truncated at byte {len(self.data)}: {what} at byte {self.pos} needs 4 bytes")
        value = int.from_bytes(self.data[self.pos:self.pos + 4], "little")
        self.pos += 4
        return value

    def records(self, dtype, count, what):
        """`count` records of `dtype` at pos, checked against the bytes left before reading."""
        need = count * dtype.itemsize
        left = len(self.data) - self.pos
        if need > left:
            self.fail(f"{what} at byte {self.pos} needs {need} bytes ({count} x {dtype.itemsize}) "
                      f"but only {left} are left")
        out = np.frombuffer(self.data, dtype, count, self.pos)
        self.pos += need
        return out


def _palettes(reader):
    """docs/outpost2.md 1.1"""
    if reader.data[:4] != b"CPAL":
        reader.fail(f"byte 0: tag {reader.data[:4]!r} is not b'CPAL' (not an op2_art.prt)")
    reader.pos = 4
    count = reader.u32("the palette count")
    start = reader.pos
    table = reader.records(PALETTE_DTYPE, count, f"{count} palettes")
    for tag_field, tag, length_field, length in PALETTE_TAGS:
        bad = np.flatnonzero((table[tag_field] != tag) | (table[length_field] != length))
        if len(bad):
            i = int(bad[0])
            at = start + i * PALETTE_DTYPE.itemsize + PALETTE_DTYPE.fields[tag_field][1]
            reader.fail(f"palette {i} (byte {at}): expected tag {tag!r} with length {length}, "
                        f"found {bytes(table[i][tag_field])!r} with length {int(table[i][length_field])}")
    return [Palette(table["colors"][i].copy(), int(table["tags_left"][i])) for i in range(count)]


def _bitmaps(reader, palette_count):
    """docs/outpost2.md 1.2"""
    count = reader.u32("the bitmap count")
    table = reader.records(BITMAP_DTYPE, count, f"{count} bitmap descriptions")
    bad = np.flatnonzero(table["palette"] >= palette_count)
    if len(bad):
        i = int(bad[0])
        reader.fail(f"bitmap {i}: palette index {int(table['palette'][i])} is out of range "
                    f"({palette_count} palettes)")
    columns = [table[name].tolist() for name in BITMAP_DTYPE.names]
    return [Bitmap(*row) for row in zip(*columns)]


def _animations(reader, count, bitmap_count):
    """docs/outpost2.md 1.3; frames have a variable size, so one loop step per frame finds
    their boundaries, then their subframes are cut from one array."""
    data, path = reader.data, reader.path
    reader.header_at = reader.pos - ANIMATION_HEADER_DTYPE.itemsize
    left = len(data) - reader.pos
    if count * 40 > left:   # an animation takes at least 40 bytes
        reader.fail(f"animation count {count} (byte {reader.header_at}) needs at least {count * 40} "
                    f"bytes but only {left} are left")
    size = len(data)
    pos = reader.pos
    heads, windows, layouts = [], [], []   # layouts: per animation, (frame start, b0, b1) lists
    for index in range(count):
        if pos + ANIMATION_DTYPE.itemsize > size:
            reader.fail(f"animation {index} (byte {pos}): truncated at byte {size}")
        heads.append(pos)
        frame_count = int.from_bytes(data[pos + 32:pos + 36], "little")
        pos += ANIMATION_DTYPE.itemsize
        if frame_count * 2 > size - pos:
            reader.fail(f"animation {index} (byte {pos - 4}): frame count {frame_count} needs at least "
                        f"{frame_count * 2} bytes but only {size - pos} are left")
        starts = []
        for frame in range(frame_count):
            if pos + 2 > size:
                reader.fail(f"animation {index} frame {frame} (byte {pos}): truncated at byte {size}")
            b0, b1 = data[pos], data[pos + 1]
            end = pos + 2 + ((b0 >> 7) + (b1 >> 7)) * 2 + (b0 & 0x7F) * 8
            if end > size:
                reader.fail(f"animation {index} frame {frame} (byte {pos}): needs {end - pos} bytes "
                            f"but only {size - pos} are left")
            starts.append(pos)
            pos = end
        if pos + 4 > size:
            reader.fail(f"animation {index} (byte {pos}): truncated at byte {size}: the window count needs 4 bytes")
        layouts.append(starts)
        window_count = int.from_bytes(data[pos:pos + 4], "little")
        pos += 4
        if window_count * 16 > size - pos:
            reader.fail(f"animation {index} (byte {pos - 4}): window count {window_count} needs "
                        f"{window_count * 16} bytes but only {size - pos} are left")
        windows.append(np.frombuffer(data, WINDOW_DTYPE, window_count, pos).copy())
        pos += window_count * 16
    reader.pos = pos
    return _build(data, path, heads, layouts, windows, bitmap_count)


def _build(data, path, heads, layouts, windows, bitmap_count):
    raw = np.frombuffer(data, np.uint8)
    starts = np.fromiter((s for starts in layouts for s in starts), np.int64)
    b0 = raw[starts].astype(np.int64)
    b1 = raw[starts + 1].astype(np.int64)
    counts = b0 & 0x7F
    first = starts + 2 + ((b0 >> 7) + (b1 >> 7)) * 2          # first subframe of each frame
    total = int(counts.sum())
    frame_of = np.repeat(np.arange(len(starts)), counts)
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    offsets = first[frame_of] + within * 8
    subframes = np.zeros(total, SUBFRAME_DTYPE)
    if total:
        byte_view = raw[offsets[:, None] + np.arange(8)]
        subframes = byte_view.copy().view(SUBFRAME_DTYPE).reshape(total)
    bad = np.flatnonzero(subframes["bitmap"] >= bitmap_count)
    frame_base = np.cumsum([0] + [len(s) for s in layouts]).tolist()
    if len(bad):
        j = int(bad[0])
        f = int(frame_of[j])
        a = int(np.searchsorted(frame_base, f, side="right") - 1)
        raise ObanError(path, f"animation {a} frame {f - frame_base[a]} subframe {int(within[j])} "
                              f"(byte {int(offsets[j])}): bitmap index {int(subframes['bitmap'][j])} "
                              f"is out of range ({bitmap_count} bitmaps)")
    head_table = np.frombuffer(b"".join(data[h:h + ANIMATION_DTYPE.itemsize] for h in heads), ANIMATION_DTYPE)
    ends = np.cumsum(counts)
    sub_starts = (ends - counts).tolist()
    ends = ends.tolist()
    b1_low = (b1 & 0x7F).tolist()
    has1, has2 = (b0 >> 7).tolist(), (b1 >> 7).tolist()
    frames = [Frame(subframes[s:e], u,
                    data[p + 2:p + 4] if h1 else None,
                    data[p + 2 + 2 * h1:p + 4 + 2 * h1] if h2 else None)
              for s, e, u, h1, h2, p in zip(sub_starts, ends, b1_low, has1, has2, starts.tolist())]
    animations = []
    rects, disps = head_table["rect"].tolist(), head_table["displacement"].tolist()
    for i, (unknown, unknown2) in enumerate(zip(head_table["unknown"].tolist(), head_table["unknown2"].tolist())):
        animations.append(Animation(unknown, tuple(rects[i]), tuple(disps[i]), unknown2,
                                    frames[frame_base[i]:frame_base[i + 1]], windows[i]))
    return animations


def joined_subframes(frames) -> np.ndarray:
    """Every subframe of `frames`, in order, as one SUBFRAME_DTYPE array (fast for many frames)."""
    return np.frombuffer(b"".join(np.asarray(f.subframes, SUBFRAME_DTYPE).tobytes() for f in frames),
                         SUBFRAME_DTYPE)


def bitmap_table(prt: PrtFile) -> np.ndarray:
    """The bitmap descriptions as one BITMAP_DTYPE array."""
    table = np.zeros(len(prt.bitmaps), BITMAP_DTYPE)
    for name in BITMAP_DTYPE.names:
        table[name] = [getattr(b, name) for b in prt.bitmaps]
    return table
