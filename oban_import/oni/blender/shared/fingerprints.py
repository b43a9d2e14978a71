"""What an import keeps to tell, at an export, whether the user edited a mesh or an image
(docs/objects.md, "Edits"): a CRC-32 of each as Blender holds it when the import made it,
read the same way when it is exported, so that the user never has to mark what they changed."""

import zlib

import numpy as np

from ....blender import compat
from ....core.id_properties import signed32
from ...io.objects.properties import MESH_FINGERPRINT, PIXELS_FINGERPRINT

UV_MAP = "UVMap"


def mesh_fingerprint(mesh) -> int:
    """A signed CRC-32 of a mesh's points, each face's corners, its UVs and material slots."""
    points = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", points)
    corners = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    sizes = np.empty(len(mesh.polygons), np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    uvs = np.zeros(2 * len(mesh.loops), np.float32)
    layer = mesh.uv_layers.get(UV_MAP) or mesh.uv_layers.active
    if layer is not None:
        layer.data.foreach_get("uv", uvs)
    slots = np.zeros(len(mesh.polygons), np.int32)
    attribute = mesh.attributes.get(compat.MATERIAL_INDEX)
    if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT":
        attribute.data.foreach_get("value", slots)
    return _crc(points, corners, sizes, uvs, slots)


def image_pixels(image) -> np.ndarray | None:
    """(height, width, 4) uint8 RGBA, top row first, of an image as Blender holds it; None
    where it has none (its file missing)."""
    width, height = image.size[:]
    channels = image.channels
    if not width or not height or channels not in (1, 3, 4):
        return None
    values = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(values)
    values = values.reshape(height, width, channels)
    rgba = np.ones((height, width, 4), np.float32)
    rgba[:, :, :3] = values[:, :, :3] if channels > 1 else values
    if channels == 4:
        rgba[:, :, 3] = values[:, :, 3]
    return np.rint(np.clip(rgba, 0, 1) * 255).astype(np.uint8)[::-1]


def pixels_fingerprint(rgba8) -> int:
    """A signed CRC-32 of (height, width, 4) uint8 pixels, top row first, and their size."""
    rgba8 = np.ascontiguousarray(rgba8, np.uint8)
    return _crc(np.array(rgba8.shape, np.int32), rgba8)


def record_mesh(mesh) -> None:
    mesh[MESH_FINGERPRINT] = mesh_fingerprint(mesh)


def mesh_edited(mesh) -> bool:
    """Whether a mesh an import made is no longer as it made it (one it did not make: True)."""
    return mesh.get(MESH_FINGERPRINT) != mesh_fingerprint(mesh)


def image_edited(image) -> bool:
    """Whether an image an import made no longer shows the pixels it was read with (painted,
    replaced, resized); one it did not make: True."""
    pixels = image_pixels(image)
    return pixels is None or image.get(PIXELS_FINGERPRINT) != pixels_fingerprint(pixels)


def _crc(*arrays) -> int:
    crc = 0
    for values in arrays:
        crc = zlib.crc32(np.ascontiguousarray(values).tobytes(), crc)
    return signed32(crc)
