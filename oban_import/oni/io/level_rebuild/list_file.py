"""An object list as a loose .oni that OniSplit's `-import:nosep` packs as it is (docs/level.md
11): a BINA named BINACJBO<name> holding the CJBO list (section 1), laid out as OniSplit's
plain `-create` writes one. For the types `-create:level` does not take (CMBT, MELE), and to
replace the lists it writes where it does not keep an object's data whole. No bpy."""

import struct

import numpy as np

from ..container.container import BINA_TAG
from ..container.instance_file import ALIGN, instance_file_bytes
from ..level.object_lists import HEADER_DTYPE, LIST_MAGIC, LIST_PREFIX, LIST_VERSION

# Each type's list, named as the game and OniSplit name it (BINACJBO + the name)
LIST_NAMES = {"CHAR": "Character", "CMBT": "Combat", "CONS": "Console", "DOOR": "Door", "FLAG": "Flag",
              "FURN": "Furniture", "MELE": "Melee Profile", "NEUT": "Neutral", "PART": "Particle",
              "PATR": "Patrol Path", "PWRU": "PowerUp", "SNDG": "Sound", "TRIG": "Trigger", "TRGV": "Trigger Volume",
              "TURR": "Turret", "WEAP": "Weapon"}


def list_file_bytes(name: str, kinds, ids, flags, positions, rotations, payloads) -> bytes:
    """The .oni of the list BINACJBO<name>: per object its four letters, id, flags, position,
    rotation (degrees) and own data (padded with zeros to a multiple of 4), in order."""
    payloads = [bytes(p) + bytes(-len(p) % 4) for p in payloads]
    headers = np.zeros(len(payloads), HEADER_DTYPE)
    headers["type"] = [kind[::-1].encode("ascii") for kind in kinds]   # stored reversed
    headers["id"], headers["flags"] = ids, flags
    headers["position"], headers["rotation"] = positions, rotations
    body = b"".join(struct.pack("<I", HEADER_DTYPE.itemsize + len(payload)) + header.tobytes() + payload
                    for header, payload in zip(headers, payloads))
    rest = struct.pack("<I", LIST_VERSION) + body + bytes(4)           # a 0 ends the list
    listed = LIST_MAGIC + struct.pack("<I", len(rest)) + rest
    data = struct.pack("<II", len(listed), ALIGN)                        # the list's size, where it starts in raw
    return instance_file_bytes([(BINA_TAG, LIST_PREFIX + name, data)], bytes(ALIGN) + listed)
