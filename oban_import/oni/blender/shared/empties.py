"""Empties: what an animation moves when it has nothing else."""

import bpy

DISPLAY_SIZE = 10.0  # Oni units, about a metre


def new_empty(name, scale):
    """A new Empty, in no collection yet."""
    obj = bpy.data.objects.new(name, None)
    obj.empty_display_type = "ARROWS"
    obj.empty_display_size = DISPLAY_SIZE * scale
    return obj
