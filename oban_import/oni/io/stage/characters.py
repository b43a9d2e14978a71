"""The level's characters and flags (docs/stage.md 1, 2): the CHAR and FLAG objects of its
object lists (their OSD layouts are level_rebuild/object_xml.py's), and the script characters
of the AISA its ONLV links (OniSplit: Oni.Metadata/InstanceMetadata.cs, aisa;
Oni.Level/LevelDatWriter.cs, WriteAISA)."""

import numpy as np

from ....core.errors import ObanError
from ..container.container import ONCC_TAG, Container, counted
from ..container.library import Library
from ..level.arrays import first_bad, text
from ..level.model import ObjectList
from ..level_rebuild.object_xml import CHAR, FLAG
from .model import AISA_TAG, Character, Flag, ScriptCharacter

CHAR_DTYPE, FLAG_DTYPE = CHAR[1], FLAG[1]     # offsets from the object's OSD (its byte 0x24)
AISA_COUNT_OFFSET = 0x16                      # u16 count, the entries from 0x18
AISA_DTYPE = np.dtype({"names": ["name", "script_id", "flag_id", "flags", "team", "class", "spawn", "weapon",
                                 "ammo"],
                       "formats": ["S32", "<i2", "<i2", "<u2", "<u2", "<u4", "S32", "<u4", "<i2"],
                       "offsets": [0x00, 0x20, 0x22, 0x24, 0x26, 0x28, 0x50, 0x150, 0x154], "itemsize": 0x160})
ONWC_TAG = b"CWNO"


def _osd(objects: ObjectList, kind: str, dtype, path: str, label: str):
    """(the indices of the objects of `kind`, their OSDs as `dtype` records): each OSD's size
    checked before any is gathered."""
    picked = np.flatnonzero(objects.types == kind)
    sizes = np.array([len(objects.payloads[k]) for k in picked], np.int64)
    bad = first_bad(sizes < dtype.itemsize)
    if bad is not None:
        k = int(picked[bad])
        raise ObanError(path, f"{label}: object {k} (id {int(objects.ids[k])}): a {kind} of {int(sizes[bad]) + 0x24} "
                              f"bytes, shorter than 0x{dtype.itemsize + 0x24:x}")
    data = b"".join(objects.payloads[k][:dtype.itemsize] for k in picked)
    return picked, np.frombuffer(data, dtype, count=len(picked))


def characters_of(objects: ObjectList, path: str, label: str) -> list:
    """The CHAR objects of one object list."""
    picked, osd = _osd(objects, "CHAR", CHAR_DTYPE, path, label)
    return [Character(object_id=int(objects.ids[k]), position=objects.positions[k].copy(),
                      rotation=objects.rotations[k].copy(), flags=int(r["Flags"]), class_name=text(r["Class"]),
                      name=text(r["Name"]), weapon=text(r["Weapon"]), team=int(r["Team"]),
                      spawn_script=text(r["Scripts/Spawn"]))
            for k, r in zip(picked.tolist(), osd)]


def flags_of(objects: ObjectList, path: str, label: str) -> list:
    """The FLAG objects of one object list."""
    picked, osd = _osd(objects, "FLAG", FLAG_DTYPE, path, label)
    return [Flag(object_id=int(objects.ids[k]), flag_id=int(r["FlagId"]), position=objects.positions[k].copy(),
                 rotation=objects.rotations[k].copy(), note=text(r["Note"]))
            for k, r in zip(picked.tolist(), osd)]


def script_characters_at(library: Library, c: Container, index: int) -> list:
    """The AISA at descriptor `index` of `c`: its entries, the class and weapon links checked
    (their names kept; a placeholder is a name too)."""
    data, _ = c.instance(index, AISA_TAG)
    label = c.label(index)
    entries = counted(data, AISA_DTYPE, c.path, label, "character", AISA_COUNT_OFFSET, 2)
    found = []
    for k, e in enumerate(entries):
        cls = c.link(int(e["class"]), ONCC_TAG, index, f"character {k} class")
        weapon = c.link(int(e["weapon"]), ONWC_TAG, index, f"character {k} weapon")
        found.append(ScriptCharacter(
            name=text(e["name"]), script_id=int(e["script_id"]), flag_id=int(e["flag_id"]), flags=int(e["flags"]),
            team=int(e["team"]), class_name="" if cls is None else c.short_name(cls),
            weapon="" if weapon is None else c.short_name(weapon), ammo=int(e["ammo"]),
            spawn_script=text(e["spawn"])))
    return found
