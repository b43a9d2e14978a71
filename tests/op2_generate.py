"""Generated op2_art.prt + op2_art.bmp pairs (docs/outpost2.md 5): several palettes, 8-bit and
shadow bitmaps of odd widths, frames with 0, 2 and 4 optional bytes, windows, negative offsets."""

import numpy as np

from oban_import.outpost2.prt import (SUBFRAME_DTYPE, TYPE_GAME, TYPE_SHADOW, Animation, Bitmap, Frame,
                                      Palette, PrtFile)
from oban_import.outpost2.writer import bmp_bytes, pack_bitmaps, prt_bytes


def random_art(rng, palettes=3, bitmaps=12, animations=4, max_frames=6, max_subframes=4, max_size=23):
    """(PrtFile, pixel data bytes, images): images[i] holds bitmap i's indices (0/1 for shadows)."""
    pals = []
    for _ in range(palettes):
        colors = rng.integers(0, 256, (256, 4), dtype=np.uint8)
        colors[:, 3] = 4
        pals.append(Palette(colors, 1))
    bms, images = [], []
    for i in range(bitmaps):
        shadow = i % 3 == 2
        width, height = int(rng.integers(1, max_size)) | 1, int(rng.integers(1, max_size))  # odd widths
        if i % 5 == 4:
            width += 1
        row = (width + 7) // 8 if shadow else width
        stride = (row + 3) // 4 * 4
        kind = (TYPE_SHADOW if shadow else 0) | (TYPE_GAME if i % 2 else 0) | (0x40 if i % 7 == 6 else 0)
        bms.append(Bitmap(stride, 0, height, width, kind, int(rng.integers(0, palettes))))
        high = 2 if shadow else 256
        image = rng.integers(0, high, (height, width), dtype=np.uint8)
        if not shadow:
            image[rng.random((height, width)) < 0.3] = 0          # transparent pixels
        images.append(image)
    pixels = pack_bitmaps(bms, images)
    anims = []
    for a in range(animations):
        frames = []
        for f in range(int(rng.integers(1, max_frames + 1))):
            count = int(rng.integers(0 if f % 4 == 3 else 1, max_subframes + 1))
            subs = np.zeros(count, SUBFRAME_DTYPE)
            subs["bitmap"] = rng.integers(0, bitmaps, count)
            subs["unknown"] = rng.integers(0, 256, count)
            subs["id"] = rng.integers(0, 256, count)
            subs["x"] = rng.integers(-30, 20, count)
            subs["y"] = rng.integers(-30, 20, count)
            kind = (a + f) % 4      # 0, 2 (either bit) or 4 optional bytes
            opt1 = bytes(rng.integers(0, 256, 2, dtype=np.uint8)) if kind in (1, 3) else None
            opt2 = bytes(rng.integers(0, 256, 2, dtype=np.uint8)) if kind in (2, 3) else None
            frames.append(Frame(subs, int(rng.integers(0, 128)), opt1, opt2))
        windows = rng.integers(0, 2**32, (a % 3, 4), dtype=np.uint64).astype(np.uint32)
        rect = tuple(int(v) for v in rng.integers(-40, 40, 4))
        anims.append(Animation(int(rng.integers(0, 2**32)), rect, tuple(int(v) for v in rng.integers(-20, 20, 2)),
                               int(rng.integers(0, 2**32)), frames, windows))
    return PrtFile(pals, bms, anims, int(rng.integers(0, 1000))), pixels, images


def write_pair(directory, rng, prt_name="op2_art.prt", bmp_name="op2_art.bmp", **kwargs):
    """Writes a random pair into `directory`; returns (prt path, bmp path, PrtFile, images)."""
    prt, pixels, images = random_art(rng, **kwargs)
    prt_path, bmp_path = directory / prt_name, directory / bmp_name
    prt_path.write_bytes(prt_bytes(prt))
    bmp_path.write_bytes(bmp_bytes(pixels))
    return prt_path, bmp_path, prt, images


def retail_size(rng):
    """PrtFile bytes the size of the retail file: 9 palettes, 5,400 bitmaps, 2,000
    animations, 40,000 frames (about 3 subframes each), some optional bytes and windows."""
    return random_art(rng, palettes=9, bitmaps=5400, animations=2000, max_frames=39, max_subframes=5,
                      max_size=8)
