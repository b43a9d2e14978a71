"""Bytes of op2_art.prt and op2_art.bmp from the dataclasses (docs/outpost2.md 1, 2):
read -> write gives the same bytes."""

import numpy as np

from .prt import ANIMATION_DTYPE, ANIMATION_HEADER_DTYPE, PALETTE_DTYPE, SUBFRAME_DTYPE, PrtFile, bitmap_table


def prt_bytes(prt: PrtFile) -> bytes:
    """op2_art.prt for `prt`; the header's totals are counted from the animations."""
    palettes = np.zeros(len(prt.palettes), PALETTE_DTYPE)
    palettes["ppal"], palettes["ppal_length"] = b"PPAL", 1048
    palettes["head"], palettes["head_length"] = b"head", 4
    palettes["data"], palettes["data_length"] = b"data", 1024
    for i, palette in enumerate(prt.palettes):
        palettes[i]["colors"] = palette.colors
        palettes[i]["tags_left"] = palette.tags_left
    parts = [b"CPAL", _u32(len(prt.palettes)), palettes.tobytes(),
             _u32(len(prt.bitmaps)), bitmap_table(prt).tobytes()]
    header = np.zeros(1, ANIMATION_HEADER_DTYPE)
    header["animations"] = len(prt.animations)
    header["frames"] = sum(len(a.frames) for a in prt.animations)
    header["subframes"] = sum(len(f.subframes) for a in prt.animations for f in a.frames)
    header["optional_entries"] = prt.optional_entries
    parts.append(header.tobytes())
    for animation in prt.animations:
        head = np.zeros(1, ANIMATION_DTYPE)
        head["unknown"], head["unknown2"] = animation.unknown, animation.unknown2
        head["rect"], head["displacement"] = animation.rect, animation.displacement
        head["frame_count"] = len(animation.frames)
        parts.append(head.tobytes())
        for frame in animation.frames:
            parts.append(frame_bytes(frame))
        windows = np.asarray(animation.windows, "<u4").reshape(-1, 4)
        parts += [_u32(len(windows)), windows.tobytes()]
    parts.append(prt.trailing)
    return b"".join(parts)


def frame_bytes(frame) -> bytes:
    """docs/outpost2.md 1.3: two bytes, the optional bytes they announce, the subframes."""
    count = len(frame.subframes)
    if count > 0x7F or frame.unknown > 0x7F:
        raise ValueError("a frame holds at most 127 subframes and a 7-bit unknown")
    b0 = count | (0x80 if frame.optional1 is not None else 0)
    b1 = frame.unknown | (0x80 if frame.optional2 is not None else 0)
    subframes = np.asarray(frame.subframes, SUBFRAME_DTYPE)
    return (bytes([b0, b1]) + (frame.optional1 or b"") + (frame.optional2 or b"") + subframes.tobytes())


def bmp_bytes(pixels: bytes, header: bytes | None = None) -> bytes:
    """op2_art.bmp: `header` (everything before the pixel data; a 14 + 40 + 1024-byte
    8-bit BMP header if None), then `pixels` (docs/outpost2.md 2)."""
    if header is None:
        start = 14 + 40 + 1024
        header = (b"BM" + _u32(start + len(pixels)) + b"\0\0\0\0" + _u32(start)
                  + _u32(40) + _u32(1) + _u32(1) + (1).to_bytes(2, "little") + (8).to_bytes(2, "little")
                  + _u32(0) + _u32(len(pixels)) + _u32(0) + _u32(0) + _u32(256) + _u32(0)
                  + bytes(1024))
    return header + pixels


def pack_bitmaps(bitmaps, images) -> bytes:
    """Lay out stored pixel data: for bitmap i (a prt.Bitmap whose stride, height, width
    and type are set) `images[i]` is a (height, width) array of palette indices, or of
    0/1 for shadows. Sets each bitmap's offset; returns the pixel data."""
    out, pos = [], 0
    for bitmap, image in zip(bitmaps, images):
        image = np.asarray(image, np.uint8).reshape(bitmap.height, bitmap.width)
        rows = np.packbits(image, axis=1) if bitmap.shadow else image
        stored = np.zeros((bitmap.height, bitmap.stride), np.uint8)
        stored[:, :rows.shape[1]] = rows
        bitmap.offset = pos
        out.append(stored.tobytes())
        pos += stored.size
    return b"".join(out)


def _u32(value):
    return int(value).to_bytes(4, "little")
