"""The placed objects other than doors and furniture as OniSplit's object XML (docs/level.md 11):
each object's own data (its "OSD": the bytes from the object's 0x24 to its end, docs/level.md 1)
as the `<OSD>` element OniSplit v0.9.99.2 reads back into exactly those bytes. No bpy.

The layouts and the XML come from OniSplit's source: Oni.Objects/*.cs (each type's binary
ReadOsd/WriteOsd, its XML ReadOsd and enums: Character, Weapon, Particle, PowerUp, Flag,
Console, Turret, Sound, Trigger, TriggerVolume, Neutral, PatrolPath), Oni.Metadata/ObjectMetadata.cs
with Oni.Xml/ObjcXmlExporter.cs and ObjcXmlImporter.cs (what `-extract:xml` writes and `-create`
reads), Oni.Level/LevelImporter.cs (ReadObjects: the types `-create:level` takes). The element is
the one `-extract:xml` writes, with the names `-create:level`'s readers look for where those
differ (`-create` reads those fields by position): a flag's `Note`, a console's
`TrigerredTexture`. Values are written as `-extract:xml` writes them: 16-bit ids signed, names
of flags and enum values (a decimal number where one has no name), float32 values exactly.

Every byte must come back: a payload that is too short or too long, a count past its end, a
string with bytes after its NUL, not UTF-8 or not carried by XML, an enum OniSplit names by an
element it does not have (an event, a path point, a sound volume), a loop OniSplit would place
elsewhere, or a byte OniSplit writes as zero that is not, is an ObanError naming it.

Checked with OniSplit (tests/data/objects_xml): `-create` of these elements gives every object
byte for byte. `-create:level` (Oni.Objects' readers and writers) gives the same bytes except
where it cannot: a flag's prefix (its two bytes swapped; for −9 to 99 the digits' characters;
it fails on a byte of 0x80 or more), a particle's flags other than NotInitiallyCreated dropped,
a sphere sound 16 bytes short; it fails on a negative (stored 0x8000 or more) console, turret,
trigger, neutral or patrol id, trigger emitter count or time, dialog line animation or event
target, and leaves out a console, turret or trigger whose class (the CONS, TURR or TRIG
instance of its name) is not among the level's classes."""

import re
from typing import NamedTuple
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ....core.errors import ObanError
from ..level.model import EVENT_TYPES, ONISPLIT_SPELLING

OSD_TYPES = ("CHAR", "WEAP", "PART", "PWRU", "FLAG", "CONS", "TURR", "SNDG", "TRIG", "TRGV", "NEUT", "PATR")
# What -create:level does beyond (the docstring): the types it drops without their class instance, the faults it has
CLASS_TYPES = ("CONS", "TURR", "TRIG")
# FLAG: it swaps the two bytes of a flag's prefix (and fails on a byte of 0x80 or more); PART: it drops
# a particle's flags other than NotInitiallyCreated; SNDG: it writes a sphere sound 16 bytes short
LEVEL_FAULTS = ("FLAG", "PART", "SNDG")
FLAG_PREFIX = slice(4, 6)   # in a FLAG's data

# OniSplit's enums (Oni.Objects/*.cs). Flags: name -> bit; plain enums: value -> name.
CHARACTER_FLAGS = {"IsPlayer": 0x1, "RandomCostume": 0x2, "NotInitiallyPresent": 0x4, "NonCombatant": 0x8,
                   "CanSpawnMultiple": 0x10, "Spawned": 0x20, "Unkillable": 0x40, "InfiniteAmmo": 0x80,
                   "Omniscient": 0x100, "HasLSI": 0x200, "Boss": 0x400, "UpgradeDifficulty": 0x800,
                   "NoAutoDrop": 0x1000}
TEAMS = dict(enumerate(("Konoko", "TCTF", "Syndicate", "Neutral", "SecurityGuard", "RogueKonoko", "Switzerland",
                        "SyndicateAccessory")))
TEAM_FLAGS = {name: 1 << value for value, name in TEAMS.items()}       # TurretTargetTeams
JOBS = dict(enumerate(("None", "Idle", "Guard", "Patrol", "TeamBatle", "Combat", "Melee", "Alarm", "Neutral",
                       "Panic")))
ALERTS = dict(enumerate(("Lull", "Low", "Medium", "High", "Combat")))
PURSUITS = dict(enumerate(("None", "Forget", "GoTo", "Wait", "Look", "Move", "Hunt", "Glanc")))
PURSUIT_LOST = dict(enumerate(("ReturnToJob", "KeepLooking", "FindAlarm")))
PARTICLE_FLAGS = {"NotInitiallyCreated": 0x2}
POWER_UPS = {1112362305: "Ammo", 1162693953: "EnergyCell", 1330665800: "Hypo", 1145849939: "Shield",
             1230392905: "Invisibility", 1230195777: "LSI"}
CONSOLE_FLAGS = {"InitialActive": 0x8, "Punch": 0x20, "IsAlarm": 0x40}
TURRET_FLAGS = {"InitialActive": 0x2}
TRIGGER_FLAGS = {"InitialActive": 0x8, "ReverseAnim": 0x10, "PingPong": 0x20}
VOLUME_FLAGS = {"OneTimeEnter": 0x1, "OneTimeInside": 0x2, "OneTimeExit": 0x4, "EnterDisabled": 0x8,
                "InsideDisabled": 0x10, "ExitDisabled": 0x20, "Disabled": 0x40, "PlayerOnly": 0x80}
NEUTRAL_FLAGS = {"NoResume": 0x1, "NoResumeAfterGive": 0x2, "Uninterruptible": 0x4}
NEUTRAL_ITEMS = {"Shield": 0x1, "Invisibility": 0x2, "LSI": 0x4}
LINE_FLAGS = {"IsPlayer": 0x1, "GiveItems": 0x2, "AnimOnce": 0x4, "OtherAnimOnce": 0x8}
MOVEMENT_MODES = dict(enumerate(("ByAlertLevel", "Stop", "Crouch", "Creep", "WalkNoAim", "Walk", "RunNoAim", "Run")))
FACINGS = {0: "Forward", 1: "Left", 2: "Right", 3: "Stopped"}   # 1 is also Backward; -extract:xml writes Left
EVENTS = tuple(ONISPLIT_SPELLING.get(name, name) for name in EVENT_TYPES)   # as OniSplit's XML names them
SCRIPT_EVENT, SCRIPT_LENGTH = 1, 32
SOUND_BOX, SOUND_SPHERE = 1447841093, 1397770322                      # SoundVolumeType
LOOP, LOOP_FROM, IGNORE_PLAYER = 6, 16, 22                             # path point types
COLOR = "color"              # a u32 B, G, R, A: "R G B", or "R G B A" when A is not 255
ONISPLIT_NAN = 0xFFC00000    # the NaN OniSplit writes for "NaN"


class Field(NamedTuple):
    """One value of a record: its element ("/" between nested ones; "#…" checked, not written),
    its offset from the record's first byte, its numpy format, and how it is written: None
    as the format says (text, integer, float32s), a dict of names (name -> bit: flags;
    value -> name: a plain enum) or COLOR."""
    element: str
    offset: int
    format: object
    form: object = None


def _record(size: int, *rows: tuple) -> tuple:
    """(the rows as Fields, their numpy dtype, which of the record's bytes no field holds:
    those OniSplit writes as 0)."""
    fields = tuple(Field(*row) for row in rows)
    dtype = np.dtype({"names": [f.element for f in fields], "formats": [f.format for f in fields],
                      "offsets": [f.offset for f in fields], "itemsize": size})
    free = np.ones(size, bool)
    for f in fields:
        free[f.offset:f.offset + dtype.fields[f.element][0].itemsize] = False
    return fields, dtype, free


# Each type's OSD (its fixed part where a list follows): offsets from the OSD's first byte, the object's 0x24.
CHAR = _record(
    0x1FC, ("Flags", 0x00, "<u4", CHARACTER_FLAGS), ("Class", 0x04, "S64"), ("Name", 0x44, "S32"),
    ("Weapon", 0x64, "S64"), ("Scripts/Spawn", 0xA4, "S32"), ("Scripts/Die", 0xC4, "S32"),
    ("Scripts/Combat", 0xE4, "S32"), ("Scripts/Alarm", 0x104, "S32"), ("Scripts/Hurt", 0x124, "S32"),
    ("Scripts/Defeated", 0x144, "S32"), ("Scripts/OutOfAmmo", 0x164, "S32"), ("Scripts/NoPath", 0x184, "S32"),
    ("AdditionalHealth", 0x1A4, "<i4"), ("Job/Type", 0x1A8, "<u4", JOBS), ("Job/PatrolPathId", 0x1AC, "<i2"),
    ("Behaviors/CombatId", 0x1AE, "<i2"), ("Behaviors/MeleeId", 0x1B0, "<i2"), ("Behaviors/NeutralId", 0x1B2, "<i2"),
    ("Inventory/Ammo/Use", 0x1B4, "<i2"), ("Inventory/Ammo/Drop", 0x1B6, "<i2"),
    ("Inventory/EnergyCell/Use", 0x1B8, "<i2"), ("Inventory/EnergyCell/Drop", 0x1BA, "<i2"),
    ("Inventory/Hypo/Use", 0x1BC, "<i2"), ("Inventory/Hypo/Drop", 0x1BE, "<i2"),
    ("Inventory/Shield/Use", 0x1C0, "<i2"), ("Inventory/Shield/Drop", 0x1C2, "<i2"),
    ("Inventory/Invisibility/Use", 0x1C4, "<i2"), ("Inventory/Invisibility/Drop", 0x1C6, "<i2"),   # 0x1C8: 4 bytes
    ("Team", 0x1CC, "<u4", TEAMS), ("AmmoPercentage", 0x1D0, "<i4"), ("Alert/Initial", 0x1D4, "<u4", ALERTS),
    ("Alert/Minimal", 0x1D8, "<u4", ALERTS), ("Alert/JobStart", 0x1DC, "<u4", ALERTS),
    ("Alert/Investigate", 0x1E0, "<u4", ALERTS), ("AlarmGroups", 0x1E4, "<i4"),
    ("Pursuit/StrongUnseen", 0x1E8, "<u4", PURSUITS), ("Pursuit/WeakUnseen", 0x1EC, "<u4", PURSUITS),
    ("Pursuit/StrongSeen", 0x1F0, "<u4", PURSUITS), ("Pursuit/WeakSeen", 0x1F4, "<u4", PURSUITS),
    ("Pursuit/Lost", 0x1F8, "<u4", PURSUIT_LOST))
WEAP = _record(0x20, ("Class", 0x00, "S32"))
PART = _record(0x7C, ("Class", 0x00, "S64"), ("Tag", 0x40, "S48"), ("Flags", 0x70, "<u2", PARTICLE_FLAGS),
               ("DecalScale", 0x72, ("<f4", 2)))                                          # 0x7A: 2 bytes
PWRU = _record(0x04, ("Class", 0x00, "<u4", POWER_UPS))
FLAG = _record(0x88, ("Color", 0x00, "<u4", COLOR), ("Prefix", 0x04, "<i2"), ("FlagId", 0x06, "<i2"),
               ("Note", 0x08, "S128"))                    # -create:level reads Note; -extract:xml writes Notes
CONS = _record(0x102, ("Class", 0x00, "S63"), ("ConsoleId", 0x3F, "<i2"), ("Flags", 0x41, "<u2", CONSOLE_FLAGS),
               ("InactiveTexture", 0x43, "S63"), ("ActiveTexture", 0x82, "S63"),
               ("TrigerredTexture", 0xC1, "S63"),       # so -create:level spells it; -extract:xml: TriggeredTexture
               ("#events", 0x100, "<u2"))                # the events follow
TURR = _record(0x6C, ("Class", 0x00, "S63"), ("TurretId", 0x3F, "<i2"), ("Flags", 0x41, "<u2", TURRET_FLAGS),
               ("TargetedTeams", 0x67, "<u4", TEAM_FLAGS))                     # 0x43: 36 bytes; 0x6B: 1 byte
SNDG_BOX = _record(0x44, ("Class", 0x00, "S32"), ("#volume", 0x20, "<u4"), ("Box/Min", 0x24, ("<f4", 3)),
                   ("Box/Max", 0x30, ("<f4", 3)), ("Volume", 0x3C, "<f4"), ("Pitch", 0x40, "<f4"))
SNDG_SPHERE = _record(0x44, ("Class", 0x00, "S32"), ("#volume", 0x20, "<u4"), ("Sphere/MinRadius", 0x24, "<f4"),
                      ("Sphere/MaxRadius", 0x28, "<f4"), ("Volume", 0x2C, "<f4"), ("Pitch", 0x30, "<f4"))   # 0x34: 16
TRIG = _record(0x57, ("Class", 0x00, "S63"), ("TriggerId", 0x3F, "<i2"), ("Flags", 0x41, "<u2", TRIGGER_FLAGS),
               ("LaserColor", 0x43, "<u4", COLOR), ("StartPosition", 0x47, "<f4"), ("Speed", 0x4B, "<f4"),
               ("EmitterCount", 0x4F, "<i2"), ("TimeOn", 0x51, "<i2"), ("TimeOff", 0x53, "<i2"),
               ("#events", 0x55, "<u2"))                 # the events follow
TRGV = _record(0x13C, ("Name", 0x00, "S63"), ("Scripts/Entry", 0x3F, "S32"), ("Scripts/Inside", 0x5F, "S32"),
               ("Scripts/Exit", 0x7F, "S32"), ("Teams", 0x9F, "u1"), ("Size", 0xA3, ("<f4", 3)),   # 0xA0: 3 bytes
               ("TriggerVolumeId", 0xAF, "<i4"), ("ParentId", 0xB3, "<i4"), ("Notes", 0xB7, "S128"),
               ("Flags", 0x137, "<u4", VOLUME_FLAGS))                                   # 0x13B: 1 byte
NEUT = _record(0xDC, ("Name", 0x00, "S32"), ("NeutralId", 0x20, "<i2"), ("#lines", 0x22, "<u2"),
               ("Flags", 0x24, "<u4", NEUTRAL_FLAGS), ("Ranges/Trigger", 0x28, "<f4"), ("Ranges/Talk", 0x2C, "<f4"),
               ("Ranges/Follow", 0x30, "<f4"), ("Ranges/Enemy", 0x34, "<f4"), ("Speech/Trigger", 0x38, "S32"),
               ("Speech/Abort", 0x58, "S32"), ("Speech/Enemy", 0x78, "S32"), ("Script/AfterTalk", 0x98, "S32"),
               ("Rewards/WeaponClass", 0xB8, "S32"), ("Rewards/Ammo", 0xD8, "u1"), ("Rewards/EnergyCell", 0xD9, "u1"),
               ("Rewards/Hypo", 0xDA, "u1"), ("Rewards/Other", 0xDB, "u1", NEUTRAL_ITEMS))   # the lines follow
LINE = _record(0x28, ("Flags", 0x00, "<u2", LINE_FLAGS), ("Anim", 0x04, "<i2"), ("OtherAnim", 0x06, "<i2"),
               ("SpeechName", 0x08, "S32"))               # a neutral's dialog line; 0x02: 2 bytes
PATR = _record(0x28, ("Name", 0x00, "S32"), ("#points", 0x20, "<u4"), ("PatrolId", 0x24, "<i2"),
               ("ReturnToNearest", 0x26, "<i2"))          # the points follow
# A patrol path's points (PatrolPathPointType): u32 type, then these values, packed
POINT_TYPES = (
    (0, "MoveToFlag", "FlagId:i2"), (1, "Stop", ""), (2, "Pause", "Frames:i4"), (3, "LookAtFlag", "FlagId:i2"),
    (4, "LookAtPoint", "X:f4 Y:f4 Z:f4"), (5, "MoveAndFaceFlag", "FlagId:i2"), (LOOP, "Loop", ""),
    (7, "MovementMode", "Mode:i4"), (8, "MoveToPoint", "X:f4 Y:f4 Z:f4"), (9, "LockFacing", "Facing:i4"),
    (10, "MoveThroughFlag", "FlagId:i2 Distance:f4"), (11, "MoveThroughPoint", "X:f4 Y:f4 Z:f4 Distance:f4"),
    (12, "StopLooking", ""), (13, "FreeFacing", ""), (14, "GlanceAtFlagFor", "FlagId:i2 Frames:i4"),
    (15, "MoveNearFlag", "FlagId:i2 Distance:f4"), (LOOP_FROM, "LoopFrom", "From:i4"),
    (17, "Scan", "Frames:i2 Rotation:f4"), (18, "StopScanning", ""),
    (19, "MoveToFlagLookAndWait", "Frames:i2 FlagId:i2 Rotation:f4"), (20, "CallScript", "ScriptId:i2"),
    (21, "ForkScript", "ScriptId:i2"), (IGNORE_PLAYER, "IgnorePlayer", "Value:u1"),
    (23, "FaceToFlagAndFire", "FlagId:i2 Frames:i2 Spread:f4"))
POINTS = {code: (name, np.dtype([(a, "<" + f) for a, f in (v.split(":") for v in values.split())]))
          for code, name, values in POINT_TYPES}
POINT_FORMS = {"Mode": MOVEMENT_MODES, "Facing": FACINGS, "Value": {0: "No", 1: "Yes"}}
UNCARRIED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")   # characters XML 1.0 cannot hold
CONTENT_ENTITIES = {"\r": "&#13;"}                                  # else XML reads a CR as a line feed


# The 16-bit values -create:level reads as ints and writes unsigned (a negative one fails), by type:
# written as their unsigned value they give the same bytes
UNSIGNED_AT_LEVEL = {"NEUT": ("NeutralId", "Anim", "OtherAnim"), "PATR": ("PatrolId", "ReturnToNearest"),
                     "CONS": ("ConsoleId",), "TURR": ("TurretId",),
                     "TRIG": ("TriggerId", "EmitterCount", "TimeOn", "TimeOff")}


def level_osd_xml(kind: str, payload: bytes, path: str, label: str) -> str:
    """osd_xml for -create:level: the values it reads unsigned (UNSIGNED_AT_LEVEL) written so
    (-1 as 65535), which it turns back into the same bytes."""
    text = osd_xml(kind, payload, path, label)
    if kind not in UNSIGNED_AT_LEVEL:
        return text
    return re.sub(f"<({'|'.join(UNSIGNED_AT_LEVEL[kind])})>(-[0-9]+)</\\1>",
                  lambda m: f"<{m[1]}>{int(m[2]) & 0xFFFF}</{m[1]}>", text)


def level_given(kind: str, payload: bytes) -> tuple[bytes, bool]:
    """(the data to give -create:level for an object's XML, whether its type's list is to be
    written whole and replace the one it writes): a flag's prefix as 0 (it fails on some) and
    FLAG, PART, SNDG always replaced (LEVEL_FAULTS); a console's or trigger's negative event
    targets as 0 (it reads a target signed and writes it unsigned: no text carries one) and its
    list replaced; else the data as it is."""
    given = bytearray(payload)
    if kind == "FLAG":
        given[FLAG_PREFIX] = bytes(2)
    record = {"CONS": CONS, "TRIG": TRIG}.get(kind)
    negative = False
    if record is not None:
        head = np.frombuffer(payload, record[1], 1)[0]
        for at, value in _event_targets(payload, record[1].itemsize, int(head["#events"])):
            if value < 0:
                given[at:at + 2], negative = bytes(2), True
    return bytes(given), kind in LEVEL_FAULTS or negative


def _event_targets(payload, at, count) -> list:
    """(where, the target as a signed 16-bit value) of each target of a checked event list."""
    targets = []
    for _ in range(count):
        kind = int.from_bytes(payload[at:at + 2], "little")
        length = SCRIPT_LENGTH if kind == SCRIPT_EVENT else 2 if kind else 0
        if length == 2:
            targets.append((at + 2, int.from_bytes(payload[at + 2:at + 4], "little", signed=True)))
        at += 2 + length
    return targets


def osd_xml(kind: str, payload: bytes, path: str, label: str) -> str:
    """The `<OSD>` element OniSplit reads back into exactly `payload`, the OSD of an object of
    type `kind` (one of OSD_TYPES); ObanError(path, f"{label}: …") where no element can."""
    if kind not in _WRITERS:
        raise ObanError(path, f"{label}: object type {kind!r} is not one of {', '.join(OSD_TYPES)}")
    return "<OSD>" + _WRITERS[kind](bytes(payload), _Where(path, f"{label}: {kind}")) + "</OSD>"


class _Where(NamedTuple):
    path: str
    label: str

    def fault(self, problem: str) -> ObanError:
        return ObanError(self.path, f"{self.label}: {problem}")


def _fixed(record):
    """A type that is its record alone, padded to 4 bytes."""
    size = record[1].itemsize
    return lambda payload, where: _elements(_take(record, payload, where, size, _aligned(size)), record, where)


def _take(record, payload, where, used, end):
    """The record at the payload's start, its unused bytes checked; the payload's data (the
    record and what follows it) ends at `used`, its padding at `end`."""
    _, dtype, free = record
    _long_enough(payload, dtype.itemsize, where)
    _end(payload, used, end, where)
    _zeros(np.frombuffer(payload, np.uint8, dtype.itemsize)[free], 0, where)
    return np.frombuffer(payload, dtype, 1)[0]


def _long_enough(payload, size, where):
    if len(payload) < size:
        raise where.fault(f"{len(payload)} bytes, too short for its {size}")


def _end(payload, used, end, where):
    """Bytes `used` to `end` OniSplit writes as 0, and none after."""
    if len(payload) != end:
        raise where.fault(f"{len(payload)} bytes where OniSplit writes {end} (its data ends at {used})")
    _zeros(np.frombuffer(payload, np.uint8, end - used, used), used, where)


def _zeros(values, at, where):
    if values.any():
        raise where.fault(f"a byte OniSplit writes as 0 (from byte {at} on) is {int(values[values != 0][0])}")


def _aligned(n: int) -> int:
    return n + -n % 4


def _elements(values, record, where) -> str:
    """The record's fields as elements, nested groups opened and closed as their paths change."""
    out, open_ = [], []
    for field in record[0]:
        if field.element.startswith("#"):
            continue
        *groups, name = field.element.split("/")
        shared = next((k for k, (a, b) in enumerate(zip(open_, groups)) if a != b), min(len(open_), len(groups)))
        out += [f"</{g}>" for g in reversed(open_[shared:])] + [f"<{g}>" for g in groups[shared:]]
        open_ = groups
        out.append(f"<{name}>{_value(values[field.element], field, where)}</{name}>")
    return "".join(out + [f"</{g}>" for g in reversed(open_)])


def _value(value, field, where) -> str:
    form = field.form
    if isinstance(field.format, str) and field.format.startswith("S"):
        return escape(_text(value, field.element, where), CONTENT_ENTITIES)
    if form == COLOR:
        b, g, r, a = int(value).to_bytes(4, "little")
        return f"{r} {g} {b}" if a == 255 else f"{r} {g} {b} {a}"
    if isinstance(form, dict):
        return _enum(int(value), form)
    if np.asarray(value).dtype.kind == "f":
        return _floats(value, field.element, where)
    return str(int(value))


def _enum(value: int, names: dict) -> str:
    """A plain enum's name (value -> name), or flags' names (name -> bit) as OniSplit writes
    them ('' for none); the decimal number where it has no name for the value or a bit."""
    first = next(iter(names))
    if isinstance(first, int):
        return names.get(value, str(value))
    if value & ~sum(names.values()):
        return str(value)
    return " ".join(name for name, bit in names.items() if value & bit)


def _text(value: bytes, element: str, where, attribute=False) -> str:
    """A NUL-padded string (numpy's S: trailing NULs gone) as the text OniSplit writes back into it."""
    if b"\0" in value:
        raise where.fault(f"{element}: bytes after the NUL that ends its text ({value!r}); OniSplit writes 0 there")
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as error:
        raise where.fault(f"{element}: {value!r} is not UTF-8 (OniSplit's encoding): {error.reason}") from None
    bad = UNCARRIED.search(text)
    if bad:
        raise where.fault(f"{element}: {value!r} holds character {ord(bad.group()):#04x}, which XML cannot carry")
    if text and not attribute and not text.strip(" \t\n\r"):
        raise where.fault(f"{element}: {value!r} is all white space, which OniSplit reads as empty")
    return text


def _floats(values, element, where) -> str:
    """float32 values as text OniSplit reads back into the same bits."""
    values = np.atleast_1d(np.asarray(values, np.float32))
    nan = np.isnan(values) & (values.view(np.uint32) != ONISPLIT_NAN)
    if nan.any():
        raise where.fault(f"{element}: a NaN of bits {int(values.view(np.uint32)[nan][0]):#010x}; OniSplit "
                          f"writes NaN as {ONISPLIT_NAN:#010x}")
    return xml_floats(values)


def xml_floats(values, dtype=np.float32) -> str:
    """Values taken as `dtype` (float32: as the game stores them), as the text OniSplit reads
    back into the same bits, for every level XML and Collada: each one's double's shortest
    text, NaN, INF, -INF."""
    doubles = np.asarray(values, dtype).astype(np.float64).ravel()
    if np.isfinite(doubles).all():   # the usual case: float's own repr, without a Python test a value
        return " ".join(map(float.__repr__, doubles.tolist()))
    return " ".join("NaN" if v != v else "INF" if v == np.inf else "-INF" if v == -np.inf else repr(v)
                    for v in doubles.tolist())


def _events(payload, at, count, where) -> tuple:
    """(the Events element of `count` events from byte `at`, the byte after them)."""
    if at + 2 * count > len(payload):
        raise where.fault(f"{count} events cannot fit in the {len(payload) - at} bytes after byte {at}")
    out = []
    for k in range(count):
        if at + 2 > len(payload):
            raise where.fault(f"event {k} of {count} lies past the OSD's {len(payload)} bytes")
        kind = int.from_bytes(payload[at:at + 2], "little")
        if kind >= len(EVENTS):
            raise where.fault(f"event {k} has type {kind}; OniSplit names 0 to {len(EVENTS) - 1}")
        length = SCRIPT_LENGTH if kind == SCRIPT_EVENT else 2 if kind else 0
        if at + 2 + length > len(payload):
            raise where.fault(f"event {k} of {count} lies past the OSD's {len(payload)} bytes")
        value = payload[at + 2:at + 2 + length]
        if kind == SCRIPT_EVENT:
            function = _text(value.rstrip(b"\0"), f"event {k}", where, attribute=True)
            out.append(f"<Script Function={quoteattr(function)} />")
        else:
            target = f' TargetId="{int.from_bytes(value, "little", signed=True)}"' if kind else ""
            out.append(f"<{EVENTS[kind]}{target} />")
        at += 2 + length
    return f"<Events>{''.join(out)}</Events>", at


def _with_events(record):
    """A type whose record ends in a counted event list."""
    def write(payload, where):
        size = record[1].itemsize
        _long_enough(payload, size, where)
        events, used = _events(payload, size, int(np.frombuffer(payload, record[1], 1)[0]["#events"]), where)
        return _elements(_take(record, payload, where, used, _aligned(used)), record, where) + events
    return write


def _sound(payload, where):
    volume = int.from_bytes(payload[0x20:0x24], "little") if len(payload) >= 0x24 else None
    if volume is not None and volume not in (SOUND_BOX, SOUND_SPHERE):
        raise where.fault(f"sound volume type {volume:#010x}; OniSplit knows a Box ({SOUND_BOX:#010x}) and a "
                          f"Sphere ({SOUND_SPHERE:#010x})")
    record = SNDG_SPHERE if volume == SOUND_SPHERE else SNDG_BOX
    size = record[1].itemsize
    return _elements(_take(record, payload, where, size, size), record, where)


def _neutral(payload, where):
    dtype, line_size = NEUT[1], LINE[1].itemsize
    _long_enough(payload, dtype.itemsize, where)
    count = int(np.frombuffer(payload, dtype, 1)[0]["#lines"])
    if dtype.itemsize + count * line_size > len(payload):
        raise where.fault(f"{count} dialog lines cannot fit in its {len(payload)} bytes")
    end = dtype.itemsize + count * line_size
    head = _take(NEUT, payload, where, end, end)
    rows = np.frombuffer(payload, np.uint8, count * line_size, dtype.itemsize).reshape(count, line_size)
    _zeros(rows[:, LINE[2]], dtype.itemsize, where)
    lines = np.frombuffer(payload, LINE[1], count, dtype.itemsize)
    return (_elements(head, NEUT, where) + "<DialogLines>"
            + "".join(f"<DialogLine>{_elements(line, LINE, where)}</DialogLine>" for line in lines)
            + "</DialogLines>")


def _patrol(payload, where):
    dtype = PATR[1]
    _long_enough(payload, dtype.itemsize, where)
    count = int(np.frombuffer(payload, dtype, 1)[0]["#points"])
    if dtype.itemsize + 4 * count > len(payload):
        raise where.fault(f"{count} path points cannot fit in its {len(payload)} bytes")
    points, at, loop = [], dtype.itemsize, None
    for k in range(count):
        if at + 4 > len(payload):
            raise where.fault(f"path point {k} of {count} lies past the OSD's {len(payload)} bytes")
        kind = int.from_bytes(payload[at:at + 4], "little")
        if kind not in POINTS:
            raise where.fault(f"path point {k} has type {kind}; OniSplit names 0 to {len(POINTS) - 1}")
        name, point = POINTS[kind]
        if at + 4 + point.itemsize > len(payload):
            raise where.fault(f"path point {k} of {count} lies past the OSD's {len(payload)} bytes")
        values = np.frombuffer(payload, point, 1, at + 4)[0] if point.names else None
        if kind in (LOOP, LOOP_FROM):
            loop = _loop(kind, 0 if kind == LOOP else int(values["From"]), k, count, where)
        else:
            points.append(f"<{name}{''.join(_attribute(values, a, k, where) for a in point.names or ())} />")
        at += 4 + point.itemsize
    head = _take(PATR, payload, where, at, _aligned(at))
    if loop is not None:
        points[loop:] = ["<Loop>" + "".join(points[loop:]) + "</Loop>"]
    return _elements(head, PATR, where) + "<Points>" + "".join(points) + "</Points>"


def _loop(kind, start, k, count, where) -> int:
    """Where the looped points start: OniSplit writes a loop as the last point, a Loop from the
    first point, a LoopFrom from a later one (at most the loop's own index)."""
    if k != count - 1:
        raise where.fault(f"path point {k} of {count} is a loop; OniSplit writes a loop only as the last point")
    if kind == LOOP_FROM and not 0 < start <= k:
        raise where.fault(f"path point {k} loops from point {start}; OniSplit writes a LoopFrom from 1 to {k}")
    return start


def _attribute(values, name, k, where) -> str:
    value, form = values[name], POINT_FORMS.get(name)
    if name == "Value" and int(value) not in form:
        raise where.fault(f"path point {k}: IgnorePlayer's value is {int(value)}; OniSplit writes 0 (No) or 1 (Yes)")
    text = _enum(int(value), form) if form else _floats(value, f"path point {k}", where) \
        if value.dtype.kind == "f" else str(int(value))
    return f" {name}={quoteattr(text)}"


_WRITERS = {"CHAR": _fixed(CHAR), "WEAP": _fixed(WEAP), "PART": _fixed(PART), "PWRU": _fixed(PWRU),
            "FLAG": _fixed(FLAG), "CONS": _with_events(CONS), "TURR": _fixed(TURR), "SNDG": _sound,
            "TRIG": _with_events(TRIG), "TRGV": _fixed(TRGV), "NEUT": _neutral, "PATR": _patrol}
assert tuple(_WRITERS) == OSD_TYPES
