"""What a level's parts are called in Blender (docs/level.md, "In Blender"): the face and corner
attributes of environment meshes, and the custom properties of the object lists' Empties, their
doors and furniture, each written and read back (checked) here alone. Plain mappings, no bpy."""

from dataclasses import dataclass

import numpy as np

from ....core.errors import ObanError
from ....core.id_properties import boolean, number, numbers, signed32, text, texts, whole
from ..objects.properties import OBJECT_DOOR_ID
from .model import DOOR_FLAGS, EVENT_TYPES, Door, DoorEvent, Furniture, ObjectList

# Environment meshes: one face per quad
FLAGS_ATTRIBUTE = "oni_flags"          # INT face: the quad's flags, bit for bit (signed 32-bit)
TAG_ATTRIBUTE = "oni_object_tag"       # INT face: its object tag, -1 none
QUAD_ATTRIBUTE = "oni_quad"            # INT face: its index in the environment (the file's order)
SHADE_ATTRIBUTE = "oni_shade"          # BYTE_COLOR corner: each corner's shade, R G B A
UV_MAP = "UVMap"                       # (u, 1 - v) of each corner
ENVIRONMENT = "oni_environment"        # on an environment mesh's object: the AKEV's name
LEVEL_FILE = "oni_level_file"          # ... and the file it was imported from (absolute)
FINGERPRINT = "oni_level_fingerprint"  # ... and a CRC-32 of its quads as read (patch.fingerprint)
ROOMS = "oni_rooms"                    # on the rooms' mesh object (a face per room's floor): the AKEV's name
# The object lists' Empties (object_properties / object_header), a door's (door_properties /
# door_fields) and furniture's own fields (furniture_properties / furniture_fields): each name
# written and read through these pairs alone
TYPE = "oni_type"                      # the four letters: DOOR, FURN, CHAR, ...
OBJECT_ID = "oni_object_id"
OBJECT_FLAGS = "oni_object_flags"
POSITION = "oni_position"              # as stored, Oni axes
ROTATION = "oni_rotation"              # degrees x y z as stored
OSD = "oni_osd"                        # an object's own data past its header, hex (for a rebuild)
DOOR_ID = OBJECT_DOOR_ID               # a door's id: the one its leaves' setups carry
KEY_ID = "oni_key_id"
DOOR_CLASS = "oni_door_class"
DOOR_FLAG_BITS = "oni_door_flags"      # the flags as stored; DOOR_FLAG_PREFIX + a flag's name in lower case:
DOOR_FLAG_PREFIX = "oni_door_"         # one boolean each, which wins over its bit
FRAME_POSITION = "oni_frame_position"
ACTIVATION = "oni_activation_radius_squared"
DOOR_TEXTURES = ("oni_texture1", "oni_texture2")
EVENTS = "oni_events"                  # texts: 'Script: open_gate', 'UnlockDoor: 7', 'None'
FURNITURE_CLASS = "oni_furniture_class"
PARTICLE = "oni_particle"
# What OniSplit's -create:level and the game take (Oni.Objects: the char[n] fields, u16 ids)
MAX_OBJECT_ID = 0xFFFFFF               # an object tag keeps 24 bits of it
U16 = (0, 0xFFFF)
EVENT_TARGETS = (0, 0x7FFF)            # OniSplit reads a target as an int16 and writes it as a u16
INT32 = (-(1 << 31), (1 << 31) - 1)
DOOR_CLASS_BYTES = TEXTURE_BYTES = 63
SCRIPT_BYTES, FURNITURE_CLASS_BYTES, PARTICLE_BYTES = 32, 32, 48


def object_properties(objects: ObjectList, index: int) -> dict:
    """What describes object `index` of a list on its Empty."""
    described = {TYPE: str(objects.types[index]), OBJECT_ID: int(objects.ids[index]),
                 OBJECT_FLAGS: signed32(int(objects.flags[index])),
                 POSITION: np.asarray(objects.positions[index], np.float64).tolist(),
                 ROTATION: np.asarray(objects.rotations[index], np.float64).tolist()}
    if index < len(objects.payloads) and described[TYPE] not in ("DOOR", "FURN"):   # those: their own fields
        described[OSD] = objects.payloads[index].hex()
    return described


@dataclass
class ObjectHeader:
    """What an Empty says of its object's header, checked (object_header)."""
    kind: str                      # the four letters
    id: int
    flags: int                     # u32
    position: np.ndarray           # (3,) float32 as stored
    rotation: np.ndarray           # (3,) float32 degrees as stored


def object_header(owner, label) -> ObjectHeader:
    """The header an Empty's properties give; ObanError naming the property that is not one."""
    kind = text(owner, TYPE, label)
    object_id = whole(owner, OBJECT_ID, label, (0, MAX_OBJECT_ID), 0)
    flags = whole(owner, OBJECT_FLAGS, label, INT32, 0) & 0xFFFFFFFF
    position = numbers(owner, POSITION, label, 3, (0, 0, 0)).astype(np.float32)
    rotation = numbers(owner, ROTATION, label, 3, (0, 0, 0)).astype(np.float32)
    return ObjectHeader(kind, object_id, flags, position, rotation)


def door_properties(door: Door) -> dict:
    """A door's own fields: its ids, class, flags (and each by name), textures, events."""
    return {
        DOOR_ID: door.door_id, KEY_ID: door.key_id, DOOR_CLASS: door.class_name, DOOR_FLAG_BITS: door.door_flags,
        **{DOOR_FLAG_PREFIX + name.lower(): bool(door.door_flags & bit) for name, bit in DOOR_FLAGS.items()},
        FRAME_POSITION: np.asarray(door.frame_position, np.float64).tolist(),
        ACTIVATION: float(door.activation_radius_squared),
        DOOR_TEXTURES[0]: door.texture_names[0], DOOR_TEXTURES[1]: door.texture_names[1],
        EVENTS: [event_text(event) for event in door.events]}


def door_fields(owner, label, position) -> dict:
    """Door's own fields (class_name, door_id, key_id, door_flags, frame_position as stored:
    `position` where absent, activation_radius_squared, texture_names, events) as an Empty's
    properties give them, each within what OniSplit and the game take; ObanError naming the
    property otherwise. A flag's boolean wins over its bit in DOOR_FLAG_BITS."""
    stored = whole(owner, DOOR_FLAG_BITS, label, U16, 0)
    flags = stored & ~sum(DOOR_FLAGS.values())
    for name, bit in DOOR_FLAGS.items():
        key = DOOR_FLAG_PREFIX + name.lower()
        flags |= bit if boolean(owner, key, label, bool(stored & bit)) else 0
    radius = number(owner, ACTIVATION, label, 0.0)
    if radius < 0:
        raise ObanError(label, f"property '{ACTIVATION}' is {radius}: a squared radius is not negative")
    return dict(class_name=text(owner, DOOR_CLASS, label, "", DOOR_CLASS_BYTES),
                door_id=whole(owner, DOOR_ID, label, U16, 0), key_id=whole(owner, KEY_ID, label, U16, 0),
                door_flags=flags, frame_position=numbers(owner, FRAME_POSITION, label, 3, position),
                activation_radius_squared=radius,
                texture_names=tuple(text(owner, key, label, "", TEXTURE_BYTES) for key in DOOR_TEXTURES),
                events=[_event(item, label) for item in texts(owner, EVENTS, label)])


def furniture_properties(piece: Furniture) -> dict:
    return {FURNITURE_CLASS: piece.class_name, PARTICLE: piece.particle}


def furniture_fields(owner, label) -> dict:
    """Furniture's own fields (class_name, particle), checked as door_fields does."""
    return dict(class_name=text(owner, FURNITURE_CLASS, label, "", FURNITURE_CLASS_BYTES),
                particle=text(owner, PARTICLE, label, "", PARTICLE_BYTES))


def event_text(event) -> str:
    """'Script: open_gate', 'UnlockDoor: 7', 'None'."""
    if event.name == "None":
        return event.name
    return f"{event.name}: {event.script if event.name == 'Script' else event.target}"


def _event(item, label) -> DoorEvent:
    """An event_text back as a DoorEvent; ObanError naming it where it is not one OniSplit takes."""
    name, colon, value = (part.strip() for part in item.partition(":"))
    if name not in EVENT_TYPES or (name == "None") == bool(colon):
        raise ObanError(label, f"property '{EVENTS}': {item!r} is not an event ('None', 'Script: <function>' or "
                               f"'<{'|'.join(EVENT_TYPES[2:])}>: <id>')")
    if name == "Script":
        if len(value.encode("utf-8")) > SCRIPT_BYTES:
            raise ObanError(label, f"property '{EVENTS}': {item!r}: a function name is at most {SCRIPT_BYTES} bytes")
        return DoorEvent(EVENT_TYPES.index(name), script=value)
    if name != "None" and not (value.isdigit() and EVENT_TARGETS[0] <= int(value) <= EVENT_TARGETS[1]):
        raise ObanError(label, f"property '{EVENTS}': {item!r}: a target is an id {EVENT_TARGETS[0]} to "
                               f"{EVENT_TARGETS[1]}")
    return DoorEvent(EVENT_TYPES.index(name), target=int(value) if value else 0)


def flag_names(flags: int, table: dict) -> str:
    """The names of the set bits, the unnamed ones in hex; '-' for none."""
    words = [name for name, bit in table.items() if flags & bit]
    rest = flags & ~sum(table.values())
    return " ".join(words + ([f"0x{rest:x}"] if rest else [])) or "-"


def flag_counts(flags, table: dict) -> dict:
    """{name: how many of `flags` (an integer array, signed or not) carry its bit} for each
    flag of `table`."""
    bits = np.asarray(flags).astype(np.int64) & 0xFFFFFFFF
    return {name: int(((bits & bit) != 0).sum()) for name, bit in table.items()}
