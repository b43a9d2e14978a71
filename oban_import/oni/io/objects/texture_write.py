"""TXMP textures back to bytes (docs/objects.md 9): a VR32 .oni holding the TXMP and its
pixels in its raw table, laid out as OniSplit's `-create:txmp` writes them, from 8-bit RGBA
pixels: every PC format encoded as OniSplit encodes it (n-bit channels truncated; DXT1 its
blocks, replaced where other endpoints decode closer), the mipmap levels made by OniSplit's
filter, all whole-array numpy.
"""

import numpy as np

from ....core.errors import ObanError
from ..container.container import LINK_FLAG, TXMP_TAG
from ..container.instance_file import ALIGN, instance_file_bytes, instance_name
from .textures import (BGR, BGRA4444, BGRA5551, DXT1, FORMAT_NAMES, HAS_ENV_MAP, HAS_MIPMAPS, RGBA, TXMP_OFFSET, decode,
                       level_sizes)

SWAP_BYTES = 0x1000     # the engine's "little-endian" flag: OniSplit sets it for every format but RGBA
MAX_SIZE = 0xFFFF       # width and height are u16
MAX_RAW = 0x7FFFFFFF    # OniSplit's and the header's raw table size is an i32
INVERSE_255 = np.float32(1) / np.float32(255)
FAR = 1 << 20           # a DXT1 texel's distance to a transparent colour: past any real one (3 x 255^2)
UNUSABLE = 1 << 40      # a DXT1 block's error past any real one (16 x 3 x 255^2)


def texture_file_bytes(name: str, rgba, fmt: int, flags: int, env_map: str | None = None) -> bytes:
    """A VR32 .oni holding TXMP`name`: (h, w, 4) uint8 RGBA pixels, top row first, stored in
    format `fmt` with `flags` as given; with HasMipMaps (0x01) every smaller level down to
    1 x 1 follows the first. `env_map` names the environment map TXMP, linked as a placeholder."""
    rgba = checked_pixels(instance_name("TXMP", name), rgba, fmt, flags)
    levels = mip_levels(rgba) if flags & HAS_MIPMAPS else [rgba]
    return txmp_file_bytes(name, rgba.shape[1], rgba.shape[0], fmt, flags,
                           b"".join(encode(level, fmt) for level in levels), env_map)


def txmp_file_bytes(name: str, width: int, height: int, fmt: int, flags: int, pixels: bytes,
                    env_map: str | None = None) -> bytes:
    """A VR32 .oni holding TXMP`name` of these fields and `pixels`, every level's bytes as
    stored (texture_file_bytes encodes them; an unedited texture gives its own)."""
    full = instance_name("TXMP", name)
    raw = bytes(ALIGN) + pixels
    if len(raw) > MAX_RAW:
        raise ObanError(full, f"{len(raw)} bytes of pixels, more than a .oni's raw table holds ({MAX_RAW})")
    instances = [(TXMP_TAG, full, None)]
    env_link = 0
    if env_map:
        instances.append((TXMP_TAG, instance_name("TXMP", env_map), None))
        env_link = 1 << 8 | LINK_FLAG
    fields = np.array([(flags, width, height, fmt, 0, env_link, ALIGN)],
                      [("flags", "<u4"), ("width", "<u2"), ("height", "<u2"), ("format", "<u4"),
                       ("animation", "<u4"), ("env_map", "<u4"), ("raw_offset", "<u4")])
    instances[0] = (TXMP_TAG, full, bytes(TXMP_OFFSET) + fields.tobytes() + bytes(12))
    return instance_file_bytes(instances, raw)


def onisplit_flags(flags: int, fmt: int, mipmaps: bool, env_map: bool = False) -> int:
    """`flags` as OniSplit's -create:txmp sets them for `fmt`: SwapBytes (0x1000) for every
    format but RGBA, HasMipMaps (0x01) and HasEnvMap (0x200) as asked."""
    flags &= ~(SWAP_BYTES | HAS_MIPMAPS | HAS_ENV_MAP)
    return (flags | (0 if fmt == RGBA else SWAP_BYTES) | (HAS_MIPMAPS if mipmaps else 0)
            | (HAS_ENV_MAP if env_map else 0))


def checked_pixels(full: str, rgba, fmt: int, flags: int) -> np.ndarray:
    """The pixels as a (h, w, 4) uint8 array, checked to be storable in `fmt`."""
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ObanError(full, f"pixels of shape {rgba.shape} and type {rgba.dtype}, not (height, width, 4) uint8")
    if fmt not in FORMAT_NAMES:
        raise ObanError(full, f"unknown texture format {fmt} (known: "
                              f"{', '.join(f'{v} {n}' for v, n in FORMAT_NAMES.items())})")
    h, w = rgba.shape[:2]
    if not (1 <= w <= MAX_SIZE and 1 <= h <= MAX_SIZE):
        raise ObanError(full, f"a {w} x {h} texture: width and height must be 1 to {MAX_SIZE}")
    bad = _partial_levels(w, h, fmt, flags)
    if bad:
        raise ObanError(full, f"a {w} x {h} DXT1 texture{' with mipmaps' if flags & HAS_MIPMAPS else ''}: "
                              f"its {bad[0][0]} x {bad[0][1]} level is not whole 4 x 4 blocks (each side "
                              "1, 2 or a multiple of 4 at every level; with mipmaps, powers of two)")
    return np.ascontiguousarray(rgba)


def fits(width: int, height: int, fmt: int, flags: int) -> bool:
    """Whether `fmt` stores a texture of this size (with these flags' mipmaps): DXT1 whole
    4 x 4 blocks at every level, any other format any size."""
    return not _partial_levels(width, height, fmt, flags)


def _partial_levels(width, height, fmt, flags) -> list:
    """(w, h) of the DXT1 levels that are not whole blocks: OniSplit reads a DXT1 level as
    max(w, 4) * max(h, 4) / 2 bytes, so each side must be 1, 2 or a multiple of 4."""
    if fmt != DXT1:
        return []
    sizes = level_sizes(width, height) if flags & HAS_MIPMAPS else [(width, height)]
    return [(w, h) for w, h in sizes if not all(n <= 2 or n % 4 == 0 for n in (w, h))]


def lossless(rgba, fmt: int) -> bool:
    """Whether `fmt` holds the (h, w, 4) uint8 pixels exactly: they decode (textures.decode,
    as_bytes) to themselves once encoded. A 16-bit format holds a channel on its n-bit grid
    (x * 255 / (2^n - 1) rounded), BGR and BGR555 opaque pixels only, DXT1 what its blocks can."""
    rgba = np.asarray(rgba, np.uint8)
    h, w = rgba.shape[:2]
    return bool((decode(encode(rgba, fmt), w, h, fmt, as_bytes=True) == rgba).all())


# --- the encoders (OniSplit's Oni.Imaging Color.Write*, Dxt1.Compress) -------------------

def encode(rgba: np.ndarray, fmt: int) -> bytes:
    """One level's bytes in `fmt`, top row first."""
    if fmt == RGBA:
        return rgba.tobytes()
    if fmt == BGR:
        out = rgba[..., [2, 1, 0, 3]]
        out[..., 3] = 255
        return out.tobytes()
    if fmt == DXT1:
        return dxt1_bytes(rgba)
    r, g, b, a = (rgba[..., k].astype(np.uint16) for k in range(4))
    if fmt == BGRA4444:
        words = b >> 4 | (g & 0xF0) | (r >> 4) << 8 | (a & 0xF0) << 8
    else:   # BGR555 and BGRA5551; OniSplit's BGR555 sets bit 15 too
        words = b >> 3 | (g >> 3) << 5 | (r >> 3) << 10 | ((a & 0x80) << 8 if fmt == BGRA5551 else 0x8000)
    return words.astype("<u2").tobytes()


def dxt1_bytes(rgba: np.ndarray) -> bytes:
    """DXT1 blocks of 8 bytes, row by row, padded with opaque black as OniSplit pads them. A
    texel with alpha below 128 is transparent (code 3 of a three-colour block). Each block is
    first OniSplit's: c0 = the bounding box's minimum, c1 its maximum (c0 <= c1: three colours
    and transparent), each texel the nearest (in 0..1 floats) of c0, c1 and their midpoint
    before quantising; then any of a few other pairs of endpoints that decodes strictly closer
    replaces it (_endpoint_candidates; each in four-colour and three-colour order, texels the
    nearest of the colours as decoded), so that the pixels of a decoded DXT1 block are, as a
    rule, encoded back to themselves."""
    h, w = rgba.shape[:2]
    bh, bw = (h + 3) // 4, (w + 3) // 4
    padded = np.zeros((4 * bh, 4 * bw, 4), np.uint8)
    padded[..., 3] = 255
    padded[:h, :w] = rgba
    blocks = padded.reshape(bh, 4, bw, 4, 4).transpose(0, 2, 1, 3, 4).reshape(-1, 16, 4)
    colour, opaque = blocks[..., :3].astype(np.int32), blocks[..., 3] >= 128
    best, best_error = _onisplit_blocks(blocks, colour, opaque)
    for low, high in _endpoint_candidates(colour, opaque):
        orders = ((np.maximum(low, high), np.minimum(low, high)),    # c0 > c1: four colours
                  (np.minimum(low, high), np.maximum(low, high)))    # c0 <= c1: three and transparent
        for c0, c1 in orders:
            words, error = _nearest_blocks(c0, c1, colour, opaque)
            better = error < best_error
            best, best_error = np.where(better[:, None], words, best), np.where(better, error, best_error)
    return best.astype("<u4").tobytes()


def _onisplit_blocks(blocks, colour, opaque):
    """OniSplit's Dxt1.Compress of each block ((n, 2) u32 words) and its error as decoded;
    transparent texels left out of the box and set to code 3."""
    vector = blocks[..., :3].astype(np.float32) * INVERSE_255            # Color.ToVector3
    low = np.where(opaque[..., None], vector, np.float32(np.inf)).min(axis=1)
    high = np.where(opaque[..., None], vector, np.float32(-np.inf)).max(axis=1)
    empty = ~opaque.any(axis=1)
    low[empty], high[empty] = 0, 0
    middle = low + (high - low) * np.float32(0.5)                          # Vector3.Lerp
    codes = np.argmin(np.stack([_squared(entry[:, None, :] - vector) for entry in (low, high, middle)],
                               axis=2), axis=2)                            # Dxt1.LookupNearest
    codes = np.where(opaque, codes, 3)
    c0, c1 = _rgb565(_to_byte(low)), _rgb565(_to_byte(high))
    distance, transparent_ok = _distances(c0, c1, colour)
    return _words(c0, c1, codes), _error(distance, codes, opaque, transparent_ok)


def _endpoint_candidates(colour, opaque):
    """Pairs of (n,) RGB565 endpoints to try. The opaque texels farthest apart along the block's
    principal direction (its signs from the covariances with the widest channel) taken as the
    two ends, as the two thirds, as an end and a third, as an end and the midpoint (each
    rounded to the nearest 5- or 6-bit value), and rounded down and up (a single colour between
    two steps); and the bounding box's corners on that diagonal. The colours of any decoded
    block are among the first ones' (tests/oni/io/test_objects_write.py)."""
    weight = opaque[..., None]
    count = np.maximum(opaque.sum(axis=1), 1)[:, None, None]
    low = np.where(weight, colour, 255).min(axis=1)
    high = np.where(weight, colour, 0).max(axis=1)
    centred = (colour * count - (colour * weight).sum(axis=1, keepdims=True)) * weight   # count x (c - mean)
    widest = np.take_along_axis(centred, np.argmax(high - low, axis=1)[:, None, None], axis=2)
    sign = np.where((centred.astype(np.int64) * widest).sum(axis=1) >= 0, 1, -1)        # (n, rgb)
    along = np.where(opaque, (colour * sign[:, None, :]).sum(axis=2), 0)
    rows = np.arange(len(colour))
    first = colour[rows, np.argmin(np.where(opaque, along, np.iinfo(np.int32).max), axis=1)].astype(np.float64)
    last = colour[rows, np.argmax(np.where(opaque, along, np.iinfo(np.int32).min), axis=1)].astype(np.float64)
    pairs = [(first, last), (2 * first - last, 2 * last - first), (first, (3 * last - first) / 2),
             ((3 * first - last) / 2, last), (first, 2 * last - first), (2 * first - last, last),
             (np.where(sign > 0, low, high), np.where(sign > 0, high, low))]
    return ([(_quantised(a, np.rint), _quantised(b, np.rint)) for a, b in pairs]
            + [(_quantised(first, np.floor), _quantised(last, np.ceil)),
               (_quantised(first, np.ceil), _quantised(last, np.floor))])


def _quantised(rgb, rounding):
    """RGB565 of (n, 3) 0..255 colours, each channel's 5 or 6 bits `rounding` (np.rint, np.floor,
    np.ceil) of its value on that scale."""
    bits = np.clip(rounding(np.asarray(rgb, np.float64) * ((31, 63, 31) / np.float64(255))), 0, (31, 63, 31))
    bits = bits.astype(np.uint32)
    return bits[:, 0] << 11 | bits[:, 1] << 5 | bits[:, 2]


def _nearest_blocks(c0, c1, colour, opaque):
    """Blocks of these endpoints, each opaque texel the nearest opaque colour as decoded, each
    transparent one code 3; and their errors."""
    distance, transparent_ok = _distances(c0, c1, colour)
    codes = np.where(opaque, np.argmin(distance, axis=2), 3)
    return _words(c0, c1, codes), _error(distance, codes, opaque, transparent_ok)


def _distances(c0, c1, colour):
    """((n, 16, 4) squared RGB distance from each texel to each colour the endpoints decode to,
    past any possible error for a transparent colour; (n,) whether code 3 is transparent)."""
    palette = _palettes(c0, c1)
    distance = np.stack([_squared(palette[:, None, k, :3].astype(np.int32) - colour) for k in range(4)], axis=2)
    distance[np.broadcast_to((palette[:, None, :, 3] == 0), distance.shape)] = FAR
    return distance, palette[:, 3, 3] == 0


def _error(distance, codes, opaque, transparent_ok):
    """Each block's summed squared RGB error over its opaque texels; UNUSABLE where it holds a
    transparent texel and code 3 is not transparent."""
    chosen = np.take_along_axis(distance, np.asarray(codes, np.intp)[..., None], axis=2)[..., 0]
    unusable = np.where(opaque.all(axis=1) | transparent_ok, 0, UNUSABLE)
    return np.where(opaque, chosen, 0).sum(axis=1, dtype=np.int64) + unusable


def _squared(step):
    """Squared length of the last axis, summed x, y, z in order (Vector3.LengthSquared)."""
    return step[..., 0] * step[..., 0] + step[..., 1] * step[..., 1] + step[..., 2] * step[..., 2]


def _palettes(c0, c1):
    """(n, 4, 4) uint8: the four RGBA colours each block's codes give, as the reader decodes them."""
    words = _words(c0, c1, np.tile(np.arange(4, dtype=np.uint32), (len(c0), 4)))   # row 0: codes 0 1 2 3
    texels = decode(words.astype("<u4").tobytes(), 4 * len(c0), 4, DXT1, as_bytes=True)
    return texels[0].reshape(-1, 4, 4)


def _words(c0, c1, codes):
    """(n, 2) uint32: c0 | c1 << 16, then 2 bits a texel from bit 0, row by row."""
    bits = (np.asarray(codes, np.uint32) << (2 * np.arange(16, dtype=np.uint32))).sum(axis=1, dtype=np.uint32)
    return np.stack([np.asarray(c0, np.uint32) | np.asarray(c1, np.uint32) << 16, bits], axis=1)


def _rgb565(rgb):
    """Color.WriteBgr565: the top 5, 6, 5 bits of red, green, blue."""
    rgb = np.asarray(rgb, np.uint32)
    return (rgb[..., 0] >> 3) << 11 | (rgb[..., 1] >> 2) << 5 | rgb[..., 2] >> 3


def _to_byte(values):
    """C#'s (byte)(v * 255f): truncated, and past 255 wrapped, as OniSplit's Color(Vector) casts."""
    return ((values * np.float32(255)).astype(np.int64) & 0xFF).astype(np.uint8)


# --- mipmaps (OniSplit's Oni.Imaging Surface.Resize) ----------------------------------------

def mip_levels(rgba: np.ndarray) -> list:
    """Every level down to 1 x 1, each made from the one before as OniSplit's -create:txmp
    makes it, in float32 like it: a 2 x 2 box where both sides halve, its general box filter
    otherwise (a side of 1 or odd). That filter counts a side that stays 1 pixel twice, so
    those levels (w x 1 or 1 x h after the first) hold twice the mean, wrapped past 255, as
    OniSplit's do (docs/objects.md 9). Where the pixels are all opaque, alpha stays 255
    (OniSplit drops the alpha channel of an image without transparent pixels)."""
    levels, opaque = [rgba], bool((rgba[..., 3] == 255).all())
    for w, h in level_sizes(rgba.shape[1], rgba.shape[0])[1:]:
        level = _resize(levels[-1], w, h)
        if opaque:
            level[..., 3] = 255
        levels.append(level)
    return levels


def _resize(image, width, height):
    """Surface.Resize to (width, height), never larger."""
    colour = image.astype(np.float32) * INVERSE_255                         # Color.ToVector4
    if (2 * width, 2 * height) == image.shape[1::-1]:                      # Surface.Halfsize
        total = ((colour[0::2, 0::2] + colour[0::2, 1::2]) + colour[1::2, 0::2]) + colour[1::2, 1::2]
        return _to_byte(total * np.float32(0.25))
    y0, y1, top, bottom, y_span = _spans(image.shape[0], height)
    x0, x1, left, right, x_span = _spans(image.shape[1], width)
    y0, y1, top, bottom, y_span = (v[:, None] for v in (y0, y1, top, bottom, y_span))

    def at(x, y, weight=None, inside=True):
        values = colour[np.minimum(y, image.shape[0] - 1), np.minimum(x, image.shape[1] - 1)]
        values = values if weight is None else values * weight[..., None]
        return np.where(np.asarray(inside)[..., None], values, np.float32(0))

    total = at(x0, y0, left * top) + at(x1, y0, right * top)               # the corners
    total = total + at(x0, y1, left * bottom)
    total = total + at(x1, y1, right * bottom)
    rows, columns = int((y1 - y0).max()) - 1, int((x1 - x0).max()) - 1
    for k in range(rows):                                                   # the left and right edges
        y, inside = y0 + 1 + k, y0 + 1 + k < y1
        total = total + at(x0, y, left, inside)
        total = total + at(x1, y, right, inside)
    for k in range(columns):                                                # the top and bottom edges
        x, inside = x0 + 1 + k, x0 + 1 + k < x1
        total = total + at(x, y0, top, inside)
        total = total + at(x, y1, bottom, inside)
    for k in range(rows):                                                   # the inside, row by row
        for j in range(columns):
            total = total + at(x0 + 1 + j, y0 + 1 + k, None, (y0 + 1 + k < y1) & (x0 + 1 + j < x1))
    return _to_byte(total * (np.float32(1) / (x_span * y_span)[..., None]))


def _spans(size, new):
    """Per output pixel along one side: its first and last source pixel, their weights (the
    parts of them it covers) and its width in source pixels, as Surface.Resize computes them."""
    ratio = np.float32(size) / np.float32(new)
    start = np.arange(new, dtype=np.float32) * ratio
    end = start + ratio
    first = start.astype(np.int64)
    last = (end - np.float32(0.001)).astype(np.int64)
    return (first, last, np.float32(1) - (start - first.astype(np.float32)), end - last.astype(np.float32),
            end - start)
