"""The custom properties of an imported sprite animation (docs/outpost2.md 4): every
stored field, so nothing of the file is lost."""

import numpy as np

from ...core.id_properties import signed32
from .prt import Animation

PREFIX = "op2_"
INDEX = "op2_index"
FRAME_COUNT = "op2_frame_count"


def animation_properties(index: int, animation: Animation) -> dict:
    """On the animation's Empty."""
    frames = animation.frames
    return {
        INDEX: index,
        "op2_unknown": signed32(animation.unknown),
        "op2_selection_rect": [int(v) for v in animation.rect],
        "op2_displacement": [int(v) for v in animation.displacement],
        "op2_unknown2": signed32(animation.unknown2),
        FRAME_COUNT: len(frames),
        "op2_windows": [signed32(v) for v in np.asarray(animation.windows).ravel().tolist()],
        "op2_frame_unknown": [f.unknown for f in frames],
        "op2_frame_optional": [v for f in frames for v in _optional(f)],   # 4 a frame, -1 where absent
        "op2_frame_subframes": [len(f.subframes) for f in frames],
        "op2_subframes": [v for f in frames for s in f.subframes.tolist() for v in s],  # 5 a subframe
    }


def plane_properties(bitmap: int, x: int, y: int) -> dict:
    """On a plane: which bitmap it shows, at which offset."""
    return {"op2_bitmap": bitmap, "op2_x": x, "op2_y": y}


def _optional(frame):
    first = list(frame.optional1) if frame.optional1 is not None else [-1, -1]
    second = list(frame.optional2) if frame.optional2 is not None else [-1, -1]
    return first + second
