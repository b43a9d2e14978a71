"""TGA bytes for 8-bit RGBA pixels: how an image of the scene reaches OniSplit, whose level
import reads TGA itself (uncompressed true colour, 32 bits, 8 of them alpha). No bpy."""

import struct

import numpy as np

BOTTOM_UP_ALPHA8 = 8   # image descriptor: rows bottom first, 8 alpha bits a pixel


def tga_bytes(rgba: np.ndarray) -> bytes:
    """(height, width, 4) uint8, bottom row first (as Blender keeps pixels) -> a TGA file."""
    height, width = rgba.shape[:2]
    header = struct.pack("<BBBHHBHHHHBB", 0, 0, 2, 0, 0, 0, 0, 0, width, height, 32, BOTTOM_UP_ALPHA8)
    return header + np.ascontiguousarray(np.asarray(rgba, np.uint8)[:, :, [2, 1, 0, 3]]).tobytes()
