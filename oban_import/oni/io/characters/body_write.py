"""A character's body set back to bytes (docs/characters.md 10), as OniSplit v0.9.99.2 lays it
out: TRBS<name>.oni (its five levels of detail, each a TRCM with its TRGA, TRTA, TRIA and an
M3GM per part, as `-create:trbs` writes one), TRMA<name>.oni (a texture link per part, by name)
and ONCC<name>.oni (a character class as read, its body and texture links set to the new files);
every file a VR32 .oni (container/instance_file.py) whose named links are placeholders. The
meshes are objects/mesh_write.py's; a body, textures or class that cannot be written is an
ObanError naming the instance and what does not fit.
"""

from typing import NamedTuple

import numpy as np

from ....core.errors import ObanError
from ..container.container import (LINK_FLAG, ONCC_TAG, TRBS_TAG, TRCM_TAG, TRGA_TAG, TRIA_TAG, TRMA_TAG, TRTA_TAG,
                                   TXMP_TAG, Container)
from ..container.instance_file import instance_file_bytes, instance_name
from ..objects.mesh_write import mesh_instances, triangle_strips, vertex_arrays
from ..trams.read import MAX_SQUARE
from ..trams.tram import MAX_PARTS, PART_NAMES
from .read import (COUNT_AT, ONCC_ANIMATIONS_AT, ONCC_BODY_AT, ONCC_TEXTURES_AT, TRBS_LEVELS, TRCM_LINKS_AT,
                   TRCM_PARTS_AT)

# OniSplit's InstanceMetadata: every link of an ONCC (offset, tag), in field order
ONCC_LINKS = ((0x20, "TXMP"), (0x42C, "ONCV"), (0x430, "ONCP"), (0x434, "ONIA"), (ONCC_BODY_AT, "TRBS"),
              (ONCC_TEXTURES_AT, "TRMA"), (0xC3C, "CBPM"), (0xC40, "CBPI"), (ONCC_ANIMATIONS_AT, "TRAC"),
              (0xC84, "TRSC"))
ONCC_LINK_TAGS = dict(ONCC_LINKS)
ONCC_MIN_SIZE = 0xC88     # the last link's end (OniSplit writes 0xC90 bytes)


class PartMesh(NamedTuple):
    """A body part's mesh as body_file_bytes takes it: points (n, 3), vertex normals (n, 3),
    texture coordinates (n, 2, Direct3D v); its triangle strips, face normals and face normal
    indices as stored, or else (t, 3) triangles, made into strips by mesh_write.triangle_strips;
    `texture_name`: the M3GM's own texture (None: none, the part showing TRMA's)."""
    points: object
    normals: object
    uvs: object
    triangles: object = None
    strips: object = None
    face_normals: object = None
    face_normal_indices: object = None
    texture_name: str | None = None


def body_file_bytes(name: str, part_names, parents, translations, levels) -> bytes:
    """TRBS`name`.oni: `part_names` the engine's, in part order; `parents` (P,) (-1 for part 0,
    each other part's before it); `translations` (P, 3) from each part's parent (TRTA, the rest
    pose); `levels` five lists, low to high detail, of a PartMesh (or None: no mesh) per part. A
    level given as the same list as an earlier one shares its TRCM (`-create:trbs` links one TRCM
    five times); the others get their own, in order."""
    full = instance_name("TRBS", name)
    parents, translations = _skeleton(full, part_names, parents, translations)
    if len(levels) != TRBS_LEVELS:
        raise ObanError(full, f"{len(levels)} levels of detail (a TRBS holds {TRBS_LEVELS})")
    instances, at = [(TRBS_TAG, full, None)], {}
    for level, level_meshes in enumerate(levels):
        if id(level_meshes) not in at:
            at[id(level_meshes)] = len(instances)
            instances += _level_instances(full, level, level_meshes, part_names, parents, translations, len(instances))
    instances[0] = (TRBS_TAG, full, _links(at[id(level_meshes)] for level_meshes in levels))
    return instance_file_bytes(instances)


def textures_file_bytes(name: str, texture_names) -> bytes:
    """TRMA`name`.oni: a TXMP link per part by name (None or '': none), each name once as a
    placeholder, in order of first use."""
    full = instance_name("TRMA", name)
    if not 1 <= len(texture_names) <= MAX_PARTS:
        raise ObanError(full, f"{len(texture_names)} textures: a TRMA has one per part (1 to {MAX_PARTS} parts)")
    instances, placeholder = [(TRMA_TAG, full, None)], {}
    for texture in filter(None, texture_names):
        if texture not in placeholder:
            placeholder[texture] = len(instances)
            instances.append((TXMP_TAG, instance_name("TXMP", texture), None))
    links = _links(placeholder[texture] if texture else 0 for texture in texture_names)
    instances[0] = (TRMA_TAG, full, _counted(len(texture_names), links))
    return instance_file_bytes(instances)


def character_file_bytes(name: str, data: bytes, links: dict, body: str, textures: str | None) -> bytes:
    """ONCC`name`.oni: the ONCC's instance `data` as read, every byte kept but its links, which
    name the instances in `links` ({offset: full name}, ONCC_LINKS; an offset left out: no link)
    as placeholders in field order, as OniSplit's XML importer writes them; the body
    set link names TRBS`body`, the texture link TRMA`textures` (None: no TRMA)."""
    full = instance_name("ONCC", name)
    if len(data) < ONCC_MIN_SIZE:
        raise ObanError(full, f"{len(data)} bytes, too short for an ONCC (its links reach 0x{ONCC_MIN_SIZE:x})")
    stray = sorted(set(links) - set(ONCC_LINK_TAGS))
    if stray:
        raise ObanError(full, f"no ONCC link at offset 0x{stray[0]:x} (links: "
                              f"{', '.join(f'0x{at:x}' for at, _ in ONCC_LINKS)})")
    links = {**links, ONCC_BODY_AT: instance_name("TRBS", body),
             ONCC_TEXTURES_AT: textures and instance_name("TRMA", textures)}
    out, instances = bytearray(data), [(ONCC_TAG, full, None)]
    for at, tag in ONCC_LINKS:   # every field is of another tag: no name comes twice
        target = links.get(at)
        if target and (not target.startswith(tag) or len(target) == len(tag)):
            raise ObanError(full, f"its link at 0x{at:x} names '{target}', not a {tag} instance")
        if target:
            instances.append((tag.encode()[::-1], instance_name(tag, target[4:]), None))
        out[at:at + 4] = _links([len(instances) - 1 if target else 0])
    instances[0] = (ONCC_TAG, full, bytes(out))
    return instance_file_bytes(instances)


def class_as_read(c: Container, index: int) -> tuple[bytes, dict]:
    """What character_file_bytes takes of the ONCC at `index` of `c`: its instance data and
    {offset: full name} of each instance it links (every link checked; one to an unnamed
    instance, which no placeholder can name, is an ObanError)."""
    data, _ = c.instance(index, ONCC_TAG)
    if len(data) < ONCC_MIN_SIZE:
        raise ObanError(c.path, f"{c.label(index)}: {len(data)} bytes, too short for an ONCC")
    links = {}
    for at, tag in ONCC_LINKS:
        target = c.link(int.from_bytes(data[at:at + 4], "little"), tag.encode()[::-1], index, f"{tag} link")
        if target is not None and c.is_unnamed(target):
            raise ObanError(c.path, f"{c.label(index)}: its {tag} link (0x{at:x}) reaches an unnamed instance, "
                                    "which a loose ONCC file cannot name")
        if target is not None:
            links[at] = c.full_name(target)
    return data, links


# --- the body --------------------------------------------------------------------------------

def _skeleton(full, part_names, parents, translations):
    """(parents (P,) int64, translations (P, 3) little-endian float32), checked against the names."""
    count = len(part_names)
    if not 1 <= count <= MAX_PARTS:
        raise ObanError(full, f"{count} parts (a body has 1 to {MAX_PARTS}: the engine's part masks are 32 bits)")
    expected = [PART_NAMES[p] if p < len(PART_NAMES) else f"Part{p}" for p in range(count)]
    wrong = [p for p in range(count) if part_names[p] != expected[p]]
    if wrong:
        raise ObanError(full, f"part {wrong[0]} is named '{part_names[wrong[0]]}': the engine knows part "
                              f"{wrong[0]} as {expected[wrong[0]]} (parts are stored by number, in this order)")
    parents = np.asarray(parents)
    if parents.shape != (count,) or not np.issubdtype(parents.dtype, np.integer):
        raise ObanError(full, f"parents of shape {parents.shape} and type {parents.dtype}, not {count} integers")
    parents = parents.astype(np.int64)
    wrong = np.flatnonzero(np.r_[parents[0] != -1, (parents[1:] < 0) | (parents[1:] >= np.arange(1, count))])
    if wrong.size:
        p = int(wrong[0])
        raise ObanError(full, f"part {p} ({part_names[p]}) has parent {parents[p]}: part 0 is the root (-1), "
                              "every other part comes after its parent")
    translations = np.asarray(translations)
    if translations.shape != (count, 3):
        raise ObanError(full, f"translations of shape {translations.shape}, not ({count}, 3)")
    with np.errstate(over="ignore"):   # past float32: infinite, refused below
        translations = np.ascontiguousarray(translations, "<f4")
    lengths = np.sqrt(np.square(translations, dtype=np.float64).sum(axis=1))
    reach = lengths.copy()
    for p in range(1, count):   # each part's parent comes before it
        reach[p] += reach[parents[p]]
    far = np.flatnonzero(~np.isfinite(reach) | (np.square(reach) > MAX_SQUARE))
    if far.size:
        p = int(far[0])
        raise ObanError(full, f"part {p} ({part_names[p]}): its translations from the root (as float32) add up to "
                              f"{reach[p]:.3g} units, which the readers refuse (finite, the square within float32)")
    return parents, translations


def _level_instances(full, level, part_meshes, part_names, parents, translations, first):
    """A level's TRCM, TRGA, TRTA, TRIA and each part's M3GM with its arrays, the TRCM at
    descriptor `first`, as OniSplit's BodyDatWriter creates them."""
    count = len(parents)
    if len(part_meshes) != count:
        raise ObanError(full, f"level of detail {level}: {len(part_meshes)} meshes for {count} parts")
    geometry, translations_at, hierarchy = first + 1, first + 2, first + 3
    instances, mesh_links = [], []
    for part, mesh in enumerate(part_meshes):
        at = first + 4 + len(instances)
        mesh_links.append(at if mesh is not None else 0)
        if mesh is not None:
            instances += _mesh_instances(full, f"level of detail {level}, part {part} ({part_names[part]})", mesh, at)
    trcm = (bytes(TRCM_PARTS_AT) + count.to_bytes(2, "little") + bytes(TRCM_LINKS_AT - TRCM_PARTS_AT - 2)
            + _links((geometry, translations_at, hierarchy)))
    return [(TRCM_TAG, "", trcm), (TRGA_TAG, "", _counted(count, _links(mesh_links))),
            (TRTA_TAG, "", _counted(count, translations.tobytes())),
            (TRIA_TAG, "", _counted(count, _hierarchy(parents).tobytes()))] + instances


def _hierarchy(parents):
    """TRIA's (parent, first child, next sibling, 0) per part, children in part order (as
    OniSplit's BodyDatWriter writes a tree whose parts it numbered depth first); the root's parent 0."""
    items = np.zeros((len(parents), 4), np.uint8)
    items[:, 0] = np.maximum(parents, 0)
    children = np.arange(1, len(parents))[np.argsort(parents[1:], kind="stable")]   # by parent, then number
    if children.size:
        same = parents[children[1:]] == parents[children[:-1]]
        items[children[:-1][same], 2] = children[1:][same]
        first = children[np.r_[True, ~same]]
        items[parents[first], 1] = first
    return items


def _mesh_instances(full, where, mesh, at):
    """An unnamed M3GM at descriptor `at`, its arrays after it and a placeholder for its own
    texture, as OniSplit's GeometryDatWriter creates them (mesh_write.mesh_instances); strips
    made for a mesh given as triangles."""
    try:
        points, normals, uvs = vertex_arrays("M3GM", mesh.points, mesh.normals, mesh.uvs)
        if mesh.strips is not None:
            if mesh.face_normals is None or mesh.face_normal_indices is None:
                raise ObanError("M3GM", "triangle strips without their face normals and face normal indices")
            strips, face_normals, indices = mesh.strips, mesh.face_normals, mesh.face_normal_indices
        elif mesh.triangles is not None:
            strips, face_normals, indices = triangle_strips("", points, mesh.triangles)
        else:
            raise ObanError("M3GM", "neither triangle strips nor triangles")
        return mesh_instances("M3GM", "", points, normals, uvs, strips, face_normals, indices, mesh.texture_name, at)
    except ObanError as error:
        raise ObanError(full, f"{where}: {error.problem}") from None


def _links(indices) -> bytes:
    """u32 links to the descriptors `indices` (0: none)."""
    return b"".join((index << 8 | LINK_FLAG if index else 0).to_bytes(4, "little") for index in indices)


def _counted(count: int, items: bytes) -> bytes:
    """TRGA, TRTA, TRIA, TRMA: zeros to COUNT_AT, a u16 count, the items."""
    return bytes(COUNT_AT) + count.to_bytes(2, "little") + items
