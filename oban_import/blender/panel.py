"""Properties > Object > Oni Object Animation: the imported fields, editable.

The values live in the object's custom properties (oni/properties.py), the ones an
exporter reads; this panel edits them in place, keeping the flag bits and the flag
booleans in step, on the object and on its action.
"""

import bpy
from bpy.props import BoolProperty, IntProperty, PointerProperty

from ..oni.oban import FLAGS, KNOWN_FLAGS, MAX_COUNT
from ..oni.properties import FIELDS, FLAG_BITS, NAME, flag_properties, unsigned32


def _owners(obj):
    """The object and, when it is an imported one, its action."""
    action = obj.animation_data.action if obj.animation_data else None
    return [obj] + ([action] if action is not None and NAME in action else [])


def _flags(obj):
    return unsigned32(obj.get(FLAG_BITS, 0))


def _flag(bit):
    def get(self):
        return bool(_flags(self.id_data) & bit)

    def set(self, value):
        flags = _flags(self.id_data)
        for owner in _owners(self.id_data):
            owner.id_properties_ensure().update(flag_properties(flags | bit if value else flags & ~bit))
    return get, set


def _field(key):
    def get(self):
        return int(self.id_data.get(key, 0))

    def set(self, value):
        for owner in _owners(self.id_data):
            owner[key] = value
    return get, set


def _settings_class():
    annotations = {}
    for flag in FLAGS:
        get, set = _flag(flag.bit)
        annotations[flag.key] = BoolProperty(name=flag.label, description=flag.description, get=get, set=set)
    for name, key, label, description in FIELDS:
        get, set = _field(key)
        annotations[name] = IntProperty(name=label, description=description, min=0, max=MAX_COUNT, get=get, set=set)
    return type("ObanObjectSettings", (bpy.types.PropertyGroup,), {"__annotations__": annotations})


ObanObjectSettings = _settings_class()


class OBJECT_PT_oban(bpy.types.Panel):
    bl_label = "Oni Object Animation"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None and NAME in context.object

    def draw(self, context):
        obj = context.object
        layout = self.layout
        layout.label(text=f"Instance: {obj[NAME]}")
        column = layout.column(heading="Flags")
        for flag in FLAGS:
            column.prop(obj.oban, flag.key)
        unknown = _flags(obj) & ~KNOWN_FLAGS
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
