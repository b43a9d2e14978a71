"""A Tram as OniSplit's XML (docs/characters.md 9), laid out as OniSplit v0.9.99.2's `-extract:xml`
writes it (AnimationDatReader, AnimationXmlWriter: a byte-order mark, 4-space indents, LF), with
EKeys for 6-byte keys, QKeys for 16-byte ones, footsteps as elements, `0` for no animation flags,
so that its `-create` reads the file back to the same bytes: the values its reader makes of the
record (`_animation_of`), each float as the shortest text that reads back to its float32, and each
angle it writes in degrees the float32 near its own whose radians are the stored bits (`_inverse`,
the writer's float search); then checked with tram_xml_read's model of `-create` (`tram_of`). What
the XML cannot hold is lost as OniSplit loses it; what OniSplit would refuse or corrupt is a
ValueError.
"""

import bisect
from xml.sax.saxutils import escape

import numpy as np

from ..container.instance_file import instance_name
from ..container.xml_guard import float_texts
from .tram import OVERLAY, Tram
from .write import checked as checked_tram
from .xml_read import tram_of
from .xml_schema import (ANIMATION, ATTACK, ATTACK_FIELDS, BLUR_FIELDS, DAMAGE, DAMAGE_FIELDS, DEGREES, F32, FOOTSTEP,
                         FOOTSTEP_FIELDS, MOTION_BLUR, PARTICLE, PARTICLE_FIELDS, RADIANS, SHORT, SHORTCUT,
                         SHORTCUT_FIELDS, SOUND, SOUND_FIELDS, Group, Leaf, ekey_degrees, extent_angle_codes, round2,
                         rounded, signed16)

INDENT = "    "
SEARCH = np.array([0, -1, 1, -2, 2, -3, 3, -4, 4])     # ulps around OniSplit's own float tried (_inverse)


def tram_xml_bytes(tram: Tram) -> bytes:
    """OniSplit's XML of a Tram, which its -create reads back (docs/characters.md 9). ValueError for
    a Tram that cannot be stored, or that OniSplit would refuse or write wrong; ObanError for a
    direct animation's name no file OniSplit opens can hold (instance_name)."""
    checked_tram(tram)
    try:
        animation = _animation_of(tram)
        text = _render(animation)
        tram_of(animation, tram.name, lambda problem, _=None: _refuse(problem))
    except _CannotHold as error:
        raise ValueError(f"TRAM{tram.name}: {error}") from None
    return text


# ---- what OniSplit's -extract:xml writes ------------------------------------------------------------

class _CannotHold(ValueError):
    pass


def _refuse(problem):
    raise _CannotHold(problem)


def _animation_of(t):
    """What OniSplit's -extract:xml writes for a Tram (AnimationDatReader, then AnimationXmlWriter), as
    read values; a float chosen to read back to the stored bits where OniSplit's own text would not."""
    if t.key_size == 16 and not t.flags & OVERLAY:
        _refuse("16-byte keys without the Overlay flag: OniSplit's -create turns QKeys into EKeys and corrupts "
                "tracks with keys more than a frame apart (docs/characters.md 9)")
    positions = t.positions
    x, z = (F32(positions[field][0]) * F32(0.01) if len(positions) else F32(0) for field in ("x", "z"))
    a = {
        "Lookup": {"Type": t.type, "AimingType": t.aiming_type, "FromState": t.from_state, "ToState": t.to_state,
                   "Varient": t.varient, "FirstLevel": t.first_level,
                   "Shortcuts": _items(t.shortcuts, SHORTCUT, SHORTCUT_FIELDS)},
        "Flags": t.flags, "Atomic": {"Start": t.atomic_start, "End": t.atomic_end},
        "Invulnerable": {"Start": t.invulnerable_start, "End": t.invulnerable_length},
        "Overlay": {"UsedBones": t.used_parts, "ReplacedBones": t.replaced_parts},
        "DirectAnimations": [instance_name("TRAM", name) if name else "" for name in t.direct_animations],
        "Pause": {"Hard": t.hard_pause, "Soft": t.soft_pause},
        "Interpolation": {"End": t.interpolation_end, "Max": t.interpolation_max},
        "FinalRotation": _degrees([t.final_rotation])[0],
        "Direction": t.move_direction, "Vocalization": t.vocalization, "ActionFrame": t.action_frame & 0xFFFF,
        "Impact": _text(t.impact, "the impact name"),
        "Particles": [{**item, "Bone": int(p["part"]) | int(p["pad"]) << 16} for item, p in
                      zip(_items(t.particles, PARTICLE, PARTICLE_FIELDS), t.particles)],
        "MotionBlur": _items(t.motion_blur, MOTION_BLUR, BLUR_FIELDS),
        "Footsteps": _items(t.footsteps, FOOTSTEP, FOOTSTEP_FIELDS),
        "Sounds": _items(t.sounds, SOUND, SOUND_FIELDS),
        "Heights": np.reshape(t.heights, (-1, 1)), "Velocities": np.asarray(t.velocities),
        "Rotations": [_keys(track, t.key_size) for track in t.tracks],
        "PositionOffset": {"X": x, "Z": z},
        "Positions": [{"Height": F32(p["height"]) * F32(0.01), "YOffset": F32(p["y_offset"]) * F32(0.01)}
                      for p in positions],
        "ThrowSource": None if not len(t.throw) else {
            "TargetAdjustment": {"Position": t.throw["offset"][0], "Angle": t.throw["relative_facing"][0]},
            "Distance": t.throw["distance"][0], "TargetType": int(t.throw["type"][0])},
        "SelfDamage": _items(t.self_damage, DAMAGE, DAMAGE_FIELDS),
    }
    if len(t.attacks):
        a["Attacks"] = _xml_attacks(t)
        a["AttackRing"] = np.reshape(t.extent_info["ring"], (-1, 1))
    return a


def _items(records, group, fields):
    """Read values of records (an event array): each element <- its record field (fields)."""
    leaves = {name: leaf for name, leaf, _ in group.children}
    return [{element: _xml_value(element, leaves[element], record[field]) for field, element in fields.items()}
            for record in records]


def _xml_value(element, leaf, stored):
    """A stored field as its element holds it: int16 fields signed (which OniSplit's writer takes,
    where its own unsigned text would not be), names decoded, floats float32."""
    if leaf.kind == "name":
        return _text(stored, f"<{element}>")
    if leaf.kind == "single":
        return F32(stored)
    if leaf.kind == "yes_no":
        return bool(stored)
    return signed16(int(stored)) if leaf is SHORT else int(stored)


def _text(stored, what):
    """A stored name as OniSplit reads it (UTF-8 up to the first NUL); what XML cannot hold is refused."""
    cut = bytes(stored).split(b"\0", 1)[0]
    try:
        text = cut.decode("utf-8")
    except UnicodeDecodeError:
        _refuse(f"{what} {cut!r} is not UTF-8 text, which OniSplit's XML holds")
    if not text.isprintable() or text.isspace():
        _refuse(f"{what} {text!r}: OniSplit's XML holds printable names (a blank one reads as empty)")
    return text


def _keys(track, key_size):
    """A track as rows of [duration, 3 EKey angles and 0, or x y z w, 1 for QKeys]."""
    rows = np.zeros((len(track.frames), 6), np.float32)
    rows[:, 0] = np.append(np.diff(track.frames), 1)
    if key_size == 6:
        rows[:, 1:4] = ekey_degrees(track.values)
    else:
        rows[:, 1:5], rows[:, 5] = track.values, 1
    return rows


def _xml_attacks(t):
    """The attacks as OniSplit writes them, each with the extents on its frames (AnimationDatReader)."""
    extents = _xml_extents(t)
    frames = sorted(extents)
    attacks = []
    for attack, record in zip(_items(t.attacks, ATTACK, ATTACK_FIELDS), t.attacks):
        first, last = int(record["first_frame"]), int(record["last_frame"])   # read unsigned, as OniSplit does
        found = frames[bisect.bisect_left(frames, first):bisect.bisect_right(frames, last)]
        attacks.append({**attack, "Extents": [extents[frame] for frame in found]})
    return attacks


def _xml_extents(t):
    """frame: the extent OniSplit's reader gives that frame (the first raw one): the raw values, or the
    first or max attack bound's on their frames (each keeps one height exact and the other rounded:
    where both lie on one frame, the exact ones), heights set to the extent info's min and max where
    that keeps them (_snapped). A bound's angle is the float32 degrees giving both its radians and the
    raw code back where one does."""
    e, info = t.extents, t.extent_info
    first, far = info["first_attack"], info["max_attack"]
    frames = e["frame"].astype(np.int16).astype(np.int64)     # read signed
    angle = e["angle"].astype(np.float32) * F32(360) / F32(65535)
    length, low, high = (e[field].astype(np.float32) * F32(0.01) for field in ("distance", "min_y", "max_y"))
    at_first = frames == int(first["frame"])
    at_far = (frames == int(far["frame"])) & ~at_first
    both = at_first & (int(first["frame"]) == int(far["frame"]))
    for at, bound in ((at_first, first), (at_far, far)):
        angle[at] = _bound_degrees(np.full(at.sum(), bound["angle"], np.float32), e["angle"][at])
        length[at], low[at], high[at] = bound["distance"], bound["min_height"], bound["max_height"]
    low[both] = far["min_height"]
    low = _snapped(low, info["min_height"], e["min_y"], exact=at_far | both, bound_rounded=at_first & ~both)
    high = _snapped(high, info["max_height"], e["max_y"], exact=at_first, bound_rounded=at_far)
    found = {}
    for n, frame in enumerate(frames.tolist()):
        found.setdefault(frame, {"Angle": angle[n], "Length": length[n], "MinY": low[n], "MaxY": high[n]})
    return found


def _snapped(heights, limit, codes, exact, bound_rounded):
    """Heights set to the extent info's min (or max) `limit` where that keeps their raw code, and a
    bound's rounded height its rounding; a bound's exact height is kept. (OniSplit's reader sets every
    height within 0.01 of it, which loses a bound's exact height.) The extent that was the min stays it."""
    limit = F32(limit)
    with np.errstate(invalid="ignore", over="ignore"):
        keeps = (rounded([limit * F32(100)], codes.dtype)[0] == codes) & ~exact
        keeps &= ~bound_rounded | (round2(limit) == heights)
    return np.where(keeps, limit, heights)


# ---- the float search: degrees that read back to the stored radians --------------------------------

def _degrees(radians):
    """Degrees that OniSplit reads back to the radians, bit for bit, where a float32 does."""
    return _inverse(radians, lambda d: d * RADIANS, lambda r: r * DEGREES)


def _bound_degrees(radians, codes):
    """An attack bound's degrees: its radians back, and the raw extent's angle code, where a float32 does."""
    return _inverse(radians, lambda d: d * RADIANS, lambda r: r * DEGREES,
                    lambda d: extent_angle_codes(d) == codes[:, None])


def _inverse(targets, forward, guess, keep=None):
    """For each float32 target, the float32 within 4 ulps of guess(target) (OniSplit's own value) that
    forward() maps to the target bit for bit (and keep() accepts): the nearest, else the guess (what
    XML cannot hold exactly)."""
    targets = np.asarray(targets, np.float32)
    with np.errstate(all="ignore"):
        guesses = np.asarray(guess(targets), np.float32)
        bits = (guesses.view(np.int32).astype(np.int64)[:, None] + SEARCH) & 0xFFFFFFFF
        candidates = bits.astype(np.uint32).view(np.float32)
        good = forward(candidates).view(np.uint32) == targets.view(np.uint32)[:, None]
        if keep is not None:
            good &= keep(candidates)
    return candidates[np.arange(len(targets)), np.where(good.any(axis=1), good.argmax(axis=1), 0)]


# ---- rendering ------------------------------------------------------------------------------------

def _render(a) -> bytes:
    lines = ['\ufeff<?xml version="1.0" encoding="utf-8"?>', "<Oni>"]
    _render_element(lines, 1, "Animation", ANIMATION, a)
    lines.append("</Oni>")
    return "\n".join(lines).encode("utf-8")


def _render_element(lines, depth, name, spec, value):
    indent = INDENT * depth
    if isinstance(spec, Leaf):
        text = _leaf_text(name, spec, value)
        lines.append(f"{indent}<{name}>{text}</{name}>" if text else f"{indent}<{name} />")
    elif value is None or len(value) == 0:
        lines.append(f"{indent}<{name} />")
    else:
        lines.append(f"{indent}<{name}>")
        if isinstance(spec, Group):
            for child, child_spec, _ in spec.children:
                if child in value:
                    _render_element(lines, depth + 1, child, child_spec, value[child])
        elif spec.packed:
            lines += [f"{indent}{INDENT}<{item}>{text}</{item}>" for item, text in _packed_texts(name, spec, value)]
        else:
            for item in value:
                _render_element(lines, depth + 1, spec.names[0], spec.spec, item)
        lines.append(f"{indent}</{name}>")


def _leaf_text(name, leaf, value):
    if leaf.kind == "whole":
        return str(int(value))
    if leaf.kind == "enum":
        return leaf.arg.text(int(value))
    if leaf.kind == "name":
        return escape(value)
    if leaf.kind == "yes_no":
        return "yes" if value else "no"
    return " ".join(_texts(name, np.ravel(value)))


def _packed_texts(name, spec, rows):
    """(element, text) of each item of a list kept as rows of numbers."""
    if spec.spec.kind != "key":
        texts = np.reshape(_texts(name, np.ravel(rows)), np.shape(rows))
        return [(spec.names[0], " ".join(row)) for row in texts]
    texts = np.reshape(_texts(name, np.ravel(rows[:, 1:5])), (-1, 4))
    return [("QKey", f"{int(row[0])} {' '.join(text)}") if row[5] else ("EKey", f"{int(row[0])} {' '.join(text[:3])}")
            for row, text in zip(rows, texts)]


def _texts(name, values):
    """Texts that OniSplit reads back to the same float32 bits (xml_guard.float_texts), '.0' dropped."""
    values = np.asarray(values, np.float32)
    if not np.isfinite(values).all():
        _refuse(f"<{name}> would hold {values[~np.isfinite(values)][0]}: OniSplit's XML holds finite numbers only")
    return [text[:-2] if text.endswith(".0") else text for text in float_texts(values)]
