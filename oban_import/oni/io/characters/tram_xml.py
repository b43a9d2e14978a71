"""OniSplit's XML for a character animation (TRAM, docs/characters.md 9), read as OniSplit v0.9.99.2
builds a .oni from it (`-create`: AnimationXmlReader, Animation.ValidateFrames, AnimationDatWriter)
and written as it extracts one (`-extract:xml`: AnimationDatReader, AnimationXmlWriter), so that
OniSplit reads the file back; facts from OniSplit's source.

Reading gives the Tram OniSplit's -create makes of the file, bit for bit: its enums by name, its
float32 arithmetic (EKey degrees to 6-byte codes, degrees to radians, the position points summed
from the velocities, the attack extents and their summary), Mono's rounding (half to even, then the
low 16 bits of the int32), the events it drops (past the last frame). What OniSplit throws on
(values its writer refuses, an extent with no position point, a first attack without extents) or
would write wrong (QKeys without the Overlay flag, spec 7.4) is refused, and so is what no TRAM
holds; each message names the file and the line. Parsed with xml_guard.py's hardened expat; lists
of numbers (heights, velocities, keys) are kept in flat arrays.

Writing gives the XML laid out as OniSplit writes it (4-space indents, LF, a byte-order mark), with
EKeys for 6-byte keys, QKeys for 16-byte ones, footsteps as elements, `0` for no animation flags,
and each float the float32 that reads back to the stored bits where OniSplit's own text would not.
What the XML cannot hold is lost as OniSplit loses it (docs/characters.md 9); what OniSplit would
refuse or corrupt is a ValueError.
"""

import bisect
import os
from array import array
from dataclasses import dataclass
from xml.parsers import expat
from xml.sax.saxutils import escape

import numpy as np

from ....core.errors import ObanError
from ..container.xml_guard import GuardedXml, check_size, float_texts, quote
from .model import PART_NAMES
from .tram import (ATTACK_DTYPE, EXTENT_DTYPE, EXTENT_INFO_DTYPE, FOOTSTEP_DTYPE, MAX_PARTS, MOTION_BLUR_DTYPE, OVERLAY,
                   PARTICLE_DTYPE, POSITION_DTYPE, SELF_DAMAGE_DTYPE, SHORTCUT_DTYPE, SOUND_DTYPE, THROW_DTYPE, Track,
                   Tram)
from .tram_write import checked as checked_tram

F32 = np.float32
DEGREES, RADIANS = F32(57.295773), F32(0.017453294)   # OniSplit's MathHelper.ToDegrees, ToRadians (float32)
EKEY_SCALE = F32(32767.5)                              # degrees = int16(code) * 180 / 32767.5 (spec 7.1)
THROW_TARGET = 0x10000                                 # AnimationFlags.ThrowTarget: no max attack bound
MAX_FRAMES = 0xFFFF                                    # frames, and a cap on the sounds and each attack's extents
MAX_KEYS = MAX_FRAMES + 0xFFFF // 7                    # the last part's on every frame, the others' within u16 offsets
MAX_ELEMENTS = MAX_KEYS + 16 * MAX_FRAMES              # and heights, velocities, position points, sounds, extents
FLOAT32_LIMIT = 3.4028235677973366e38                  # doubles from here on round to infinity in float32
INDENT = "    "
SEARCH = np.array([0, -1, 1, -2, 2, -3, 3, -4, 4])     # ulps around OniSplit's own float tried by the writer


# ---- OniSplit's enums (Oni.Totoro), by value -------------------------------------------------------

class _Enum:
    """An enum read as OniSplit's MetaEnum.Parse reads it (names in any case, separated by blanks and
    OR-ed, or one number in [low, high]; an empty text is None where the enum has it) and written as
    its MetaEnum.ToString writes it ([Flags]: names in rising order, '' for None, the number where a
    bit has no name)."""

    def __init__(self, names: dict, low: int, high: int, flags=False):
        self.names = names                                  # value -> name
        self.values = {name.lower(): value for value, name in names.items()}
        self.low, self.high, self.flags = low, high, flags

    def text(self, bits: int) -> str:
        value = bits - (1 << 32) if self.low < 0 and bits >= 1 << 31 else bits   # an int enum's u32 bits
        if not self.flags:
            return self.names.get(value, str(value))
        if value == 0:
            return "" if 0 in self.names else "0"
        named = [bit for bit in self.names if bit and value & bit == bit]
        return " ".join(self.names[bit] for bit in named) if sum(named) == value else str(value)


def _sequence(names):
    return dict(enumerate(names.split()))


def _bits(names, none=True):
    return ({0: "None"} if none else {}) | {1 << bit: name for bit, name in enumerate(names.split())}


I32, U16 = (-(1 << 31), (1 << 31) - 1), (0, 0xFFFF)   # an int enum's range; a u16 field's
TYPES = _Enum(_sequence(
    "None Anything Walk Run Slide Jump Stand StandingTurnLeft StandingTurnRight RunBackwards RunSidestepLeft "
    "RunSidestepRight Kick WalkSidestepLeft WalkSidestepRight WalkBackwards Stance Crouch JumpForward "
    "JumpBackward JumpLeft JumpRight Punch Block Land Fly KickForward KickLeft KickRight KickBack KickLow "
    "PunchForward PunchLeft PunchRight PunchBack PunchLow Kick2 Kick3 Punch2 Punch3 LandForward LandRight "
    "LandLeft LandBack PPK PKK PKP KPK KPP KKP PK KP PunchHeavy KickHeavy PunchForwardHeavy KickForwardHeavy "
    "AimingOverlay HitOverlay CrouchRun CrouchWalk CrouchRunBackwards CrouchWalkBackwards CrouchRunSidestepLeft "
    "CrouchRunSidestepRight CrouchWalkSidestepLeft CrouchWalkSidestepRight RunKick RunPunch RunBackPunch "
    "RunBackKick SidestepLeftKick SidestepLeftPunch SidestepRightKick SidestepRightPunch Prone Flip HitHead "
    "HitBody HitFoot KnockdownHead KnockdownBody KnockdownFoot HitCrouch KnockdownCrouch HitFallen HitHeadBehind "
    "HitBodyBehind HitFootBehind KnockdownHeadBehind KnockdownBodyBehind KnockdownFootBehind HitCrouchBehind "
    "KnockdownCrouchBehind Idle Taunt Throw Thrown1 Thrown2 Thrown3 Thrown4 Thrown5 Thrown6 Special1 Special2 "
    "Special3 Special4 ThrowForwardPunch ThrowForwardKick ThrowBackwardPunch ThrowBackwardKick "
    "RunThrowForwardPunch RunThrowBackwardPunch RunThrowForwardKick RunThrowBackwardKick Thrown7 Thrown8 Thrown9 "
    "Thrown10 Thrown11 Thrown12 StartleLeft StartleRight Sit StandSpecial Act Kick3Fw HitFootOuch HitJewels "
    "Thrown13 Thrown14 Thrown15 Thrown16 Thrown17 PPKK PPKKK PPKKKK LandHard LandHardForward LandHardRight "
    "LandHardLeft LandHardBack LandDead CrouchTurnLeft CrouchTurnRight CrouchForward CrouchBack CrouchLeft "
    "CrouchRight GetupKickBack AutopistolRecoil PhaseRifleRecoil PhaseStreamRecoil SuperballRecoil "
    "VandegrafRecoil ScramCannonRecoil MercuryBowRecoil ScreamerRecoil PickupObject PickupPistol PickupRifle "
    "Holster DrawPistol DrawRifle Punch4 ReloadPistol ReloadPhaseRifle ReloadPhaseStream ReloadSuperball "
    "ReloadVandegraf ReloadScramCannon ReloadMercuryBow ReloadScreamer PfPf PfPfPf PlPl PlPlPl PrPr PrPrPr PbPb "
    "PbPbPb PdPd PdPdPd KfKf KfKfKf KlKl KlKlKl KrKr KrKrKr KbKb KbKbKb KdKd KdKdKd StartleLt StartleRt StartleBk "
    "StartleFw Console ConsoleWalk Stagger Watch ActNo ActYes ActTalk ActShrug ActShout ActGive RunStop WalkStop "
    "RunStart WalkStart RunBackwardsStart WalkBackwardsStart Stun StaggerBehind Blownup BlownupBehind OneStepStop "
    "RunSidestepLeftStart RunSidestepRightStart Powerup FallingFlail ConsolePunch TeleportIn TeleportOut "
    "NinjaFireball NinjaInvisible PunchRifle PickupObjectMid PickupPistolMid PickupRifleMid Hail MuroThunderbolt "
    "HitOverlayAI"), *U16)
STATES = _Enum(_sequence(   # an int in OniSplit, written as a u16: numbers past 65535 are refused
    "None Anything RunningLeftDown RunningRightDown Sliding WalkingLeftDown WalkingRightDown Standing RunStart "
    "RunAccel RunSidestepLeft RunSidestepRight RunSlide RunJump RunJumpLand RunBackStart RunningBackRightDown "
    "RunningBackLeftDown FallenBack Crouch RunningUpstairRightDown RunningUpstairLeftDown SidestepLeftLeftDown "
    "SidestepLeftRightDown SidestepRightLeftDown SidestepRightRightDown SidestepRightJump SidestepLeftJump "
    "JumpForward JumpUp RunBackSlide LieBack SsLtStart SsRtStart WalkingSidestepLeft CrouchWalk "
    "WalkingSidestepRight Flying Falling FlyingForward FallingForward FlyingBack FallingBack FlyingLeft "
    "FallingLeft FlyingRight FallingRight CrouchStart WalkingBackLeftDown WalkingBackRightDown FallenFront "
    "SidestepLeftStart SidestepRightStart Sit PunchLow StandSpecial Acting CrouchRunLeft CrouchRunRight "
    "CrouchRunBackLeft CrouchRunBackRight Blocking1 Blocking2 Blocking3 CrouchBlocking1 Gliding WatchIdle Stunned "
    "Powerup Thunderbolt"), *U16)
DIRECTIONS = _Enum(_sequence("None Forward Backward Left Right"), *U16)
BONE = _Enum(dict(enumerate(PART_NAMES)), *I32)      # a particle's part: u16 part and u16 pad as one u32
ANIMATION_FLAGS = _Enum(_bits(   # no None: OniSplit writes 0 as "0" and refuses an empty <Flags> (spec 7.4)
    "RuntimeLoaded Invulnerable BlockHigh BlockLow Attack DropWeapon InAir Atomic NoTurn AttackForward AttackLeft "
    "AttackRight AttackBackward Overlay DontInterpolateVelocity ThrowSource ThrowTarget RealWorld DoAim DontAim "
    "CanPickup Aim360 DisableShield NoAIPickup", none=False), *I32, flags=True)
VARIENTS = _Enum({0: "None", 0x100: "Sprint", 0x200: "Combat", 0x800: "RightPistol", 0x1000: "LeftPistol",
                  0x2000: "RightRifle", 0x4000: "LeftRifle", 0x8000: "Panic"}, *U16, flags=True)
ATTACK_FLAGS = _Enum(_bits("Unblockable High Low HalfDamage"), *I32, flags=True)
BONE_MASK = _Enum(_bits(" ".join(PART_NAMES)), 0, 0xFFFFFFFF, flags=True)
FOOTSTEP_TYPES = _Enum(_bits("Left Right"), *U16, flags=True)


# ---- the file's structure, in OniSplit's order ---------------------------------------------------------

OPTIONAL = "optional"


@dataclass(frozen=True)
class _Leaf:
    kind: str            # how its text is read (_TramXml.read_<kind>) and written (_leaf_text)
    arg: object = None   # (low, high), a count of numbers, an _Enum, a byte limit


@dataclass(frozen=True)
class _Group:
    children: tuple               # (name, spec, optional) in the order OniSplit reads them
    may_be_empty: bool = False    # an empty element stands for none (<ThrowSource />)


@dataclass(frozen=True)
class _Items:
    names: tuple         # the items' element names
    spec: object
    limit: int           # at most this many: what OniSplit can write (u8 counts), or a cap
    packed: int = 0      # numbers per item, kept in one flat array


def _group(*children, may_be_empty=False):
    """children: (name, spec) or (name, spec, OPTIONAL)."""
    return _Group(tuple((child[0], child[1], OPTIONAL in child[2:]) for child in children), may_be_empty)


def _whole(low, high):
    return _Leaf("whole", (low, high))


BYTE, WORD, SHORT = _whole(0, 0xFF), _whole(*U16), _whole(-0x8000, 0x7FFF)   # WriteByte, WriteUInt16, WriteInt16
SINGLE, YES_NO = _Leaf("single"), _Leaf("yes_no")
HEIGHTS = _Items(("Height",), _Leaf("floats", 1), MAX_FRAMES, packed=1)
VELOCITIES = _Items(("Velocity",), _Leaf("floats", 2), MAX_FRAMES, packed=2)
BONE_KEYS = _Items(("EKey", "QKey"), _Leaf("key"), MAX_FRAMES, packed=6)   # duration, 3 or 4 numbers, is QKey
ROTATIONS = _Items(("Bone",), BONE_KEYS, MAX_PARTS)
POSITIONS = _Items(("Position",), _group(("Height", SINGLE), ("YOffset", SINGLE)), MAX_FRAMES)
LINKS = _Items(("Link",), _Leaf("name"), 2)
RING = _Items(("Length",), _Leaf("floats", 1), 36, packed=1)
SHORTCUT = _group(("FromState", _Leaf("enum", STATES)), ("Length", WORD), ("ReplaceAtomic", YES_NO))
PARTICLE = _group(("Start", WORD), ("End", WORD), ("Bone", _Leaf("enum", BONE)), ("Name", _Leaf("name", 16)))
MOTION_BLUR = _group(("Bones", _Leaf("enum", BONE_MASK)), ("Start", WORD), ("End", WORD), ("Lifetime", BYTE),
                     ("Alpha", BYTE), ("Interval", BYTE))
FOOTSTEP = _group(("Frame", WORD), ("Type", _Leaf("enum", FOOTSTEP_TYPES)))
SOUND = _group(("Name", _Leaf("name", 32)), ("Start", WORD))
DAMAGE = _group(("Points", WORD), ("Frame", WORD))
THROW = _group(("TargetAdjustment", _group(("Position", _Leaf("floats", 3)), ("Angle", SINGLE))),
               ("Distance", SINGLE), ("TargetType", _Leaf("enum", TYPES)), may_be_empty=True)
EXTENT = _group(("Angle", SINGLE), ("Length", SINGLE), ("MinY", SINGLE), ("MaxY", SINGLE))
ATTACK = _group(("Start", SHORT), ("End", SHORT), ("Bones", _Leaf("enum", BONE_MASK)),
                ("Flags", _Leaf("enum", ATTACK_FLAGS)), ("Knockback", SINGLE), ("HitPoints", SHORT),
                ("HitType", _Leaf("enum", TYPES)), ("HitLength", SHORT), ("StunLength", SHORT),
                ("StaggerLength", SHORT), ("Extents", _Items(("Extent",), EXTENT, MAX_FRAMES), OPTIONAL))
ANIMATION = _group(
    ("Lookup", _group(("Type", _Leaf("enum", TYPES)), ("AimingType", _Leaf("enum", TYPES)),
                      ("FromState", _Leaf("enum", STATES)), ("ToState", _Leaf("enum", STATES)),
                      ("Varient", _Leaf("enum", VARIENTS)), ("FirstLevel", WORD),
                      ("Shortcuts", _Items(("Shortcut",), SHORTCUT, 0xFF)))),
    ("Flags", _Leaf("enum", ANIMATION_FLAGS)),
    ("Atomic", _group(("Start", WORD), ("End", WORD))),
    ("Invulnerable", _group(("Start", BYTE), ("End", BYTE))),
    ("Overlay", _group(("UsedBones", _Leaf("enum", BONE_MASK)), ("ReplacedBones", _Leaf("enum", BONE_MASK)))),
    ("DirectAnimations", LINKS),
    ("Pause", _group(("Hard", WORD), ("Soft", WORD))),
    ("Interpolation", _group(("End", WORD), ("Max", WORD))),
    ("FinalRotation", SINGLE), ("Direction", _Leaf("enum", DIRECTIONS)), ("Vocalization", WORD),
    ("ActionFrame", WORD), ("Impact", _Leaf("name", 16)),
    ("Particles", _Items(("Particle",), PARTICLE, 0xFF)),
    ("MotionBlur", _Items(("MotionBlur",), MOTION_BLUR, 0xFF)),
    ("Footsteps", _Items(("Footstep",), FOOTSTEP, 0xFF)),
    ("Sounds", _Items(("Sound",), SOUND, MAX_FRAMES)),
    ("Heights", HEIGHTS), ("Velocities", VELOCITIES), ("Rotations", ROTATIONS),
    ("PositionOffset", _group(("X", SINGLE), ("Z", SINGLE)), OPTIONAL), ("Positions", POSITIONS),
    ("ThrowSource", THROW, OPTIONAL),
    ("SelfDamage", _Items(("Damage",), DAMAGE, 0xFF)),
    ("Attacks", _Items(("Attack",), ATTACK, 0xFF), OPTIONAL),
    ("AttackRing", RING, OPTIONAL))
ALIASES = {"HorizontalExtents": "AttackRing"}   # the ring's older name, which OniSplit also reads
# record field: XML element, for the event arrays (a particle's Bone is its part and pad)
ATTACK_FIELDS = {"parts": "Bones", "knockback": "Knockback", "flags": "Flags", "damage": "HitPoints",
                 "first_frame": "Start", "last_frame": "End", "hit_type": "HitType", "hit_stun": "HitLength",
                 "block_stun": "StunLength", "stagger": "StaggerLength"}
DAMAGE_FIELDS = {"damage": "Points", "frame": "Frame"}
BLUR_FIELDS = {"parts": "Bones", "first_frame": "Start", "last_frame": "End", "quantity": "Lifetime",
               "amount": "Alpha", "skip": "Interval"}
SHORTCUT_FIELDS = {"state": "FromState", "length": "Length", "flags": "ReplaceAtomic"}
FOOTSTEP_FIELDS = {"frame": "Frame", "type": "Type"}
PARTICLE_FIELDS = {"first_frame": "Start", "last_frame": "End", "name": "Name"}
SOUND_FIELDS = {"name": "Name", "frame": "Start"}


# ---- the API ------------------------------------------------------------------------------------------

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
    return [_TramXml(path).read(f)]


def tram_xml_bytes(tram: Tram) -> bytes:
    """OniSplit's XML of a Tram, which its -create reads back (docs/characters.md 9). ValueError for
    a Tram that cannot be stored, or that OniSplit would refuse or write wrong."""
    checked_tram(tram)
    try:
        animation = _animation_of(tram)
        text = _render(animation)
        _tram_of(animation, tram.name, lambda problem, _=None: _refuse(problem))
    except _CannotHold as error:
        raise ValueError(f"TRAM{tram.name}: {error}") from None
    return text


def ekey_degrees(codes) -> np.ndarray:
    """EKey angles (float32 degrees) of 6-byte codes as OniSplit reads them: int16(code) * 180 / 32767.5
    in float32 (spec 7.1)."""
    return np.asarray(codes, np.uint16).astype(np.int16).astype(np.float32) * F32(180) / EKEY_SCALE


def ekey_codes(degrees) -> np.ndarray:
    """6-byte codes of EKey angles as OniSplit writes them: degrees / 180 * 32767.5 in float32, rounded
    half to even, kept to 16 bits; the inverse of ekey_degrees for all 65536 codes."""
    return _rounded(np.asarray(degrees, np.float32) / F32(180) * EKEY_SCALE, np.uint16)


# ---- reading ------------------------------------------------------------------------------------------

class _Open:
    """An element being read: its spec, what it holds so far, the next child expected (groups)."""
    __slots__ = ("name", "spec", "value", "next")

    def __init__(self, name, spec, line):
        self.name, self.spec, self.next = name, spec, 0
        if isinstance(spec, _Group):
            self.value = {"@line": line}
        elif isinstance(spec, _Items):
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
        if isinstance(spec, _Leaf):
            self.start_text()

    def child(self, parent, name, attributes):
        """The spec of child `name` of `parent`, which OniSplit reads in a fixed order."""
        if name in ("Import", "DaeImport") and parent.spec is ANIMATION:
            self.fail(f"<{name}>: an animation OniSplit imports from a Collada file is not supported")
        if ALIASES.get(name, name) == "AttackRing" and parent.spec is ANIMATION and "Attacks" not in parent.value:
            self.fail(f"<{name}> without <Attacks>: OniSplit reads the ring only after the attacks")
        if name == "Footstep" and attributes:
            self.fail("<Footstep> with attributes: OniSplit's reader throws on them (spec 7.4); give <Frame> and "
                      "<Type> elements")
        spec = parent.spec
        if spec is ROTATIONS:
            self.check_rotation_size(parent.count())
        if isinstance(spec, _Items):
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
            self.tram = _tram_of(value, stem[4:] if stem.startswith("TRAM") else stem, self.fail_at)
        elif isinstance(self.open[-1].spec, _Items) and self.open[-1].spec.packed:
            self.open[-1].value.extend(value)
        elif isinstance(self.open[-1].spec, _Items):
            self.open[-1].value.append(value)
        else:
            self.open[-1].value[ALIASES.get(name, name)] = value

    def finish(self, node):
        spec = node.spec
        if isinstance(spec, _Leaf):
            return getattr(self, "read_" + spec.kind)(node.name, self.take_text(), spec.arg)
        if isinstance(spec, _Group):
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
                          "into EKeys and corrupts tracks with keys more than a frame apart (spec 7.4); write "
                          "EKeys", self.text_line)
        elif name != self.key_name:
            self.fail(f"<{name}> among <{self.key_name}>: one animation's keys are all EKeys or all QKeys",
                      self.text_line)


# ---- what OniSplit's -create makes of it ------------------------------------------------------------------

def _tram_of(a, name, fail) -> Tram:
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
        direct_animations=tuple(link[4:] if link.startswith("TRAM") else link for link in a["DirectAnimations"]),
        final_rotation=F32(a["FinalRotation"]) * RADIANS, impact=a["Impact"].encode("utf-8").ljust(16, b"\0"),
        move_direction=a["Direction"], vocalization=a["Vocalization"], hard_pause=a["Pause"]["Hard"],
        soft_pause=a["Pause"]["Soft"], type=lookup["Type"], aiming_type=lookup["AimingType"],
        from_state=lookup["FromState"], to_state=lookup["ToState"], duration=frames, varient=lookup["Varient"],
        atomic_start=a["Atomic"]["Start"], atomic_end=a["Atomic"]["End"],
        interpolation_end=a["Interpolation"]["End"], interpolation_max=a["Interpolation"]["Max"],
        action_frame=_signed16(a["ActionFrame"]), first_level=lookup["FirstLevel"],
        invulnerable_start=a["Invulnerable"]["Start"], invulnerable_length=a["Invulnerable"]["End"])


def _signed16(value):
    return value - 0x10000 if value >= 0x8000 else value


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
    """The position points OniSplit writes (spec 2), and their x and z before rounding: the first from
    <PositionOffset>, each next one the last plus the velocity (float32)."""
    out = np.zeros(len(points), POSITION_DTYPE)
    if not points:
        return out, np.zeros(0, np.float32), np.zeros(0, np.float32)
    first = [offset["X"], offset["Z"]] if offset else [0.0, 0.0]
    steps = np.concatenate([np.array([first], np.float64).astype(np.float32), velocities[:len(points) - 1]])
    x, z = np.add.accumulate(steps, axis=0).T
    sizes = np.array([[p["Height"], p["YOffset"]] for p in points], np.float64).astype(np.float32)
    for field, values in (("x", x), ("z", z), ("height", sizes[:, 0]), ("y_offset", sizes[:, 1])):
        out[field] = _rounded(values * F32(100), POSITION_DTYPE[field])
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
    _bound(info["first_attack"], frames[0], 0, 0, place, (length[0], _round2(low[0]), high[0], angle[0]))
    if not a["Flags"] & THROW_TARGET:
        _bound(info["max_attack"], frames[far], attack, frames[far] - start, place,
               (length[far], low[far], _round2(high[far]), angle[far]))
    out = np.zeros(len(rows), EXTENT_DTYPE)
    out["frame"] = frames
    out["angle"] = _extent_angle_codes(angle)
    out["distance"] = _rounded(length * F32(100), np.uint16)
    out["min_y"], out["max_y"] = _rounded(low * F32(100), np.int16), _rounded(high * F32(100), np.int16)
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


def _rounded(values, dtype):
    """Mono's (short) or (ushort)Math.Round(value) of float32 values: half to even, then the low 16 bits
    of the int32 (x86's 0x80000000 where the value does not fit one)."""
    whole = np.rint(np.asarray(values, np.float64))
    whole = np.where(np.abs(whole) < 2.0 ** 31, whole, -2.0 ** 31)
    return (whole.astype(np.int64) & 0xFFFF).astype(dtype)


def _round2(value):
    """OniSplit's FMath.Round(value, 2): (float)Math.Round((double)value, 2), half to even."""
    return F32(np.rint(np.float64(value) * 100) / 100)


# ---- writing ------------------------------------------------------------------------------------------------

class _CannotHold(ValueError):
    pass


def _refuse(problem):
    raise _CannotHold(problem)


def _animation_of(t):
    """What OniSplit's -extract:xml writes for a Tram (AnimationDatReader, then AnimationXmlWriter), as
    read values; a float chosen to read back to the stored bits where OniSplit's own text would not."""
    if t.key_size == 16 and not t.flags & OVERLAY:
        _refuse("16-byte keys without the Overlay flag: OniSplit's -create turns QKeys into EKeys and corrupts "
                "tracks with keys more than a frame apart (spec 7.4)")
    positions = t.positions
    x, z = (F32(positions[field][0]) * F32(0.01) if len(positions) else F32(0) for field in ("x", "z"))
    a = {
        "Lookup": {"Type": t.type, "AimingType": t.aiming_type, "FromState": t.from_state, "ToState": t.to_state,
                   "Varient": t.varient, "FirstLevel": t.first_level,
                   "Shortcuts": _items(t.shortcuts, SHORTCUT, SHORTCUT_FIELDS)},
        "Flags": t.flags, "Atomic": {"Start": t.atomic_start, "End": t.atomic_end},
        "Invulnerable": {"Start": t.invulnerable_start, "End": t.invulnerable_length},
        "Overlay": {"UsedBones": t.used_parts, "ReplacedBones": t.replaced_parts},
        "DirectAnimations": ["TRAM" + name if name else "" for name in t.direct_animations],
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
    return _signed16(int(stored)) if leaf is SHORT else int(stored)


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
    low = _snapped(low, info["min_height"], e["min_y"], exact=at_far | both, rounded=at_first & ~both)
    high = _snapped(high, info["max_height"], e["max_y"], exact=at_first, rounded=at_far)
    found = {}
    for n, frame in enumerate(frames.tolist()):
        found.setdefault(frame, {"Angle": angle[n], "Length": length[n], "MinY": low[n], "MaxY": high[n]})
    return found


def _snapped(heights, limit, codes, exact, rounded):
    """Heights set to the extent info's min (or max) `limit` where that keeps their raw code, and a
    bound's rounded height its rounding; a bound's exact height is kept. (OniSplit's reader sets every
    height within 0.01 of it, which loses a bound's exact height.) The extent that was the min stays it."""
    limit = F32(limit)
    with np.errstate(invalid="ignore", over="ignore"):
        keeps = (_rounded([limit * F32(100)], codes.dtype)[0] == codes) & ~exact
        keeps &= ~rounded | (_round2(limit) == heights)
    return np.where(keeps, limit, heights)


def _extent_angle_codes(degrees):
    """An extent's angle code from degrees, as OniSplit writes it: degrees * 65535 / 360, rounded."""
    return _rounded(degrees * F32(65535) / F32(360), np.uint16)


def _degrees(radians):
    """Degrees that OniSplit reads back to the radians, bit for bit, where a float32 does."""
    return _inverse(radians, lambda d: d * RADIANS, lambda r: r * DEGREES)


def _bound_degrees(radians, codes):
    """An attack bound's degrees: its radians back, and the raw extent's angle code, where a float32 does."""
    return _inverse(radians, lambda d: d * RADIANS, lambda r: r * DEGREES,
                    lambda d: _extent_angle_codes(d) == codes[:, None])


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


def _render(a) -> bytes:
    lines = ['\ufeff<?xml version="1.0" encoding="utf-8"?>', "<Oni>"]
    _render_element(lines, 1, "Animation", ANIMATION, a)
    lines.append("</Oni>")
    return "\n".join(lines).encode("utf-8")


def _render_element(lines, depth, name, spec, value):
    indent = INDENT * depth
    if isinstance(spec, _Leaf):
        text = _leaf_text(name, spec, value)
        lines.append(f"{indent}<{name}>{text}</{name}>" if text else f"{indent}<{name} />")
    elif value is None or len(value) == 0:
        lines.append(f"{indent}<{name} />")
    else:
        lines.append(f"{indent}<{name}>")
        if isinstance(spec, _Group):
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
