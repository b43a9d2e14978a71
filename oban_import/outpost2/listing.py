"""Rows for `--list` of an op2_art.prt (docs/outpost2.md 1.3)."""

import numpy as np

from .prt import PrtFile, joined_subframes

LIST_HEADER = ("index", "frames", "subframes", "bitmaps", "left", "top", "right", "bottom")


def list_rows(prt: PrtFile) -> list:
    """One row per animation: (index, frames, subframes, distinct bitmaps, left, top, right,
    bottom), the bounding box (right/bottom exclusive) of all its subframes in pixels from
    the animation's origin; all four 0 for an animation without subframes."""
    count = len(prt.animations)
    frames = [f for a in prt.animations for f in a.frames]
    per_anim = np.array([len(a.frames) for a in prt.animations], np.int64)
    per_frame = np.array([len(f.subframes) for f in frames], np.int64)
    subs = joined_subframes(frames)
    owner = np.repeat(np.repeat(np.arange(count), per_anim), per_frame)
    sub_counts = np.bincount(owner, minlength=count)
    sizes = np.array([(b.width, b.height) for b in prt.bitmaps], np.int64).reshape(-1, 2)
    x, y = subs["x"].astype(np.int64), subs["y"].astype(np.int64)
    bitmap = subs["bitmap"].astype(np.int64)
    right, bottom = x + sizes[bitmap, 0], y + sizes[bitmap, 1]
    box = np.zeros((count, 4), np.int64)
    big = np.iinfo(np.int64).max
    for column, values, reduce, start in ((0, x, np.minimum, big), (1, y, np.minimum, big),
                                          (2, right, np.maximum, -big), (3, bottom, np.maximum, -big)):
        out = np.full(count, start, np.int64)
        reduce.at(out, owner, values)
        box[:, column] = np.where(sub_counts > 0, out, 0)
    pairs = np.unique(owner * (1 << 16) + bitmap)
    distinct = np.bincount(pairs >> 16, minlength=count)
    return [(i, int(per_anim[i]), int(sub_counts[i]), int(distinct[i])) + tuple(box[i].tolist())
            for i in range(count)]
