"""A level as the files OniSplit's `-create:level` rebuilds it from (docs/level.md 11): the
master XML naming the two Colladas (collada.py) with the flags of each environment node, the
object lists as OniSplit's XML, the names of the folder's files. No bpy."""

from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..level.model import DOOR_FLAGS, Door, Furniture
from .object_xml import EVENTS, xml_floats

ENVIRONMENT_FILE, ROOMS_FILE, MASTER_FILE = "{}_env.dae", "{}_rooms.dae", "{}.xml"
CLASSES_FOLDER = "classes"
OBJECTS_FILE = "{}_objects.xml"   # every object in one list, in id order: OniSplit numbers them 1... as it reads them
OBJECT_FLAGS = {"Locked": 0x1, "PlacedInGame": 0x2, "Temporary": 0x4, "Gunk": 0x8}
# The textures OniSplit makes itself (Oni.Akira/MaterialLibrary.cs): a face of one needs no TXMP file
ONISPLIT_MARKERS = frozenset(f"_marker_{kind}" for kind in (
    "door", "ghost", "stairs", "danger", "barrier", "impassable", "blackness", "floor"))


def master_xml(name: str, node_flags: list, sky: str, object_files: list) -> str:
    """The level's XML: its name, the environment Collada with each node's GunkFlags (a
    decimal number: it keeps bits OniSplit has no name for), the rooms, sky, object lists."""
    nodes = "".join(f"<Node Id={quoteattr(node)}><GunkFlags>{flags}</GunkFlags></Node>"
                    for node, flags in node_flags if flags)
    imports = "".join(f"<Import>{escape(file)}</Import>" for file in object_files)
    sky_element = f"<Sky>ONSK{escape(sky)}</Sky>" if sky else "<Sky/>"
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            f'<Oni><Level Name={quoteattr(name)} SharedPath="{CLASSES_FOLDER}"><Environment><Model>'
            f'<Import Path={quoteattr(ENVIRONMENT_FILE.format(name))}>{nodes}</Import></Model><Rooms>'
            f'<Import Path={quoteattr(ROOMS_FILE.format(name))}/></Rooms></Environment>{sky_element}'
            f'<Objects>{imports}</Objects></Level></Oni>\n')


@dataclass
class OtherObject:
    """An object of another type, its own data already OniSplit's XML (object_xml.py)."""
    kind: str                      # the four letters
    id: int
    flags: int
    position: np.ndarray
    rotation: np.ndarray
    osd: str                       # its <OSD> element ('' for a type -create:level does not take)
    payload: bytes                 # its own data as read (for a list written whole, list_file.py)
    whole: bool = False            # its type's list to be written whole (object_xml.level_given)


def objects_xml(objects: list) -> str:
    """Objects as one OniSplit XML list: Door, Furniture or OtherObject records, in order."""
    return ('<?xml version="1.0" encoding="utf-8"?>\n<Oni><Objects>'
            + "".join(_door(o) if isinstance(o, Door) else _furniture(o) if isinstance(o, Furniture) else
                      f"<{o.kind}>{_header(o)}{o.osd}</{o.kind}>" for o in objects) + "</Objects></Oni>\n")


def _header(obj) -> str:
    return (f"<Header><Flags>{flag_names(obj.flags, OBJECT_FLAGS)}</Flags>"
            f"<Position>{xml_floats(obj.position)}</Position>"
            f"<Rotation>{xml_floats(obj.rotation)}</Rotation></Header>")


def _door(door: Door) -> str:
    events = "".join(_event(event) for event in door.events)
    return (f"<DOOR>{_header(door)}<OSD><Class>{escape(door.class_name)}</Class><DoorId>{door.door_id}</DoorId>"
            f"<KeyId>{door.key_id}</KeyId><Flags>{flag_names(door.door_flags, DOOR_FLAGS)}</Flags>"
            f"<Center>{xml_floats(door.frame_position)}</Center><SquaredActivationRadius>"
            f"{xml_floats(door.activation_radius_squared)}</SquaredActivationRadius>"
            f"<Texture1>{escape(door.texture_names[0])}</Texture1><Texture2>{escape(door.texture_names[1])}"
            f"</Texture2><Events>{events}</Events></OSD></DOOR>")


def _event(event) -> str:
    if event.name == "None":
        return "<None />"
    if event.name == "Script":
        return f"<Script Function={quoteattr(event.script)} />"
    return f'<{EVENTS[event.type]} TargetId="{event.target}" />'   # OniSplit's spelling


def _furniture(piece: Furniture) -> str:
    return (f"<FURN>{_header(piece)}<OSD><Class>{escape(piece.class_name)}</Class>"
            f"<Particle>{escape(piece.particle)}</Particle></OSD></FURN>")


def flag_names(flags: int, table: dict) -> str:
    """The names of the set bits as OniSplit's enums read them ('' none); a decimal number
    where a bit has no name."""
    if flags & ~sum(table.values()):
        return str(flags)
    return " ".join(name for name, bit in table.items() if flags & bit)

