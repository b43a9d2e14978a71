"""Writes examples/op2_art.prt and examples/op2_art.bmp (docs/outpost2.md 5) with the project's
writer: animation 0, a building whose light blinks, with a shadow; animation 1, a unit
turning through 8 directions, with its shadow.

    python tools/make_op2_example.py [OUT_DIR]
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from oban_import.outpost2.io.prt import (SUBFRAME_DTYPE, TYPE_GAME, TYPE_SHADOW, Animation, Bitmap, Frame, Palette,
                                         PrtFile)
from oban_import.outpost2.io.writer import bmp_bytes, pack_bitmaps, prt_bytes  # noqa: E402


def palette(tint):
    colors = np.zeros((256, 4), np.uint8)
    ramp = np.arange(256)
    colors[:, 0] = np.clip(ramp * tint[0], 0, 255)
    colors[:, 1] = np.clip(ramp * tint[1], 0, 255)
    colors[:, 2] = np.clip(ramp * tint[2], 0, 255)
    colors[:, 3] = 4
    return Palette(colors, 1)


def add(bitmaps, images, image, shadow=False, palette_index=0):
    height, width = image.shape
    row = (width + 7) // 8 if shadow else width
    kind = TYPE_GAME | (TYPE_SHADOW if shadow else 0)
    bitmaps.append(Bitmap((row + 3) // 4 * 4, 0, height, width, kind, palette_index))
    images.append(image.astype(np.uint8))
    return len(bitmaps) - 1


def subframes(*items):
    out = np.zeros(len(items), SUBFRAME_DTYPE)
    for i, (bitmap, x, y) in enumerate(items):
        out[i]["bitmap"], out[i]["id"], out[i]["x"], out[i]["y"] = bitmap, i, x, y
    return out


def building(bitmaps, images):
    """A 47 x 33 block with a roof, a door and a light that blinks through 4 colours."""
    h, w = 33, 47
    y, x = np.mgrid[:h, :w]
    body = np.where(y < 10, 200 - 4 * y, 120 + (x % 8 == 0) * 40).astype(np.uint8)
    body[20:33, 18:28] = 60                                  # the door
    body[:4, :4] = body[:4, -4:] = 0                         # rounded corners: transparent
    base = add(bitmaps, images, body)
    shade = np.zeros((15, 51), np.uint8)
    shade[np.add.outer(np.arange(15), np.arange(51)) % 51 < 40] = 1
    shadow = add(bitmaps, images, shade, shadow=True)
    lights = [add(bitmaps, images, np.full((5, 5), level, np.uint8), palette_index=1)
              for level in (250, 180, 110, 180)]
    frames = []
    for i, light in enumerate(lights):
        opt1 = bytes([i, 0]) if i % 2 else None
        opt2 = bytes([0, i]) if i == 3 else None
        frames.append(Frame(subframes((shadow, -20, 2), (base, -23, -30), (light, -2, -36)), i, opt1, opt2))
    windows = np.array([[0, 0, 47, 33]], np.uint32)
    return Animation(0, (-23, -30, 24, 3), (23, 30), 0x3C, frames, windows)


def unit(bitmaps, images):
    """A tracked vehicle seen from above, turning through 8 directions (45 degrees a frame)."""
    size = 23
    c = (size - 1) / 2
    y, x = np.mgrid[:size, :size] - c
    frames = []
    for d in range(8):
        angle = d * math.pi / 4
        u = x * math.cos(angle) + y * math.sin(angle)      # along the hull
        v = -x * math.sin(angle) + y * math.cos(angle)
        hull = (np.abs(u) <= 9) & (np.abs(v) <= 6)
        nose = (u > 4) & (u <= 10) & (np.abs(v) <= 2)
        body = np.where(hull, 140 + (np.abs(v) > 4) * 60, 0)
        body = np.where(nose, 240, body).astype(np.uint8)
        sprite = add(bitmaps, images, body, palette_index=1)
        shadow = add(bitmaps, images, (hull | nose).astype(np.uint8), shadow=True)
        frames.append(Frame(subframes((shadow, -8, -8), (sprite, -11, -11)), 0))
    return Animation(0, (-11, -11, 12, 12), (11, 11), 0x0D, frames)


def main(out_dir):
    bitmaps, images = [], []
    animations = [building(bitmaps, images), unit(bitmaps, images)]
    pixels = pack_bitmaps(bitmaps, images)
    prt = PrtFile([palette((1.0, 0.9, 0.7)), palette((0.6, 0.8, 1.0))], bitmaps, animations, 0)
    os.makedirs(out_dir, exist_ok=True)
    for name, data in (("op2_art.prt", prt_bytes(prt)), ("op2_art.bmp", bmp_bytes(pixels))):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        print(f"{os.path.join(out_dir, name)}: {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "examples"))
