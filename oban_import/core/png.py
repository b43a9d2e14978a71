"""PNG bytes for 8-bit RGBA pixels (pure numpy and zlib): how a decoded texture is packed
into a .blend without Blender re-encoding it (what image.pack() of generated pixels does,
more slowly)."""

import struct
import zlib

import numpy as np

SAMPLE = 16 << 10   # bytes compressed first to tell whether compressing is worth it
INCOMPRESSIBLE = 0.9


def png_bytes(rgba: np.ndarray, level: int = 1) -> bytes:
    """(height, width, 4) uint8, top row first -> a PNG file: filter 0 on every row, zlib
    at `level` (1: fast, and the size stays close to a slow level's for texture data),
    or stored as it is where a sample of the rows does not compress (noise)."""
    height, width = rgba.shape[:2]
    rows = np.empty((height, 1 + 4 * width), np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = np.ascontiguousarray(rgba, np.uint8).reshape(height, 4 * width)
    data = rows.tobytes()
    if len(data) > 4 * SAMPLE and len(zlib.compress(data[:SAMPLE], level)) > INCOMPRESSIBLE * SAMPLE:
        level = 0
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)   # 8-bit RGBA, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(data, level))
            + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
