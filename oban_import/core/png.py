"""PNG bytes for 8-bit RGBA pixels (pure numpy and zlib): how a decoded texture is packed
into a .blend without Blender re-encoding it (what image.pack() of generated pixels does,
more slowly)."""

import struct
import zlib

import numpy as np

SAMPLE = 16 << 10   # bytes compressed first to tell whether compressing is worth it
INCOMPRESSIBLE = 0.9


def png_bytes(rgba: np.ndarray, level: int = 1) -> bytes:
    """(height, width, 4) uint8, top row first -> a PNG file: 8-bit RGB where every alpha is
    255 (a quarter less to compress), else RGBA; filter 0 on every row, zlib at `level` (1:
    fast, and the size stays close to a slow level's for texture data), or stored as it is
    where a sample of the rows does not compress (noise)."""
    height, width = rgba.shape[:2]
    rgba = np.asarray(rgba, np.uint8)
    channels = 3 if (rgba[:, :, 3] == 255).all() else 4
    rows = np.empty((height, 1 + channels * width), np.uint8)
    rows[:, 0] = 0
    rows[:, 1:].reshape(height, width, channels)[...] = rgba[:, :, :channels]
    data = rows.tobytes()
    if len(data) > 4 * SAMPLE and len(zlib.compress(data[:SAMPLE], level)) > INCOMPRESSIBLE * SAMPLE:
        level = 0
    colour = 2 if channels == 3 else 6
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)   # 8-bit RGB(A), no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(data, level))
            + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
