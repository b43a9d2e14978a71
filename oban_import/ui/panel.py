"""Properties > Object > Oni Object Animation and Oni Character: the imported fields, editable;
Oni Level: an environment face's flags by name, a door's fields.

The values live in the object's custom properties (named in oni/io/oban/properties.py,
level/properties.py, objects/properties.py and oni/io/trams/properties.py), the ones an
exporter reads; this panel edits them in place, keeping the flag bits and the flag
booleans in step, on the object and on its action.
"""

import bpy
import numpy as np
from bpy.props import BoolProperty, IntProperty, PointerProperty

from ..core.errors import ObanError
from ..core.id_properties import unsigned32
from ..oni.blender.oban.actions import action_of, animated_of
from ..oni.io.characters.properties import BODY, CHARACTER, PARTS
from ..oni.io.level.model import DOOR_FLAGS, OBJECT_TAG_TYPES, QUAD_FLAGS
from ..oni.io.level.properties import (DOOR_CLASS, ENVIRONMENT, FLAGS_ATTRIBUTE, FURNITURE_CLASS, QUAD_ATTRIBUTE,
                                       TAG_ATTRIBUTE, TYPE, door_fields, event_text, flag_counts, flag_names,
                                       furniture_fields, object_header)
from ..oni.io.oban.properties import FIELDS, FLAG_BITS, NAME, flag_properties
from ..oni.io.oban.record import FLAGS, KNOWN_FLAGS, MAX_COUNT
from ..oni.io.objects.properties import OBJECT_DOOR_ID, OBJECT_DOOR_LEAF
from ..oni.io.trams.properties import NAME as TRAM_NAME
from ..oni.io.trams.properties import PREFIX as TRAM_PREFIX
from ..oni.io.trams.tram import tram_flag_text


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


class OBJECT_PT_oni_level(_ObjectPanel, bpy.types.Panel):
    """Properties > Object > Oni Level: what an environment object's quads (in Edit Mode, its
    active face's) and a level object's Empty or door leaf hold."""
    bl_label = "Oni Level"

    @classmethod
    def poll(cls, context):
        obj = context.object
        return obj is not None and (ENVIRONMENT in obj or TYPE in obj or OBJECT_DOOR_LEAF in obj)

    def draw(self, context):
        for line in level_lines(context.object):
            self.layout.label(text=line)


def level_lines(obj) -> list:
    """The panel's lines for an environment object, a level object's Empty or a door leaf."""
    if ENVIRONMENT in obj:
        return environment_lines(obj)
    if OBJECT_DOOR_LEAF in obj:
        return [f"Leaf {obj[OBJECT_DOOR_LEAF]} of door {obj[OBJECT_DOOR_ID]}"]
    label = f"object '{obj.name}'"
    try:   # what the level export reads, as it reads it: a property it would refuse is shown as refused
        header = object_header(obj, label)
        lines = [f"{header.kind} {header.id}"]
        if DOOR_CLASS in obj:
            door = door_fields(obj, label, header.position)
            lines += [f"Class: {door['class_name']}", f"Door id {door['door_id']}, key id {door['key_id']}",
                      f"Flags: {flag_names(door['door_flags'], DOOR_FLAGS)}",
                      f"Textures: {door['texture_names'][0] or '-'}, {door['texture_names'][1] or '-'}"]
            lines += [f"Event: {event_text(event)}" for event in door["events"]] or ["No events"]
        elif FURNITURE_CLASS in obj:
            piece = furniture_fields(obj, label)
            lines += [f"Class: {piece['class_name']}", f"Particle: {piece['particle'] or '-'}"]
    except ObanError as error:
        return [str(error)]
    return lines


def environment_lines(obj) -> list:
    """In Edit Mode the active face's quad, flags and object; else how many quads carry each flag."""
    if obj.mode == "EDIT":
        import bmesh
        faces = bmesh.from_edit_mesh(obj.data).faces
        face = faces.active
        if face is None:
            return ["No active face"]
        layers = [faces.layers.int.get(name) for name in (FLAGS_ATTRIBUTE, TAG_ATTRIBUTE, QUAD_ATTRIBUTE)]
        if None in layers:
            return [f"No '{FLAGS_ATTRIBUTE}', '{TAG_ATTRIBUTE}' or '{QUAD_ATTRIBUTE}' face attribute"]
        flags, tag, quad = (face[layer] for layer in layers)
        return [f"Quad {quad}", *quad_flag_lines(np.array([flags])), object_line(tag)]
    attribute = obj.data.attributes.get(FLAGS_ATTRIBUTE)
    if attribute is None or attribute.domain != "FACE" or attribute.data_type != "INT":
        return [f"No '{FLAGS_ATTRIBUTE}' face attribute"]
    flags = np.empty(len(obj.data.polygons), np.int32)
    attribute.data.foreach_get("value", flags)
    return [f"{len(flags)} quads of {obj[ENVIRONMENT]}", *quad_flag_lines(flags)]


def quad_flag_lines(flags) -> list:
    """One line per flag some of `flags` (int32 as the face attribute holds them) carry: its
    name (its count where there are several quads)."""
    counts = flag_counts(flags, QUAD_FLAGS)
    unnamed = int(np.bitwise_or.reduce(flags.astype(np.int64) & 0xFFFFFFFF, initial=0)) & ~sum(QUAD_FLAGS.values())
    lines = [name if len(flags) == 1 else f"{name}: {count}" for name, count in counts.items() if count]
    return lines + ([f"Other bits: 0x{unnamed:x}"] if unnamed else []) or ["No flags"]


def object_line(tag) -> str:
    if tag == -1:
        return "Object: none"
    kind = OBJECT_TAG_TYPES.get(tag >> 24, f"type {tag >> 24}")
    return f"Object: {kind} {tag & 0xFFFFFF}"


classes = [ObanObjectSettings, OBJECT_PT_oban, OBJECT_PT_oni_character, OBJECT_PT_oni_level]


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.oban = PointerProperty(type=ObanObjectSettings)


def unregister():
    del bpy.types.Object.oban
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
