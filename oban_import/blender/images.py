"""Textures (TXMP, docs/objects.md 5) -> Blender images, packed into the .blend."""

import bpy
import numpy as np

from ..oni.objects import Texture
from ..oni.properties import texture_properties
from ..png import png_bytes
from . import compat


def new_image(texture: Texture) -> "bpy.types.Image":
    """One image named after the TXMP (without 'TXMP'), sRGB, packed into the .blend as an
    8-bit PNG made here (Blender decodes it when the image is first used)."""
    image = bpy.data.images.new(texture.name, texture.width, texture.height, alpha=True)
    compat.pack_png(image, png_bytes(np.rint(texture.pixels * 255.0).astype(np.uint8)), texture.name + ".png")
    image.colorspace_settings.name = "sRGB"
    image.id_properties_ensure().update(texture_properties(texture, texture.name))
    return image
