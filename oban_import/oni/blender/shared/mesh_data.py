"""What Blender holds of a mesh, read in bulk the one way every export reads it: an INT face
attribute's values, the corners' UVs."""

import numpy as np

UV_MAP = "UVMap"   # the UV map an import makes


def face_ints(mesh, name, default):
    """(faces,) int32 of the INT face attribute `name`; `default` where the mesh has none
    (or one of another domain or type)."""
    attribute = mesh.attributes.get(name)
    if attribute is None or attribute.domain != "FACE" or attribute.data_type != "INT":
        return default
    values = np.empty(len(mesh.polygons), np.int32)
    attribute.data.foreach_get("value", values)
    return values


def render_uv_map(mesh):
    """The UV map Blender renders with (active for render; a mesh with UV maps has one), else
    the active one; None without one."""
    return next((layer for layer in mesh.uv_layers if layer.active_render), mesh.uv_layers.active)


def corner_uvs(mesh) -> np.ndarray:
    """(corners, 2) float32 Blender's (u, v) of render_uv_map; zeros without one."""
    layer = render_uv_map(mesh)
    uvs = np.zeros(2 * len(mesh.loops), np.float32)
    if layer is not None:
        layer.data.foreach_get("uv", uvs)
    return uvs.reshape(-1, 2)
