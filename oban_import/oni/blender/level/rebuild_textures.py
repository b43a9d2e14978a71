"""The textures a level rebuild (rebuild.py, docs/level.md 11) takes from the scene: the
TXMP each material slot of an environment mesh shows, by name, and where the level has no such
TXMP, the pixels of the material's image, which OniSplit makes one of (written as TGA)."""

import re

import numpy as np

from ...io.objects.properties import TEXTURE_NAME
from ..shared.materials import TEXTURE_NODE

MAX_TEXTURE = 512   # OniSplit's largest texture side: a larger image is scaled down
IMAGE_SUFFIX = re.compile(r"\.(png|tga|jpe?g|bmp|tiff?|exr|dds|webp)$", re.IGNORECASE)
NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_.-]")   # what a level's or new texture's name cannot hold (files, URIs)
MAX_NAME = 60


def slot_textures(mesh) -> tuple:
    """([the TXMP each material slot shows: the material's TEXTURE_NAME, else its image's name
    without a file extension, characters a name cannot hold as '_' ('' none)], [its image or
    None]); one slot of neither for a mesh without materials."""
    names, images = [], []
    for material in list(mesh.materials) or [None]:
        image = _material_image(material)
        name = str(material.get(TEXTURE_NAME, "")) if material is not None else ""
        if not name and image is not None:
            name = NOT_IN_A_NAME.sub("_", IMAGE_SUFFIX.sub("", image.name))
        names.append(name)
        images.append(image)
    return names, images


def _material_image(material):
    """The image a material shows: its TEXTURE_NODE's (as imported), else its first image node's."""
    tree = getattr(material, "node_tree", None)
    if tree is None:
        return None
    nodes = sorted((n for n in tree.nodes if n.bl_idname == "ShaderNodeTexImage" and n.image is not None),
                   key=lambda n: n.name != TEXTURE_NODE)
    return nodes[0].image if nodes else None


def new_textures(names, images):
    """({name: (h, w, 4) uint8 pixels, bottom row first} of the textures `names` the scene's
    images make, [why not, said of a texture], {name: why not, said of each face showing it})."""
    made, of_textures, of_faces = {}, [], {}
    for name in names:
        shown = images.get(name, {})
        if not name:
            of_faces[name] = "its material names no texture and shows no image (OniSplit could not find it)"
        elif not shown:
            of_textures.append(f"texture '{name}' is not one of the level's TXMPs and its material shows no image "
                               "to make it from (OniSplit could not find it)")
        elif len(shown) > 1:
            images_named = ", ".join(map(repr, sorted(shown)))
            of_textures.append(f"texture '{name}': images {images_named} would all make it: rename all but one")
        elif len(name) > MAX_NAME or NOT_IN_A_NAME.search(name):
            of_textures.append(f"texture '{name}': a new texture's name is 1 to {MAX_NAME} letters, digits, '_', "
                               "'-' or '.' (it names its TGA file and TXMP)")
        else:
            image = next(iter(shown.values()))
            pixels = _image_pixels(image)
            if pixels is None:
                of_textures.append(f"texture '{name}': image '{image.name}' has no pixels (its file is missing?)")
            else:
                made[name] = pixels
    return made, of_textures, of_faces


def _image_pixels(image):
    """(h, w, 4) uint8 of an image's pixels, bottom row first (as Blender keeps them); None
    where it has none."""
    width, height = image.size[:]
    channels = image.channels
    if not width or not height or channels not in (1, 3, 4):
        return None
    values = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(values)
    values = values.reshape(height, width, channels)
    rgba = np.ones((height, width, 4), np.float32)
    rgba[:, :, :3] = values[:, :, :3] if channels > 1 else values
    if channels == 4:
        rgba[:, :, 3] = values[:, :, 3]
    return np.rint(np.clip(rgba, 0, 1) * 255).astype(np.uint8)


def onisplit_size(pixels) -> tuple:
    """(w, h, and the w, h OniSplit makes of it: the longer side at most MAX_TEXTURE, then each
    side the power of two at or below it)."""
    height, width = pixels.shape[:2]
    w, h = width, height
    if max(w, h) > MAX_TEXTURE:
        w, h = (MAX_TEXTURE, MAX_TEXTURE * h // w) if w > h else (MAX_TEXTURE * w // h, MAX_TEXTURE)
    return width, height, *(v if v <= 2 else 1 << (v.bit_length() - 1) for v in (w, h))
