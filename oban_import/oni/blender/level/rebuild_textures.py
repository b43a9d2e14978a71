"""The textures a level rebuild (rebuild.py, docs/level.md 11) takes from the scene: the
TXMP each material slot of an environment mesh shows, by name; where the level has no such
TXMP, the pixels of the material's image, which OniSplit makes one of (written as TGA); where
the image the import made of a TXMP was painted, that TXMP written from it."""

import re


from ....core.errors import ObanError
from ....core.id_properties import unsigned32
from ...io.level_rebuild.class_files import class_file_name
from ...io.objects.properties import PIXELS_FINGERPRINT, TEXTURE_FLAGS, TEXTURE_FORMAT, TEXTURE_NAME
from ...io.objects.texture_write import lossless, onisplit_flags, texture_file_bytes
from ...io.objects.textures import BGR, DXT1, FORMAT_NAMES, HAS_ENV_MAP, HAS_MIPMAPS, RGBA
from ..shared.fingerprints import image_edited, image_pixels
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
            pixels = image_pixels(image)
            if pixels is None:
                of_textures.append(f"texture '{name}': image '{image.name}' has no pixels (its file is missing?)")
            else:
                made[name] = pixels[::-1]   # bottom row first, as a TGA
    return made, of_textures, of_faces


def painted_textures(shown, classes):
    """({class file: bytes} of each TXMP among `classes` that an image the import made of it
    shows edited (painted, replaced, resized; `shown`: (who, texture name, image) triples),
    written from the image: in its own format where that holds every pixel exactly (a DXT1's
    mip levels re-encoded), else the nearest lossless one (RGBA, or BGR where every pixel is
    opaque), its flags kept; [notes: what format each was written in, where it changed];
    [refusals: an image of no pixels, two images painting one texture differently, a texture
    linking an environment map]; the names of the images carried)."""
    by_texture = {}
    for _, name, image in shown:
        if image is not None and PIXELS_FINGERPRINT in image and class_file_name("TXMP" + name) in classes \
                and image_edited(image):
            by_texture.setdefault(name, {})[image.name] = image
    files, notes, refused, carried = {}, [], [], set()
    for name, images in by_texture.items():
        said = f"texture '{name}'"
        pixels = {key: image_pixels(image) for key, image in images.items()}
        if any(p is None for p in pixels.values()):
            refused.append(f"{said}: image '{next(k for k, p in pixels.items() if p is None)}' has no pixels")
            continue
        if len({(p.shape, p.tobytes()) for p in pixels.values()}) > 1:
            refused.append(f"{said}: images {', '.join(map(repr, sorted(images)))} show it painted differently: "
                           "make them one image")
            continue
        image, rgba = next(iter(images.values())), next(iter(pixels.values()))
        fmt, flags = int(image.get(TEXTURE_FORMAT, RGBA)), unsigned32(image.get(TEXTURE_FLAGS, 0))
        if flags & HAS_ENV_MAP:
            refused.append(f"{said} links an environment map, which a TXMP written from the scene does not carry")
            continue
        try:
            kept = lossless(rgba, fmt)
        except ObanError:   # a size the format cannot take (DXT1's 4 x 4 blocks)
            kept = False
        written = fmt if kept else RGBA if (rgba[:, :, 3] < 255).any() else BGR
        if written != fmt:
            flags = onisplit_flags(flags, written, bool(flags & HAS_MIPMAPS))
            notes.append(f"{said}: its pixels are more than {FORMAT_NAMES[fmt]} holds: written as "
                         f"{FORMAT_NAMES[written]} from image '{image.name}'")
        else:
            notes.append(f"{said}: written as {FORMAT_NAMES[fmt]} from image '{image.name}'"
                         + (", its mip levels re-encoded" if fmt == DXT1 and flags & HAS_MIPMAPS else ""))
        try:
            files[class_file_name("TXMP" + name)] = texture_file_bytes(name, rgba, written, flags)
        except ObanError as error:
            refused.append(f"{said}: {error}")
            continue
        carried.update(images)
    return files, notes, refused, carried


def onisplit_size(pixels) -> tuple:
    """(w, h, and the w, h OniSplit makes of it: the longer side at most MAX_TEXTURE, then each
    side the power of two at or below it)."""
    height, width = pixels.shape[:2]
    w, h = width, height
    if max(w, h) > MAX_TEXTURE:
        w, h = (MAX_TEXTURE, MAX_TEXTURE * h // w) if w > h else (MAX_TEXTURE * w // h, MAX_TEXTURE)
    return width, height, *(v if v <= 2 else 1 << (v.bit_length() - 1) for v in (w, h))
