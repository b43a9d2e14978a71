"""Making many data blocks in the order Blender files them fastest, selecting what an
import made, and taking it back: a snapshot of the data blocks, and the removal of every
one made since (also those a step that failed had half made)."""

import os
import re

import bpy
from mathutils import Vector

# Blender keeps each kind's data blocks sorted by name. A new block's place is looked for
# from the last block back, comparing only every 512th name, then up to 511 names one by
# one: a name after all the others (names made in sorted order) costs those 511 compares,
# a name before all the others only the walk back. Up to this many blocks of a kind, made
# and present, names made from the last down are faster on every version (measured by
# benchmarks/id_order.py, which also finds where the two orders break even).
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


def new_collection(scene, paths):
    """A new collection for what an import of `paths` makes, in the scene (not inside its
    default collection): named after the file, or the folder of a batch."""
    if len(paths) == 1:
        name = os.path.splitext(os.path.basename(paths[0]))[0]
    else:
        folders = {os.path.dirname(p) for p in paths}   # a batch's few folders, made absolute once each
        folder = os.path.commonpath([os.path.abspath(f) for f in folders]) if paths else ""
        name = os.path.basename(folder) or "import"
    collection = bpy.data.collections.new(name)
    scene.collection.children.link(collection)
    return collection


def remove_if_empty(collection):
    if not collection.objects and not collection.children:
        bpy.data.collections.remove(collection)


LAYOUT_GAP = 0.25   # of the widest object's width, between two objects laid out side by side


def lay_out(objects, context):
    """`objects` (each with its children) side by side along X in order, apart by their world
    bounding boxes, the first where it stands."""
    if len(objects) < 2:
        return
    context.view_layer.update()
    spans = []
    for obj in objects:
        xs = [(part.matrix_world @ Vector(corner)).x for part in (obj, *obj.children_recursive)
              if part.type == "MESH" for corner in part.bound_box] or [obj.matrix_world.translation.x]
        spans.append((min(xs), max(xs)))
    gap = LAYOUT_GAP * max(right - left for left, right in spans)
    edge = spans[0][1] + gap
    for obj, (left, right) in zip(objects[1:], spans[1:]):
        obj.location.x += edge - left
        edge += right - left + gap


def select_only(context, blocks):
    """Select the objects among `blocks` alone (new objects are made unselected), the last
    one active; other data blocks (an image) are passed over."""
    objects = [block for block in blocks if isinstance(block, bpy.types.Object)]
    for obj in context.selected_objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    if objects:
        context.view_layer.objects.active = objects[-1]


def _kinds():
    # objects first: the rest may then have no users left
    return (bpy.data.objects, bpy.data.actions, bpy.data.meshes, bpy.data.materials, bpy.data.images,
            bpy.data.cameras, bpy.data.armatures, bpy.data.collections)


COUNTED = ("objects", "armatures", "meshes", "materials", "images", "actions", "cameras")   # what a report counts


def block_counts(since=None) -> dict:
    """How many data blocks of each COUNTED kind there are; with `since` (what this gave
    before), how many more there are now."""
    counts = {kind: len(getattr(bpy.data, kind)) for kind in COUNTED}
    return counts if since is None else {kind: counts[kind] - since[kind] for kind in COUNTED}


class Snapshot:
    def __init__(self):
        self.before = [{block.as_pointer() for block in collection} for collection in _kinds()]

    def remove(self):
        for collection, before in zip(_kinds(), self.before):
            for block in [b for b in collection if b.as_pointer() not in before]:
                collection.remove(block)
