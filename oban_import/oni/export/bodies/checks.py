"""The body export's read-back checks (docs/characters.md, "Exporting a body"): each file it writes,
read by the add-on's own readers, must give back what it was made of, bit for bit; each check
returns what the readers gave (the report's item), or raises ObanError."""

import numpy as np

from ....core.errors import ObanError
from ...io.characters.body_write import ONCC_LINKS, class_as_read
from ...io.characters.model import ClassLinks, TextureList
from ...io.characters.read import read_character, texture_names
from ...io.characters.stored import stored_levels
from ...io.container.container import ONCC_TAG, TRMA_TAG
from ...io.container.library import open_library
from ...io.objects.read import main_instance

MESH_ARRAYS = ("points", "normals", "uvs", "strips", "face_normals", "face_normal_indices")


def body_check(name, part_names, parents, translations, levels):
    """check(path) of TRBS`name`: the reader's body of it has these parts, parents and float32
    translations, and every level of detail these meshes, every array bit for bit."""
    def check(path):
        body = read_character(path).body
        if body.name != name or [part.name for part in body.parts] != list(part_names) \
                or not np.array_equal(body.parents, parents) \
                or not np.array_equal(np.array([part.translation for part in body.parts], np.float32).view(np.uint32),
                                      np.asarray(translations, np.float32).view(np.uint32)):
            raise ObanError(path, f"TRBS{name}: read back, its parts, tree or translations are not what was written")
        for level, (given, back) in enumerate(zip(levels, stored_levels(path, 0, name))):
            for part, (mesh, read) in enumerate(zip(given, back)):
                if not _same_mesh(mesh, read):
                    raise ObanError(path, f"TRBS{name}: read back, level of detail {level} part {part} "
                                          f"({part_names[part]}) is not what was written")
        return body
    return check


def _same_mesh(given, read) -> bool:
    if given is None or read is None:
        return given is None and read is None
    return all(np.array_equal(np.ascontiguousarray(getattr(given, field), np.float32).view(np.uint32),
                              np.ascontiguousarray(getattr(read, field), np.float32).view(np.uint32))
               for field in MESH_ARRAYS[:3]) \
        and all(np.array_equal(getattr(given, field), getattr(read, field)) for field in MESH_ARRAYS[3:]) \
        and (given.texture_name or "") == read.texture_name


def textures_check(name, textures):
    """check(path) of TRMA`name`: its links name these textures, part by part."""
    def check(path):
        with open_library(path) as library:
            c = library.main
            index = main_instance(c, TRMA_TAG, "texture list (TRMA)")
            back = texture_names(c, index)
            if c.short_name(index) != name or back != list(textures):
                raise ObanError(path, f"TRMA{name}: read back, its textures are not what was written")
            return TextureList(name, back)
    return check


def class_check(name, data, links):
    """check(path) of ONCC`name`: the class as read has these bytes but at its links, which
    name `links` ({offset: full name or None})."""
    def check(path):
        with open_library(path) as library:
            c = library.main
            index = main_instance(c, ONCC_TAG, "character class (ONCC)")
            back, named = class_as_read(c, index)
            masked = [bytearray(back), bytearray(data)]
            for values in masked:
                for at, _ in ONCC_LINKS:
                    values[at:at + 4] = bytes(4)
            if c.short_name(index) != name or masked[0] != masked[1] or \
                    named != {at: target for at, target in links.items() if target}:
                raise ObanError(path, f"ONCC{name}: read back, it is not what was written")
            return ClassLinks(name, named)
    return check
