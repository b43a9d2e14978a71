"""How an object was imported (on the object, its mesh or its armature), for its export to
undo exactly, whatever its kind: the scale and axes of the change to Blender's terms, the scene
frame of the engine's first tick, and where a random start began. Plain mappings in and out (a
Blender ID's properties are one), so no bpy here. The names keep their first spelling (an
OBAN's), which .blend files hold."""

import functools

import numpy as np

from ...core.errors import ObanError
from ...core.id_properties import number, numbers

IMPORT_SCALE = "oban_import_scale"     # Blender units per Oni unit
IMPORT_AXES = "oban_import_axes"       # the Oni -> Blender change of basis, 9 floats by rows
FIRST_FRAME = "oban_first_frame"       # the scene frame that shows the engine's first tick
START_FRAME = "oban_start_frame"       # the OBAN frame engine playback starts on (a random start; 0 if absent)
SOURCE_FILE = "oni_source_file"        # the file an OBAN object or a TRAM's action was read from (absolute)
ORTHONORMAL = 1e-5                     # how far import axes may be off a rotation or reflection


def import_properties(scale: float, axes, first_frame: int, start_frame: int = 0) -> dict:
    """How an object was imported (IMPORT_SCALE, ...), for its export (one dict for many objects:
    read it, do not change it)."""
    return _import_properties(float(scale), tuple(np.asarray(axes, np.float64).ravel().tolist()), int(first_frame),
                              int(start_frame))


@functools.lru_cache(maxsize=16)   # an import's objects share it
def _import_properties(scale, axes, first_frame, start_frame):
    described = {IMPORT_SCALE: scale, IMPORT_AXES: list(axes), FIRST_FRAME: first_frame}
    return described | ({START_FRAME: start_frame} if start_frame else {})


def import_frame(owner, label, scale: float, axes) -> tuple:
    """(scale, (3, 3) axes) an object was imported with (IMPORT_SCALE, IMPORT_AXES), the given
    ones where it does not say; ObanError naming the property where one is not a positive
    finite scale, or not a rotation or reflection of the axes."""
    found = number(owner, IMPORT_SCALE, label, scale)
    if not found > 0.0:
        raise ObanError(label, f"property '{IMPORT_SCALE}' is {found}: a scale is a positive finite number")
    matrix = numbers(owner, IMPORT_AXES, label, 9, np.ravel(axes)).reshape(3, 3)
    if np.abs(matrix @ matrix.T - np.eye(3)).max() > ORTHONORMAL:
        raise ObanError(label, f"property '{IMPORT_AXES}' is not a rotation or reflection of the axes")
    return found, matrix
