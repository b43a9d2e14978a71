"""M3GM meshes back to bytes (docs/objects.md 9): a VR32 .oni holding the M3GM, its PNTA,
two VCRA, TXCA and two IDXA, and a placeholder for its texture, laid out as OniSplit's
`-create:m3gm` writes them, so that the stored arrays of an unedited mesh give OniSplit's bytes.
An edited mesh comes as triangles: triangle_strips makes strips and face normals for them.
"""

import numpy as np

from ....core.errors import ObanError
from ..container.container import IDXA_TAG, LINK_FLAG, M3GM_TAG, PNTA_TAG, TXCA_TAG, TXMP_TAG, VCRA_TAG
from ..container.instance_file import instance_file_bytes, instance_name
from . import meshes

STRIP_START = -0x80000000     # the top bit of an index: it starts a strip
TXCA_PADDING = 480            # zero bytes OniSplit appends to every TXCA
ARRAY_HEAD = 0x14             # zero bytes before a VCRA's, TXCA's or IDXA's count
PNTA_HEAD = 0x0c              # zero bytes before a PNTA's bounding box
# Units from the origin, on each axis, of the game's world: the cube its environment octree
# covers (the engine's AKcMaxHalfOTDim, OniSplit's OctreeBuilder root box); docs/objects.md 9.
WORLD_LIMIT = 4096.0


def mesh_file_bytes(name: str, points, normals, uvs, strips, face_normals, face_normal_indices,
                    texture_name: str | None) -> bytes:
    """A VR32 .oni holding M3GM`name`: points (n, 3), vertex normals (n, 3), texture
    coordinates (n, 2, Direct3D v), the triangle strips with their face normals and face normal
    indices (docs/objects.md 4), and a placeholder TXMP`texture_name` (none for None or ''). A
    loose file's mesh is named: OniSplit names the file after it, and lists and extracts no
    unnamed instance of a loose file (a body's unnamed meshes are mesh_instances')."""
    full = instance_name("M3GM", name)
    return instance_file_bytes(mesh_instances(full, full, points, normals, uvs, strips, face_normals,
                                              face_normal_indices, texture_name, 0))


def mesh_instances(label: str, full: str, points, normals, uvs, strips, face_normals, face_normal_indices,
                   texture_name: str | None, at: int) -> list:
    """The instances of an M3GM named `full` ('' unnamed) standing at descriptor `at` of its file:
    it, its PNTA, two VCRA, TXCA and two IDXA after it and a placeholder TXMP`texture_name`
    (none for None or ''), as OniSplit creates them; its arrays checked (ObanError naming `label`)."""
    points, normals, uvs = vertex_arrays(label, points, normals, uvs)
    strips = np.ascontiguousarray(strips, "<i4")
    face_normals = np.ascontiguousarray(face_normals, "<f4").reshape(-1, 3)
    face_normal_indices = np.ascontiguousarray(face_normal_indices, "<i4")
    if not np.isfinite(face_normals).all():
        raise ObanError(label, "non-finite value in its face normals (as float32)")
    meshes.triangles(strips, face_normal_indices, face_normals, points, label, "its triangle strips")
    texture = instance_name("TXMP", texture_name) if texture_name else ""
    links = [(at + k) << 8 | LINK_FLAG for k in range(1, 7)] + [(at + 7) << 8 | LINK_FLAG if texture else 0]
    return [(M3GM_TAG, full, bytes(4) + np.array(links, "<u4").tobytes() + bytes(4)),
            (PNTA_TAG, "", bytes(PNTA_HEAD) + bounds(points).tobytes() + counted(points)),
            (VCRA_TAG, "", bytes(ARRAY_HEAD) + counted(normals)),
            (VCRA_TAG, "", bytes(ARRAY_HEAD) + counted(face_normals)),
            (TXCA_TAG, "", bytes(ARRAY_HEAD) + counted(uvs) + bytes(TXCA_PADDING)),
            (IDXA_TAG, "", bytes(ARRAY_HEAD) + counted(strips)),
            (IDXA_TAG, "", bytes(ARRAY_HEAD) + counted(face_normal_indices))] + \
        ([(TXMP_TAG, texture, None)] if texture else [])


def vertex_arrays(full: str, points, normals, uvs):
    """The three per-vertex arrays as little-endian float32, checked: shapes, lengths, finite,
    the points within the world (check_in_world)."""
    arrays = []
    for what, values, width in (("points", points, 3), ("vertex normals", normals, 3),
                                ("texture coordinates", uvs, 2)):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != width:
            raise ObanError(full, f"its {what} have shape {values.shape}, not (n, {width})")
        values = np.ascontiguousarray(values, "<f4")
        if not np.isfinite(values).all():
            raise ObanError(full, f"non-finite value in its {what} (as float32)")
        arrays.append(values)
    if not len(arrays[0]):
        raise ObanError(full, "a mesh needs at least one point")
    for what, values in zip(("vertex normals", "texture coordinates"), arrays[1:]):
        if len(values) != len(arrays[0]):
            raise ObanError(full, f"{len(values)} {what} for {len(arrays[0])} points")
    check_in_world(full, "point", arrays[0])
    return arrays


def check_in_world(label: str, what: str, points) -> None:
    """ObanError naming `label` and the first of the (n, 3) finite `points` (each a `what`, by
    number) with a coordinate beyond WORLD_LIMIT, where the game's world ends (docs/objects.md 9)."""
    points = np.asarray(points)
    far = np.flatnonzero((np.abs(points) > WORLD_LIMIT).any(axis=1))
    if far.size:
        x, y, z = points[far[0]].tolist()
        raise ObanError(label, f"{what} {far[0]} lies at ({x:.9g}, {y:.9g}, {z:.9g}), beyond {WORLD_LIMIT:g} units "
                               f"from the origin on an axis, where the game's world ends ({far.size} such)")


def bounds(points: np.ndarray) -> np.ndarray:
    """PNTA's bounding box (min, max) and sphere (centre, radius), 10 float32, as OniSplit
    computes them in float32: the box by running comparisons (of equal values the last point's,
    which decides a zero's sign), the centre by summing the points in order then multiplying by
    1/n, the radius as the square root of the largest squared distance to it. Points within the
    world (check_in_world) keep every square far inside float32 (at most 3 x 8192^2); in float64
    the radius would differ from OniSplit's in the last bit for about a quarter of meshes."""
    columns = np.arange(3)
    low = points[_last_equal(points, points.min(axis=0)), columns]
    high = points[_last_equal(points, points.max(axis=0)), columns]
    total = np.cumsum(points, axis=0, dtype=np.float32)[-1] + np.float32(0)   # 0 + p0 + p1 + ...
    centre = total * (np.float32(1) / np.float32(len(points)))
    offset = centre - points
    squared = offset[:, 0] * offset[:, 0] + offset[:, 1] * offset[:, 1] + offset[:, 2] * offset[:, 2]
    radius = np.float32(np.sqrt(np.float64(squared.max())))
    return np.concatenate([low, high, centre, [radius]]).astype("<f4")


def _last_equal(points, values):
    """Per column, the last row whose value equals `values`' (a zero of either sign)."""
    return len(points) - 1 - np.argmax((points == values)[::-1], axis=0)


def counted(values: np.ndarray) -> bytes:
    """An array's u32 count and its items."""
    return len(values).to_bytes(4, "little") + values.tobytes()


def triangle_strips(name: str, points, triangles):
    """(strips, face normals, face normal indices) for M3GM`name`'s (k, 3) triangles, each
    facing as its winding says: consecutive triangles sharing an edge (a quad's two halves)
    become a strip of four indices, every other triangle a strip of three; face normal t is
    triangle t's unit geometric normal (0 for a degenerate one), computed in float64 as the
    reader's winding check computes it, and index t points to it. The reader gives back the
    same triangles in the same order, the first of a pair rotated."""
    points = np.asarray(points, np.float32)
    triangles = np.asarray(triangles)
    if triangles.ndim != 2 or triangles.shape[1] != 3 or not np.issubdtype(triangles.dtype, np.integer):
        raise ObanError("M3GM" + name, f"triangles of shape {triangles.shape} and type {triangles.dtype}, "
                                       "not (k, 3) integers")
    triangles = triangles.astype(np.int64)
    if len(triangles) and (triangles.min() < 0 or triangles.max() >= len(points)):
        raise ObanError("M3GM" + name, f"a triangle's vertex index outside the {len(points)} points")
    first, r, s = _pairs(triangles)
    corner = np.zeros(len(triangles), np.int64)
    corner[first] = r                                     # a pair's first triangle: its shared edge last
    rotated = np.take_along_axis(triangles, (corner[:, None] + np.arange(3)) % 3, axis=1)
    paired = np.zeros(len(triangles), bool)
    paired[first] = True
    starts = np.flatnonzero(~np.isin(np.arange(len(triangles)), first + 1))   # each strip's first triangle
    sizes = np.where(paired[starts], 4, 3)
    at = np.cumsum(sizes) - sizes
    strips = np.empty(int(sizes.sum()), np.int64)
    for k in range(3):
        strips[at + k] = rotated[starts, k]
    strips[at[paired[starts]] + 3] = triangles[first + 1, (s + 2) % 3]       # the second's own corner
    strips[at] |= STRIP_START
    p = points.astype(np.float64)
    normal = np.cross(p[triangles[:, 1]] - p[triangles[:, 0]], p[triangles[:, 2]] - p[triangles[:, 0]])
    length = np.linalg.norm(normal, axis=1, keepdims=True)
    normal = np.divide(normal, length, out=np.zeros_like(normal), where=length > 0)
    return strips.astype(np.int32), normal.astype(np.float32), np.arange(len(triangles), dtype=np.int32)


def _pairs(triangles):
    """(t, r, s) of the pairs taken greedily from the start, each triangle in one pair at most:
    triangle t's edge (r + 1, r + 2) is triangle t + 1's edge (s + 1, s) reversed, so that
    t rotated to start at corner r, then t + 1's corner s + 2, make a strip of both."""
    if len(triangles) < 2:
        return np.zeros((3, 0), np.int64)
    a, b = triangles[:-1], triangles[1:]
    r, s = np.arange(3)[:, None], np.arange(3)[None, :]
    matches = ((a[:, (r + 1) % 3] == b[:, (s + 1) % 3]) & (a[:, (r + 2) % 3] == b[:, s])).reshape(-1, 9)
    can = matches.any(axis=1)
    index = np.arange(len(can))
    run_start = np.maximum.accumulate(np.where(can & ~np.r_[False, can[:-1]], index, 0))
    first = np.flatnonzero(can & ((index - run_start) % 2 == 0))
    which = np.argmax(matches[first], axis=1)
    return first, which // 3, which % 3
