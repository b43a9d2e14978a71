"""An action's TRAM as the export reads it (docs/characters.md, "Export"): its `tram_…`
properties and its event markers, each checked against the field it fills (type and range),
so that what is written is what the action says, or the action is refused with a message
naming the property or the marker (docs/bad_input.md, "Exporting characters (TRAM)")."""

import re

import numpy as np

from ....core.errors import ObanError
from ...io.container.instance_file import MAX_NAME as INSTANCE_MAX_NAME
from ...io.trams.properties import (FOOTSTEP, FOOTSTEP_TYPES, MASK_KEYS, NAME, PARTICLE, PARTICLE_TEXT, PLAIN_KEYS,
                                    PREFIX, RECORDS, SOUND, markers_as_read)
from ...io.trams.tram import EXTENT_INFO_DTYPE, KEY_SIZES, RECORD_DTYPE
from ...io.trams.xml_read import FLOAT32_LIMIT

NAME_BYTES = {SOUND: 32, PARTICLE: 16, "impact": 16}   # char[n] fields: Latin-1, at most n bytes
MAX_NAME = INSTANCE_MAX_NAME - len("TRAM")   # an instance name OniSplit opens, less its tag
U16, I16 = (0, 0xFFFF), (-0x8000, 0x7FFF)
INT32 = (-(1 << 31), (1 << 31) - 1)
BITS32 = (-(1 << 31), (1 << 32) - 1)     # a u32 kept as the int32 of its bits, or as it is
MOTION = ("key_counts", "key_frames", "key_values", "heights", "velocities")   # the motion as read: _stored's
PRINTABLE = re.compile(r"[^\x00-\x1f\x7f]*")


def described(action, label) -> dict:
    """The action's `tram_…` properties as plain values (the stored motion as Blender keeps it),
    each checked; ObanError(label, naming the property) where one cannot be written as it is.
    An impact edited in `tram_impact` wins over the bytes kept as read."""
    found = {key: _plain(value) if key[len(PREFIX):] not in MOTION else value
             for key, value in action.items() if key.startswith(PREFIX)}
    for key, value in found.items():
        field = key[len(PREFIX):]
        problem = _problem(field, value, key in MASK_KEYS)
        if problem:
            raise ObanError(label, f"property '{key}' {problem}")
    impact = found.get(PREFIX + "impact_bytes")
    if impact is not None and impact.split(b"\0", 1)[0].decode("latin-1") != found.get(PREFIX + "impact"):
        del found[PREFIX + "impact_bytes"]
    return found


def tram_name(action, found, label) -> str:
    """The TRAM's name: its property's (checked by `described`), else the action's."""
    if NAME in found:
        return found[NAME]
    problem = _text_problem(action.name)
    if problem:
        raise ObanError(label, f"its name {problem}, and it has no property '{NAME}' to name its TRAM")
    return action.name


def events(action, found, first: int, parts: list, label) -> list[tuple[str, int]]:
    """(marker name, frame of the animation) of the action's markers, `first` its scene frame 0;
    ObanError(label, naming the marker) for an event marker the TRAM cannot hold as it says
    (those of the events as read, `found`'s bytes, are written as read)."""
    markers = [(marker.name, int(round(marker.frame)) - first) for marker in action.pose_markers]
    as_read = set(markers_as_read(found, parts))
    for name, frame in markers:
        kind, colon, rest = name.partition(": ")
        if not colon or kind not in (FOOTSTEP, SOUND, PARTICLE) or (name, frame) in as_read:
            continue   # the user's own, or an event as read
        problem = _event_problem(kind, rest, parts)
        if not U16[0] <= frame <= U16[1]:
            problem = f"is {'before' if frame < 0 else 'past'} what a TRAM can hold: an event is on frame 0 to " \
                      f"65535 from the first frame, {first}"
        if problem:
            raise ObanError(label, f"marker {name!r} on frame {frame + first} {problem}")
    return markers


def _event_problem(kind, rest, parts):
    if kind == SOUND:
        return _name_problem(rest, NAME_BYTES[SOUND], "a sound's name")
    if kind == FOOTSTEP:
        return None if rest in FOOTSTEP_TYPES.values() else _whole_problem(rest, U16, "a footstep's type")
    match = PARTICLE_TEXT.fullmatch(rest)
    if match is None:
        return "is not 'particle: <name>, <part>, to <last frame>[, pad <n>]'"
    part = match["part"]
    return (_name_problem(match["name"], NAME_BYTES[PARTICLE], "a particle's name")
            or (None if part in parts else _whole_problem(part, (0, len(parts) - 1), "its part (a name or number)"))
            or _whole_problem(match["last"], U16, "its last frame")
            or (_whole_problem(match["pad"], U16, "its pad") if match["pad"] else None))


def _name_problem(text, size, what):
    try:
        data = text.encode("latin-1")
    except UnicodeEncodeError:
        return f"holds {what} that is not Latin-1 text, which the TRAM stores"
    if len(data) > size:
        return f"holds {what} of {len(data)} bytes, longer than the {size} the TRAM stores"
    return None


def _whole_problem(text, limits, what):
    if not text.isdigit() or not limits[0] <= int(text) <= limits[1]:
        return f"holds {what} {text!r}, not {limits[0]} to {limits[1]}"
    return None


def _problem(field, value, mask):
    """What is wrong with property tram_<field> (None: nothing, or a property the export does not read)."""
    if field in MOTION or field.endswith("_bytes"):
        return None if field in MOTION or isinstance(value, bytes) else "is not bytes"
    if field == "name":
        return _text_problem(value)
    if field == "frames":
        return _integer_problem(value, (1, 0xFFFF))
    if field == "key_size":
        return None if value in KEY_SIZES and type(value) is int else f"is {value!r}: the engine reads 6 or 16"
    if field == "impact":
        return _name_problem(value, NAME_BYTES["impact"], "an impact name") if isinstance(value, str) \
            else "is not text"
    if field == "final_rotation":
        return _float_problem(value)
    if field == "direct_animations":
        if not isinstance(value, list) or len(value) != 2:
            return "is not two animation names"
        return _first_problem(value, lambda name: _text_problem(name, empty=True))
    if field == "positions":
        if not isinstance(value, list) or len(value) % 4:
            return "is not 4 numbers a frame"
        return _first_problem(value, lambda item: _integer_problem(item, I16))
    if field == "extent_info":
        return _record_problem(value, EXTENT_INFO_DTYPE)
    if field in RECORDS:
        if not isinstance(value, list):
            return "is not a list of records"
        return _first_problem(value, lambda record: _record_problem(record, RECORDS[field]))
    if PREFIX + field in PLAIN_KEYS:
        return _integer_problem(value, INT32 if mask else _limits(RECORD_DTYPE[field]))
    return None


def _record_problem(record, dtype):
    """What is wrong with a record's dict (as tram_properties writes it) for `dtype`, or None."""
    if not isinstance(record, dict):
        return "is not a record"
    for name in dtype.names:
        kind = dtype[name]
        if name not in record:
            return f"has no '{name}'"
        value = record[name]
        if kind.names:
            problem = _record_problem(value, kind)
        elif kind.shape:
            count = int(np.prod(kind.shape))
            problem = (f"is not {count} numbers" if not isinstance(value, list) or len(value) != count else
                       _first_problem(value, lambda item: _value_problem(item, kind.base)))
        else:
            problem = _value_problem(value, kind)
        if problem:
            return f"field '{name}' {problem}"
    return None


def _first_problem(items, problem):
    """'item N <problem>' of the first of `items` with a problem, or None."""
    return next((f"item {n} {found}" for n, found in enumerate(map(problem, items)) if found), None)


def _value_problem(value, kind):
    if kind.kind == "f":
        return _float_problem(value)
    return _integer_problem(value, BITS32 if kind.kind == "u" and kind.itemsize == 4 else _limits(kind))


def _limits(kind):
    info = np.iinfo(kind)
    return int(info.min), int(info.max)


def _integer_problem(value, limits):
    if type(value) is not int:
        return f"is {value!r}, not a whole number"
    if not limits[0] <= value <= limits[1]:
        return f"is {value}, not {limits[0]} to {limits[1]}"
    return None


def _float_problem(value):
    if type(value) not in (int, float):
        return f"is {value!r}, not a number"
    if np.isfinite(value) and abs(value) >= FLOAT32_LIMIT:
        return f"is {value!r}, past what a float32 holds"
    return None


def _text_problem(value, empty=False):
    if not isinstance(value, str) or (not value and not empty):
        return f"is {value!r}, not a name"
    if not PRINTABLE.fullmatch(value) or len(value.encode("latin-1", "replace")) > MAX_NAME:
        return f"is {value!r}: a name is printable and at most {MAX_NAME} characters"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"is {value!r}, not Latin-1 text, which the file's names are"
    return None


def _plain(value):
    """An ID property's value as plain Python: dicts, lists, numbers, text, bytes."""
    if hasattr(value, "to_dict"):
        return {key: _plain(item) for key, item in value.to_dict().items()}
    if hasattr(value, "to_list"):
        return value.to_list()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
