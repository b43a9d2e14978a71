"""Textures (TXMP, docs/objects.md 5) -> Blender images, packed into the .blend."""

import bpy
import numpy as np

from ..oni.objects import Texture
from ..oni.properties import texture_properties


def new_image(texture: Texture) -> "bpy.types.Image":
    """One image named after the TXMP (without 'TXMP'), sRGB, its pixels packed.

    Texture.pixels are top row first; Blender's are bottom row first."""
    image = bpy.data.images.new(texture.name, texture.width, texture.height, alpha=True)
    image.colorspace_settings.name = "sRGB"
    pixels = np.ascontiguousarray(texture.pixels[::-1], np.float32)
    image.pixels.foreach_set(pixels.ravel())
    image.update()
    image.pack()
    image.id_properties_ensure().update(texture_properties(texture, texture.name))
    return image
