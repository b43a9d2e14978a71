"""TXMP textures (docs/objects.md 5): the header and the first level's pixels, in every
PC format, decoded to float32 RGBA with whole-array numpy (no loop per pixel or block).

An n-bit channel value x becomes x / (2^n - 1).
"""

import numpy as np

from ....core.errors import ObanError

TXMP_FIELDS = np.dtype([("flags", "<u4"), ("width", "<u2"), ("height", "<u2"), ("format", "<u4"),
                        ("animation", "<u4"), ("env_map", "<u4"), ("raw_offset", "<u4")])
TXMP_OFFSET = 0x80
HAS_MIPMAPS, NO_U_WRAP, NO_V_WRAP, HAS_ENV_MAP, ADDITIVE = 0x01, 0x04, 0x08, 0x200, 0x400
BGRA4444, BGR555, BGRA5551, RGBA, BGR, DXT1 = 0, 1, 2, 7, 8, 9
FORMAT_NAMES = {BGRA4444: "BGRA4444", BGR555: "BGR555", BGRA5551: "BGRA5551", RGBA: "RGBA", BGR: "BGR",
                DXT1: "DXT1"}
WITH_ALPHA = {BGRA4444, BGRA5551, RGBA, DXT1}


def pixel_bytes(width: int, height: int, fmt: int) -> int:
    """Bytes of the first level (DXT1: whole 4x4 blocks)."""
    if fmt == DXT1:
        return ((width + 3) // 4) * ((height + 3) // 4) * 8
    return width * height * (4 if fmt in (RGBA, BGR) else 2)


def level_sizes(width: int, height: int) -> list:
    """(w, h) of every level down to 1 x 1, each side halved (rounding down, never below 1)."""
    sizes = [(width, height)]
    while sizes[-1] != (1, 1):
        w, h = sizes[-1]
        sizes.append((max(w >> 1, 1), max(h >> 1, 1)))
    return sizes


def stored_bytes(width: int, height: int, fmt: int, flags: int) -> int:
    """Bytes of every level stored: the first, and with HasMipMaps each smaller one after it."""
    sizes = level_sizes(width, height) if flags & HAS_MIPMAPS else [(width, height)]
    return sum(pixel_bytes(w, h, fmt) for w, h in sizes)


def parse_header(data: bytes, path: str, label: str) -> dict:
    """The TXMP fields of an instance's data (past the record header), checked."""
    if len(data) < TXMP_OFFSET + TXMP_FIELDS.itemsize:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for a TXMP "
                              f"({TXMP_OFFSET + TXMP_FIELDS.itemsize} needed)")
    fields = np.frombuffer(data, TXMP_FIELDS, count=1, offset=TXMP_OFFSET)[0]
    header = {name: int(fields[name]) for name in TXMP_FIELDS.names}
    if header["format"] not in FORMAT_NAMES:
        raise ObanError(path, f"{label}: unknown texture format {header['format']} "
                              f"(known: {', '.join(f'{v} {n}' for v, n in FORMAT_NAMES.items())})")
    if header["width"] == 0 or header["height"] == 0:
        raise ObanError(path, f"{label}: zero-size texture ({header['width']} x {header['height']})")
    return header


def decode(raw: bytes, width: int, height: int, fmt: int, as_bytes: bool = False) -> np.ndarray:
    """(height, width, 4) float32 RGBA in 0..1, top row first, from the first level's bytes;
    `as_bytes`: uint8, round(255 x) of the same values, made without the floats (what a PNG takes)."""
    if fmt == DXT1:
        return _dxt1(raw, width, height, as_bytes)
    if fmt in (RGBA, BGR):
        texels = np.frombuffer(raw, np.uint8, count=width * height * 4).reshape(height, width, 4)
        if as_bytes:
            out = texels.copy() if fmt == RGBA else texels[..., [2, 1, 0, 3]]
            if fmt == BGR:
                out[..., 3] = 255
            return out
        out = texels * np.float32(1 / 255)
        if fmt == BGR:
            red = out[..., 2].copy()
            out[..., 2] = out[..., 0]
            out[..., 0], out[..., 3] = red, 1
        return out
    words = np.frombuffer(raw, "<u2", count=width * height)
    return _rows(_lut16(fmt, as_bytes), words).reshape(height, width, 4)


def _rows(table, index):
    """table[index] for a table of 4-channel rows; uint8 rows gathered as one 32-bit word each."""
    if table.dtype == np.uint8:
        return table.view(np.uint32)[index, 0].view(np.uint8)
    return table[index]


_LUTS = {}


def _lut16(fmt, as_bytes=False):
    """RGBA float32 (or uint8, round(255 x)) for all 65536 values of a 16-bit format, built once."""
    key = (fmt, as_bytes)
    if key not in _LUTS:
        if as_bytes:
            _LUTS[key] = to_bytes(_lut16(fmt))
            return _LUTS[key]
        x = np.arange(65536, dtype=np.uint32)
        if fmt == BGRA4444:
            channels = [(x >> 8) & 15, (x >> 4) & 15, x & 15, x >> 12]
            scale = [15, 15, 15, 15]
        else:
            alpha = x >> 15 if fmt == BGRA5551 else np.ones_like(x)
            channels = [(x >> 10) & 31, (x >> 5) & 31, x & 31, alpha]
            scale = [31, 31, 31, 1]
        _LUTS[key] = np.stack([c / np.float32(s) for c, s in zip(channels, scale)], axis=1).astype(np.float32)
    return _LUTS[key]


def to_bytes(values) -> np.ndarray:
    """0..1 floats -> uint8, round(255 x): the bytes of a decode."""
    return np.rint(values * np.float32(255)).astype(np.uint8)


def _rgb565(c):
    return np.stack([(c >> 11) / np.float32(31), ((c >> 5) & 63) / np.float32(63), (c & 31) / np.float32(31)],
                    axis=-1).astype(np.float32)


def _dxt1(raw, width, height, as_bytes=False):
    bw, bh = (width + 3) // 4, (height + 3) // 4
    blocks = np.frombuffer(raw, "<u4", count=bw * bh * 2).reshape(-1, 2)
    c0, c1 = blocks[:, 0] & 0xFFFF, blocks[:, 0] >> 16
    p0, p1 = _rgb565(c0), _rgb565(c1)
    four = (c0 > c1)[:, None]
    palette = np.empty((len(blocks), 4, 4), np.float32)
    palette[:, 0, :3], palette[:, 1, :3] = p0, p1
    palette[:, 2, :3] = np.where(four, (2 * p0 + p1) / 3, (p0 + p1) / 2)
    palette[:, 3, :3] = np.where(four, (p0 + 2 * p1) / 3, 0)
    palette[:, :3, 3] = 1
    palette[:, 3, 3] = np.where(four[:, 0], 1, 0)
    if as_bytes:
        palette = to_bytes(palette)
    codes = ((blocks[:, 1:2] >> (2 * np.arange(16, dtype=np.uint32))) & 3).astype(np.uint8)  # row by row
    # in image order (block row, texel row, block column, texel column): palette entry 4 * block + code
    codes = codes.reshape(bh, bw, 4, 4).transpose(0, 2, 1, 3)
    index = (4 * np.arange(len(blocks), dtype=np.int32)).reshape(bh, 1, bw, 1) + codes
    image = _rows(palette.reshape(-1, 4), index.reshape(-1)).reshape(bh * 4, bw * 4, 4)
    return image if (bh * 4, bw * 4) == (height, width) else np.ascontiguousarray(image[:height, :width])
