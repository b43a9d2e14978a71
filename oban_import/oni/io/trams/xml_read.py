"""OniSplit's XML of a TRAM read as OniSplit v0.9.99.2 builds a .oni from it (docs/characters.md
9): the parser, and the model of what OniSplit's `-create` makes of what it read.

The parser is xml_guard.py's hardened expat, taking the elements in oni/io/trams/xml_schema.py's order,
numbers and enums as XmlConvert and MetaEnum read them; lists of numbers (heights, velocities,
keys) are kept in flat arrays. The model of `-create` (AnimationXmlReader, Animation.ValidateFrames,
AnimationDatWriter) lives here, `tram_of`, as reading gives the Tram `-create` makes of a file, bit
for bit: its float32 arithmetic (EKey degrees to 6-byte codes, degrees to radians, the position
points summed from the velocities, the attack extents and their summary), Mono's rounding, the
events it drops (past the last frame). The writer (oni/io/trams/xml_write.py) runs it on what it writes, so
that it writes nothing `-create` would refuse or store otherwise. What OniSplit throws on (values
its writer refuses, an extent with no position point, a first attack without extents) or would
write wrong (QKeys without the Overlay flag) is refused, and so is what no TRAM holds; each message
names the file and the line.
"""

import os
from array import array
from xml.parsers import expat

import numpy as np

from ....core.errors import ObanError
from ..container.container import short_name
from ..container.xml_guard import GuardedXml, check_size, quote
from .read import check_motion
from .tram import (ATTACK_DTYPE, EXTENT_DTYPE, EXTENT_INFO_DTYPE, FOOTSTEP_DTYPE, MOTION_BLUR_DTYPE, OVERLAY,
                   PARTICLE_DTYPE, POSITION_DTYPE, SELF_DAMAGE_DTYPE, SHORTCUT_DTYPE, SOUND_DTYPE, THROW_DTYPE, Track,
                   Tram)
from .xml_schema import (ALIASES, ANIMATION, ATTACK_FIELDS, BLUR_FIELDS, BONE_KEYS, DAMAGE_FIELDS, F32, FOOTSTEP_FIELDS,
                         LINKS, MAX_FRAMES, MAX_KEYS, PARTICLE_FIELDS, POSITIONS, RADIANS, RING, ROTATIONS,
                         SHORTCUT_FIELDS, SOUND_FIELDS, VELOCITIES, Group, Items, Leaf, ekey_codes, extent_angle_codes,
                         round2, rounded, signed16)

THROW_TARGET = 0x10000                     # AnimationFlags.ThrowTarget: no max attack bound
MAX_ELEMENTS = MAX_KEYS + 16 * MAX_FRAMES  # the keys, and heights, velocities, position points, sounds, extents
FLOAT32_LIMIT = 3.4028235677973366e38      # doubles from here on round to infinity in float32


class _Seen(Exception):
    pass


def looks_like_tram_xml(head: bytes) -> bool:
    """Whether a file's first bytes are OniSplit's XML of a TRAM: <Oni> whose first element is
    <Animation> (an OBAN's is <OBAN>). A DOCTYPE, or anything not well-formed before, says no."""
    names = []

    def start(name, _):
        names.append(name)
        if len(names) == 2:
            raise _Seen

    def doctype(*_):
        raise _Seen

    parser = expat.ParserCreate()
    parser.StartElementHandler, parser.StartDoctypeDeclHandler = start, doctype
    try:
        parser.Parse(head, False)
    except _Seen:
        pass
    except (expat.ExpatError, LookupError, ValueError):
        return False
    return names == ["Oni", "Animation"]


def read_tram_xml(f, path: str, size: int) -> list[Tram]:
    """The TRAM of OniSplit's XML file open as `f` (`size` bytes), as OniSplit's -create makes it:
    a list of one Tram, named after the file (without extension and 'TRAM' prefix). ObanError
    naming the file and the line for what OniSplit refuses or would write wrong."""
    check_size(path, size)
    tram = _TramXml(path).read(f)   # every number finite in float32 (its line said where not)
    check_motion(path, f"TRAM{tram.name}", tram.key_size, tram.heights, tram.velocities, tram.tracks)
    return [tram]


# ---- the parser -------------------------------------------------------------------------------------

class _Open:
    """An element being read: its spec, what it holds so far, the next child expected (groups)."""
    __slots__ = ("name", "spec", "value", "next")

    def __init__(self, name, spec, line):
        self.name, self.spec, self.next = name, spec, 0
        if isinstance(spec, Group):
            self.value = {"@line": line}
        elif isinstance(spec, Items):
            self.value = array("d") if spec.packed else []
        else:
            self.value = None

    def count(self):
        return len(self.value) // self.spec.packed if self.spec.packed else len(self.value)


class _TramXml(GuardedXml):
    max_elements = MAX_ELEMENTS

    def __init__(self, path):
        super().__init__(path)
        self.open = []          # from <Animation> down
        self.tram = None
        self.frames = 0         # F, once <Velocities> is read
        self.key_name = None    # EKey or QKey, once a key is read
        self.rotation_size = 0  # bytes of the parts' keys read so far

    def read(self, f):
        self.parse(f)
        if self.tram is None:
            raise ObanError(self.path, "no <Animation> element")
        return self.tram

    def fail_at(self, problem, where=None):
        self.fail(problem, where.get("@line") if where else None)

    def start(self, name, attributes, level):
        if level == 0:
            if name != "Oni":
                raise ObanError(self.path, f"not an OniSplit XML file: root element is <{name}>")
            return
        if level == 1:
            if name != "Animation" or self.tram is not None:
                self.fail(f"unexpected <{name}> in <Oni>: a TRAM file holds one <Animation> and nothing else")
            spec = ANIMATION
        else:
            spec = self.child(self.open[-1], name, attributes)
        self.open.append(_Open(name, spec, self.parser.CurrentLineNumber))
        if isinstance(spec, Leaf):
            self.start_text()

    def child(self, parent, name, attributes):
        """The spec of child `name` of `parent`, which OniSplit reads in a fixed order."""
        if name in ("Import", "DaeImport") and parent.spec is ANIMATION:
            self.fail(f"<{name}>: an animation OniSplit imports from a Collada file is not supported")
        if ALIASES.get(name, name) == "AttackRing" and parent.spec is ANIMATION and "Attacks" not in parent.value:
            self.fail(f"<{name}> without <Attacks>: OniSplit reads the ring only after the attacks")
        if name == "Footstep" and attributes:
            self.fail("<Footstep> with attributes: OniSplit's reader throws on them (docs/characters.md 9); "
                      "give <Frame> and <Type> elements")
        spec = parent.spec
        if spec is ROTATIONS:
            self.check_rotation_size(parent.count())
        if isinstance(spec, Items):
            if name not in spec.names:
                self.fail(f"unexpected <{name}> in <{parent.name}>")
            if parent.count() == spec.limit:
                self.fail(f"more than {spec.limit} <{name}> in <{parent.name}>")
            return spec.spec
        names = [child for child, _, _ in spec.children]
        wanted = ALIASES.get(name, name)
        if wanted in names[parent.next:]:
            at = names.index(wanted, parent.next)
            missing = [child for child, _, optional in spec.children[parent.next:at] if not optional]
            if missing:
                self.fail(f"missing <{missing[0]}> before <{name}>")
            parent.next = at + 1
            return spec.children[at][1]
        if wanted in parent.value:
            self.fail(f"<{name}> given twice in <{parent.name}>")
        if wanted in names:
            self.fail(f"<{name}> out of order in <{parent.name}> (OniSplit reads its elements in order)")
        self.fail(f"unexpected <{name}> in <{parent.name}>")

    def end(self, name, level):
        if level == 0:
            return
        node = self.open.pop()
        value = self.finish(node)
        if level == 1:
            stem = os.path.splitext(os.path.basename(self.path))[0]
            self.tram = tram_of(value, short_name(stem, "TRAM"), self.fail_at)
        elif isinstance(self.open[-1].spec, Items) and self.open[-1].spec.packed:
            self.open[-1].value.extend(value)
        elif isinstance(self.open[-1].spec, Items):
            self.open[-1].value.append(value)
        else:
            self.open[-1].value[ALIASES.get(name, name)] = value

    def finish(self, node):
        spec = node.spec
        if isinstance(spec, Leaf):
            return getattr(self, "read_" + spec.kind)(node.name, self.take_text(), spec.arg)
        if isinstance(spec, Group):
            if node.next == 0 and spec.may_be_empty:
                return None
            missing = [child for child, _, optional in spec.children[node.next:] if not optional]
            if missing:
                self.fail(f"missing <{missing[0]}> in <{node.name}>")
            return node.value
        value = np.frombuffer(node.value, np.float64).reshape(-1, spec.packed) if spec.packed else node.value
        self.check_list(node, value)
        return value

    def check_list(self, node, value):
        """OniSplit's checks of a list, and the counts a Tram needs."""
        spec, count = node.spec, len(value)
        if spec is VELOCITIES:
            heights = len(self.open[-1].value["Heights"])
            if count == 0:
                self.fail("no <Velocity>: an animation has at least one frame")
            if heights != count:
                self.fail(f"{heights} <Height> for {count} <Velocity>: one of each per frame")
            self.frames = count
        elif spec is BONE_KEYS:
            self.check_track(len(self.open[-1].value), value[:, 0])
        elif spec is ROTATIONS and count == 0:
            self.fail("no <Bone> in <Rotations>")
        elif spec is POSITIONS and count not in (0, self.frames):
            self.fail(f"{count} <Position> for {self.frames} frames: none, or one per frame")
        elif spec is LINKS and count != 2:
            self.fail(f"{count} <Link> in <DirectAnimations>: OniSplit reads two")
        elif spec is LINKS and "TRAM" in value:
            self.fail("a <Link> of just 'TRAM' names no animation")
        elif spec is RING and count != 36:
            self.fail(f"{count} <Length> in <{node.name}>: OniSplit reads 36")

    def check_rotation_size(self, part):
        """Before a part's keys: whether a u16 offset can reach them (keeps the time spent bounded; the
        exact check is _tracks')."""
        start = 2 * (part + 1) + self.rotation_size
        if start > 0xFFFF:
            self.fail(f"part {part}'s keys would start at byte {start} or later of the rotation data, past what a "
                      "u16 offset reaches (OniSplit would write a wrong offset)")

    def check_track(self, part, durations):
        self.rotation_size += len(durations) * (17 if self.key_name == "QKey" else 7) - 1
        total = int(durations.sum())
        if total != self.frames:
            self.fail(f"part {part}'s key durations sum to {total}, not the {self.frames} frames of <Velocities>")
        if durations[-1] != 1:
            self.fail(f"part {part}'s last key lasts {int(durations[-1])} frames: OniSplit writes no duration for "
                      f"the last key, so it must be 1 (the keys would end at frame {total - int(durations[-1])}, "
                      f"not the last frame {total - 1})")

    # ---- values, as OniSplit's XmlConvert and MetaEnum read them ----------------------------------

    def read_whole(self, name, text, limits):
        return self.whole(name, text, limits[1], limits[0])

    def read_single(self, name, text, _):
        return self.read_floats(name, text, 1)[0]

    def read_floats(self, name, text, count):
        """Doubles that are finite in float32 (text -> double -> float32, as XmlConvert.ToSingle)."""
        values = self.numbers(name, text, count)
        if not all(abs(value) < FLOAT32_LIMIT for value in values):
            self.fail(f"<{name}> {quote(text.strip())} is not finite in float32", self.text_line)
        return values

    def read_enum(self, name, text, enum):
        words = text.split()
        if not words:
            if enum.flags and 0 in enum.names:
                return 0
            self.fail(f"<{name}> is empty: OniSplit needs a name or a number" + (" (0 for none)" * enum.flags),
                      self.text_line)
        if words[0][0] in "+-0123456789":
            if len(words) > 1:
                self.fail(f"<{name}> {quote(text.strip())}: one number, or names", self.text_line)
            return self.whole(name, words[0], enum.high, enum.low) & 0xFFFFFFFF
        value = 0
        for word in words:
            if word.lower() not in enum.values:
                self.fail(f"<{name}> {quote(word)} is not one of OniSplit's names for it (onisplit -help enums)",
                          self.text_line)
            value |= enum.values[word.lower()]
        return value

    def read_name(self, name, text, limit):
        text = "" if text.isspace() else text   # OniSplit's reader drops blank text
        if limit and len(text.encode("utf-8")) > limit:
            self.fail(f"<{name}> {quote(text)} is longer than {limit} bytes (UTF-8): OniSplit cannot write it",
                      self.text_line)
        return text

    def read_yes_no(self, name, text, _):
        if text not in ("yes", "no"):
            self.fail(f"<{name}> {quote(text)}: yes or no (OniSplit reads anything but yes as no)", self.text_line)
        return text == "yes"

    def read_key(self, name, text, _):
        """[duration, 3 angles and 0 (EKey) or x y z w (QKey), 1 for a QKey]."""
        quaternion = name == "QKey"
        words = text.split()
        if len(words) != 4 + quaternion:
            self.fail(f"<{name}> needs {4 + quaternion} numbers (a duration, then "
                      f"{'x y z w' if quaternion else '3 angles'}), found {len(words)}", self.text_line)
        duration = self.whole(name, words[0], 0xFF)
        if duration == 0:
            self.fail(f"<{name}> lasts 0 frames: keys are 1 to 255 frames apart", self.text_line)
        self.check_key_kind(name)
        values = self.read_floats(name, " ".join(words[1:]), 3 + quaternion)
        return [duration, *values, *([] if quaternion else [0.0]), float(quaternion)]

    def check_key_kind(self, name):
        if self.key_name is None:
            self.key_name = name
            if name == "QKey" and not self.open[0].value["Flags"] & OVERLAY:
                self.fail("<QKey> in an animation without the Overlay flag: OniSplit's -create turns such keys "
                          "into EKeys and corrupts tracks with keys more than a frame apart (docs/characters.md 9); "
                          "write EKeys", self.text_line)
        elif name != self.key_name:
            self.fail(f"<{name}> among <{self.key_name}>: one animation's keys are all EKeys or all QKeys",
                      self.text_line)


# ---- what OniSplit's -create makes of it -------------------------------------------------------------

def tram_of(a, name, fail) -> Tram:
    """The Tram OniSplit's -create makes of a read <Animation> `a` (docs/characters.md 9).
    fail(problem, element) refuses what OniSplit throws on, or would write wrong."""
    heights = a["Heights"][:, 0].astype(np.float32)
    velocities = np.ascontiguousarray(a["Velocities"], np.float64).astype(np.float32)
    frames = len(velocities)
    attacks = [attack for attack in a.get("Attacks", ()) if attack["Start"] < frames]   # ValidateFrames
    positions, x, z = _positions(a["Positions"], a.get("PositionOffset"), velocities)
    extents, extent_info = _extents(a, attacks, (x, z, heights), fail)
    tracks = _tracks(a["Rotations"], fail)
    lookup, particles = a["Lookup"], [p for p in a["Particles"] if p["Start"] < frames]
    return Tram(
        name=name, frames=frames, key_size=16 if a["Rotations"][0][0, 5] else 6, flags=a["Flags"],
        used_parts=a["Overlay"]["UsedBones"], replaced_parts=a["Overlay"]["ReplacedBones"], heights=heights,
        velocities=velocities, tracks=tracks, positions=positions,
        attacks=_records(ATTACK_DTYPE, attacks, ATTACK_FIELDS),
        self_damage=_records(SELF_DAMAGE_DTYPE, [d for d in a["SelfDamage"] if d["Frame"] <= frames], DAMAGE_FIELDS),
        motion_blur=_records(MOTION_BLUR_DTYPE, a["MotionBlur"], BLUR_FIELDS),
        shortcuts=_records(SHORTCUT_DTYPE, lookup["Shortcuts"], SHORTCUT_FIELDS), throw=_throw(a.get("ThrowSource")),
        footsteps=_records(FOOTSTEP_DTYPE, [s for s in a["Footsteps"] if s["Frame"] < frames], FOOTSTEP_FIELDS),
        particles=_particles(particles), extents=extents, extent_info=extent_info,
        sounds=_records(SOUND_DTYPE, [s for s in a["Sounds"] if s["Start"] < frames], SOUND_FIELDS),
        direct_animations=tuple(short_name(link, "TRAM") for link in a["DirectAnimations"]),
        final_rotation=F32(a["FinalRotation"]) * RADIANS, impact=a["Impact"].encode("utf-8").ljust(16, b"\0"),
        move_direction=a["Direction"], vocalization=a["Vocalization"], hard_pause=a["Pause"]["Hard"],
        soft_pause=a["Pause"]["Soft"], type=lookup["Type"], aiming_type=lookup["AimingType"],
        from_state=lookup["FromState"], to_state=lookup["ToState"], duration=frames, varient=lookup["Varient"],
        atomic_start=a["Atomic"]["Start"], atomic_end=a["Atomic"]["End"],
        interpolation_end=a["Interpolation"]["End"], interpolation_max=a["Interpolation"]["Max"],
        action_frame=signed16(a["ActionFrame"]), first_level=lookup["FirstLevel"],
        invulnerable_start=a["Invulnerable"]["Start"], invulnerable_length=a["Invulnerable"]["End"])


def _records(dtype, items, fields):
    """A structured array of read items: record field <- item's element (fields), integers kept to
    their field's width as OniSplit's writer casts them, floats float32, names UTF-8."""
    out = np.zeros(len(items), dtype)
    for field, element in fields.items():
        values = [item[element] for item in items]
        kind = dtype.fields[field][0]
        if kind.kind in "iu":
            out[field] = np.array(values, np.int64).astype(kind)
        elif kind.kind == "f":
            out[field] = np.array(values, np.float64).astype(np.float32)
        else:
            out[field] = [value.encode("utf-8") for value in values]
    return out


def _particles(items):
    out = _records(PARTICLE_DTYPE, items, PARTICLE_FIELDS)
    bones = np.array([item["Bone"] for item in items], np.int64)
    out["part"], out["pad"] = bones & 0xFFFF, bones >> 16
    return out


def _throw(throw):
    out = np.zeros(0 if throw is None else 1, THROW_DTYPE)
    if throw is not None:
        target = throw["TargetAdjustment"]
        out["offset"] = np.array(target["Position"], np.float64).astype(np.float32)
        out["relative_facing"], out["distance"] = F32(target["Angle"]), F32(throw["Distance"])
        out["type"] = throw["TargetType"]
    return out


def _positions(points, offset, velocities):
    """The position points OniSplit writes (docs/characters.md 2), and their x and z before rounding: the first from
    <PositionOffset>, each next one the last plus the velocity (float32)."""
    out = np.zeros(len(points), POSITION_DTYPE)
    if not points:
        return out, np.zeros(0, np.float32), np.zeros(0, np.float32)
    first = [offset["X"], offset["Z"]] if offset else [0.0, 0.0]
    steps = np.concatenate([np.array([first], np.float64).astype(np.float32), velocities[:len(points) - 1]])
    x, z = np.add.accumulate(steps, axis=0).T
    sizes = np.array([[p["Height"], p["YOffset"]] for p in points], np.float64).astype(np.float32)
    for field, values in (("x", x), ("z", z), ("height", sizes[:, 0]), ("y_offset", sizes[:, 1])):
        out[field] = rounded(values * F32(100), POSITION_DTYPE[field])
    return out, x, z


def _tracks(bones, fail):
    """Each part's keys: frames from the durations; 6-byte codes from EKey degrees (ekey_codes), QKeys
    as written (OniSplit negates w on reading and again on writing: -0 becomes 0)."""
    tracks = []
    for keys in bones:
        frames = np.concatenate([[0], np.cumsum(keys[:-1, 0].astype(np.int64))])
        if keys[0, 5]:
            values = keys[:, 1:5].astype(np.float32)
            values[:, 3] = F32(0) - (F32(0) - values[:, 3])
        else:
            values = ekey_codes(keys[:, 1:4])
        tracks.append(Track(frames=frames, values=values))
    size = 17 if bones[0][0, 5] else 7
    starts = 2 * len(bones) + np.cumsum([len(keys) * size - 1 for keys in bones[:-1]])
    if len(starts) and starts[-1] > 0xFFFF:
        fail(f"part {len(bones) - 1}'s keys would start at byte {starts[-1]} of the rotation data, past what "
             "a u16 offset reaches (OniSplit would write a wrong offset)")
    return tracks


def _extents(a, attacks, place, fail):
    """The raw extents and the extent info OniSplit writes (AnimationDatWriter's GenerateExtentSummary):
    each attack's extents on its frames from its start; the ring as read; the first extent, and the
    one reaching farthest forward (length + z), as the attack bounds."""
    info = np.zeros((), EXTENT_INFO_DTYPE)
    info["min_height"], info["max_height"] = 1e9, -1e9
    info["first_attack"]["frame"] = info["max_attack"]["frame"] = 0xFFFF   # frame -1: none
    if a.get("Attacks") and "AttackRing" in a:
        info["ring"] = a["AttackRing"][:, 0].astype(np.float32)
    if not attacks:
        return np.zeros(0, EXTENT_DTYPE), info
    if not attacks[0].get("Extents"):
        fail("the first attack has no <Extents>: OniSplit computes them from a body, which its -create of a "
             "TRAM file has not (it fails)", attacks[0])
    rows = [(attack, attack["Start"] + k, extent) for attack in attacks for k, extent in
            enumerate(attack.get("Extents") or ())]
    frames = np.array([frame for _, frame, _ in rows])
    _check_extent_frames(rows, frames, len(place[0]), fail)
    values = np.array([[e["Angle"], e["Length"], e["MinY"], e["MaxY"]] for _, _, e in rows]).astype(np.float32)
    angle, length, low, high = values.T
    far = int(np.argmax(length + place[1][frames]))   # the first of the farthest
    attack, start = next(((n, other["Start"]) for n, other in enumerate(attacks)
                          if other["Start"] <= frames[far] <= other["End"]), (0, frames[far]))
    if frames[far] - start > 0xFF:
        fail(f"the farthest extent lies {frames[far] - start} frames into its attack: OniSplit stores up to 255 "
             "(it fails)", rows[far][0])
    info["max_distance"], info["min_height"], info["max_height"] = info["ring"].max(), low.min(), high.max()
    _bound(info["first_attack"], frames[0], 0, 0, place, (length[0], round2(low[0]), high[0], angle[0]))
    if not a["Flags"] & THROW_TARGET:
        _bound(info["max_attack"], frames[far], attack, frames[far] - start, place,
               (length[far], low[far], round2(high[far]), angle[far]))
    out = np.zeros(len(rows), EXTENT_DTYPE)
    out["frame"] = frames
    out["angle"] = extent_angle_codes(angle)
    out["distance"] = rounded(length * F32(100), np.uint16)
    out["min_y"], out["max_y"] = rounded(low * F32(100), np.int16), rounded(high * F32(100), np.int16)
    return out, info


def _check_extent_frames(rows, frames, points, fail):
    """OniSplit fails on an extent whose frame has no position point, or is past 32767 (an int16)."""
    bad = np.flatnonzero((frames < 0) | (frames >= points) | (frames > 0x7FFF))
    if bad.size:
        attack, frame, _ = rows[bad[0]]
        problem = ("lies past frame 32767, the last OniSplit stores" if frame > 0x7FFF else
                   "has no position point" if points else "has no position point (there are none)")
        fail(f"the extent on frame {frame} (of the attack from frame {attack['Start']}) {problem}: OniSplit fails "
             "on it", attack)


def _bound(bound, frame, attack, offset, place, values):
    """An attack bound of the extent info: its frame, attack, frame in the attack, the character's
    place then (x, -z, height), the extent's length, heights and angle in radians."""
    x, z, heights = place
    bound["frame"], bound["attack"], bound["extent"] = frame, attack, offset
    bound["position"] = (x[frame], F32(0) - z[frame], heights[frame])
    length, low, high, angle = values
    bound["distance"], bound["min_height"], bound["max_height"], bound["angle"] = length, low, high, angle * RADIANS
