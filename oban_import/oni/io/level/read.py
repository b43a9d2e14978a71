"""Reading a level's environment, object lists and classes (docs/level.md 6) into model.py's
data classes: read_level of a level .dat (+ .raw), a loose ONLV .oni (its AKEV by
placeholder, its object lists as the BINACJBO files beside it), or a loose AKEV, BINACJBO,
DOOR or OFGA .oni, each giving what it holds. A fault anywhere fails the whole read."""

import os
from collections import Counter

import numpy as np

from ....core.errors import ObanError
from ..container.container import AKEV_TAG, BINA_TAG, DOOR_TAG, OBOA_TAG, OFGA_TAG, ONLV_TAG, TXMP_TAG
from ..container.library import Library, open_library
from ..objects.oboa import parse_oboa
from ..objects.read import texture_at
from .classes import door_class_at, find_named, geometry_at, locate, not_found
from .environment import environment_at
from .model import SECOND_LEAF, Environment, LevelContents
from .object_lists import LIST_PREFIX, is_object_list, read_object_list
from .onlv import LevelLinks, read_object_quads, read_onlv


def read_level(path, library: Library | None = None) -> LevelContents:
    """Everything of a level but its placed objects (objects/read.py: read_objects) that the
    file at `path` holds (`library`: open_library's); ObanError if it holds none of it."""
    path = os.fspath(path)
    with open_library(path, library) as library:
        c, start = library.main, len(library.warnings)
        onlv, links, akev = _environment_link(library, c)
        contents = LevelContents(name="", sky=links.sky)
        contents.environment = environment_at(library, *akev) if akev else None
        if links.object_quads:
            quads = None if contents.environment is None else len(contents.environment.flags)
            contents.object_quads = read_object_quads(library, *links.object_quads, quads)
        lists = [(c, int(i)) for i in c.with_data(BINA_TAG) if is_object_list(c, i)]
        if onlv is not None and c.version == "VR32":
            lists += _lists_beside(library, c)
        for lc, li in lists:
            objects, warnings = read_object_list(lc, li)
            for warning in warnings:
                library.warn(warning)
            _find_classes(library, lc, objects, contents)
            contents.object_lists.append(objects)
        _leaves(library, contents.doors, links.objects if onlv is not None else None)
        if onlv is not None or akev:
            contents.name = c.short_name(onlv if onlv is not None else akev[1])
        elif contents.object_lists:
            contents.name = contents.object_lists[0].name
        else:
            contents.name = _own_classes(library, c, contents)
        contents.warnings = library.warnings[start:]
        return contents


def read_environment(path) -> Environment | None:
    """The environment (AKEV) of the level or loose AKEV at `path` alone, the rest of the level
    unread; None where it has none."""
    with open_library(path) as library:
        akev = _environment_link(library, library.main)[2]
        return environment_at(library, *akev) if akev else None


def _environment_link(library, c):
    """(the ONLV's index or None, its links, the (container, index) of the environment or None):
    the ONLV's AKEV, else the file's first AKEV."""
    onlv = c.first(ONLV_TAG)
    links = read_onlv(library, c, onlv) if onlv is not None else LevelLinks()
    return onlv, links, links.environment if onlv is not None else _first(c, AKEV_TAG)


def _first(c, tag):
    index = c.first(tag)
    return None if index is None else (c, index)


def _lists_beside(library, c) -> list:
    """The object lists of the BINACJBO*.oni files beside a loose ONLV (which no instance links),
    in file name order."""
    names = sorted(name for name in os.listdir(library.folder)
                   if name.startswith(LIST_PREFIX) and name.endswith(".oni")
                   and os.path.isfile(os.path.join(library.folder, name)))
    paths = [os.path.join(library.folder, name) for name in names]
    found = []
    for other in library.open_all(paths):
        if other is not c:
            found += [(other, int(i)) for i in other.with_data(BINA_TAG) if is_object_list(other, i)]
    return found


def _find_classes(library, c, objects, contents):
    """Each door's class and textures, each furniture's geometry, found by name (in `c`, the
    list's container, else beside the file read)."""
    for door in objects.doors:
        door.door_class = _class(library, c, (DOOR_TAG, "DOOR", door_class_at, contents.door_classes),
                                 door.class_name, "door class", "its doors are not drawn")
        door.textures = tuple(_door_texture(library, c, name) for name in door.texture_names)
    for piece in objects.furniture:
        piece.geometry = _class(library, c, (OFGA_TAG, "OFGA", geometry_at, contents.furniture_classes),
                                piece.class_name, "furniture geometry", "that furniture is not drawn")


def _class(library, c, kind, name, what, without):
    """The class `name` of `kind` (its tag, the tag's letters, its reader, the level's classes
    of that kind by name, where the first read of each name is kept); None where not found
    (warned: `what` not found, `without`)."""
    tag, letters, read, found = kind
    target = find_named(library, c, tag, letters + name, what, without)
    got = read(library, *target) if target else None
    if got is not None:
        found.setdefault(name, got)
    return got


def _door_texture(library, c, name):
    """The TXMP a door names (the engine upper-cases the name), or None ('' names none)."""
    if not name:
        return None
    target = locate(library, c, TXMP_TAG, "TXMP" + name) or locate(library, c, TXMP_TAG, "TXMP" + name.upper())
    if target is None:
        not_found(library, c, "TXMP" + name, "door texture", "imported without it")
        return None
    return texture_at(library, *target)


def _leaves(library: Library, doors: list, oboa):
    """Each door's OBOA setups (leaf 0: the first setup in use of its door id, leaf 1 of a
    DoubleDoor: of door id | 0x1000) and the warnings about door ids (docs/level.md 3)."""
    if not doors:
        return
    for door_id, count in Counter(door.door_id for door in doors).items():
        if count > 1:
            ids = ", ".join(str(door.id) for door in doors if door.door_id == door_id)
            library.warn(f"door id {door_id} is used by {count} doors (object ids {ids}): the first OBOA setup of "
                         f"that id serves them all")
    for door in doors:
        if door.door_id >= SECOND_LEAF:
            library.warn(f"door (object id {door.id}) has door id {door.door_id}, 0x1000 or more: the engine takes "
                         f"such an id for a second leaf's")
    if oboa is None:
        library.warn("no object setup array (OBOA) holds the doors' leaves: each is placed by Bungie's rule")
        return
    oc, oi = oboa
    records = parse_oboa(oc.instance(oi, OBOA_TAG)[0], oc.path, oc.label(oi))
    used = np.flatnonzero(records["flags"] != 0)
    door_ids, first = np.unique(records["door_id"][used], return_index=True)
    setup_of = dict(zip(door_ids.tolist(), used[first].tolist()))
    for door in doors:
        wanted = (door.door_id, door.door_id | SECOND_LEAF)[:door.leaf_count]
        door.setups = tuple(setup_of.get(d) for d in wanted) + (None,) * (2 - door.leaf_count)
        for leaf, (d, setup) in enumerate(zip(wanted, door.setups)):
            if setup is None:
                library.warn(f"door (object id {door.id}) leaf {leaf}: no OBOA setup of door id {d}: placed by "
                             f"Bungie's rule")


def _own_classes(library, c, contents) -> str:
    """A DOOR or OFGA file's own classes (each with data in `c`); the first one's name.
    ObanError when the file holds no part of a level at all."""
    for tag, found in ((DOOR_TAG, contents.door_classes), (OFGA_TAG, contents.furniture_classes)):
        for i in c.with_data(tag):
            found[c.short_name(i)] = (door_class_at if tag == DOOR_TAG else geometry_at)(library, c, i)
    first = c.with_data(DOOR_TAG) + c.with_data(OFGA_TAG)
    if not first:
        raise ObanError(c.path, "holds no level (ONLV), environment (AKEV), object list (BINACJBO), door class "
                                "(DOOR) or furniture geometry (OFGA)")
    return c.short_name(first[0])
