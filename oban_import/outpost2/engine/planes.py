"""What a sprite import shows, worked out before anything is made (docs/outpost2.md 4):
the chosen animations, their bitmaps as pixels, and per animation one plane per distinct
(bitmap, offset) in an order that keeps every frame's drawing order, with the frames it
is visible on. No bpy."""

import heapq
import operator
from dataclasses import dataclass

import numpy as np

from ...core.errors import ObanError
from ..io.bmp import ArtBitmaps, find_bmp
from ..io.prt import read_prt


@dataclass
class SpritePlan:
    prt: object
    indices: list
    layers: dict        # animation index -> (planes [(bitmap, x, y)], visible (planes, frames) bool)
    pixels: dict        # bitmap index -> RGBA (h, w, 4) uint8, top row first


def plan_sprites(prt_path, settings, warnings):
    prt = read_prt(prt_path)
    bmp_path = settings.bmp_path or find_bmp(prt_path)
    chosen = settings.animation_indices
    indices = list(range(len(prt.animations))) if chosen is None else list(chosen)
    for i, index in enumerate(indices):
        try:
            indices[i] = operator.index(index)
        except TypeError:
            raise ObanError(prt_path, f"animation index {index!r} is not an integer") from None
        if not 0 <= indices[i] < len(prt.animations):
            raise ObanError(prt_path, f"animation index {index} is out of range ({len(prt.animations)} animations)")
    layers, pixels = {}, {}
    with ArtBitmaps(bmp_path, prt) as bitmaps:
        for index in indices:
            planes, visible = plane_layers(prt.animations[index].frames)
            for bitmap, _, _ in planes:
                if bitmap not in pixels:
                    pixels[bitmap] = bitmaps.rgba(bitmap)     # checked against the .bmp here
            empty = [p for p in planes if 0 in pixels[p[0]].shape[:2]]
            for bitmap in sorted({p[0] for p in empty}):
                warnings.append(f"{prt_path}: animation {index}: bitmap {bitmap} has no pixels; not drawn")
            keep = [i for i, p in enumerate(planes) if p not in empty]
            layers[index] = ([planes[i] for i in keep], visible[keep])
    return SpritePlan(prt, indices, layers, pixels)


def plane_layers(frames) -> tuple:
    """([(bitmap, x, y)] in drawing order, (planes, frames) bool visibility).

    One plane per distinct (bitmap, x, y), ordered so that every frame's subframe order holds
    (a topological order, ties by first use: docs/outpost2.md 4). If no such order exists (a
    cycle, or a pair used twice in one frame), planes are split by subframe position too,
    which always holds (ties by first use again)."""
    used = [[(int(b), int(x), int(y)) for b, _, _, x, y in f.subframes.tolist()] for f in frames]
    order = _topological(used)
    if order is None:
        used = [[key + (position,) for position, key in enumerate(keys)] for keys in used]
        first = {}
        for keys in used:
            for key in keys:
                first.setdefault(key, len(first))
        order = sorted(first, key=lambda key: (key[3], first[key]))
    slot = {key: i for i, key in enumerate(order)}
    visible = np.zeros((len(order), len(frames)), bool)
    for f, keys in enumerate(used):
        visible[[slot[key] for key in keys], f] = True
    return [key[:3] for key in order], visible


def _topological(used):
    first, after, before = {}, {}, {}
    for keys in used:
        if len(set(keys)) != len(keys):
            return None
        for key in keys:
            if key not in first:
                first[key] = len(first)
                after[key], before[key] = set(), 0
        for a, b in zip(keys, keys[1:]):
            if b not in after[a]:
                after[a].add(b)
                before[b] += 1
    ready = [(first[k], k) for k in first if before[k] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, key = heapq.heappop(ready)
        order.append(key)
        for b in after[key]:
            before[b] -= 1
            if before[b] == 0:
                heapq.heappush(ready, (first[b], b))
    return order if len(order) == len(first) else None
