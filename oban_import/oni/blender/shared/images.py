"""Textures (TXMP, docs/objects.md 5) -> Blender images, packed into the .blend."""

import os
from concurrent.futures import ThreadPoolExecutor

import bpy

from ....blender import compat
from ....core.png import png_bytes
from ...io.objects.model import Texture
from ...io.objects.properties import PIXELS_FINGERPRINT, texture_properties, texture_source
from .fingerprints import pixels_fingerprint

ENCODERS = max(1, min(4, (os.cpu_count() or 1) - 1))   # threads making PNGs; a core stays for Blender


def texture_png(texture: Texture) -> tuple[bytes, int]:
    """(the texture as an 8-bit PNG file, the fingerprint of its pixels) (no bpy: runs on the
    encoder threads)."""
    rgba8 = texture.rgba8
    return png_bytes(rgba8), pixels_fingerprint(rgba8)


def new_image(texture: Texture) -> "bpy.types.Image":
    """One image named after the TXMP (without 'TXMP'), sRGB, with the texture's properties and
    where it came from; its pixels come with pack()."""
    image = bpy.data.images.new(texture.name, texture.width, texture.height, alpha=True)
    compat.png_file_image(image, texture.name + ".png")
    if image.colorspace_settings.name != "sRGB":   # a new byte image's already (a change updates it)
        image.colorspace_settings.name = "sRGB"
    image.id_properties_ensure().update(texture_properties(texture, texture.name) | texture_source(texture))
    return image


def pack(image, texture: Texture, made: tuple | None = None) -> None:
    """The texture's pixels packed into the .blend as an 8-bit PNG, `made` (texture_png's) or
    made here (Blender decodes it when the image is first used), and their fingerprint kept
    on the image (an export tells a painted image by it)."""
    png, fingerprint = made if made is not None else texture_png(texture)
    compat.pack_png(image, png)
    image[PIXELS_FINGERPRINT] = fingerprint


class Encoders:
    """PNGs made on threads (zlib and most of numpy let go of Python's lock) while the
    caller builds the rest, in the order the textures are given, one per name (as the
    images are); `png(texture)` waits for its name's. A context manager: leaving it drops
    what has not started."""

    def __init__(self, textures):
        self.pool = ThreadPoolExecutor(ENCODERS, thread_name_prefix="oban-png")
        self.pngs = {}
        for texture in textures:
            if texture.name not in self.pngs:
                self.pngs[texture.name] = self.pool.submit(texture_png, texture)

    def png(self, texture: Texture) -> tuple | None:
        future = self.pngs.get(texture.name)
        return future.result() if future is not None else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.pool.shutdown(wait=True, cancel_futures=True)
        return False
