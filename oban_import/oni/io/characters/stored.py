"""A body set and a character class an import read, again, as stored (docs/characters.md 10), for
an export that writes them back unchanged: every level of detail of a TRBS (the reader keeps the
last one only), and an ONCC's data, links and textures. Links are followed across files through
a Library, as read.py follows them."""

from ....core.errors import ObanError
from ..container.container import M3GM_TAG, ONCC_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG, TRMA_TAG, Container
from ..container.library import Library, open_library
from ..objects.meshes import parse_links
from ..objects.read import mesh_at
from .body_write import class_as_read
from .read import ONCC_TEXTURES_AT, TRBS_LEVELS, TRCM_LINKS_AT, counted_items, texture_names


def stored_levels(path: str, index: int, name: str, library: Library | None = None) -> list:
    """The five levels of detail (low to high) of TRBS`name` at descriptor `index` of `path`, each
    a list of objects.model.Mesh (None: the part has no mesh), as stored (strips, face normals,
    the M3GM's own texture link); a TRCM linked by several levels gives them one list. ObanError
    where the file no longer holds it there, or a mesh cannot be read."""
    with open_library(path, library) as library:
        c = library.main
        _check(c, index, TRBS_TAG, name)
        values = parse_links(c.instance(index, TRBS_TAG)[0], 0, TRBS_LEVELS, c.path, c.label(index))
        found = {}
        levels = []
        for level, value in enumerate(values):
            target = _followed(library, c, value, TRCM_TAG, index, f"level of detail {level} (TRCM)")
            key = (id(target[0]), target[1])
            if key not in found:
                found[key] = _level_meshes(library, *target)
            levels.append(found[key])
        return levels


def stored_class(path: str, index: int, name: str, library: Library | None = None) -> tuple:
    """(data, {offset: full name} of its links, the texture name of each part or None) of the
    ONCC`name` at descriptor `index` of `path`: body_write.class_as_read's, and the names its
    TRMA links (read.texture_names; None where it has no TRMA or its TRMA is not found)."""
    with open_library(path, library) as library:
        c = library.main
        _check(c, index, ONCC_TAG, name)
        data, links = class_as_read(c, index)
        value = int.from_bytes(data[ONCC_TEXTURES_AT:ONCC_TEXTURES_AT + 4], "little")
        target = library.follow(c, value, TRMA_TAG, index, "body textures")
        if target is None:
            return data, links, None
        return data, links, texture_names(*target)


def _level_meshes(library, c, trcm) -> list:
    """Each part's Mesh (or None) of the TRCM at `trcm` of `c`."""
    label = c.label(trcm)
    geometry = parse_links(c.instance(trcm, TRCM_TAG)[0], TRCM_LINKS_AT, 1, c.path, label)[0]
    gc, trga = _followed(library, c, geometry, TRGA_TAG, trcm, "geometry")
    links = counted_items(gc, trga, TRGA_TAG).tolist()
    meshes = []
    for part, link in enumerate(links):
        target = library.follow(gc, link, M3GM_TAG, trga, f"part {part} geometry")
        mesh = mesh_at(library, *target) if target else None
        if link and mesh is None:
            raise ObanError(gc.path, f"{gc.label(trga)}: part {part}'s mesh cannot be read: "
                                     f"{'; '.join(library.warnings[-1:])}")
        meshes.append(mesh)
    return meshes


def _followed(library, c, value, tag, owner, what):
    """(container, index) a required link leads to; ObanError where it is 0 or not found."""
    target = library.follow(c, value, tag, owner, what)
    if target is None:
        raise ObanError(c.path, f"{c.label(owner)}: its {what} is missing (link 0, or a placeholder not found)")
    return target


def _check(c: Container, index: int, tag: bytes, name: str) -> None:
    """ObanError where descriptor `index` of `c` is not the instance of `tag` named `name`, with its data."""
    if not (0 <= index < len(c.descriptors) and c.tag_of(index) == tag and not c.is_placeholder(index)
            and c.short_name(index) == name):
        raise ObanError(c.path, f"no longer holds {tag[::-1].decode()}{name} at instance {index}")
