"""Properties > Object > Oni Object Animation and Oni Character: the imported fields, editable.

The values live in the object's custom properties (oni/properties.py), the ones an
exporter reads; this panel edits them in place, keeping the flag bits and the flag
booleans in step, on the object and on its action.
"""

import bpy
from bpy.props import BoolProperty, IntProperty, PointerProperty

from ..core.id_properties import unsigned32
from ..oni.blender.characters import BODY, CHARACTER, PARTS
from ..oni.blender.oban_actions import action_of, animated_of
from ..oni.io.characters.tram import tram_flag_text
from ..oni.io.characters.tram_properties import NAME as TRAM_NAME
from ..oni.io.characters.tram_properties import PREFIX as TRAM_PREFIX
from ..oni.io.oban.properties import FIELDS, FLAG_BITS, NAME, flag_properties
from ..oni.io.oban.record import FLAGS, KNOWN_FLAGS, MAX_COUNT


def _owners(obj):
    """The object that carries the animation (`obj`, or its child when `obj` is a pivot) and,
    when it is an imported one, its action."""
    animated = animated_of(obj)
    action = action_of(animated)
    return [animated] + ([action] if action is not None and NAME in action else [])


def _flags(obj):
    return unsigned32(animated_of(obj).get(FLAG_BITS, 0))


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
        return int(animated_of(self.id_data).get(key, 0))

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


class _ObjectPanel:
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"


class OBJECT_PT_oban(_ObjectPanel, bpy.types.Panel):
    bl_label = "Oni Object Animation"

    @classmethod
    def poll(cls, context):
        return context.object is not None and animated_of(context.object) is not None

    def draw(self, context):
        obj = context.object
        layout = self.layout
        animated = animated_of(obj)
        layout.label(text=f"Instance: {animated[NAME]}" + (f" (pivot of '{animated.name}')" if animated is not obj
                                                            else ""))
        column = layout.column(heading="Flags")
        for flag in FLAGS:
            column.prop(obj.oban, flag.key)
        unknown = _flags(obj) & ~KNOWN_FLAGS
        if unknown:
            layout.label(text=f"Unknown flag bits kept: 0x{unknown:x}", icon="INFO")
        column = layout.column()
        for name, *_ in FIELDS:
            column.prop(obj.oban, name)


# The TRAM fields the character panel shows, editable (custom properties of the action)
TRAM_FIELDS = (("type", "Type"), ("aiming_type", "Aiming Type"), ("from_state", "From State"),
               ("to_state", "To State"), ("varient", "Varient"), ("first_level", "First Level"),
               ("hard_pause", "Hard Pause"), ("soft_pause", "Soft Pause"), ("atomic_start", "Atomic Start"),
               ("atomic_end", "Atomic End"), ("invulnerable_start", "Invulnerable Start"),
               ("invulnerable_length", "Invulnerable Length"), ("action_frame", "Action Frame"),
               ("final_rotation", "Final Rotation"), ("flags", "Flags"), ("used_parts", "Used Parts"),
               ("replaced_parts", "Replaced Parts"), ("impact", "Impact"))


class OBJECT_PT_oni_character(_ObjectPanel, bpy.types.Panel):
    """Properties > Object > Oni Character: a character armature's body and its action's TRAM
    fields (the custom properties an export reads; the events are the action's markers)."""
    bl_label = "Oni Character"

    @classmethod
    def poll(cls, context):
        return context.object is not None and CHARACTER in context.object

    def draw(self, context):
        armature = context.object
        layout = self.layout
        layout.label(text=f"Character: {armature[CHARACTER]}, body {armature[BODY]}, {len(armature[PARTS])} parts")
        action = armature.animation_data.action if armature.animation_data else None
        if action is None or TRAM_NAME not in action:
            layout.label(text="No Oni animation assigned (the Action editor picks one)", icon="INFO")
            return
        layout.label(text=f"Animation: {action[TRAM_NAME]}, {action[TRAM_PREFIX + 'frames']} frames, "
                          f"{action[TRAM_PREFIX + 'key_size']}-byte keys, "
                          f"{tram_flag_text(unsigned32(action[TRAM_PREFIX + 'flags']))}")
        column = layout.column()
        for key, label in TRAM_FIELDS:
            column.prop(action, f'["{TRAM_PREFIX}{key}"]', text=label)
        layout.label(text=f"{len(action.pose_markers)} events as markers (footstep, sound, particle)")


classes = [ObanObjectSettings, OBJECT_PT_oban, OBJECT_PT_oni_character]


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.oban = PointerProperty(type=ObanObjectSettings)


def unregister():
    del bpy.types.Object.oban
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
