"""Reading Oni's characters (docs/characters.md 1, 5) into model.py's data classes: a
character class (ONCC) with its body (TRBS -> TRCM -> TRGA meshes, TRTA translations, TRIA
hierarchy), its textures (TRMA) and its animations (the TRAC chain of TRAMs), followed
through a Library across placeholders; and the entry points that read a file's characters
(read_character, read_characters)."""

import glob
import os
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ....core.errors import ObanError
from ..container.container import (M3GM_TAG, ONCC_TAG, TRAC_TAG, TRAM_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG, TRIA_TAG,
                                   TRMA_TAG, TRTA_TAG, TXMP_TAG, Container, counted)
from ..container.library import Library, open_library
from ..objects.meshes import parse_links
from ..objects.read import main_instance, mesh_at, texture_at
from ..trams.read import MAX_SQUARE, read_tram_instances
from ..trams.tram import MAX_PARTS, PART_NAMES
from .model import Body, BodyPart, Character

ONCC_BODY_AT, ONCC_TEXTURES_AT, ONCC_ANIMATIONS_AT = 0xC34, 0xC38, 0xC80
TRBS_LEVELS = 5                  # TRCM links, low to high detail: the last one is used
TRCM_PARTS_AT, TRCM_LINKS_AT = 0x04, 0x54   # links TRGA, TRTA, TRIA
TRAC_PARENT_AT = 0x10
COUNT_AT = 0x16   # TRGA, TRTA, TRIA, TRMA, TRAC: a u16 count, then the items
TRIA_DTYPE = np.dtype([("parent", "u1"), ("child", "u1"), ("sibling", "u1"), ("pad", "u1")])
TRAC_ENTRY_DTYPE = np.dtype([("weight", "<i2"), ("runtime", "V6"), ("animation", "<u4")])
ITEM_DTYPES = {TRGA_TAG: np.dtype("<u4"), TRTA_TAG: np.dtype(("<f4", (3,))), TRIA_TAG: TRIA_DTYPE,
               TRMA_TAG: np.dtype("<u4"), TRAC_TAG: TRAC_ENTRY_DTYPE}




class Items(NamedTuple):
    """A counted array instance's items and where they were read (for messages)."""
    items: object            # np.ndarray (TRGA, TRTA, TRIA) or a list (TRMA's (texture, name) pairs)
    container: object
    index: int

    @property
    def label(self) -> str:
        return self.container.label(self.index)


def character_at(library: Library, c: Container, index: int) -> Character:
    """The ONCC at `index` of container `c`: body, textures and animations (docs/characters.md 1)."""
    data, _ = c.instance(index, ONCC_TAG)
    label = c.label(index)
    if len(data) < ONCC_ANIMATIONS_AT + 4:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for an ONCC")
    body_link, textures_link = parse_links(data, ONCC_BODY_AT, 2, c.path, label)
    animations_link = parse_links(data, ONCC_ANIMATIONS_AT, 1, c.path, label)[0]
    before = len(library.events)
    textures = _textures(library, c, textures_link, index)
    body = body_at(library, *_required(library, c, body_link, TRBS_TAG, index, "body set"), textures)
    animations = collection(library, c, animations_link, index, len(body.parts))
    return Character(name=c.short_name(index), body=body, animations=animations,
                     warnings=list(dict.fromkeys(library.events[before:])), source=os.path.abspath(c.path),
                     instance=index)


def bare_body(library: Library, c: Container, index: int) -> Character:
    """A TRBS on its own: a character of the body's name, untextured unless its meshes link textures."""
    before = len(library.events)
    body = body_at(library, c, index)
    return Character(name=body.name, body=body, animations=[], warnings=list(dict.fromkeys(library.events[before:])))


def body_at(library: Library, c: Container, index: int, textures: Items | None = None) -> Body:
    """The TRBS at `index`: its last TRCM's parts (docs/characters.md 1); `textures` (from
    _textures) for the parts whose meshes link none."""
    label = c.label(index)
    trcm_link = parse_links(c.instance(index, TRBS_TAG)[0], 0, TRBS_LEVELS, c.path, label)[-1]
    bc, trcm = _required(library, c, trcm_link, TRCM_TAG, index, f"level of detail {TRBS_LEVELS - 1} (TRCM)")
    data, trcm_label = bc.instance(trcm, TRCM_TAG)[0], bc.label(trcm)
    if len(data) < TRCM_LINKS_AT + 12:
        raise ObanError(bc.path, f"{trcm_label}: {len(data)} bytes, too short for a TRCM")
    parts = int.from_bytes(data[TRCM_PARTS_AT:TRCM_PARTS_AT + 2], "little")
    if not 1 <= parts <= MAX_PARTS:
        raise ObanError(bc.path, f"{trcm_label}: {parts} parts (1 to {MAX_PARTS} can be animated)")
    links = parse_links(data, TRCM_LINKS_AT, 3, bc.path, trcm_label)
    geometry, translations, hierarchy = (
        _part_items(library, bc, trcm, value, tag, what, parts)
        for value, tag, what in zip(links, (TRGA_TAG, TRTA_TAG, TRIA_TAG), ("geometry", "translations", "hierarchy")))
    if not np.isfinite(translations.items).all():
        raise ObanError(translations.container.path, f"{translations.label}: non-finite translation")
    parents = tree_parents(hierarchy.items, hierarchy.container.path, hierarchy.label)
    _check_reach(translations, parents)
    if textures is not None and len(textures.items) != parts:
        raise ObanError(textures.container.path, f"{textures.label}: {len(textures.items)} textures for the "
                                                 f"{parts} parts of {trcm_label}")
    return Body(name=c.short_name(index), parts=[
        BodyPart(name=PART_NAMES[p] if p < len(PART_NAMES) else f"Part{p}", parent=int(parents[p]),
                 translation=translations.items[p], mesh=_part_mesh(library, geometry, p, textures))
        for p in range(parts)], source=os.path.abspath(c.path), instance=index)


def _part_items(library, c, owner, value, tag, what, parts) -> Items:
    """The TRCM's TRGA, TRTA or TRIA, its count checked against the parts."""
    ic, index = _required(library, c, value, tag, owner, what)
    items = counted_items(ic, index, tag)
    if len(items) != parts:
        raise ObanError(ic.path, f"{ic.label(index)}: {len(items)} items for the {parts} parts of {c.label(owner)}")
    return Items(items, ic, index)


def _part_mesh(library, geometry: Items, part, textures):
    """Part `part`'s mesh (None without one), with TRMA's texture if its M3GM links none."""
    target = library.follow(geometry.container, int(geometry.items[part]), M3GM_TAG, geometry.index,
                            f"part {part} geometry")
    mesh = mesh_at(library, *target) if target else None
    if mesh is None or textures is None or mesh.texture_name or not textures.items[part][1]:
        return mesh
    texture, name = textures.items[part]
    return replace(mesh, texture=texture, texture_name=name)


def _textures(library, c, value, owner) -> Items | None:
    """A (Texture or None, name) pair per TRMA entry, or None without a TRMA."""
    target = library.follow(c, value, TRMA_TAG, owner, "body textures")
    if target is None:
        return None
    tc, index = target
    found = []
    for part, link in enumerate(counted_items(tc, index, TRMA_TAG)):
        field_name = f"part {part} texture"
        texture = tc.link(int(link), TXMP_TAG, index, field_name)
        name = "" if texture is None else tc.short_name(texture)
        resolved = library.follow(tc, int(link), TXMP_TAG, index, field_name)
        found.append((texture_at(library, *resolved) if resolved else None, name))
    return Items(found, tc, index)


def collection(library: Library, c: Container, value: int, owner: int, parts: int) -> list:
    """The TRAMs of the TRAC `value` links and of its parents, in order, each once
    (docs/characters.md 1); a loop in the chain or a TRAM for another part count is an error."""
    animations, seen = [], set()
    for c, owner in collection_chain(library, c, value, owner):
        links = counted_items(c, owner, TRAC_TAG)["animation"].tolist()
        found = [target for target in library.follow_all(c, links, TRAM_TAG, owner,
                                                         [f"animation {n}" for n in range(len(links))])
                 if target is not None]
        for (tc, index), tram in zip(found, library.cached_all(found, read_tram_instances)):
            if id(tram) in seen:
                continue
            if tram.parts != parts:
                raise ObanError(tc.path, f"{tc.label(index)}: {tram.parts} parts, its character's body has {parts}")
            seen.add(id(tram))
            animations.append(tram)
    return animations


class TramListing(NamedTuple):
    """A character beside a TRAM file and the animations its collection lists."""
    path: str                # its ONCC….oni
    character: str           # its name (the ONCC's, without 'ONCC'): an import's armature's oni_character
    animations: frozenset    # the names (without 'TRAM') its animation collection and the parents' list


class Beside(NamedTuple):
    """The characters of a folder, as its TRAM files need them (characters_beside)."""
    listings: list           # [TramListing] of each ONCC….oni that reads, in name order
    unread: list             # [ObanError] of each one that does not
    first_body: str | None   # the first ONCC….oni, else TRBS….oni, of the folder


def characters_beside(path: str, known: dict | None = None) -> Beside:
    """The characters in the folder of the file `path`, their collections' TRAM names read (the
    ONCC and TRAC instances only); `known` (folder -> Beside) keeps each folder's for a batch."""
    folder = os.path.dirname(os.path.abspath(path))
    if known is not None and folder in known:
        return known[folder]
    pattern = os.path.join(glob.escape(folder), "{}*.oni")
    characters, bodies = sorted(glob.glob(pattern.format("ONCC"))), sorted(glob.glob(pattern.format("TRBS")))
    listings, unread = [], []
    for character in characters:
        try:
            listings.append(_listing(character))
        except ObanError as error:
            unread.append(error)
    found = Beside(listings, unread, (characters + bodies)[0] if characters or bodies else None)
    if known is not None:
        known[folder] = found
    return found


def listers(tram_name: str, beside: Beside) -> list:
    """The TramListings of the characters beside whose collection lists `tram_name`."""
    return [listing for listing in beside.listings if tram_name in listing.animations]


def also_listed(found: list) -> str:
    """' (also listed by …)' naming the listers after the first, or ''."""
    return "" if len(found) < 2 else f" (also listed by {', '.join(os.path.basename(f.path) for f in found[1:])})"


def body_file(tram_name: str, beside: Beside) -> tuple[str | None, str]:
    """The character file a TRAM goes onto when no armature in Blender takes it: the first
    character beside whose collection lists it, else the first ONCC….oni (else TRBS….oni) of
    its folder; (that file, why), or (None, why) where there is none."""
    found = listers(tram_name, beside)
    if found:
        return found[0].path, f"its collection lists it{also_listed(found)}"
    unlisted = "no character beside it lists it in its collection"
    if beside.first_body is None:
        return None, f"{unlisted}, and no ONCC or TRBS file is beside it"
    return beside.first_body, f"{unlisted}; the first {os.path.basename(beside.first_body)[:4]} file beside it"


def _listing(path):
    """The TramListing of one ONCC….oni."""
    with open_library(path) as library:
        c = library.main
        index = main_instance(c, ONCC_TAG, "character class (ONCC)")
        data = c.instance(index, ONCC_TAG)[0]
        if len(data) < ONCC_ANIMATIONS_AT + 4:
            raise ObanError(c.path, f"{c.label(index)}: {len(data)} bytes, too short for an ONCC")
        link = parse_links(data, ONCC_ANIMATIONS_AT, 1, c.path, c.label(index))[0]
        names = set().union(*(_tram_names(tc, owner) for tc, owner in collection_chain(library, c, link, index)))
        return TramListing(path, c.short_name(index), frozenset(names - {""}))


def _tram_names(c: Container, owner: int) -> set:
    """The names (without 'TRAM') of the TRAMs the TRAC `owner` of `c` links, none of them read."""
    links = counted_items(c, owner, TRAC_TAG)["animation"].tolist()
    indices = (c.link(value, TRAM_TAG, owner, f"animation {n}") for n, value in enumerate(links))
    return {c.short_name(index) for index in indices if index is not None}


def collection_chain(library: Library, c: Container, value: int, owner: int):
    """(container, index) of the TRAC `value` (in instance `owner` of `c`) links, then of each of
    its parents, across placeholders; ObanError where the chain loops."""
    chain, field_name = set(), "animation collection"
    while value:
        target = library.follow(c, value, TRAC_TAG, owner, field_name)
        if target is None:
            return
        c, owner = target
        if (id(c), owner) in chain:
            raise ObanError(c.path, f"{c.label(owner)}: the chain of parent collections loops back to it")
        chain.add((id(c), owner))
        yield c, owner
        value = parse_links(c.instance(owner, TRAC_TAG)[0], TRAC_PARENT_AT, 1, c.path, c.label(owner))[0]
        field_name = "parent collection"


def texture_names(c: Container, index: int) -> list:
    """The names (without 'TXMP') the TRMA at `index` of `c` links, part by part; None where a
    part's link is 0."""
    return [None if texture is None else c.short_name(texture)
            for texture in (c.link(link, TXMP_TAG, index, f"part {part} texture")
                            for part, link in enumerate(counted_items(c, index, TRMA_TAG).tolist()))]


def counted_items(c: Container, index: int, tag: bytes) -> np.ndarray:
    """The items of a TRGA, TRTA, TRIA, TRMA or TRAC (u16 count at 0x16), the count checked first."""
    return counted(c.instance(index, tag)[0], ITEM_DTYPES[tag], c.path, c.label(index), offset=COUNT_AT, count_size=2)


def tree_parents(hierarchy: np.ndarray, path: str, label: str) -> np.ndarray:
    """(P,) int64 parents (-1 for part 0) of the tree walked from part 0 by first child and next
    sibling (0 ends a list), as the engine walks it; every part must be reached exactly once, and
    come after its parent (docs/characters.md 8)."""
    parts = len(hierarchy)
    child, sibling = hierarchy["child"].astype(np.int64), hierarchy["sibling"].astype(np.int64)
    if sibling[0]:
        raise ObanError(path, f"{label}: part 0 (the root) has a sibling, part {sibling[0]}")
    parents = np.full(parts, -2, np.int64)
    parents[0], pending = -1, [0]
    while pending:
        parent = pending.pop()
        part = child[parent]
        while part:
            if part >= parts:
                raise ObanError(path, f"{label}: part {parent}'s children reach part {part}, past the {parts} parts")
            if parents[part] != -2:
                raise ObanError(path, f"{label}: part {part} is reached twice (not a tree)")
            parents[part] = parent
            pending.append(part)
            part = sibling[part]
    unreached = np.flatnonzero(parents == -2)
    if unreached.size:
        raise ObanError(path, f"{label}: part {unreached[0]} is not reached from part 0 (not a tree over all parts)")
    early = np.flatnonzero(parents >= np.arange(parts))
    if early.size:   # the engine walks any order; the import poses parts in part order, parents first
        raise ObanError(path, f"{label}: part {early[0]} comes before its parent, part {parents[early[0]]} (the "
                              f"import needs each part after its parent, as every known body has them)")
    return parents


def _check_reach(translations: Items, parents: np.ndarray) -> None:
    """ObanError where a part's translations from the root, added up as lengths (the farthest
    any pose takes it from the root), make a length whose square leaves float32's range
    (docs/characters.md 8): Blender finds a bone's length and direction through its square."""
    lengths = np.sqrt(np.square(translations.items, dtype=np.float64).sum(axis=1))
    reach, above = lengths.copy(), parents.copy()
    while (above >= 0).any():   # one step up the tree each time, every part at once
        reach += np.where(above >= 0, lengths[above], 0.0)
        above = np.where(above >= 0, parents[above], -1)
    far = np.flatnonzero(np.square(reach) > MAX_SQUARE)
    if far.size:
        raise ObanError(translations.container.path, f"{translations.label}: part {far[0]}'s translations from the "
                                                     f"root add up to {reach[far[0]]:.3g} units, a length whose "
                                                     f"square leaves float32's range")


def _required(library, c, value, tag, owner, what):
    """(container, index) a link leads to; ObanError if it is 0 or its placeholder is not found."""
    index = c.link(value, tag, owner, what)
    if index is None:
        raise ObanError(c.path, f"{c.label(owner)}: no {what} (link 0)")
    target = library.follow(c, value, tag, owner, what)
    if target is None:
        name = c.full_name(index)
        raise ObanError(c.path, f"{c.label(owner)}: its {what} {name} is not found: put {name}.oni beside "
                                f"{os.path.basename(c.path)}, or import the level that holds it")
    return target


def read_character(path: str, library: Library | None = None) -> Character:
    """The character of an ONCC .oni (its body, textures and animations found beside it), the
    first ONCC of a level .dat, or a bare body from a TRBS .oni (no ONCC in the file);
    `library`: open_library's."""
    path = os.fspath(path)
    with open_library(path, library) as library:
        c = library.main
        oncc, trbs = c.first(ONCC_TAG), c.first(TRBS_TAG)
        if oncc is not None:
            return character_at(library, c, oncc)
        if trbs is not None:
            return bare_body(library, c, trbs)
        raise ObanError(path, "holds no character class (ONCC) or body set (TRBS)")


def read_characters(path: str, library: Library | None = None) -> list[Character]:
    """Every ONCC of a level .dat (+ .raw) or a .oni, each with its body and animations."""
    path = os.fspath(path)
    with open_library(path, library) as library:
        c = library.main
        found = [character_at(library, c, i) for i in c.with_data(ONCC_TAG)]
        if not found:
            raise ObanError(path, "holds no character class (ONCC)")
        return found
