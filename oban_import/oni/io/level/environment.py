"""The environment (AKEV, docs/level.md 5): its 17 links checked, the arrays a Blender scene
needs read and checked against each other with whole-array numpy: points, texture
coordinates, quads, their textures and collision, planes, rooms and door frames."""

import functools

import numpy as np

from ....core.errors import ObanError
from ..container.container import (ABNA_TAG, AGDB_TAG, AGQC_TAG, AGQG_TAG, AGQR_TAG, AKAA_TAG, AKBA_TAG, AKBP_TAG,
                                   AKDA_TAG, AKEV_TAG, AKOT_TAG, AKVA_TAG, COUNT_OFFSET, IDXA_TAG, PLEA_TAG, PNTA_TAG,
                                   TXCA_TAG, TXMA_TAG, TXMP_TAG, Container, counted, tag_name)
from ..container.library import Library
from ..objects.meshes import parse_array, parse_links
from ..objects.read import texture_at
from .arrays import first_bad
from .model import TRIANGLE, Environment
from .rooms import bsp_nodes, room_floors

# The AKEV's links from 0x00, in order: (field, tag); the ones read, and those a scene cannot do without.
AKEV_LINKS = (("points", PNTA_TAG), ("planes", PLEA_TAG), ("texture coordinates", TXCA_TAG), ("quads", AGQG_TAG),
              ("quad textures", AGQR_TAG), ("quad collision", AGQC_TAG), ("debug", AGDB_TAG),
              ("textures", TXMA_TAG), ("rooms", AKVA_TAG), ("room sides", AKBA_TAG), ("script quads", IDXA_TAG),
              ("script ids", IDXA_TAG), ("room BSP", AKBP_TAG), ("alpha BSP", ABNA_TAG), ("octree", AKOT_TAG),
              ("room adjacency", AKAA_TAG), ("door frames", AKDA_TAG))
READ = {"points", "planes", "texture coordinates", "quads", "quad textures", "quad collision", "textures", "rooms",
        "room BSP", "door frames"}
REQUIRED = {"points", "texture coordinates", "quads", "quad textures", "textures"}
BOUNDING_BOX_OFFSET = 0x44
AKEV_SIZE = BOUNDING_BOX_OFFSET + 24
QUAD_DTYPE = np.dtype([("points", "<i4", 4), ("uvs", "<i4", 4), ("shades", "<u4", 4), ("flags", "<u4"),
                       ("object_tag", "<i4")])
QUAD_TEXTURE_DTYPE = np.dtype([("texture", "<u2"), ("alpha", "<u2")])   # alpha: run time
COLLISION_DTYPE = np.dtype([("plane", "<i4"), ("box", "<f4", 6)])
ROOM_DTYPE = np.dtype([("box", "<f4", 6), ("flags", "<u4"), ("floor", "<f4", 4), ("height", "<f4")])
STORED_ROOM_DTYPE = np.dtype({"names": ["bsp_root", *ROOM_DTYPE.names],
                              "formats": ["<i4", *[ROOM_DTYPE.fields[n][0] for n in ROOM_DTYPE.names]],
                              "offsets": [0, 0x30, 0x5C, 0x60, 0x70], "itemsize": 116})   # the rest: grids, sides
DOOR_FRAME_DTYPE = np.dtype([("quad", "<u4"), ("box", "<f4", 6), ("position", "<f4", 3), ("facing", "<f4"),
                             ("width", "<f4"), ("height", "<f4")])
assert QUAD_DTYPE.itemsize == 56 and COLLISION_DTYPE.itemsize == 28 and DOOR_FRAME_DTYPE.itemsize == 52


def environment_at(library: Library, c: Container, index: int) -> Environment | None:
    """The AKEV at descriptor `index` of `c`, built once per Library; None (and a warning)
    when a placeholder of an array it cannot do without is not found."""
    return library.cached(c, index, functools.partial(_environment, library))


def _environment(library, c, index):
    data, _ = c.instance(index, AKEV_TAG)
    label = c.label(index)
    if len(data) < AKEV_SIZE:
        raise ObanError(c.path, f"{label}: {len(data)} bytes, too short for an AKEV (0x{AKEV_SIZE:x})")
    arrays = {}
    for (field, tag), value in zip(AKEV_LINKS, parse_links(data, 0, len(AKEV_LINKS), c.path, label)):
        if field not in READ:
            c.link(value, tag, index, field)
            continue
        target = library.follow(c, value, tag, index, field)
        if target is None and field in REQUIRED:
            if value:
                return None   # a placeholder not found: warned
            raise ObanError(c.path, f"{label}: no {field} ({tag_name(tag)}) (link 0)")
        arrays[field] = None if target is None else (*target, *target[0].instance(target[1], tag))
    return _build(library, c.short_name(index), arrays, np.frombuffer(data, "<f4", 6, BOUNDING_BOX_OFFSET).copy())


def _build(library, name, arrays, bounding_box):
    """The Environment of the arrays followed: (container, index, data) by field, None for an
    optional one that is not there."""
    def read(field, dtype):
        found = arrays[field]
        if found is None:
            return np.zeros(0, dtype)
        c, i, data, _ = found
        return counted(data, dtype, c.path, c.label(i), field)

    points_c, points_i, points_data, _ = arrays["points"]
    points = parse_array(points_data, PNTA_TAG, points_c.path, points_c.label(points_i))
    uvs_c, uvs_i, uvs_data, _ = arrays["texture coordinates"]
    uvs = parse_array(uvs_data, TXCA_TAG, uvs_c.path, uvs_c.label(uvs_i))
    for found, values, what in ((arrays["points"], points, "points"), (arrays["texture coordinates"], uvs,
                                                                       "texture coordinates")):
        if not np.isfinite(values).all():
            raise ObanError(found[0].path, f"{found[0].label(found[1])}: non-finite value in its {what}")
    quads = read("quads", QUAD_DTYPE)
    quad_textures = read("quad textures", QUAD_TEXTURE_DTYPE)["texture"]
    collision, planes = read("quad collision", COLLISION_DTYPE), read("planes", ("<f4", 4))
    textures, names = _textures(library, *arrays["textures"][:3])
    stored_rooms, door_frames = read("rooms", STORED_ROOM_DTYPE), read("door frames", DOOR_FRAME_DTYPE)
    rooms = np.zeros(len(stored_rooms), ROOM_DTYPE)
    for field in ROOM_DTYPE.names:
        rooms[field] = stored_rooms[field]
    floors, floor_counts = _room_floors(arrays, rooms, stored_rooms["bsp_root"], planes.reshape(-1, 4))
    _check_counts(arrays, quads, quad_textures, collision)
    _check_indices(arrays, quads, len(points), len(uvs), quad_textures, len(names), collision, len(planes),
                   door_frames)
    zero_area = _zero_area(points, quads)
    if zero_area.any():
        library.warn(f"AKEV{name}: {int(zero_area.sum())} quads of zero area (quad {int(np.argmax(zero_area))} "
                     f"first): skipped")
    return Environment(
        name=name, points=points, texture_coordinates=uvs, quad_points=quads["points"].copy(),
        quad_uvs=quads["uvs"].copy(), shades=quads["shades"].copy(), flags=quads["flags"].copy(),
        object_tags=quads["object_tag"].copy(), quad_textures=quad_textures.copy(),
        collision_planes=collision["plane"].copy(), collision_boxes=collision["box"].reshape(-1, 6).copy(),
        planes=planes.reshape(-1, 4), textures=textures, texture_names=names, rooms=rooms, room_floors=floors,
        room_floor_counts=floor_counts, door_frames=door_frames,
        bounding_box=bounding_box, zero_area=zero_area,
        quads_at=_first_record(arrays["quads"]), quad_textures_at=_first_record(arrays["quad textures"]))


def _room_floors(arrays, rooms, roots, planes):
    """The rooms' floor polygons from their BSP (rooms.py); none (all counts 0) without one, or
    from a BSP of no nodes."""
    found = arrays["room BSP"]
    nodes = None if found is None else bsp_nodes(found[2], found[0].path, found[0].label(found[1]))
    if nodes is None or not len(nodes) or not len(rooms):
        return np.zeros((0, 3), np.float32), np.zeros(len(rooms), np.int32)
    c, i, _, _ = found
    return room_floors(nodes, planes, rooms, roots, c.path, c.label(i))


def _first_record(found) -> tuple:
    """(the file, the byte) where an array instance's first record is stored: past its count."""
    c, _, _, offset = found
    return c.path, offset + COUNT_OFFSET + 4


def _textures(library, c, index, data):
    """The TXMA's textures ([Texture | None]) and names, its placeholders followed (a name not
    found: a warning, None)."""
    label = c.label(index)
    links = counted(data, "<u4", c.path, label, "texture").tolist()
    fields = [f"texture {k}" for k in range(len(links))]
    found = [c.link(value, TXMP_TAG, index, field) for value, field in zip(links, fields)]
    names = ["" if i is None else c.short_name(i) for i in found]
    targets = library.follow_all(c, links, TXMP_TAG, index, fields)
    return [None if target is None else texture_at(library, *target) for target in targets], names


def _check_counts(arrays, quads, quad_textures, collision):
    """AGQR, and AGQC if there is one, hold one entry per AGQG quad."""
    qc, qi, _, _ = arrays["quads"]
    for field, values in (("quad textures", quad_textures), ("quad collision", collision)):
        found = arrays[field]
        if found is not None and len(values) != len(quads):
            c, i, _, _ = found
            raise ObanError(c.path, f"{c.label(i)}: {len(values)} {field} for the {len(quads)} quads of "
                                    f"{qc.label(qi)}")


def _check_indices(arrays, quads, points, uvs, quad_textures, textures, collision, planes, door_frames):
    """Every index inside the array it indexes; the first at fault, in this order, raises."""
    checks = (("quads", quads["points"], points, "point", "points"),
              ("quads", quads["uvs"], uvs, "texture coordinate", "texture coordinates"),
              ("quad textures", quad_textures, textures, "texture", "textures"),
              ("quad collision", collision["plane"] & 0x7FFFFFFF, planes, "plane", "planes"),
              ("door frames", door_frames["quad"], len(quads), "quad", "quads"))
    for field, indices, count, what, whose in checks:
        row = first_bad((indices < 0) | (indices >= count))
        if row is None:
            continue
        value, where = indices[row], f"{'door frame' if field == 'door frames' else 'quad'} {row}"
        if indices.ndim > 1:
            corner = int(np.argmax((value < 0) | (value >= count)))
            value, where = value[corner], f"{where} corner {corner}"
        c, i, _, _ = arrays[field]
        raise ObanError(c.path, f"{c.label(i)}: {where} is {what} {int(value)}, past the {count} {whose}")


def _zero_area(points, quads) -> np.ndarray:
    """(q,) bool: the quads whose triangles (0, 1, 2) and, but for a Triangle, (0, 2, 3) have no area
    (every component of the edges' cross product zero: exact, float32 points in float64)."""
    p = points.astype(np.float64)[quads["points"]]
    x, y, z = (p[:, 1:] - p[:, :1]).transpose(2, 1, 0)     # per axis, the edges 0-1, 0-2, 0-3 of each quad

    def flat(i, j):
        return (y[i] * z[j] == z[i] * y[j]) & (z[i] * x[j] == x[i] * z[j]) & (x[i] * y[j] == y[i] * x[j])
    return flat(0, 1) & (flat(1, 2) | ((quads["flags"] & TRIANGLE) != 0))
