"""M3GM meshes and their arrays (docs/objects.md 3, 4): PNTA points, VCRA vectors, TXCA
texture coordinates, IDXA indices; triangle strips to triangles with whole-array numpy.
"""

import numpy as np

from ....core.errors import ObanError
from ..container.container import IDXA_TAG, PNTA_TAG, TXCA_TAG, TXMP_TAG, VCRA_TAG, counted

# M3GM links from 0x04: (field, reversed tag)
M3GM_LINKS = (("points", PNTA_TAG), ("vertex normals", VCRA_TAG), ("face normals", VCRA_TAG),
              ("texture coordinates", TXCA_TAG), ("triangle strips", IDXA_TAG),
              ("face normal indices", IDXA_TAG), ("texture", TXMP_TAG))
M3GM_LINKS_OFFSET = 0x04
# tag: (offset of the u32 count, item dtype, item shape)
ARRAYS = {PNTA_TAG: (0x34, "<f4", (3,)), VCRA_TAG: (0x14, "<f4", (3,)),
          TXCA_TAG: (0x14, "<f4", (2,)), IDXA_TAG: (0x14, "<i4", ())}
M3GA_COUNT_OFFSET = 0x14


def parse_array(data: bytes, tag: bytes, path: str, label: str) -> np.ndarray:
    """The items of a PNTA, VCRA, TXCA or IDXA instance's data, its count checked first."""
    count_offset, dtype, shape = ARRAYS[tag]
    return counted(data, np.dtype((dtype, shape)), path, label, offset=count_offset)


def parse_links(data: bytes, offset: int, count: int, path: str, label: str) -> list[int]:
    """`count` u32 links at `offset` of an instance's data."""
    if len(data) < offset + 4 * count:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for {count} links at 0x{offset:x}")
    return [int(v) for v in np.frombuffer(data, "<u4", count=count, offset=offset)]


def parse_m3ga(data: bytes, path: str, label: str) -> list[int]:
    """The M3GM links of an M3GA, its count checked against the instance's size."""
    if len(data) < M3GA_COUNT_OFFSET + 4:
        raise ObanError(path, f"{label}: {len(data)} bytes, too short for an M3GA")
    count = int.from_bytes(data[M3GA_COUNT_OFFSET:M3GA_COUNT_OFFSET + 4], "little")
    room = (len(data) - M3GA_COUNT_OFFSET - 4) // 4
    if count > room:
        raise ObanError(path, f"{label}: mesh count says {count} but only {room} fit in the instance")
    return parse_links(data, M3GA_COUNT_OFFSET + 4, count, path, label)


def triangles(strips: np.ndarray, face_indices: np.ndarray, face_normals: np.ndarray, points: np.ndarray,
              path: str, label: str) -> np.ndarray:
    """(t, 3) int32 triangles from strip indices (docs/objects.md 4): a negative index starts
    a strip, winding alternates along it, and each triangle is turned to face the way its
    face normal FaceNormals[FaceNormalIndices[k]] says."""
    n = len(strips)
    if n == 0:
        return np.zeros((0, 3), np.int32)
    start = strips < 0
    if not start[0]:
        raise ObanError(path, f"{label}: triangle strips do not begin with a strip start (a negative index)")
    vertex = (strips & 0x7FFFFFFF).astype(np.int64)
    if vertex.max() >= len(points):
        i = int(np.argmax(vertex >= len(points)))
        raise ObanError(path, f"{label}: strip index {i} is vertex {vertex[i]}, beyond the {len(points)} points")
    starts = np.flatnonzero(start)
    lengths = np.diff(np.append(starts, n))
    if (lengths < 3).any():
        i = int(np.argmax(lengths < 3))
        raise ObanError(path, f"{label}: the strip at index {starts[i]} has {lengths[i]} indices (3 needed)")
    position = np.arange(n)
    strip_start = np.maximum.accumulate(np.where(start, position, 0))
    corner = position - strip_start                       # 0, 1 start the strip; 2.. make triangles
    last = np.flatnonzero(corner >= 2)
    odd = ((corner[last] - 2) & 1).astype(bool)
    a, b, c = vertex[last - 2], vertex[last - 1], vertex[last]
    a, b = np.where(odd, b, a), np.where(odd, a, b)       # alternate winding along a strip
    count = len(last)
    if len(face_indices) < count:
        raise ObanError(path, f"{label}: {len(face_indices)} face normal indices for {count} triangles")
    fi = face_indices[:count].astype(np.int64)
    if count and (fi.min() < 0 or fi.max() >= len(face_normals)):
        k = int(np.argmax((fi < 0) | (fi >= len(face_normals))))
        raise ObanError(path, f"{label}: face normal index {k} is {fi[k]}, beyond the "
                              f"{len(face_normals)} face normals")
    p = points.astype(np.float64)
    geometric = np.cross(p[b] - p[a], p[c] - p[a])
    flip = np.einsum("ij,ij->i", geometric, face_normals[fi].astype(np.float64)) < 0
    a, c = np.where(flip, c, a), np.where(flip, a, c)
    return np.stack([a, b, c], axis=1).astype(np.int32)
