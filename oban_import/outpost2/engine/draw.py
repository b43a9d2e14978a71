"""Drawing one frame of an animation to RGBA (docs/outpost2.md 3).

Compositing rule ("over", straight alpha, per channel, in float64, then rounded half up):
    sa = source alpha / 255, da = canvas alpha / 255
    out alpha = sa + da * (1 - sa)
    out rgb   = (source rgb * sa + canvas rgb * da * (1 - sa)) / out alpha   (0 where out alpha is 0)
stored as floor(value * 255 + 0.5) for alpha and floor(value + 0.5) for rgb. So an opaque
pixel (alpha 255) replaces what is under it, a transparent one (alpha 0) leaves it, and a
shadow pixel (black, alpha 128) darkens an opaque pixel to 127/255 of its colour or adds
translucent black over a transparent one.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...core.errors import ObanError
from ..io.prt import PrtFile, joined_subframes


@dataclass
class Canvas:
    rgba: np.ndarray    # (height, width, 4) uint8, top row first
    left: int           # animation-local pixel x of rgba[:, 0]
    top: int            # animation-local pixel y of rgba[0]


def frame_bounds(prt: PrtFile, animation: int, frame: int) -> tuple:
    """(left, top, right, bottom), right/bottom exclusive, of a frame's subframes; all 0 if none."""
    return _bounds(prt, prt.animations[animation].frames[frame].subframes)


def subframe_owners(prt: PrtFile) -> tuple:
    """(the animation of each subframe, every subframe of every animation, in order)."""
    frames = [f for a in prt.animations for f in a.frames]
    per_anim = np.array([len(a.frames) for a in prt.animations], np.int64)
    per_frame = np.array([len(f.subframes) for f in frames], np.int64)
    return np.repeat(np.repeat(np.arange(len(prt.animations)), per_anim), per_frame), joined_subframes(frames)


def animation_boxes(prt: PrtFile) -> np.ndarray:
    """(animations, 4) int64: the union of frame_bounds over each animation's frames (left,
    top, right, bottom, right/bottom exclusive, pixels from its origin); all 0 for an
    animation without subframes. All animations at once."""
    count = len(prt.animations)
    owner, subs = subframe_owners(prt)
    sizes = np.array([(b.width, b.height) for b in prt.bitmaps], np.int64).reshape(-1, 2)
    x, y = subs["x"].astype(np.int64), subs["y"].astype(np.int64)
    bitmap = subs["bitmap"].astype(np.int64)
    boxes = np.zeros((count, 4), np.int64)
    big = np.iinfo(np.int64).max
    used = np.bincount(owner, minlength=count) > 0
    for column, values, reduce, start in ((0, x, np.minimum, big), (1, y, np.minimum, big),
                                          (2, x + sizes[bitmap, 0], np.maximum, -big),
                                          (3, y + sizes[bitmap, 1], np.maximum, -big)):
        out = np.full(count, start, np.int64)
        reduce.at(out, owner, values)
        boxes[:, column] = np.where(used, out, 0)
    return boxes


def _bounds(prt, subframes):
    if len(subframes) == 0:
        return (0, 0, 0, 0)
    sizes = np.array([(prt.bitmaps[b].width, prt.bitmaps[b].height) for b in subframes["bitmap"].tolist()],
                     np.int64).reshape(-1, 2)
    x, y = subframes["x"].astype(np.int64), subframes["y"].astype(np.int64)
    return (int(x.min()), int(y.min()), int((x + sizes[:, 0]).max()), int((y + sizes[:, 1]).max()))


def composite(canvas: np.ndarray, source: np.ndarray, x: int, y: int) -> None:
    """Draw `source` (h, w, 4 uint8) over `canvas` in place with its top-left at pixel (x, y)
    of the canvas, by the rule in this module's docstring; parts outside are clipped."""
    h, w = source.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, canvas.shape[1]), min(y + h, canvas.shape[0])
    if x0 >= x1 or y0 >= y1:
        return
    src = source[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float64)
    dst = canvas[y0:y1, x0:x1].astype(np.float64)
    sa, da = src[..., 3:] / 255, dst[..., 3:] / 255
    oa = sa + da * (1 - sa)
    with np.errstate(invalid="ignore", divide="ignore"):
        rgb = np.where(oa > 0, (src[..., :3] * sa + dst[..., :3] * da * (1 - sa)) / oa, 0.0)
    out = np.concatenate([np.floor(rgb + 0.5), np.floor(oa * 255 + 0.5)], axis=-1)
    canvas[y0:y1, x0:x1] = out.astype(np.uint8)


MAX_PIXELS = 1 << 26     # a larger canvas is refused (an ObanError), not allocated


def draw_frame(prt: PrtFile, bitmap_rgba: Callable[[int], np.ndarray], animation: int, frame: int,
               bounds: tuple | None = None, path: str = "op2_art.prt", max_pixels: int = MAX_PIXELS) -> Canvas:
    """Frame `frame` of animation `animation`: its subframes in order, later over earlier, each
    bitmap's top-left at its (x, y) offset from the animation's origin (docs/outpost2.md 3).
    `bitmap_rgba(i)` gives bitmap i as RGBA (e.g. bmp.ArtBitmaps.rgba). The canvas covers
    `bounds` (left, top, right, bottom; the frame's own bounds if None), starting transparent;
    one of more than `max_pixels` pixels is an ObanError naming `path`, the animation and frame."""
    records = prt.animations[animation].frames[frame].subframes.tolist()
    sources = [bitmap_rgba(record[0]) for record in records]     # reads (and checks) first
    left, top, right, bottom = bounds if bounds is not None else frame_bounds(prt, animation, frame)
    width, height = max(right - left, 0), max(bottom - top, 0)
    if width * height > max_pixels:
        raise ObanError(path, f"animation {animation} frame {frame}: a canvas of {width} x {height} "
                              f"pixels is over the limit of {max_pixels}")
    canvas = np.zeros((height, width, 4), np.uint8)
    for (_, _, _, x, y), source in zip(records, sources):
        composite(canvas, source, x - left, y - top)
    return Canvas(canvas, left, top)
