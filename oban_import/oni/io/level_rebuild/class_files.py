"""A level's classes carried out as the .oni files OniSplit's `-create:level` rebuilds it from
(docs/level.md 11): one VR32 instance file per named instance with data of the tags asked
for, byte for byte what OniSplit's importer wrote before `-import` put it in the level. No bpy.

Each file is OniSplit's (instance_file.py): descriptor 0 the class, then what it reaches, laid
out as the importer that wrote it did (Links.depth_first). OniSplit's XML importer (DOOR, OFGA,
CONS, TURR, TRIG, TRGE) and geometry importer (M3GM, also a console's screen) go breadth first:
every instance it links, unnamed ones with their data and named ones as placeholders, in order
of first link, then the same for each unnamed one in that order (an M3GM's PNTA, VCRA x2, TXCA,
IDXA x2, TXMP; a TRIG's M3GM, TRGE, OBAN, then its TRGE's M3GM). Its texture importers go depth
first: the unnamed
instances a TXMP reaches, in link order, each after those it reaches in turn (its frames, then
their TXAN), then the named ones they link as placeholders in order of first link. Links are
renumbered to the file's descriptors (LINKS: where each template has them); a TXMP's pixels
(its first level and, with HasMipMaps, each level down to 1 x 1) go to the file's raw table,
in descriptor order, each from a multiple of 32 after its 32 zero bytes. `-import` sets every
PC TXMP's SwapBytes flag (0x1000); OniSplit's image importers set it for every format but
RGBA, so an RGBA texture's is cleared again (its XML importer sets it for all: such a file
differs by that bit). A file is named `<tag><name>.oni`, a space `_` and a character no file
system takes `%XX` (OniSplit's escape); a file name met twice keeps its first instance.
Consoles, turrets and triggers (CONS, TURR, TRIG; a TRIG's TRGE emitter) link only geometry
(OFGA, M3GM) and animation (OBAN); their textures, sounds and particle classes they name by
text, so they are not carried: OniSplit finds those by name.

A loose `.oni` (VR32) already stands among its classes: the files of its folder named
`<tag>….oni` for one of the tags come unchanged. Any fault (a link out of range or to the
wrong tag, a count that does not fit, pixels outside the `.raw`; a Mac or demo level, whose
pixels are in a `.sep`) is an ObanError naming the instance.
"""

import os
from typing import NamedTuple

import numpy as np

from ....core.errors import ObanError
from ....core.files import read_bytes
from ..container.container import (CONS_TAG, COUNT_OFFSET, DOOR_TAG, ENVP_TAG, IDXA_TAG, LINK_FLAG, M3GM_TAG, OBAN_TAG,
                                   OFGA_TAG, PC_CHECKSUM, PNTA_TAG, TRGE_TAG, TRIG_TAG, TURR_TAG, TXAN_TAG, TXCA_TAG,
                                   TXMP_TAG, UNNAMED, VCRA_TAG, Container, counted, tag_name, u32_at)
from ..container.instance_file import ALIGN, align, instance_file_bytes
from ..container.library import Library, open_library
from ..level.classes import DOOR_CLASS_DTYPE, ELEMENT_DTYPE, OFGA_PARTICLES_OFFSET
from ..objects.meshes import M3GM_LINKS, M3GM_LINKS_OFFSET
from ..objects.textures import HAS_MIPMAPS, RGBA, TXMP_FIELDS, TXMP_OFFSET, parse_header, pixel_bytes

SWAP_BYTES = 0x1000    # TXMP flag
TXMP_FLAGS_AT = TXMP_OFFSET + TXMP_FIELDS.fields["flags"][1]
FILE_NAME = str.maketrans({" ": "_", **{c: f"%{ord(c):02X}" for c in '"*/:<>?\\|' + "".join(map(chr, range(32)))}})
WORD = np.arange(4)    # the bytes of a u32 from its first


def _pixels(data: bytes, path: str, label: str) -> int:
    """Bytes of a TXMP's pixels: its first level and, with HasMipMaps, each level to 1 x 1."""
    header = parse_header(data, path, label)
    width, height, fmt = header["width"], header["height"], header["format"]
    size = pixel_bytes(width, height, fmt)
    while header["flags"] & HAS_MIPMAPS and (width > 1 or height > 1):
        width, height = max(width // 2, 1), max(height // 2, 1)
        size += pixel_bytes(width, height, fmt)
    return size


class Links(NamedTuple):
    """Where a template's links are: `fields` (name, byte, tag) of single u32 links; `items`
    (what, item dtype, its link field or None for a bare link, tag) of a counted array at
    COUNT_OFFSET; `raw` (byte of its raw data offset, size(data, path, label) of that data);
    `depth_first`: a file with this root is laid out as OniSplit's texture importers do, not
    breadth first as its XML importer does (the module's docstring)."""
    fields: tuple = ()
    items: tuple | None = None
    raw: tuple | None = None
    depth_first: bool = False


def _txmp(field):
    return TXMP_OFFSET + TXMP_FIELDS.fields[field][1]


LEAF_AT, ANIMATION_AT = DOOR_CLASS_DTYPE.fields["geometries"][1], DOOR_CLASS_DTYPE.fields["animation"][1]
# OniSplit's InstanceMetadata: where the links of the templates no reader here lays out are
CONS_GEOMETRY_AT, CONS_SCREEN_AT = 0x1C, 0x20           # OFGA, M3GM (after flags, 2 x 3 floats)
TURR_BASE_AT, TURR_ARM_AT, TURR_WEAPON_AT = 0x58, 0x64, 0x6C   # M3GMs, each followed by its gunk flags
TRIG_BASE_AT, TRIG_EMITTER_AT, TRIG_ANIMATION_AT = 0x10, 0x1C, 0x20   # M3GM, TRGE, OBAN
TRGE_GEOMETRY_AT = 0x18                                 # M3GM (after 2 x 3 floats)
LINKS = {
    DOOR_TAG: Links((("leaf", LEAF_AT, OFGA_TAG), ("second leaf", LEAF_AT + 4, OFGA_TAG),
                     ("animation", ANIMATION_AT, OBAN_TAG))),
    OFGA_TAG: Links((("particles", OFGA_PARTICLES_OFFSET, ENVP_TAG),), ("element", ELEMENT_DTYPE, "mesh", M3GM_TAG)),
    M3GM_TAG: Links(tuple((field, M3GM_LINKS_OFFSET + 4 * k, tag) for k, (field, tag) in enumerate(M3GM_LINKS))),
    TXMP_TAG: Links((("animation", _txmp("animation"), TXAN_TAG), ("environment map", _txmp("env_map"), TXMP_TAG)),
                    raw=(_txmp("raw_offset"), _pixels), depth_first=True),
    TXAN_TAG: Links(items=("frame", "<u4", None, TXMP_TAG)),
    CONS_TAG: Links((("console geometry", CONS_GEOMETRY_AT, OFGA_TAG), ("screen geometry", CONS_SCREEN_AT, M3GM_TAG))),
    TURR_TAG: Links((("base geometry", TURR_BASE_AT, M3GM_TAG), ("arm geometry", TURR_ARM_AT, M3GM_TAG),
                     ("weapon geometry", TURR_WEAPON_AT, M3GM_TAG))),
    TRIG_TAG: Links((("base geometry", TRIG_BASE_AT, M3GM_TAG), ("emitter", TRIG_EMITTER_AT, TRGE_TAG),
                     ("animation", TRIG_ANIMATION_AT, OBAN_TAG))),
    TRGE_TAG: Links((("geometry", TRGE_GEOMETRY_AT, M3GM_TAG),)),
    **{tag: Links() for tag in (OBAN_TAG, PNTA_TAG, VCRA_TAG, TXCA_TAG, IDXA_TAG, ENVP_TAG)},
}
assert {link[-1] for layout in LINKS.values() for link in layout.fields + (layout.items,) if link} <= LINKS.keys()


CLASS_TAGS = (DOOR_TAG, OFGA_TAG, M3GM_TAG, OBAN_TAG, TXMP_TAG, CONS_TAG, TURR_TAG, TRIG_TAG, TRGE_TAG)


def class_files(path: str, tags=CLASS_TAGS, library: Library | None = None) -> dict[str, bytes]:
    """{file name: bytes} of the OniSplit .oni of each named instance with data of `tags`
    (stored, reversed) in the level .dat at `path` (its .raw beside it; `library`:
    open_library's); for a loose .oni, the files beside it named after one of `tags` (the
    module's docstring)."""
    if not set(tags) <= LINKS.keys():
        raise ValueError(f"no link table for {sorted(tag_name(t) for t in set(tags) - LINKS.keys())}")
    with open_library(path, library) as library:
        c = library.main
        if c.version == "VR32":
            folder = os.path.dirname(os.path.abspath(path))
            names = sorted(n for n in os.listdir(folder) if n.endswith(".oni") and n.startswith(
                tuple(tag_name(t) for t in tags)))
            return {name: read_bytes(os.path.join(folder, name)) for name in names}
        if c.header["checksum"] != PC_CHECKSUM:
            raise ObanError(path, "a Mac or demo level (its pixels are in a .sep): class files come from a PC level")
        named = np.isin(c.descriptors["tag"], np.array(tags, "S4")) & (c.descriptors["flags"] & UNNAMED == 0)
        files = {}
        for index in np.flatnonzero(named).tolist():
            name = class_file_name(c.full_name(index))
            if not c.is_placeholder(index) and name not in files:
                files[name] = _class_file(c, index)
        return files


def class_file_name(full_name: str) -> str:
    """The file OniSplit names an instance of this full name ('TXMPenv wall' -> 'TXMPenv_wall.oni')."""
    return full_name.translate(FILE_NAME) + ".oni"


def _class_file(c: Container, root: int) -> bytes:
    """The .oni of instance `root` (the module's docstring)."""
    links = {}
    order = (_depth_first if LINKS[c.tag_of(root)].depth_first else _breadth_first)(c, root, links)
    position = {index: k for k, index in enumerate(order)}
    raw, raw_at, instances = bytearray(ALIGN), {}, []
    for index in order:
        if index not in links:   # a named instance it links: a placeholder
            instances.append((c.tag_of(index), c.full_name(index), None))
            continue
        data, at, targets = links[index]
        layout, label = LINKS[c.tag_of(index)], c.label(index)
        out = bytearray(data)
        linked, inverse = np.unique(targets, return_inverse=True)
        new = np.array([0 if t < 0 else position[t] << 8 | LINK_FLAG for t in linked.tolist()], "<u4")[inverse]
        np.frombuffer(out, np.uint8)[at[:, None] + WORD] = new.view(np.uint8).reshape(-1, 4)
        if layout.raw:
            byte, size = layout.raw
            old = u32_at(data, byte)
            if old and old not in raw_at:
                pixels = c.raw(old, size(data, c.path, label), f"{label}'s pixels")
                raw_at[old] = align(len(raw))
                raw += bytes(raw_at[old] - len(raw)) + pixels
            out[byte:byte + 4] = raw_at.get(old, 0).to_bytes(4, "little")
        if c.tag_of(index) == TXMP_TAG and parse_header(data, c.path, label)["format"] == RGBA:
            out[TXMP_FLAGS_AT:TXMP_FLAGS_AT + 4] = (u32_at(data, TXMP_FLAGS_AT) & ~SWAP_BYTES).to_bytes(4, "little")
        instances.append((c.tag_of(index), c.full_name(index), bytes(out)))
    return instance_file_bytes(instances, bytes(raw))


def _breadth_first(c: Container, root: int, links: dict) -> list:
    """The file's descriptors as OniSplit's XML importer numbers them: the root, then each
    instance an instance with data links, as first linked; `links` gets each one's _links."""
    order, seen = [root], {root}
    for index in order:   # grows as it goes
        if index != root and not c.is_unnamed(index):
            continue   # a placeholder: nothing of it is read
        links[index] = _links(c, index)
        for target in _linked(c, index, links[index][2]):
            if target not in seen:
                seen.add(target)
                order.append(target)
    return order


def _depth_first(c: Container, root: int, links: dict) -> list:
    """The file's descriptors as OniSplit's texture importers number them: the root, the
    unnamed instances it reaches, each after those it reaches, then the named ones they link
    in order of first link; `links` gets each one's _links."""
    order, placeholders, seen, stack = [], [], {root}, [(root, False)]
    while stack:
        index, reached = stack.pop()
        if reached:   # all it reaches is in order: it follows them
            order.append(index)
            continue
        links[index] = _links(c, index)
        unnamed = []
        for target in _linked(c, index, links[index][2]):
            if not c.is_unnamed(target):
                if target != root and target not in placeholders:
                    placeholders.append(target)
            elif target not in seen:
                seen.add(target)
                unnamed.append(target)
        stack += [(index, True)] + [(target, False) for target in reversed(unnamed)]
    order.insert(0, order.pop())   # the root, done last, is descriptor 0
    return order + placeholders


def _linked(c: Container, index: int, targets: np.ndarray) -> list:
    """The descriptors `index` links (`targets`, -1 none), in order of first link; an unnamed
    one without data raises."""
    linked, first = np.unique(targets[targets >= 0], return_index=True)
    linked = linked[np.argsort(first)].tolist()
    for target in linked:
        if c.is_unnamed(target) and c.is_placeholder(target):
            raise ObanError(c.path, f"{c.label(index)} links {c.label(target)}, which has neither data nor a "
                                    f"name to find it by")
    return linked


def _links(c: Container, index: int) -> tuple:
    """(its data, the byte of each link, the descriptor each leads to or -1): every link of an
    instance, checked (range, link flag, tag) all at once; the first at fault raises as
    Container.link says it."""
    tag, label = c.tag_of(index), c.label(index)
    data, _ = c.instance(index, tag)
    layout = LINKS[tag]
    at = np.array([byte for _, byte, _ in layout.fields], np.int64)
    if at.size and len(data) < at.max() + 4:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for its links (to byte {at.max() + 4})")
    expected = np.array([link_tag for _, _, link_tag in layout.fields], "S4")
    if layout.items:
        what, dtype, field, item_tag = layout.items
        dtype = np.dtype(dtype)
        count = len(counted(data, dtype, c.path, label, what))
        first = COUNT_OFFSET + 4 + (dtype.fields[field][1] if field else 0)
        at = np.concatenate([at, first + dtype.itemsize * np.arange(count, dtype=np.int64)])
        expected = np.concatenate([expected, np.full(count, item_tag, "S4")])
    values = np.frombuffer(data, np.uint8)[at[:, None] + WORD].view("<u4")[:, 0].astype(np.int64)
    target = values >> 8
    known = target < len(c.descriptors)
    wrong = (values != 0) & ((values & 0xFF != LINK_FLAG) | ~known |
                             (c.descriptors["tag"][np.where(known, target, 0)] != expected))
    if wrong.any():
        k = int(np.argmax(wrong))
        name = layout.fields[k][0] if k < len(layout.fields) else f"{layout.items[0]} {k - len(layout.fields)}"
        c.link(int(values[k]), bytes(expected[k]), index, name)
    return data, at, np.where(values != 0, target, -1)
