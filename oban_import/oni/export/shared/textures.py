"""The texture a part shows, as a TXMP file (docs/objects.md 10): an image an import made and
the user left as it was is its TXMP as stored, every level's bytes, read again from its file;
a painted or new image is encoded, in its texture's own format where that holds its pixels
exactly, else in the nearest one that does (RGBA where it uses alpha, else BGR), a note
saying so."""

import re
from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import text, unsigned32, whole
from ....core.output_files import OutputFile, file_name
from ...blender.shared.fingerprints import image_edited, image_pixels, pixels_fingerprint
from ...blender.shared.materials import TEXTURE_NODE
from ...io.objects.properties import (PIXELS_FINGERPRINT, TEXTURE_FILE, TEXTURE_FLAGS, TEXTURE_FORMAT, TEXTURE_INSTANCE,
                                      TEXTURE_NAME)
from ...io.objects.read import read_texture_file, stored_texture
from ...io.objects.texture_write import fits, lossless, onisplit_flags, texture_file_bytes, txmp_file_bytes
from ...io.objects.textures import BGR, DXT1, FORMAT_NAMES, HAS_ENV_MAP, HAS_MIPMAPS, RGBA
from .parts import UNCHANGED

IMAGE_SUFFIX = re.compile(r"\.(png|tga|jpe?g|bmp|tiff?|exr|dds|webp)$", re.IGNORECASE)
NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_.-]")   # what a level's or new texture's name cannot hold (files, URIs)


@dataclass
class TextureFile:
    """One TXMP to write: its bytes and what the reader should give back."""
    name: str
    data: bytes
    pixels: np.ndarray        # (h, w, 4) uint8, top row first
    format: int
    flags: int
    note: str


def slot_textures(mesh) -> list:
    """[(the TXMP a material slot shows, its image or None)] per slot of `mesh` (one of neither
    for a mesh without materials), by the one rule every export follows (docs/objects.md 10):
    the image is the material's image node an import made, else its first image node; the
    name is an imported image's own (the texture it was read as, whichever material shows
    it), else the material's TEXTURE_NAME (an imported texture whose image was replaced by a
    new one), else the image's name (its file extension off, what a name cannot hold '_');
    '' for none."""
    found = []
    for material in list(mesh.materials) or [None]:
        image = _material_image(material)
        for owner in (image if image is not None and TEXTURE_FILE in image else None, material):
            if owner is not None and isinstance(owner.get(TEXTURE_NAME), str) and owner[TEXTURE_NAME]:
                found.append((owner[TEXTURE_NAME], image))
                break
        else:
            found.append((NOT_IN_A_NAME.sub("_", IMAGE_SUFFIX.sub("", image.name)) if image is not None else "", image))
    return found


def _material_image(material):
    """The image a material shows: its TEXTURE_NODE's (as imported), else its first image node's."""
    tree = getattr(material, "node_tree", None)
    if tree is None:
        return None
    nodes = sorted((n for n in tree.nodes if n.bl_idname == "ShaderNodeTexImage" and n.image is not None),
                   key=lambda n: n.name != TEXTURE_NODE)
    return nodes[0].image if nodes else None


def shown_textures(shown, label) -> tuple:
    """([(texture, image)] of the `shown` (part name, texture, image or None) each once, in
    order: those an image shows; [(part name, texture)] of those no image shows). ObanError
    where two images show one texture (by name, whatever the case: one file each)."""
    pairs, unshown, by_name = {}, [], {}
    for part, name, image in shown:
        if image is None:
            if name:
                unshown.append((part, name))
            continue
        other = by_name.setdefault(name.casefold(), image)
        if other is not image:
            raise ObanError(label, f"images '{other.name}' and '{image.name}' are both texture '{name}'; give each "
                                   f"its own name (the image's or material's '{TEXTURE_NAME}')")
        pairs.setdefault((name, image.name), (name, image))
    return list(pairs.values()), unshown


def texture_outputs(pairs, label, libraries, encoded) -> list:
    """The TXMP OutputFile of each (texture, image) of `pairs` (shown_textures'); `encoded`:
    {(texture, image name): TextureFile} of an export, each encoded once."""
    files = []
    for name, image in pairs:
        key = (name, image.name)
        if key not in encoded:
            encoded[key] = texture_file(name, image, label, libraries)
        files.append(texture_output(encoded[key], label))
    return files


def linked_notes(unshown, label) -> list:
    """The note of each texture a part links that no image shows (shown_textures')."""
    return [f"{label} part '{part}': its texture '{name}' is linked, not written (its material shows no image)"
            for part, name in unshown]


def texture_file(name: str, image, label: str, libraries) -> TextureFile:
    """TXMP`name` of `image`: as stored where the import made it and it is unedited (and its
    file still holds those pixels), else encoded from Blender's pixels."""
    where = f"{label} texture '{name}' (image '{image.name}')"
    stored, why = _stored(image, where, libraries) if PIXELS_FINGERPRINT in image else (None, "new")
    if stored is not None and why == UNCHANGED:
        texture, levels, env_map = stored
        return TextureFile(name, txmp_file_bytes(name, texture.width, texture.height, texture.format, texture.flags,
                                                 levels, env_map), texture.rgba8, texture.format, texture.flags, why)
    pixels = image_pixels(image)
    if pixels is None:
        raise ObanError(where, "has no pixels (its file is missing); nothing written for the object")
    space = image.colorspace_settings
    if not image.is_float and not space.is_data and space.name != "sRGB":
        raise ObanError(where, f"its colour space is '{space.name}': Blender shows its 8-bit pixels converted from it, "
                               f"which a texture does not hold; make it sRGB (or Non-Color, its pixels as held); "
                               f"nothing written for the object")
    original = whole(image, TEXTURE_FORMAT, where, (0, 0xFFFFFFFF)) if TEXTURE_FORMAT in image else None
    flags = unsigned32(whole(image, TEXTURE_FLAGS, where, (-1 << 31, (1 << 31) - 1), 0)) \
        if original is not None else onisplit_flags(0, RGBA, mipmaps=True)
    env_map = stored[2] if stored is not None else ""
    fmt, note = _format(pixels, original if original in FORMAT_NAMES else None, flags)
    if fmt != original:
        flags = onisplit_flags(flags, fmt, bool(flags & HAS_MIPMAPS), bool(flags & HAS_ENV_MAP and env_map))
    elif flags & HAS_ENV_MAP and not env_map:
        flags &= ~HAS_ENV_MAP
        note += "; its environment map is not known (its source cannot be read): written without"
    try:
        data = texture_file_bytes(name, pixels, fmt, flags, env_map if flags & HAS_ENV_MAP else None)
    except ObanError as error:
        raise ObanError(where, f"{error.problem}; nothing written for the object") from None
    return TextureFile(name, data, pixels, fmt, flags, f"{why}: {note}")


def _stored(image, where, libraries):
    """((Texture, every level's bytes, environment map) of an imported image's source, or
    None; UNCHANGED where the image is unedited and the source holds its pixels, else why not)."""
    why = "painted" if image_edited(image) else UNCHANGED
    path = text(image, TEXTURE_FILE, where, "")
    if not path:
        return None, why
    try:
        stored = stored_texture(path, whole(image, TEXTURE_INSTANCE, where, (0, 0x7FFFFFFF)),
                                text(image, TEXTURE_NAME, where), libraries.get(path))
    except ObanError as error:
        return None, why if why != UNCHANGED else f"as the scene shows it (its source cannot be read: {error})"
    if why == UNCHANGED and pixels_fingerprint(stored[0].rgba8) != image[PIXELS_FINGERPRINT]:
        why = f"as the scene shows it ({path} holds other pixels for it now)"
    return stored, why


def _format(pixels, original, flags) -> tuple:
    """(format, note) for pixels painted or new: the texture's own format where it holds them
    (DXT1: re-encoded), else RGBA where they use alpha, else BGR."""
    h, w = pixels.shape[:2]
    if original is not None and fits(w, h, original, flags) and lossless(pixels, original):
        return original, ("DXT1 re-encoded, every pixel kept" if original == DXT1
                          else f"{FORMAT_NAMES[original]} as it was")
    fmt = RGBA if (pixels[..., 3] < 255).any() else BGR
    if original is None:
        return fmt, f"written as {FORMAT_NAMES[fmt]}"
    return fmt, f"written as {FORMAT_NAMES[fmt]}: {FORMAT_NAMES[original]} cannot hold its pixels"


def texture_output(texture: TextureFile, label) -> OutputFile:
    """The TXMP file of a TextureFile, checked to read back as its pixels, format and flags."""
    def check(path):
        back = read_texture_file(path)
        if (back.format, back.flags) != (texture.format, texture.flags) or \
                not np.array_equal(back.rgba8, texture.pixels):
            raise ObanError(path, f"{label} texture '{texture.name}': read back, it is not what was written; "
                                  f"not written")
        return back

    return OutputFile(file_name(f"TXMP{texture.name}.oni"), texture.data, check, texture.note)
