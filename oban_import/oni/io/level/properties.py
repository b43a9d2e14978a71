"""What a level's parts are called in Blender (docs/level.md, "In Blender"): the face and corner
attributes of environment meshes, and the custom properties of the object lists' Empties, their
doors and furniture. Plain mappings, no bpy."""

import numpy as np

from ....core.id_properties import signed32
from .model import DOOR_FLAGS, Door, Furniture, ObjectList

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
# The object lists' Empties
TYPE = "oni_type"                      # the four letters: DOOR, FURN, CHAR, ...
OBJECT_ID = "oni_object_id"
OBJECT_FLAGS = "oni_object_flags"
POSITION = "oni_position"              # as stored, Oni axes
ROTATION = "oni_rotation"              # degrees x y z as stored
OSD = "oni_osd"                        # an object's own data past its header, hex (for a rebuild)
DOOR_ID = "oni_door_id"
DOOR_FLAG_PREFIX = "oni_door_"         # + a flag's name in lower case: one boolean each


def object_properties(objects: ObjectList, index: int) -> dict:
    """What describes object `index` of a list on its Empty."""
    described = {TYPE: str(objects.types[index]), OBJECT_ID: int(objects.ids[index]),
                 OBJECT_FLAGS: signed32(int(objects.flags[index])),
                 POSITION: np.asarray(objects.positions[index], np.float64).tolist(),
                 ROTATION: np.asarray(objects.rotations[index], np.float64).tolist()}
    if index < len(objects.payloads) and described[TYPE] not in ("DOOR", "FURN"):   # those: their own fields
        described[OSD] = objects.payloads[index].hex()
    return described


def door_properties(door: Door) -> dict:
    """A door's own fields: its ids, class, flags (and each by name), textures, events."""
    return {
        DOOR_ID: door.door_id, "oni_key_id": door.key_id, "oni_door_class": door.class_name,
        "oni_door_flags": door.door_flags,
        **{DOOR_FLAG_PREFIX + name.lower(): bool(door.door_flags & bit) for name, bit in DOOR_FLAGS.items()},
        "oni_frame_position": np.asarray(door.frame_position, np.float64).tolist(),
        "oni_activation_radius_squared": float(door.activation_radius_squared),
        "oni_texture1": door.texture_names[0], "oni_texture2": door.texture_names[1],
        "oni_events": [event_text(event) for event in door.events]}


def furniture_properties(piece: Furniture) -> dict:
    return {"oni_furniture_class": piece.class_name, "oni_particle": piece.particle}


def event_text(event) -> str:
    """'Script: open_gate', 'UnlockDoor: 7', 'None'."""
    if event.name == "None":
        return event.name
    return f"{event.name}: {event.script if event.name == 'Script' else event.target}"


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
