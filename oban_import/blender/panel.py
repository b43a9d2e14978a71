"""Properties > Object > Oni Object Animation: the imported fields, editable.

The values live in the object's custom properties (oban_flags, oban_loop, …), the
ones an exporter reads; this panel edits them in place, keeping the flag bits and
the flag booleans in step, on the object and on its action.
"""

import bpy
from bpy.props import BoolProperty, IntProperty, PointerProperty

from ..animation import (AUTOSTART, KNOWN_FLAGS, LOCALIZED, LOOP, PINGPONG, RANDOM_START, unsigned32,
                         signed32)

FLAGS = [("loop", LOOP, "Loop", "At the end, go back to frame 0"),
         ("pingpong", PINGPONG, "Ping-Pong", "At the end, play backwards; at 0, forwards again"),
         ("random_start", RANDOM_START, "Random Start", "Start at a random frame"),
         ("autostart", AUTOSTART, "Auto Start", "Starts by itself"),
         ("localized", LOCALIZED, "Localized", "Door: turned a quarter about x, played relative to its placement")]
FIELDS = [("frames", "Frames", "Frame count"),
          ("ticks_per_frame", "Ticks per Frame", "Stored, ignored by the engine (it plays one frame a tick)"),
          ("door_open_frame", "Door Open Frame", "Where a door stops when it opens")]


def _owners(obj):
    """The object and, when it is an imported one, its action."""
    action = obj.animation_data.action if obj.animation_data else None
    return [obj] + ([action] if action is not None and "oban_name" in action else [])


def _flag(bit, name):
    def get(self):
        return bool(unsigned32(self.id_data.get("oban_flags", 0)) & bit)

    def set(self, value):
        flags = unsigned32(self.id_data.get("oban_flags", 0))
        flags = flags | bit if value else flags & ~bit
        for owner in _owners(self.id_data):
            owner["oban_flags"] = signed32(flags)
            owner[f"oban_{name}"] = bool(value)
    return get, set


def _field(name):
    def get(self):
        return int(self.id_data.get(f"oban_{name}", 0))

    def set(self, value):
        for owner in _owners(self.id_data):
            owner[f"oban_{name}"] = value
    return get, set


def _settings_class():
    annotations = {}
    for name, bit, label, description in FLAGS:
        get, set = _flag(bit, name)
        annotations[name] = BoolProperty(name=label, description=description, get=get, set=set)
    for name, label, description in FIELDS:
        get, set = _field(name)
        annotations[name] = IntProperty(name=label, description=description, min=0, max=65535, get=get, set=set)
    return type("ObanObjectSettings", (bpy.types.PropertyGroup,), {"__annotations__": annotations})


ObanObjectSettings = _settings_class()


class OBJECT_PT_oban(bpy.types.Panel):
    bl_label = "Oni Object Animation"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None and "oban_name" in context.object

    def draw(self, context):
        obj = context.object
        layout = self.layout
        layout.label(text=f"Instance: {obj['oban_name']}")
        column = layout.column(heading="Flags")
        for name, *_ in FLAGS:
            column.prop(obj.oban, name)
        unknown = unsigned32(obj.get("oban_flags", 0)) & ~KNOWN_FLAGS
        if unknown:
            layout.label(text=f"Unknown flag bits kept: 0x{unknown:x}", icon="INFO")
        column = layout.column()
        for name, *_ in FIELDS:
            column.prop(obj.oban, name)


classes = [ObanObjectSettings, OBJECT_PT_oban]


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.oban = PointerProperty(type=ObanObjectSettings)


def unregister():
    del bpy.types.Object.oban
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
