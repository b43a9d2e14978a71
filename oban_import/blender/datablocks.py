"""Making many data blocks in the order Blender files them fastest, selecting what an
import made, and taking it back: a snapshot of the data blocks, and the removal of every
one made since (also those a step that failed had half made)."""

import re

import bpy

# Blender keeps each kind's data blocks sorted by name. A new block's place is looked for
# from the last block back, comparing only every 512th name, then up to 511 names one by
# one: a name after all the others (names made in sorted order) costs those 511 compares
# (30 us a block on 4.5 and 5.0, 8 on 4.2), a name before all the others only the walk
# back (about 12 ns a block). Up to this many blocks of a kind, made and present, names
# made from the last down are faster on every version (benchmarks/id_order.py: 1,067
# objects and their actions 4.3 times faster on 4.5 and 5.0, 1.3 on 4.2, which breaks
# even near 2,000).
FAST_ORDER_LIMIT = 1500
_NUMBER_SUFFIX = re.compile(r"\.\d+$")


def fast_order(present, names):
    """The indices of `names` in the order to make them when `present` blocks of their kind
    exist: from the last name down, while that is faster. Names of one root (before a
    '.001' suffix, its first bytes, any case) keep their own order among themselves, so
    each block gets the name (or suffix) it would get made in the order given (Blender
    shortens a long name to fit a suffix, never to fewer than 32 bytes)."""
    if present + len(names) > FAST_ORDER_LIMIT:
        return range(len(names))
    roots = [_NUMBER_SUFFIX.sub("", name).lower().encode("utf-8")[:32] for name in names]
    return sorted(range(len(names)), key=lambda i: (roots[i], -i), reverse=True)


def select_only(context, objects):
    """Select `objects` alone (new objects are made unselected), the last one active."""
    for obj in context.selected_objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    context.view_layer.objects.active = objects[-1]


def _kinds():
    # objects first: the rest may then have no users left
    return (bpy.data.objects, bpy.data.actions, bpy.data.meshes, bpy.data.materials, bpy.data.images,
            bpy.data.cameras)


class Snapshot:
    def __init__(self):
        self.before = [{block.as_pointer() for block in collection} for collection in _kinds()]

    def remove(self):
        for collection, before in zip(_kinds(), self.before):
            for block in [b for b in collection if b.as_pointer() not in before]:
                collection.remove(block)
