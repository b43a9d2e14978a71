"""What an import keeps to tell, at an export, whether the user edited a mesh or an image
(docs/objects.md, "Edits"): a CRC-32 of each as Blender holds it when the import made it
(and of each M3GM part of a mesh), read the same way when it is exported, so that the user
never has to mark what they changed."""

import numpy as np

from ....blender import compat
from ....core.id_properties import signed_crc32
from ...io.objects.properties import MESH_FINGERPRINT, PART_ATTRIBUTE, PART_SHAPES, PIXELS_FINGERPRINT
from .mesh_data import corner_uvs, face_ints


def mesh_fingerprint(mesh) -> int:
    """A signed CRC-32 of a mesh's points, each face's corners, its UVs and material slots."""
    return signed_crc32(*_face_arrays(mesh))


def part_shapes(mesh, count: int, drawn: bool = False) -> list[int]:
    """A signed CRC-32 per M3GM part of an imported mesh (docs/objects.md 10): of its faces
    (face_parts), in order: their sizes, their corners' points as numbered among the part's
    own (so that an edit elsewhere in the mesh leaves it), those points, the corners' UVs and
    the faces' material slots. Not the normals, which each Blender draws a little otherwise of
    one file (exports compare them with the stored part's: shared/as_read.py); with `drawn`,
    the normals as drawn too, as the last release's fingerprints hold them (PART_FINGERPRINTS)."""
    return _part_shapes(mesh, _face_arrays(mesh), count, drawn)


def _part_shapes(mesh, arrays, count, drawn=False):
    points, corners, sizes, uvs, slots = arrays
    starts = np.empty(len(sizes), np.int32)
    mesh.polygons.foreach_get("loop_start", starts)
    parts, points, uvs = face_parts(mesh, count), points.reshape(-1, 3), uvs.reshape(-1, 2)
    normals = compat.corner_normals(mesh) if drawn else None
    found = []
    for part in range(count):
        faces = np.flatnonzero(parts == part)
        loops = face_corners(faces, starts, sizes)
        used, numbered = numbered_points(corners[loops], len(points))
        shown = (uvs[loops], normals[loops]) if drawn else (uvs[loops],)
        found.append(signed_crc32(sizes[faces], numbered, points[used], *shown, slots[faces]))
    return found


def numbered_points(corners, count: int) -> tuple:
    """(the points `corners` use, in order; each corner's point numbered among them, int32),
    of `count` points: np.unique's, without sorting."""
    used = np.zeros(count, bool)
    used[corners] = True
    return np.flatnonzero(used), (np.cumsum(used, dtype=np.int32) - 1)[corners]


def face_parts(mesh, count: int) -> np.ndarray:
    """(faces,) int32: the part of each face, PART_ATTRIBUTE's value (0 without it, or where
    it names no part of the `count`)."""
    parts = face_ints(mesh, PART_ATTRIBUTE, np.zeros(len(mesh.polygons), np.int32))
    return np.where((parts >= 0) & (parts < count), parts, 0).astype(np.int32)


def face_corners(faces, starts, sizes) -> np.ndarray:
    """The corners (loop indices) of `faces`, face after face, each face's in order."""
    counts = sizes[faces].astype(np.int64)
    first = np.repeat(starts[faces].astype(np.int64) - (np.cumsum(counts) - counts), counts)
    return first + np.arange(int(counts.sum()))


def _face_arrays(mesh):
    """(points, each corner's point, each face's corner count, corner UVs, face slots) as
    flat arrays."""
    points = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", points)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    slots = face_ints(mesh, compat.MATERIAL_INDEX, np.zeros(len(mesh.polygons), np.int32))
    return points, corners, sizes, corner_uvs(mesh).ravel(), slots


def image_pixels(image) -> np.ndarray | None:
    """(height, width, 4) uint8 RGBA, top row first, straight alpha, of an image as Blender
    shows it (its display's sRGB, no view transform: an image's own use_view_as_render is
    off); None where it has none (its file missing). A byte image holds what it shows; a float
    one (made so, or an EXR) holds scene-linear colours, alpha premultiplied: shown unmultiplied
    and sRGB-encoded (but colour data, Non-Color, shown as held); rounded as Blender rounds a
    float to a byte."""
    width, height = image.size[:]
    channels = image.channels
    if not width or not height or channels not in (1, 3, 4):
        return None
    values = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(values)
    values = values.reshape(height, width, channels).astype(np.float64)
    rgba = np.ones((height, width, 4), np.float64)
    rgba[:, :, :3] = values[:, :, :3] if channels > 1 else values
    if channels == 4:
        rgba[:, :, 3] = values[:, :, 3]
    if image.is_float:
        alpha = rgba[:, :, 3:]
        rgba[:, :, :3] /= np.where(alpha > 0.0, alpha, 1.0)
        if not image.colorspace_settings.is_data:
            rgba[:, :, :3] = srgb_encoded(rgba[:, :, :3])
    return np.floor(np.clip(rgba, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)[::-1]


def srgb_encoded(linear) -> np.ndarray:
    """Linear colour values sRGB-encoded (IEC 61966-2-1), as Blender's sRGB display shows them."""
    linear = np.clip(linear, 0.0, None)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * np.power(linear, 1.0 / 2.4) - 0.055)


def pixels_fingerprint(rgba8) -> int:
    """A signed CRC-32 of (height, width, 4) uint8 pixels, top row first, and their size."""
    rgba8 = np.ascontiguousarray(rgba8, np.uint8)
    return signed_crc32(np.array(rgba8.shape, np.int32), rgba8)


def record_mesh(mesh, parts: int = 0) -> None:
    """The mesh's fingerprint and, for a mesh of M3GM `parts`, each part's."""
    arrays = _face_arrays(mesh)
    mesh[MESH_FINGERPRINT] = signed_crc32(*arrays)
    if parts:
        mesh[PART_SHAPES] = _part_shapes(mesh, arrays, parts)


def mesh_edited(mesh) -> bool:
    """Whether a mesh an import made is no longer as it made it (one it did not make: True)."""
    return mesh.get(MESH_FINGERPRINT) != mesh_fingerprint(mesh)


def image_edited(image) -> bool:
    """Whether an image an import made no longer shows the pixels it was read with (painted,
    replaced, resized); one it did not make: True."""
    pixels = image_pixels(image)
    return pixels is None or image.get(PIXELS_FINGERPRINT) != pixels_fingerprint(pixels)
