"""The textures a level rebuild (rebuild.py, docs/level.md 11) takes from the scene: the
TXMP each material slot of an environment mesh shows, by name; where the level has no such
TXMP, the pixels of the material's image, which OniSplit makes one of (written as TGA); where
the image the import made of a TXMP was painted, that TXMP written from it."""

from ....core.errors import ObanError
from ...blender.shared.fingerprints import image_pixels
from ...io.level_rebuild.class_files import class_file_name
from ..shared.textures import NOT_IN_A_NAME, texture_file

MAX_TEXTURE = 512   # OniSplit's largest texture side: a larger image is scaled down
MAX_NAME = 60       # a new texture's or a level's name


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


def painted_textures(edited, classes):
    """({class file: bytes} of each TXMP among `classes` that an image the import made of it
    shows edited (painted, replaced, resized; `edited`: scene.edited_images'),
    written from the image as the mesh export writes a texture (objects/textures.texture_file:
    its own format where that holds every pixel, else RGBA or BGR, its flags and environment
    map kept); [notes: how each was written]; [refusals: an image of no pixels]; the names of
    the images carried)."""
    by_texture = {name: {key: image for key, (_, image) in images.items()} for name, images in edited.items()
                  if class_file_name("TXMP" + name) in classes}
    files, notes, refused, carried = {}, [], [], set()
    for name, images in by_texture.items():   # of one image's pixels (scene.images_otherwise refuses others)
        try:
            written = texture_file(name, next(iter(images.values())), "", {})
        except ObanError as error:
            refused.append(str(error))
            continue
        files[class_file_name("TXMP" + name)] = written.data
        notes.append(f"texture '{name}' written from image '{next(iter(images))}': {written.note}")
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
