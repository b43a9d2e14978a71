"""Taking back what an import made: a snapshot of the data blocks, and the removal of
every one made since (also those a step that failed had half made)."""

import bpy


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
